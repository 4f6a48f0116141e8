"""The Delta tables another writer made, for tests that write into them: the fixture tables, made
once per test session by real delta-spark (the Spark + Delta worker, ``tests/delta_tables.py`` in
``.venv-delta``), a private copy of one per test (``clone``), and the checks those tests share: exact
reads by Spark + Delta and delta-rs, and a refused write that leaves the table as it was.

The fixture tables: a cleaned-up log (checkpoints only up to version 20), a CHECK constraint, a NOT
NULL column, a column invariant, generated columns, deletion vectors, column mapping (name and id
modes, renamed columns), appendOnly, change data feed, in-commit timestamps, v2 checkpoints, and
tables with newer writer features. ``tests/conftest.py`` registers the fixtures ``foreign`` and
``clone``.
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

import pandas as pd
import pytest
from delta_tables import log_file_names
from helpers import canonical, data_files, error_class, log_state, shared_dir, sql_steps

import filecommit

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

@pytest.fixture(scope="session")
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
        got = plain_dicts_frame(DeltaTable(m["path"]).to_pyarrow_table().to_pylist(), m["columns"])
    except Exception as e:  # noqa: BLE001 - delta-rs' own limitation
        return f"cannot read it: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    if not got.equals(plain_dicts_frame(m["rows"], m["columns"])):
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
        return plain_dicts_frame(list(self.rows) + list(extra), cols)


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


def plain_dicts_frame(rows, columns):
    df = pd.DataFrame([{c: _plain(r.get(c)) for c in columns} for r in rows], columns=columns, dtype=object)
    return canonical(df, columns)


def records(rows, columns):
    return [dict(zip(columns, r, strict=True)) for r in rows]


def assert_frames(got, expected, what):
    try:
        pd.testing.assert_frame_equal(got, expected)
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
    assert_frames(plain_dicts_frame(r["rows"], columns), expected, f"Spark + Delta read of {path}")
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
    got = plain_dicts_frame(DeltaTable(path).to_pyarrow_table().to_pylist(), columns)
    assert_frames(got, expected, f"delta-rs read of {path}")
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


def append_lands(spark, delta_spark, table, rows, schema, columns=None, **kw):
    """Appends ``rows`` (tuples in ``schema`` order); asserts version + 1 and exact reads."""
    columns = columns or table.columns
    r = filecommit.write(spark.createDataFrame(rows, schema), table.path, mode="append", **kw)
    assert r.committed and r.version == table.version + 1, (r.committed, r.version, table.version)
    names = [f.split()[0] for f in schema.split(",")]
    expected = table.frame(records(rows, names), columns)
    assert_spark_reads(delta_spark, table.path, expected, columns, table.version + 1)
    assert_delta_rs_reads(table.path, expected, columns, table.delta_rs)
    return r


def table_now(path, delta_spark, columns):
    r = spark_read(delta_spark, path)
    return Table(os.path.basename(path), path, r["latest_version"], columns, r["rows"], {}, log_file_names(path),
                 data_files(path))
