"""delta-spark's ``DeltaTable.merge(...)`` builder (delta-spark 4.4's Delta Connect client, the
``merge_into_table`` relation) against the suite's filecommit server: every clause kind
(``whenMatchedUpdate`` / ``UpdateAll`` / ``Delete``, ``whenNotMatchedInsert`` / ``InsertAll``,
``whenNotMatchedBySourceUpdate`` / ``Delete``, with and without conditions), ``withSchemaEvolution()``,
target and source aliases, sources of any kind, on a plain and a deletion-vector table.

Each MERGE runs on our copy of a fixture table through ``DeltaTable`` and, as SQL ``MERGE INTO``, on
Delta's copy by Spark + Delta (``twin``): the metric rows (columns, order, values) must be Delta's,
and both copies must read back the same rows with delta-rs and with Spark + Delta. Bad input gets
Delta's error class and commits nothing.
"""

from __future__ import annotations

import re

import pytest
from delta.tables import DeltaTable
from deltatable_support import (COLUMNS, ROWS, both_read, delta_error, delta_rs_reads, latest_version, rows, steps,
                                unchanged)
from helpers import error_class, log_actions, versioned_rows_delta_rs, versioned_rows_spark_delta
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

pytestmark = pytest.mark.slow

FIXTURES = {
    "plain": steps(""),
    "dv": steps("TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"),
}

# The source: ids 30..49, so 10 rows match the target (ids 0..39) and 10 do not.
SOURCE = [(i, i * 100, "abc"[i % 3]) for i in range(30, 50)]


def source_sql(rows_, columns: str = "id, v, part") -> str:
    """The source rows as a SQL subquery for Delta's ``MERGE INTO ... USING``."""
    values = ", ".join("(" + ", ".join(repr(x) for x in r) + ")" for r in rows_)
    return f"(SELECT * FROM VALUES {values} AS s({columns}))"


def source(spark, rows_=SOURCE, columns=COLUMNS):
    """The source rows as a Spark Connect DataFrame."""
    return spark.createDataFrame(rows_, columns)


def delta_merge_error(delta_spark, path: str, stmt: str) -> str | None:
    """The error class Spark + Delta raises for a MERGE statement. Delta 4.4 on Spark 4.2 cannot
    format its ``DELTA_MERGE_UNRESOLVED_EXPRESSION`` for a reference in a condition or a value (its
    parameters differ from Spark's catalogue), so Spark answers ``INTERNAL_ERROR`` "Cannot find main
    error class 'DELTA_MERGE_UNRESOLVED_EXPRESSION'"; the class Delta raised is the one it names."""
    answer = delta_spark.read_one({"kind": "sql", "path": path, "sql": stmt})
    assert not answer["ok"], f"Delta ran {stmt!r}"
    if answer["condition"] == "INTERNAL_ERROR":
        m = re.search(r"Cannot find main error class '([A-Z_]+)'", f"{answer['error']}\n{answer.get('detail', '')}")
        assert m, answer
        return m.group(1)
    return answer["condition"]


def delta_merge(delta_spark, path: str, stmt: str) -> dict:
    """Spark + Delta's answer to a MERGE statement (``{table}`` names the table at ``path``)."""
    answer = delta_spark.read_one({"kind": "sql", "path": path, "sql": stmt})
    assert answer["ok"], answer
    return answer


# name -> (the builder on DeltaTable.alias("t").merge(source.alias("s"), "t.id = s.id"), its SQL clauses)
CLAUSES = {
    "update_and_insert_with_conditions": (
        lambda m: m.whenMatchedUpdate(condition="s.v > 3200", set={"v": "s.v + t.v"})
        .whenNotMatchedInsert(condition=F.col("s.id") % 2 == 0,
                              values={"id": "s.id", "v": F.col("s.v"), "part": "s.part"}),
        "WHEN MATCHED AND s.v > 3200 THEN UPDATE SET v = s.v + t.v "
        "WHEN NOT MATCHED AND s.id % 2 = 0 THEN INSERT (id, v, part) VALUES (s.id, s.v, s.part)"),
    "update_all_and_insert_all": (
        lambda m: m.whenMatchedUpdateAll().whenNotMatchedInsertAll(),
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
    "delete_then_update": (
        lambda m: m.whenMatchedDelete("t.id % 3 = 0").whenMatchedUpdateAll("s.v >= 3500")
        .whenMatchedUpdate(set={"v": "-1"}),
        "WHEN MATCHED AND t.id % 3 = 0 THEN DELETE WHEN MATCHED AND s.v >= 3500 THEN UPDATE SET * "
        "WHEN MATCHED THEN UPDATE SET v = -1"),
    "delete_all_matched": (
        lambda m: m.whenMatchedDelete(),
        "WHEN MATCHED THEN DELETE"),
    "insert_all_with_condition": (
        lambda m: m.whenNotMatchedInsertAll("s.id > 45")
        .whenNotMatchedInsert(values={"id": "s.id", "v": "0", "part": "'z'"}),
        "WHEN NOT MATCHED AND s.id > 45 THEN INSERT * "
        "WHEN NOT MATCHED THEN INSERT (id, v, part) VALUES (s.id, 0, 'z')"),
    "not_matched_by_source": (
        lambda m: m.whenMatchedUpdate(set={"v": "s.v"})
        .whenNotMatchedBySourceUpdate("t.id < 10", {"v": "t.v + 1"})
        .whenNotMatchedBySourceDelete("t.part = 'b'"),
        "WHEN MATCHED THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED BY SOURCE AND t.id < 10 THEN UPDATE SET v = t.v + 1 "
        "WHEN NOT MATCHED BY SOURCE AND t.part = 'b' THEN DELETE"),
    "not_matched_by_source_delete_all": (
        lambda m: m.whenNotMatchedBySourceDelete(),
        "WHEN NOT MATCHED BY SOURCE THEN DELETE"),
}

CASES = [(name, "plain") for name in CLAUSES] + [
    ("update_and_insert_with_conditions", "dv"), ("delete_then_update", "dv"), ("not_matched_by_source", "dv")]


@pytest.mark.parametrize("name, fixture", CASES)
def test_merge_clauses_match_delta(spark, twin, delta_spark, name, fixture):
    ours, theirs, version = twin(fixture)
    build, clauses = CLAUSES[name]
    merge = DeltaTable.forPath(spark, ours).alias("t").merge(source(spark).alias("s"), "t.id = s.id")
    got = build(merge).execute()
    expected = delta_merge(delta_spark, theirs, f"MERGE INTO {{table}} AS t USING {source_sql(SOURCE)} AS s "
                                                f"ON t.id = s.id {clauses}")
    assert got.columns == expected["columns"] == ["num_affected_rows", "num_updated_rows", "num_deleted_rows",
                                                  "num_inserted_rows"]
    assert rows(got) == expected["rows"]
    assert expected["rows"][0]["num_affected_rows"] > 0
    # Delta's copy (the expectation) read by delta-rs; ours by both readers
    their_rows = versioned_rows_delta_rs(theirs, COLUMNS)[1]
    assert their_rows != sorted(ROWS)
    both_read(delta_spark, ours, their_rows)
    assert latest_version(ours) == version + 1
    info = next(a["commitInfo"] for a in log_actions(ours)[version + 1] if "commitInfo" in a)
    assert info["operation"] == "MERGE"
    # on a deletion-vector table, changed rows are marked in deletion vectors where Delta marks them
    assert dv_adds(ours, version + 1) == dv_adds(theirs, version + 1), (dv_adds(ours, version + 1),
                                                                       dv_adds(theirs, version + 1))
    if fixture == "dv" and name == "update_and_insert_with_conditions":
        assert dv_adds(ours, version + 1) > 0  # Delta 4.4 marks these updated rows in deletion vectors


def dv_adds(path: str, version: int) -> int:
    """How many files the commit ``version`` adds with a deletion vector."""
    return sum(1 for a in log_actions(path)[version] if "add" in a and a["add"].get("deletionVector"))


def test_merge_without_aliases_and_with_a_column_condition(spark, twin, delta_spark):
    """No alias on either side: unqualified names resolve against the target and the source."""
    ours, theirs, _ = twin("plain")
    src = spark.range(35, 45).select(F.col("id").alias("k"), (F.col("id") * 7).alias("w"))
    got = (DeltaTable.forPath(spark, ours).merge(src, F.col("id") == F.col("k"))
           .whenMatchedUpdate(set={"v": F.col("w")})
           .whenNotMatchedInsert(values={"id": "k", "v": "w", "part": "'n'"}).execute())
    values = ", ".join(f"({i}, {i * 7})" for i in range(35, 45))
    expected = delta_merge(delta_spark, theirs,
                           f"MERGE INTO {{table}} USING (SELECT * FROM VALUES {values} AS s(k, w)) "
                           "ON id = k WHEN MATCHED THEN UPDATE SET v = w "
                           "WHEN NOT MATCHED THEN INSERT (id, v, part) VALUES (k, w, 'n')")
    assert rows(got) == expected["rows"] == [{"num_affected_rows": 10, "num_updated_rows": 5, "num_deleted_rows": 0,
                                              "num_inserted_rows": 5}]
    changed = [(i, i * 7 if i >= 35 else v, p) for i, v, p in ROWS] + [(i, i * 7, "n") for i in range(40, 45)]
    both_read(delta_spark, ours, changed)
    delta_rs_reads(theirs, changed)


def test_merge_source_read_from_the_table_itself(spark, twin, delta_spark):
    """A source that is the target's own DataFrame (a self-merge)."""
    ours, theirs, _ = twin("plain")
    t = DeltaTable.forPath(spark, ours)
    src = t.toDF().where("part = 'a'").select("id", (F.col("v") + 5).alias("v"), "part")
    got = t.alias("t").merge(src.alias("s"), "t.id = s.id").whenMatchedUpdate(set={"v": "s.v"}).execute()
    expected = delta_merge(delta_spark, theirs,
                           "MERGE INTO {table} AS t USING (SELECT id, v + 5 AS v, part FROM {table} "
                           "WHERE part = 'a') AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v")
    assert rows(got) == expected["rows"]
    changed = [(i, v + 5 if p == "a" else v, p) for i, v, p in ROWS]
    both_read(delta_spark, ours, changed)
    delta_rs_reads(theirs, changed)


EVOLVED = ["id", "v", "part", "extra"]


@pytest.mark.parametrize("build, clauses", [
    (lambda m: m.whenMatchedUpdateAll().whenNotMatchedInsertAll(),
     "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
    (lambda m: m.whenMatchedUpdate(set={"extra": "s.extra", "t.v": "s.v"}),
     "WHEN MATCHED THEN UPDATE SET extra = s.extra, t.v = s.v"),
], ids=["star", "assignment"])
def test_merge_with_schema_evolution_matches_delta(spark, twin, delta_spark, build, clauses):
    ours, theirs, version = twin("plain")
    src_rows = [(i, v, p, f"x{i}") for i, v, p in SOURCE]
    merge = DeltaTable.forPath(spark, ours).alias("t").merge(source(spark, src_rows, EVOLVED).alias("s"), "t.id = s.id")
    got = build(merge.withSchemaEvolution()).execute()
    expected = delta_merge(delta_spark, theirs,
                           f"MERGE WITH SCHEMA EVOLUTION INTO {{table}} AS t USING "
                           f"{source_sql(src_rows, 'id, v, part, extra')} AS s ON t.id = s.id {clauses}")
    assert got.columns == expected["columns"]
    assert rows(got) == expected["rows"]
    their_schema = delta_merge(delta_spark, theirs, "DESCRIBE {table}")["rows"]
    assert delta_merge(delta_spark, ours, "DESCRIBE {table}")["rows"] == their_schema
    assert [r["col_name"] for r in their_schema][:4] == EVOLVED
    their_rows = versioned_rows_delta_rs(theirs, EVOLVED)[1]
    assert versioned_rows_delta_rs(ours, EVOLVED)[1] == their_rows
    assert versioned_rows_spark_delta(delta_spark, ours, EVOLVED)[1] == their_rows
    assert latest_version(ours) == version + 1


def test_unknown_column_without_schema_evolution(spark, twin, delta_spark):
    ours, theirs, version = twin("plain")
    src = source(spark, [(i, v, p, "x") for i, v, p in SOURCE], EVOLVED).alias("s")
    with pytest.raises(PySparkException) as e:
        DeltaTable.forPath(spark, ours).alias("t").merge(src, "t.id = s.id").whenMatchedUpdate(
            set={"extra": "s.extra"}).execute()
    assert error_class(e) == "DELTA_MERGE_UNRESOLVED_EXPRESSION" == delta_merge_error(
        delta_spark, theirs,
        f"MERGE INTO {{table}} AS t USING {source_sql([(1, 1, 'a', 'x')], 'id, v, part, extra')} AS s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET extra = s.extra")
    unchanged(ours, version)


# name -> (the bad builder on DeltaTable.alias("t").merge(source.alias("s"), ...), Delta's SQL for the same)
BAD = {
    "unknown_column_in_condition": (
        lambda t, s: t.merge(s, "t.id = s.nope").whenMatchedDelete(),
        "ON t.id = s.nope WHEN MATCHED THEN DELETE"),
    "unknown_column_in_clause_condition": (
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedUpdate("t.nope > 1", {"v": "s.v"}),
        "ON t.id = s.id WHEN MATCHED AND t.nope > 1 THEN UPDATE SET v = s.v"),
    "unknown_column_in_value": (
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedUpdate(set={"v": "s.nope + 1"}),
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.nope + 1"),
    "unknown_target_column": (
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedUpdate(set={"nope": "s.v"}),
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET nope = s.v"),
    "target_column_in_insert": (
        lambda t, s: t.merge(s, "t.id = s.id").whenNotMatchedInsert(
            values={"id": "s.id", "v": "t.v", "part": "s.part"}),
        "ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, v, part) VALUES (s.id, t.v, s.part)"),
    "source_column_in_not_matched_by_source": (
        lambda t, s: t.merge(s, "t.id = s.id").whenNotMatchedBySourceUpdate("s.v > 1", {"v": "1"}),
        "ON t.id = s.id WHEN NOT MATCHED BY SOURCE AND s.v > 1 THEN UPDATE SET v = 1"),
    "non_deterministic_condition": (
        lambda t, s: t.merge(s, "t.id = s.id").whenMatchedUpdate("rand() > 0.5", {"v": "s.v"}),
        "ON t.id = s.id WHEN MATCHED AND rand() > 0.5 THEN UPDATE SET v = s.v"),
    "several_source_rows_match": (
        lambda t, s: t.merge(s, "t.id % 5 = s.id % 5").whenMatchedUpdate(set={"v": "s.v"}),
        "ON t.id % 5 = s.id % 5 WHEN MATCHED THEN UPDATE SET v = s.v"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_merge_is_delta_class_and_commits_nothing(spark, twin, delta_spark, name):
    ours, theirs, version = twin("plain")
    build, sql = BAD[name]
    with pytest.raises(PySparkException) as e:
        build(DeltaTable.forPath(spark, ours).alias("t"), source(spark).alias("s")).execute()
    stmt = f"MERGE INTO {{table}} AS t USING {source_sql(SOURCE)} AS s {sql}"
    expected = delta_merge_error(delta_spark, theirs, stmt)
    assert expected is not None
    assert error_class(e) == expected
    unchanged(ours, version)


def test_clause_list_errors_are_delta_merge_builder_classes(spark, twin, delta_spark):
    """Delta's ``DeltaMergeBuilder`` checks the clause list itself: no clause is
    ``DELTA_MERGE_MISSING_WHEN``, an unconditional MATCHED clause before another MATCHED clause
    ``DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION`` (SQL cannot send the first; for the second
    Spark's SQL parser answers first, with Spark's ``NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION``)."""
    ours, theirs, version = twin("plain")
    t = DeltaTable.forPath(spark, ours).alias("t")
    with pytest.raises(PySparkException) as e:
        t.merge(source(spark).alias("s"), "t.id = s.id").execute()
    assert error_class(e) == "DELTA_MERGE_MISSING_WHEN"
    with pytest.raises(PySparkException) as e:
        t.merge(source(spark).alias("s"), "t.id = s.id").whenMatchedDelete().whenMatchedUpdate(
            "s.v > 1", {"v": "s.v"}).execute()
    assert error_class(e) == "DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION"
    assert delta_error(delta_spark, theirs, f"MERGE INTO {{table}} AS t USING {source_sql(SOURCE)} AS s ON t.id = s.id "
                       "WHEN MATCHED THEN DELETE WHEN MATCHED AND s.v > 1 THEN UPDATE SET v = s.v") == \
        "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION"
    unchanged(ours, version)
