"""Writing into Delta tables that another writer made, with the rules Delta enforces on rows: CHECK
constraints, NOT NULL columns, column invariants, generated columns and identity columns, on tables
real delta-spark 4.4.0 made (``tests/foreign_tables.py``), and the same rules declared when filecommit
creates the table. A valid append lands and reads back exactly with Spark + Delta and delta-rs; a
violating one is refused with Delta's error class, as Spark + Delta itself refuses the same rows, and
leaves the table's version, rows, log and files as they were.
"""

from __future__ import annotations

import pytest
from foreign_tables import (
    NOT_NULL,
    VIOLATION,
    append_lands,
    assert_delta_refuses_too,
    assert_delta_rs_reads,
    assert_refused,
    assert_spark_reads,
    plain_dicts_frame,
    records,
    spark_read,
    table_now,
)
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow


# ---------------------------------------------------------------------------------------------
# CHECK constraint, NOT NULL, invariant
# ---------------------------------------------------------------------------------------------

def test_check_constraint_valid_append(spark, delta_spark, clone):
    append_lands(spark, delta_spark, clone("check"), [(3, "c"), (4, None)], "id long, name string")


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
    append_lands(spark, delta_spark, clone("not_null"), [(3, "c"), (4, None)], "id long, name string")


def test_null_into_not_null_column_is_refused(spark, delta_spark, clone):
    t = clone("not_null")
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(3, "c"), (None, "d")], "id long, name string"), t.path)
    assert_refused(e.value, NOT_NULL, t, delta_spark)
    assert_delta_refuses_too(delta_spark, clone("not_null", "_delta"), ["id", "name"], [(3, "c"), (None, "d")],
                             NOT_NULL)


def test_invariant_valid_append(spark, delta_spark, clone):
    append_lands(spark, delta_spark, clone("invariant"), [(50, "c"), (99, None)], "id long, name string")


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
    expected = t.frame(records([(ts, d, v, b) for ts, v, d, b in rows], GEN_COLS), GEN_COLS)
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


# SQL INSERT through the server: a column list may leave generated columns out (Delta computes them),
# name the columns in another order, or give them all; the same statements run by Spark + Delta on a
# twin give the rows both readers must see.
GEN_INSERTS = [
    "INSERT INTO {t} (ts, v) VALUES (TIMESTAMP'2024-03-05 12:00:00', 7), (TIMESTAMP'2024-03-06 12:00:00', NULL)",
    "INSERT INTO {t} (v, ts) SELECT 8, TIMESTAMP'2024-03-07 12:00:00'",
    "INSERT INTO {t} (b, ts, v) VALUES (18, TIMESTAMP'2024-03-08 12:00:00', 9)",
    "INSERT INTO {t} VALUES (TIMESTAMP'2024-03-09 12:00:00', DATE'2024-03-09', 10, 20)",
]


def test_sql_insert_column_lists_compute_generated_columns(spark, delta_spark, clone):
    ours, theirs = clone("generated"), clone("generated", "_delta")
    for stmt in GEN_INSERTS:
        spark.sql(stmt.format(t=f"delta.`{ours.path}`")).collect()
        ans = delta_spark.read_one({"kind": "sql", "path": theirs.path, "sql": stmt.format(t="{table}")})
        assert ans["ok"], ans
    version = ours.version + len(GEN_INSERTS)
    expected = plain_dicts_frame(spark_read(delta_spark, theirs.path)["rows"], GEN_COLS)
    assert len(expected) == len(ours.rows) + 5
    assert_spark_reads(delta_spark, ours.path, expected, GEN_COLS, version)
    assert_delta_rs_reads(ours.path, expected, GEN_COLS, ours.delta_rs)


def test_sql_insert_column_list_generates_identity_values(spark, delta_spark, clone):
    ours, theirs = clone("identity"), clone("identity", "_delta")
    stmt = "INSERT INTO {t} (name) VALUES ('c')"
    spark.sql(stmt.format(t=f"delta.`{ours.path}`")).collect()
    assert delta_spark.read_one({"kind": "sql", "path": theirs.path, "sql": stmt.format(t="{table}")})["ok"]
    expected = plain_dicts_frame(spark_read(delta_spark, theirs.path)["rows"], ours.columns)
    assert sorted(expected["name"]) == ["a", "b", "c"] and expected["id"].nunique() == 3, expected
    assert_spark_reads(delta_spark, ours.path, expected, ours.columns, ours.version + 1)
    assert_delta_rs_reads(ours.path, expected, ours.columns, ours.delta_rs)


# A value given for a generated column is checked, NULL included (b must be v * 2 = 14).
@pytest.mark.parametrize("source", ["VALUES (TIMESTAMP'2024-03-05 12:00:00', 7, 15)",
                                    "VALUES (TIMESTAMP'2024-03-05 12:00:00', 7, NULL)",
                                    "SELECT TIMESTAMP'2024-03-05 12:00:00', 7, NULL"],
                         ids=["value", "null", "select_null"])
def test_sql_insert_given_generated_value_that_differs_is_refused(spark, delta_spark, clone, source):
    t = clone("generated")
    stmt = "INSERT INTO {t} (ts, v, b) " + source
    with pytest.raises(PySparkException) as e:
        spark.sql(stmt.format(t=f"delta.`{t.path}`")).collect()
    assert_refused(e.value, VIOLATION, t, delta_spark)
    theirs = clone("generated", "_delta")
    ans = delta_spark.read_one({"kind": "sql", "path": theirs.path, "sql": stmt.format(t="{table}")})
    assert not ans["ok"] and ans["condition"] == VIOLATION, ans


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

def test_not_null_declared_from_the_dataframe_schema(spark, delta_spark, table_path):
    df = spark.range(1, 3).selectExpr("id", "CAST(nullif(id, 0) AS STRING) AS name")
    assert not df.schema["id"].nullable
    assert filecommit.write(df, table_path).version == 0
    detail = delta_spark.read_one({"path": table_path, "kind": "detail"})
    assert detail["ok"], detail.get("detail")
    nullable = {f["name"]: f["nullable"] for f in detail["schema"]["fields"]}
    assert nullable == {"id": False, "name": True}, "Spark + Delta sees id as NOT NULL"

    t = table_now(table_path, delta_spark, ["id", "name"])
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

    t = table_now(table_path, delta_spark, ["id", "name"])
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(3, "c"), (-1, "d")], "id long, name string"), table_path)
    assert_refused(e.value, VIOLATION, t, delta_spark)
    # Spark + Delta itself enforces the declared constraint.
    ins = delta_spark.read_one({"path": table_path, "kind": "sql", "sql": "INSERT INTO {table} VALUES (-1, 'z')"})
    assert not ins["ok"] and ins["condition"] == VIOLATION, ins
