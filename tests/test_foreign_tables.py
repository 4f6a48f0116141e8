"""Writing into Delta tables that another writer made (real delta-spark 4.4.0 on Spark 4.2.0).

The fixture tables are made once per module by the Spark + Delta worker (``tests/delta_tables.py``
in ``.venv-delta``): a cleaned-up log (checkpoints only up to version 20), a CHECK constraint, a NOT
NULL column, a column invariant, generated columns, deletion vectors, column mapping (name and id
modes, renamed columns), appendOnly, change data feed, and tables with writer features filecommit
cannot honour. Every test writes into its own copy of a fixture and checks the outcome with Spark +
Delta (and delta-rs where it can read the table): the expected rows are the fixture's rows as Spark +
Delta read them before, plus the rows the test appended; a refused write must carry the error class
and leave the table's version, rows, log and files as they were.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
import pytest
from delta_tables import commit_versions, log_file_names
from helpers import (
    canonical,
    checkpoint_versions,
    data_files,
    dv_id,
    error_class,
    log_actions,
    log_state,
    shared_dir,
    sql_steps,
)
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

NOT_NULL = "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"
VIOLATION = "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
UNSUPPORTED = "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE"
APPEND_ONLY = "DELTA_CANNOT_MODIFY_APPEND_ONLY"


INVARIANT_SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True,
         "metadata": {"delta.invariants": json.dumps({"expression": {"expression": "id < 100"}})}},
        {"name": "name", "type": "string", "nullable": True, "metadata": {}},
    ],
}

# name -> steps run by real delta-spark ({table} is delta.`<path>`), the feature its protocol must
# list (DESCRIBE DETAIL tableFeatures, as Spark + Delta sees it), optional log cleanup.
FIXTURES = {
    # 25 appends after the CREATE: versions 0..25, Delta's checkpoints at 10 and 20; JSON 0-19 deleted.
    "cleaned": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING) USING delta",
                        *[f"INSERT INTO {{table}} VALUES ({i}, 'n{i}')" for i in range(1, 26)]),
        drop_commits_before=20, feature=None),
    "check": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING) USING delta",
                        "INSERT INTO {table} VALUES (1, 'a'), (2, 'b')",
                        "ALTER TABLE {table} ADD CONSTRAINT id_pos CHECK (id > 0)"),
        feature="checkConstraints"),
    "not_null": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT NOT NULL, name STRING) USING delta",
                        "INSERT INTO {table} VALUES (1, 'a'), (2, NULL)"),
        feature="invariants"),
    # Legacy column invariant (schema metadata delta.invariants), made through the DataFrame API.
    "invariant": dict(
        steps=[{"dataframe": {"schema": INVARIANT_SCHEMA, "rows": [[1, "a"], [2, "b"]], "mode": "append"}}],
        feature="invariants"),
    "generated": dict(
        steps=sql_steps("CREATE TABLE {table} (ts TIMESTAMP, d DATE GENERATED ALWAYS AS (CAST(ts AS DATE)), v INT, "
                        "b INT GENERATED ALWAYS AS (v * 2)) USING delta PARTITIONED BY (d)",
                        "INSERT INTO {table} (ts, v) VALUES (TIMESTAMP'2024-01-01 12:00:00', 1), "
                        "(TIMESTAMP'2024-01-02 12:00:00', 2)"),
        feature="generatedColumns"),
    # Part a: file (1,2,3) with a DV deleting 2, file (7); part b: file (4,5,6) with a DV deleting 5,
    # file (9); the file holding only 8 removed by the DELETE.
    "dv": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, part STRING) USING delta PARTITIONED BY (part) "
                        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')",
                        "INSERT INTO {table} VALUES (1, 'a'), (2, 'a'), (3, 'a'), (4, 'b'), (5, 'b'), (6, 'b')",
                        "INSERT INTO {table} VALUES (7, 'a'), (8, 'a'), (9, 'b')",
                        "DELETE FROM {table} WHERE id IN (2, 5, 8)"),
        feature="deletionVectors"),
    "cm_name": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING, part STRING) USING delta PARTITIONED BY (part) "
                        "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",
                        "INSERT INTO {table} VALUES (1, 'a', 'x'), (2, 'b', 'y')",
                        "ALTER TABLE {table} RENAME COLUMN name TO label"),
        feature="columnMapping"),
    # id mode, the partition column renamed.
    "cm_id": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING, part STRING) USING delta PARTITIONED BY (part) "
                        "TBLPROPERTIES ('delta.columnMapping.mode' = 'id')",
                        "INSERT INTO {table} VALUES (1, 'a', 'x'), (2, 'b', 'y')",
                        "ALTER TABLE {table} RENAME COLUMN part TO region"),
        feature="columnMapping"),
    "append_only": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING) USING delta "
                        "TBLPROPERTIES ('delta.appendOnly' = 'true')",
                        "INSERT INTO {table} VALUES (1, 'a'), (2, 'b')"),
        feature="appendOnly"),
    "cdf": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING, part STRING) USING delta PARTITIONED BY (part) "
                        "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
                        "INSERT INTO {table} VALUES (1, 'a', 'x'), (2, 'b', 'y')"),
        feature="changeDataFeed"),
    # In-commit timestamps: commitInfo first, with a strictly increasing inCommitTimestamp.
    "ict": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING) USING delta "
                        "TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')",
                        "INSERT INTO {table} VALUES (1, 'a'), (2, 'b')"),
        feature="inCommitTimestamp"),
    # V2 checkpoints (checkpoint policy v2), one written by Delta at version 2.
    "v2_checkpoint": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING) USING delta "
                        "TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '2')",
                        "INSERT INTO {table} VALUES (1, 'a')", "INSERT INTO {table} VALUES (2, 'b')",
                        "INSERT INTO {table} VALUES (3, 'c')"),
        feature="v2Checkpoint"),
    # Newer writer features: variantType is refused by name; identityColumns, rowTracking, clustering and
    # allowColumnDefaults are honoured (test_identity.py, test_row_tracking.py, test_clustering.py,
    # test_column_defaults.py) and made here for the protocol check.
    "variant": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING, doc VARIANT) USING delta",
                        "INSERT INTO {table} VALUES (1, 'a', NULL)"),
        feature="variantType"),
    "identity": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT GENERATED ALWAYS AS IDENTITY, name STRING) USING delta",
                        "INSERT INTO {table} (name) VALUES ('a'), ('b')"),
        feature="identityColumns"),
    "row_tracking": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING) USING delta "
                        "TBLPROPERTIES ('delta.enableRowTracking' = 'true')",
                        "INSERT INTO {table} VALUES (1, 'a'), (2, 'b')"),
        feature="rowTracking"),
    "clustering": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING) USING delta CLUSTER BY (id)",
                        "INSERT INTO {table} VALUES (1, 'a'), (2, 'b')"),
        feature="clustering"),
    "column_defaults": dict(
        steps=sql_steps("CREATE TABLE {table} (id BIGINT, name STRING DEFAULT 'z') USING delta "
                        "TBLPROPERTIES ('delta.feature.allowColumnDefaults' = 'supported')",
                        "INSERT INTO {table} VALUES (1, 'a'), (2, 'b')"),
        feature="allowColumnDefaults"),
}


# ---------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def foreign(delta_spark, tmp_path_factory, request):
    """Makes every fixture table in one Spark + Delta request; name -> the worker's answer (rows and
    version as Spark + Delta read the finished table, DESCRIBE DETAIL) plus the raw log protocol.
    The Spark Connect server starts while Spark + Delta works."""
    root = Path(shared_dir(tmp_path_factory.mktemp("foreign_fixtures")))
    specs = []
    for name, f in FIXTURES.items():
        spec = {"name": name, "path": str(root / name), "steps": f["steps"]}
        if f.get("drop_commits_before") is not None:
            spec["drop_commits_before"] = f["drop_commits_before"]
        specs.append(spec)
    wait = delta_spark.make(specs)
    request.getfixturevalue("spark")
    out = wait()
    hello = delta_spark.ready()
    lines = [f"fixture tables by Spark {hello['spark']} + delta-spark {hello['delta']}:"]
    for name, m in out.items():
        if m["ok"]:
            try:
                m["protocol"] = log_state(m["path"])["protocol"]
            except Exception as e:  # noqa: BLE001 - reported by test_fixture_protocols
                m["protocol"] = {"error": repr(e)}
            m["delta_rs"] = _delta_rs_limitation(m)
            d = m["detail"]
            lines.append(f"  {name:16s} v{m['version']:<3} {m['seconds']:6.1f}s  reader {d['minReaderVersion']} "
                         f"writer {d['minWriterVersion']} features {d['tableFeatures']}  log protocol {m['protocol']}"
                         + (f"  delta-rs: {m['delta_rs']}" if m["delta_rs"] else ""))
        else:
            lines.append(f"  {name:16s} FAILED {m['error']}")
    sys.stderr.write("\n".join(lines) + "\n")
    return out


def _delta_rs_limitation(m):
    """None when delta-rs reads the untouched fixture exactly as Spark + Delta did, else why not (a
    delta-rs limitation: the delta-rs comparison is skipped for copies of this fixture)."""
    from deltalake import DeltaTable

    try:
        got = _plain_dicts_frame(DeltaTable(m["path"]).to_pandas().to_dict("records"), m["columns"])
    except Exception as e:  # noqa: BLE001 - delta-rs' own limitation
        return f"cannot read it: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    if not got.equals(_plain_dicts_frame(m["rows"], m["columns"])):
        return "reads it differently from Spark + Delta before any filecommit write"
    return None


@dataclass
class Table:
    """A private copy of one fixture table, with what Spark + Delta read from the fixture."""

    name: str
    path: str
    version: int
    columns: list
    rows: list  # dicts, as Spark + Delta read them
    detail: dict
    log_files: list
    files: list
    delta_rs: str | None = None  # why delta-rs cannot serve as a reader of this table, None when it can

    def frame(self, extra=(), columns=None):
        """The fixture's rows plus ``extra`` (dicts), canonical, over ``columns`` (default: all)."""
        cols = columns or self.columns
        return _plain_dicts_frame(list(self.rows) + list(extra), cols)


@pytest.fixture
def clone(foreign, tmp_path):
    """``clone(name)``: a fresh copy of fixture ``name`` under the test's tmp dir (Delta logs hold
    relative paths, so a copied table is the same table)."""

    root = shared_dir(tmp_path)

    def _copy(name, suffix=""):
        m = foreign[name]
        assert m["ok"], f"fixture {name} could not be made by delta-spark: {m.get('detail') or m['error']}"
        dest = os.path.join(root, name + suffix)
        shutil.copytree(m["path"], dest, symlinks=True)
        return Table(name, dest, m["version"], m["columns"], m["rows"], m["detail"], log_file_names(dest),
                     data_files(dest), m.get("delta_rs"))

    return _copy


# ---------------------------------------------------------------------------------------------
# Helpers: frames, readers, refusal checks
# ---------------------------------------------------------------------------------------------

def _plain(v):
    """Values as the Spark + Delta worker reports them: timestamps 'YYYY-MM-DD HH:MM:SS' (UTC), dates
    'YYYY-MM-DD'; anything else unchanged."""
    if v is None or (isinstance(v, float) and pd.isna(v)) or v is pd.NaT:
        return None
    if isinstance(v, pd.Timestamp):
        v = v.to_pydatetime()
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return str(v)
    if isinstance(v, datetime.date):
        return v.isoformat()
    return v


def _plain_dicts_frame(rows, columns):
    df = pd.DataFrame([{c: _plain(r.get(c)) for c in columns} for r in rows], columns=columns)
    return canonical(df, columns)


def _records(rows, columns):
    return [dict(zip(columns, r, strict=True)) for r in rows]


def _assert_frames(got, expected, what):
    try:
        pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    except AssertionError as e:
        raise AssertionError(f"{what}:\n got:\n{got}\n expected:\n{expected}\n{e}") from None


def spark_read(delta_spark, path, **read):
    r = delta_spark.read_one({"path": path, "kind": "table", **read})
    assert r["ok"], f"Spark + Delta cannot read {path}: {r.get('detail') or r.get('error')}"
    return r


def assert_spark_reads(delta_spark, path, expected, columns, version):
    """Spark + Delta reads exactly ``expected`` (canonical frame) and its latest version is ``version``."""
    r = spark_read(delta_spark, path)
    assert sorted(r["columns"]) == sorted(columns), f"Spark + Delta columns {r['columns']}"
    _assert_frames(_plain_dicts_frame(r["rows"], columns), expected, f"Spark + Delta read of {path}")
    assert r["latest_version"] == version, f"Spark + Delta latest version {r['latest_version']}, expected {version}"
    return r


def assert_delta_rs_reads(path, expected, columns, limitation=None):
    """delta-rs reads exactly ``expected``. ``limitation``: delta-rs could not read the untouched
    fixture this table was copied from (a feature it does not support): only this comparison is
    skipped, with a warning. Otherwise a delta-rs error after our write fails the test."""
    from deltalake import DeltaTable

    if limitation:
        warnings.warn(f"delta-rs comparison skipped for {os.path.basename(path)}: delta-rs {limitation}",
                      stacklevel=2)
        return False
    got = _plain_dicts_frame(DeltaTable(path).to_pandas().to_dict("records"), columns)
    _assert_frames(got, expected, f"delta-rs read of {path}")
    return True




def assert_refused(e, condition, table: Table, delta_spark, names=()):
    """The write failed (exception ``e``) with ``condition`` and left the table as it was: no new log
    file, no new data file, Spark + Delta reads the same version and rows."""
    assert error_class(e) == condition, f"expected {condition}, got {type(e).__name__} [{error_class(e)}]: {e}"
    for n in names:
        assert n in str(e), f"the error does not name {n!r}: {e}"
    assert log_file_names(table.path) == table.log_files, "a refused write changed _delta_log"
    assert data_files(table.path) == table.files, "a refused write left files in the table"
    assert_spark_reads(delta_spark, table.path, table.frame(), table.columns, table.version)


def _literal(v, sql_type=None):
    if v is None:
        return "NULL"
    if isinstance(v, str):
        quoted = "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return f"{sql_type}{quoted}" if sql_type else quoted
    return str(v)


def assert_delta_refuses_too(delta_spark, table: Table, columns, rows, condition, overwrite=False, types=None):
    """Delta itself (Spark + Delta, on another copy of the fixture) refuses the same rows with the
    same error class: the expected class comes from the reference implementation."""
    types = types or {}
    values = ", ".join("(" + ", ".join(_literal(v, types.get(c)) for c, v in zip(columns, r, strict=True)) + ")"
                       for r in rows)
    stmt = (f"INSERT {'OVERWRITE' if overwrite else 'INTO'} {{table}} ({', '.join(columns)}) VALUES {values}")
    ans = delta_spark.read_one({"kind": "sql", "path": table.path, "sql": stmt})
    assert not ans["ok"], f"Spark + Delta accepted {stmt}"
    assert ans["condition"] == condition, f"Spark + Delta refused {stmt} with {ans['condition']}: {ans['error']}"


def _append_lands(spark, delta_spark, table, rows, schema, columns=None, **kw):
    """Appends ``rows`` (tuples in ``schema`` order); asserts version + 1 and exact reads."""
    columns = columns or table.columns
    r = filecommit.write(spark.createDataFrame(rows, schema), table.path, mode="append", **kw)
    assert r.committed and r.version == table.version + 1, (r.committed, r.version, table.version)
    names = [f.split()[0] for f in schema.split(",")]
    expected = table.frame(_records(rows, names), columns)
    assert_spark_reads(delta_spark, table.path, expected, columns, table.version + 1)
    assert_delta_rs_reads(table.path, expected, columns, table.delta_rs)
    return r


# ---------------------------------------------------------------------------------------------
# The fixtures are what they claim to be
# ---------------------------------------------------------------------------------------------

def test_fixture_protocols(foreign):
    """Each fixture's protocol (as Spark + Delta describes it) lists the feature the tests exercise,
    so no test below passes on a table that lacks it."""
    problems = []
    for name, f in FIXTURES.items():
        m = foreign[name]
        if not m["ok"]:
            problems.append(f"{name}: not made: {m['error']}")
            continue
        print(f"{name}: reader {m['detail']['minReaderVersion']} writer {m['detail']['minWriterVersion']} "
              f"tableFeatures {m['detail']['tableFeatures']} log protocol {m['protocol']}")
        if f["feature"] and f["feature"] not in (m["detail"]["tableFeatures"] or []):
            problems.append(f"{name}: {f['feature']} not in {m['detail']['tableFeatures']}")
    assert not problems, problems
    # The cleaned-up log: commits 0-19 gone, checkpoints 10 and 20 and _last_checkpoint kept.
    cleaned = foreign["cleaned"]["path"]
    assert commit_versions(cleaned) == list(range(20, 26))
    assert checkpoint_versions(cleaned) == [10, 20]
    with open(os.path.join(cleaned, "_delta_log", "_last_checkpoint")) as fh:
        assert json.load(fh)["version"] == 20
    # The DV fixture has live deletion vectors on files that still hold rows.
    dvs = [a for a in log_state(foreign["dv"]["path"])["active"].values() if a.get("deletionVector")]
    assert len(dvs) == 2, dvs
    # Column mapping: logical names differ from the physical ones.
    for name in ("cm_name", "cm_id"):
        fields = json.loads(log_state(foreign[name]["path"])["metaData"]["schemaString"])["fields"]
        assert all(f["metadata"].get("delta.columnMapping.physicalName") not in (None, f["name"]) for f in fields)


# ---------------------------------------------------------------------------------------------
# Cleaned-up log (checkpoints, no early commits)
# ---------------------------------------------------------------------------------------------

def test_append_to_a_table_with_a_cleaned_up_log(spark, delta_spark, clone):
    t = clone("cleaned")
    assert t.version == 25 and len(t.rows) == 25
    _append_lands(spark, delta_spark, t, [(101, "x"), (102, "y")], "id long, name string")


def test_our_checkpoint_on_a_table_delta_spark_made(spark, delta_spark, clone):
    """Appends up to version 30 leave our checkpoint there, next to Delta's; with every commit
    before 30 deleted, Spark + Delta and delta-rs read the table from our checkpoint."""
    t = clone("cleaned")
    added = []
    for i in range(t.version + 1, 31):
        row = (1000 + i, f"v{i}")
        assert filecommit.write(spark.createDataFrame([row], "id long, name string"), t.path).version == i
        added.append(row)
    assert checkpoint_versions(t.path, wait_for=[30]) == [10, 20, 30]
    with open(os.path.join(t.path, "_delta_log", "_last_checkpoint")) as fh:
        assert json.load(fh)["version"] == 30
    from delta_tables import drop_commits_before

    drop_commits_before(t.path, 30)
    assert commit_versions(t.path) == [30]
    expected = t.frame(_records(added, ["id", "name"]))
    assert_spark_reads(delta_spark, t.path, expected, t.columns, 30)
    assert_delta_rs_reads(t.path, expected, t.columns, t.delta_rs)


# ---------------------------------------------------------------------------------------------
# CHECK constraint, NOT NULL, invariant
# ---------------------------------------------------------------------------------------------

def test_check_constraint_valid_append(spark, delta_spark, clone):
    _append_lands(spark, delta_spark, clone("check"), [(3, "c"), (4, None)], "id long, name string")


# A null fails a CHECK constraint in Delta (the expression must be true), as the oracle confirms.
@pytest.mark.parametrize("rows", [[(-5, "bad")], [(3, "ok"), (-5, "bad")], [(3, "ok"), (None, "null")]],
                         ids=["only", "mixed", "null"])
def test_check_constraint_violation_is_refused(spark, delta_spark, clone, rows):
    t = clone("check")
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame(rows, "id long, name string"), t.path)
    assert_refused(e.value, VIOLATION, t, delta_spark)
    assert_delta_refuses_too(delta_spark, clone("check", "_delta"), ["id", "name"], rows, VIOLATION)


def test_not_null_valid_append(spark, delta_spark, clone):
    # A nullable DataFrame column without nulls goes into the NOT NULL column, as in Delta.
    _append_lands(spark, delta_spark, clone("not_null"), [(3, "c"), (4, None)], "id long, name string")


def test_null_into_not_null_column_is_refused(spark, delta_spark, clone):
    t = clone("not_null")
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(3, "c"), (None, "d")], "id long, name string"), t.path)
    assert_refused(e.value, NOT_NULL, t, delta_spark)
    assert_delta_refuses_too(delta_spark, clone("not_null", "_delta"), ["id", "name"], [(3, "c"), (None, "d")],
                             NOT_NULL)


def test_invariant_valid_append(spark, delta_spark, clone):
    _append_lands(spark, delta_spark, clone("invariant"), [(50, "c"), (99, None)], "id long, name string")


# As for CHECK constraints, a null fails the invariant `id < 100` in Delta.
@pytest.mark.parametrize("rows", [[(3, "c"), (200, "d")], [(3, "c"), (None, "d")]], ids=["value", "null"])
def test_invariant_violation_is_refused(spark, delta_spark, clone, rows):
    t = clone("invariant")
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame(rows, "id long, name string"), t.path)
    assert_refused(e.value, VIOLATION, t, delta_spark)
    assert_delta_refuses_too(delta_spark, clone("invariant", "_delta"), ["id", "name"], rows, VIOLATION)


# ---------------------------------------------------------------------------------------------
# Generated columns
# ---------------------------------------------------------------------------------------------

GEN_COLS = ["ts", "d", "v", "b"]


def _gen_df(spark, rows, with_generated):
    """Rows (ts 'YYYY-MM-DD HH:MM:SS' UTC, v[, d 'YYYY-MM-DD', b]) as a DataFrame with the table's types;
    timestamps at noon UTC, so CAST(ts AS DATE) is the same day in any session time zone."""
    if with_generated:
        df = spark.createDataFrame(rows, "ts string, v int, d string, b int")
        return df.selectExpr("CAST(concat(replace(ts, ' ', 'T'), 'Z') AS TIMESTAMP) AS ts", "CAST(d AS DATE) AS d",
                             "v", "b")
    df = spark.createDataFrame(rows, "ts string, v int")
    return df.selectExpr("CAST(concat(replace(ts, ' ', 'T'), 'Z') AS TIMESTAMP) AS ts", "v")


def test_generated_columns_are_computed_when_absent(spark, delta_spark, clone):
    t = clone("generated")
    rows = [("2024-03-05 12:00:00", 7), ("2024-03-06 12:00:00", None)]
    r = filecommit.write(_gen_df(spark, rows, False), t.path)
    assert r.version == t.version + 1
    added = [{"ts": ts, "d": ts[:10], "v": v, "b": None if v is None else v * 2} for ts, v in rows]
    expected = t.frame(added, GEN_COLS)
    assert_spark_reads(delta_spark, t.path, expected, GEN_COLS, t.version + 1)
    assert_delta_rs_reads(t.path, expected, GEN_COLS, t.delta_rs)


def test_generated_columns_supplied_and_equal_land(spark, delta_spark, clone):
    t = clone("generated")
    rows = [("2024-03-05 12:00:00", 7, "2024-03-05", 14)]
    r = filecommit.write(_gen_df(spark, rows, True), t.path)
    assert r.version == t.version + 1
    expected = t.frame(_records([(ts, d, v, b) for ts, v, d, b in rows], GEN_COLS), GEN_COLS)
    assert_spark_reads(delta_spark, t.path, expected, GEN_COLS, t.version + 1)
    assert_delta_rs_reads(t.path, expected, GEN_COLS, t.delta_rs)


@pytest.mark.parametrize("row", [("2024-03-05 12:00:00", 7, "2024-03-09", 14),   # d != CAST(ts AS DATE)
                                 ("2024-03-05 12:00:00", 7, "2024-03-05", 15)],  # b != v * 2
                         ids=["partition_column", "data_column"])
def test_generated_column_mismatch_is_refused(spark, delta_spark, clone, row):
    t = clone("generated")
    rows = [("2024-03-04 12:00:00", 1, "2024-03-04", 2), row]
    with pytest.raises(PySparkException) as e:
        filecommit.write(_gen_df(spark, rows, True), t.path)
    assert_refused(e.value, VIOLATION, t, delta_spark)
    assert_delta_refuses_too(delta_spark, clone("generated", "_delta"), ["ts", "v", "d", "b"], rows, VIOLATION,
                             types={"ts": "TIMESTAMP", "d": "DATE"})


# ---------------------------------------------------------------------------------------------
# Deletion vectors
# ---------------------------------------------------------------------------------------------

def test_deletion_vectors_append(spark, delta_spark, clone):
    t = clone("dv")
    assert sorted(r["id"] for r in t.rows) == [1, 3, 4, 6, 7, 9]  # the fixture's DVs are in force
    _append_lands(spark, delta_spark, t, [(10, "a"), (11, "c")], "id long, part string")


@pytest.mark.parametrize("where", ["part = 'a'", None], ids=["replace_where", "full_overwrite"])
def test_deletion_vectors_overwrite_removes_carry_the_dv(spark, delta_spark, clone, where):
    """The removes of an overwrite name the logical files (path + DV) that are active, so the
    replaced files are gone and deleted rows of the kept files stay deleted."""
    t = clone("dv")
    before = log_state(t.path)
    new = [(20, "a"), (21, "a")]
    options = {"replaceWhere": where} if where else None
    r = filecommit.write(spark.createDataFrame(new, "id long, part string"), t.path, mode="overwrite",
                         options=options)
    assert r.version == t.version + 1
    kept = [row for row in t.rows if where and row["part"] != "a"]
    expected = _plain_dicts_frame(kept + _records(new, ["id", "part"]), t.columns)
    assert_spark_reads(delta_spark, t.path, expected, t.columns, t.version + 1)
    assert_delta_rs_reads(t.path, expected, t.columns, t.delta_rs)

    # Raw log: exactly the replaced logical files are removed, each remove with its file's DV.
    removes = [a["remove"] for a in log_actions(t.path)[t.version + 1] if "remove" in a]
    removed = {(unquote(x["path"]), dv_id(x.get("deletionVector"))) for x in removes}
    replaced = {(unquote(p), d) for (p, d), add in before["active"].items()
                if where is None or add["partitionValues"].get("part") == "a"}
    assert removed == replaced
    assert any(d for _, d in replaced), "the replaced files include one with a deletion vector"


# ---------------------------------------------------------------------------------------------
# Column mapping
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,columns", [("cm_name", ["id", "label", "part"]), ("cm_id", ["id", "name", "region"])])
def test_column_mapping_append_lands_or_is_refused_cleanly(spark, delta_spark, clone, name, columns):
    """Under the logical (renamed) names. Refusing the table by name is acceptable; landing rows that
    read back wrong (nulls under physical names, lost partition values) is not."""
    t = clone(name)
    assert sorted(t.columns) == sorted(columns)
    rows = [(3, "c", "x"), (4, "d", "z")]
    schema = ", ".join(f"{c} {'long' if c == 'id' else 'string'}" for c in columns)
    try:
        r = filecommit.write(spark.createDataFrame(rows, schema), t.path, mode="append")
    except Exception as e:  # noqa: BLE001 - checked: must be the clean refusal
        assert_refused(e, UNSUPPORTED, t, delta_spark, names=["columnMapping"])
        return
    assert r.version == t.version + 1
    expected = t.frame(_records(rows, columns), columns)
    assert_spark_reads(delta_spark, t.path, expected, columns, t.version + 1)
    assert_delta_rs_reads(t.path, expected, columns, t.delta_rs)


# ---------------------------------------------------------------------------------------------
# appendOnly
# ---------------------------------------------------------------------------------------------

def test_append_only_table_takes_appends(spark, delta_spark, clone):
    _append_lands(spark, delta_spark, clone("append_only"), [(3, "c")], "id long, name string")


def test_append_only_table_refuses_overwrite(spark, delta_spark, clone):
    t = clone("append_only")
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(3, "c")], "id long, name string"), t.path, mode="overwrite")
    assert_refused(e.value, APPEND_ONLY, t, delta_spark)
    assert_delta_refuses_too(delta_spark, clone("append_only", "_delta"), ["id", "name"], [(3, "c")], APPEND_ONLY,
                             overwrite=True)


# ---------------------------------------------------------------------------------------------
# Change data feed
# ---------------------------------------------------------------------------------------------

def test_append_to_a_cdf_table_shows_as_inserts(spark, delta_spark, clone):
    t = clone("cdf")
    rows = [(3, "c", "x"), (4, "d", "w")]
    r = _append_lands(spark, delta_spark, t, rows, "id long, name string, part string")
    feed = delta_spark.read_one({"path": t.path, "kind": "cdf", "startingVersion": r.version,
                                 "endingVersion": r.version})
    assert feed["ok"], feed.get("detail")
    cols = ["id", "name", "part", "_change_type", "_commit_version"]
    expected = _plain_dicts_frame(_records([(*row, "insert", r.version) for row in rows], cols), cols)
    _assert_frames(_plain_dicts_frame(feed["rows"], cols), expected, "Spark + Delta change feed")


def test_append_to_an_in_commit_timestamp_table(spark, delta_spark, clone):
    t = clone("ict")
    before = _commit_info(t.path, t.version)
    r = _append_lands(spark, delta_spark, t, [(3, "c")], "id long, name string")
    with open(os.path.join(t.path, "_delta_log", f"{r.version:020d}.json")) as fh:
        first = json.loads(fh.readline())
    assert "commitInfo" in first, "commitInfo is the first action of an in-commit-timestamp commit"
    assert first["commitInfo"]["inCommitTimestamp"] > before["inCommitTimestamp"]


def test_append_to_a_v2_checkpoint_table_across_a_checkpoint(spark, delta_spark, clone):
    """Kernel reads the table from Delta's v2 checkpoint; our appends (one of them at a checkpoint
    version, interval 2, so a checkpoint is written or skipped) read back exactly with Spark + Delta."""
    t = clone("v2_checkpoint")
    assert t.version == 3 and len(t.rows) == 3
    added = []
    for i, row in enumerate([(10, "x"), (11, "y")]):
        r = filecommit.write(spark.createDataFrame([row], "id long, name string"), t.path)
        assert r.version == t.version + 1 + i
        added.append(row)
    expected = t.frame(_records(added, ["id", "name"]))
    assert_spark_reads(delta_spark, t.path, expected, t.columns, t.version + 2)


def _commit_info(path, version):
    with open(os.path.join(path, "_delta_log", f"{version:020d}.json")) as fh:
        for line in fh:
            action = json.loads(line)
            if "commitInfo" in action:
                return action["commitInfo"]
    raise AssertionError(f"no commitInfo in version {version}")


# ---------------------------------------------------------------------------------------------
# Features filecommit cannot honour
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["append", "overwrite"])
@pytest.mark.parametrize("name", ["variant"])
def test_unsupported_writer_feature_is_refused_by_name(spark, delta_spark, clone, name, mode):
    t = clone(name)
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(3, "c")], "id long, name string"), t.path, mode=mode)
    assert_refused(e.value, UNSUPPORTED, t, delta_spark, names=[FIXTURES[name]["feature"]])


@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_identity_always_column_refuses_given_values(spark, delta_spark, clone, mode):
    """identityColumns is honoured (test_identity.py): a value given for a GENERATED ALWAYS column
    is refused as Delta refuses it, and nothing is left behind."""
    t = clone("identity")
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(3, "c")], "id long, name string"), t.path, mode=mode)
    assert_refused(e.value, "DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED", t, delta_spark)


# ---------------------------------------------------------------------------------------------
# Rules declared when filecommit creates the table
# ---------------------------------------------------------------------------------------------

def _table_now(path, delta_spark, columns):
    r = spark_read(delta_spark, path)
    return Table(os.path.basename(path), path, r["latest_version"], columns, r["rows"], {}, log_file_names(path),
                 data_files(path))


def test_not_null_declared_from_the_dataframe_schema(spark, delta_spark, table_path):
    df = spark.range(1, 3).selectExpr("id", "CAST(nullif(id, 0) AS STRING) AS name")
    assert not df.schema["id"].nullable
    assert filecommit.write(df, table_path).version == 0
    detail = delta_spark.read_one({"path": table_path, "kind": "detail"})
    assert detail["ok"], detail.get("detail")
    nullable = {f["name"]: f["nullable"] for f in detail["schema"]["fields"]}
    assert nullable == {"id": False, "name": True}, "Spark + Delta sees id as NOT NULL"

    t = _table_now(table_path, delta_spark, ["id", "name"])
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(5, "x"), (None, "y")], "id long, name string"), table_path)
    assert_refused(e.value, NOT_NULL, t, delta_spark)
    # Spark + Delta itself enforces the declared column.
    ins = delta_spark.read_one({"path": table_path, "kind": "sql", "sql": "INSERT INTO {table} VALUES (NULL, 'z')"})
    assert not ins["ok"] and ins["condition"] == NOT_NULL, ins


def test_check_constraint_declared_with_table_properties(spark, delta_spark, table_path):
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string")
    assert filecommit.write(df, table_path, table_properties={"delta.constraints.pos": "id > 0"}).version == 0
    props = delta_spark.read_one({"path": table_path, "kind": "sql", "sql": "SHOW TBLPROPERTIES {table}"})
    assert props["ok"], props.get("detail")
    assert {r["key"]: r["value"] for r in props["rows"]}.get("delta.constraints.pos") == "id > 0"
    detail = delta_spark.read_one({"path": table_path, "kind": "detail"})
    assert detail["minWriterVersion"] >= 3 and "checkConstraints" in detail["tableFeatures"], detail

    t = _table_now(table_path, delta_spark, ["id", "name"])
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(3, "c"), (-1, "d")], "id long, name string"), table_path)
    assert_refused(e.value, VIOLATION, t, delta_spark)
    # Spark + Delta itself enforces the declared constraint.
    ins = delta_spark.read_one({"path": table_path, "kind": "sql", "sql": "INSERT INTO {table} VALUES (-1, 'z')"})
    assert not ins["ok"] and ins["condition"] == VIOLATION, ins
