"""The Delta tables and checks of the row-level change tests (``tests/test_rowlevel.py``: DELETE and
UPDATE; ``tests/test_merge.py``: MERGE).

Every table is made by real delta-spark 4.4.0 (``.venv-delta``) and copied twice (conftest's ``twin``):
filecommit changes one copy, Delta Lake on Spark runs the same statement on the other, and
:func:`assert_same_as_delta` compares the two with Spark + Delta (table and ``readChangeFeed`` of the
new version) and delta-rs.
"""
from __future__ import annotations

import pandas as pd
import pytest
from helpers import canonical, delta_table, log_actions, sql_steps, values_sql

COLS = ["id", "v", "part"]
CDF_COLS = COLS + ["_change_type", "_commit_version"]


# 30 rows in 3 partitions, 3 INSERTs: at least 9 files (each INSERT writes one file or more per part).
BASE_ROWS = [(i, i * 10, "abc"[i % 3]) for i in range(1, 31)]
ROWLEVEL_FIXTURES = {
    "base": sql_steps(
        "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = 'false')",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[:10])}",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[10:20])}",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[20:])}"),
    "check": sql_steps(
        "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part)",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[:10])}",
        "ALTER TABLE {table} ADD CONSTRAINT v_small CHECK (v < 1000)"),
    "append_only": sql_steps(
        "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta "
        "TBLPROPERTIES ('delta.appendOnly' = 'true')",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[:6])}"),
    # Deletion vectors: Delta's own DELETE leaves files whose deleted rows must stay deleted.
    "dv": sql_steps(
        "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[:12])}",
        "DELETE FROM {table} WHERE id IN (2, 4, 7)"),
    # Deletion vectors on, with the change data feed: our DELETE / UPDATE write DVs, as Delta's do.
    "dv_cdf": sql_steps(
        "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = 'true')",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[:10])}",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[10:20])}",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[20:])}"),
    "generated": sql_steps(
        "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING, w BIGINT GENERATED ALWAYS AS (v * 2)) "
        "USING delta PARTITIONED BY (part) TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
        f"INSERT INTO {{table}} (id, v, part) VALUES {values_sql(BASE_ROWS[:9])}"),
    # Partition values that need escaping in paths (space, '%', '=', '/'), and NULL.
    "odd_parts": sql_steps(
        "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
        "INSERT INTO {table} VALUES (1, 10, 'a b'), (2, 20, 'x%y'), (3, 30, 'c=d/e'), (4, 40, NULL), "
        "(5, 50, 'a b'), (6, 60, NULL)"),
    "cm_name": sql_steps(
        "CREATE TABLE {table} (id BIGINT, val BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",
        f"INSERT INTO {{table}} VALUES {values_sql(BASE_ROWS[:9])}",
        "ALTER TABLE {table} RENAME COLUMN val TO v"),
}


# Runs a test with our copy local and in the session's MinIO bucket (conftest's twin).
twin_on_s3 = pytest.mark.parametrize("twin", ["local", "s3"], indirect=True)


def table(path):
    return "delta.`" + path + "`"


def delta_runs(delta_spark, path, statement):
    """Delta Lake on Spark runs ``statement`` ({table} = the table at ``path``); its answer."""
    r = delta_spark.read_one({"kind": "sql", "sql": statement, "path": path})
    assert r["ok"], f"Delta refused: {r}"
    return r


def dicts_frame(rows, columns):
    return canonical(pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns, dtype=object),
                     columns)


def assert_same(got, expected, what):
    try:
        pd.testing.assert_frame_equal(got, expected)
    except AssertionError as e:
        raise AssertionError(f"{what}:\n ours:\n{got}\n Delta's:\n{expected}\n{e}") from None


def assert_same_as_delta(delta_spark, ours, theirs, version, columns=COLS, cdf=True, delta_rs=True, delta_rs_cdf=True):
    """Spark + Delta reads the same table (at ``version``) and the same change feed of ``version``
    from both copies; delta-rs reads our table and change feed the same (``delta_rs=False``: a table
    delta-rs cannot read even before our change, as column-mapped ones; ``delta_rs_cdf=False``:
    change files under escaped partition directories, which delta-rs does not URI-decode, see
    tests/test_cdc.py). Returns Spark + Delta's table read of ours."""
    reads = [{"path": ours, "kind": "table"}, {"path": theirs, "kind": "table"}]
    if cdf:
        reads += [{"path": p, "kind": "cdf", "startingVersion": version, "endingVersion": version} for p in (ours, theirs)]
    got = delta_spark.read(reads)
    for r in got:
        assert r["ok"], f"Spark + Delta cannot read: {r}"
    assert got[0]["latest_version"] == got[1]["latest_version"] == version
    assert_same(dicts_frame(got[0]["rows"], columns), dicts_frame(got[1]["rows"], columns), "table rows")
    if cdf:
        feed = dicts_frame(got[2]["rows"], columns + ["_change_type", "_commit_version"])
        assert_same(feed, dicts_frame(got[3]["rows"], columns + ["_change_type", "_commit_version"]), "change feed")
        assert len(feed) > 0 and set(feed["_commit_version"]) == {version}
    if delta_rs:
        import pyarrow as pa

        assert_same(canonical(delta_table(ours).to_pyarrow_table(), columns), dicts_frame(got[1]["rows"], columns),
                     "delta-rs read")
        if cdf and delta_rs_cdf:
            cols = columns + ["_change_type", "_commit_version"]
            feed = pa.table(delta_table(ours).load_cdf(starting_version=version, ending_version=version))
            assert_same(canonical(feed, cols), dicts_frame(got[3]["rows"], cols), "delta-rs change feed")
    return got[0]


def removed_paths(path, version):
    return sorted(a["remove"]["path"] for a in log_actions(path)[version] if "remove" in a)


def delta_metrics(path, version):
    info = [a["commitInfo"] for a in log_actions(path)[version] if "commitInfo" in a][0]
    return {k: int(v) for k, v in info.get("operationMetrics", {}).items()}


def active_files(path):
    from deltalake import DeltaTable

    return DeltaTable(path).file_uris()
