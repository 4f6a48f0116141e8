"""MERGE (``filecommit.merge``) checked against Delta itself: every clause kind on a partitioned table
with the change data feed, aliases, txn, the files rewritten, a source row matching twice, clause
rules, and the client's checks before anything is sent.

Each test changes one copy of a table real delta-spark 4.4.0 made, and Delta Lake on Spark runs the
same ``MERGE`` SQL on another (``tests/rowlevel_tables.py``): Spark + Delta reads both copies (table
and change feed) and they must hold the same rows; the files Delta rewrote are the files we must
rewrite; Delta's ``operationMetrics`` are our row metrics; delta-rs reads our copy as a third reader.
"""

from __future__ import annotations

import pytest
from delta_tables import log_file_names
from helpers import data_files, values_sql
from pyspark.errors import PySparkException
from rowlevel_tables import (
    ROWLEVEL_FIXTURES,
    assert_same_as_delta,
    delta_metrics,
    delta_runs,
    removed_paths,
    twin_on_s3,
)

import filecommit

pytestmark = pytest.mark.slow

# The module's tables (conftest's made): the base table only.
FIXTURES = {"base": ROWLEVEL_FIXTURES["base"]}


# ---------------------------------------------------------------------------------------------
# MERGE
# ---------------------------------------------------------------------------------------------

SOURCE = [(3, 333, "a"), (6, -1, "a"), (9, 999, "a"), (12, 1212, "a"), (31, 310, "b"), (32, -5, "c"), (40, 400, "a")]
SOURCE_SQL = f"(SELECT * FROM VALUES {values_sql(SOURCE)} AS s(id, v, part))"


@twin_on_s3
def test_merge_with_every_clause_kind_on_a_partitioned_table_with_change_data(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    source = spark.createDataFrame(SOURCE, "id BIGINT, v BIGINT, part STRING")
    r = (filecommit.merge(source, ours, "t.id = s.id", source_alias="s", target_alias="t")
         .when_matched_delete("s.v < 0")
         .when_matched_update({"v": "s.v"}, "s.v > 500")
         .when_matched_update({"v": "t.v + 1"})
         .when_not_matched_insert_all("s.v > 0")
         .when_not_matched_by_source_delete("t.part = 'c' AND t.id > 20")
         .when_not_matched_by_source_update({"v": "t.v + 1000"}, "t.id < 5")
         .execute())
    delta_runs(delta_spark, theirs,
               f"MERGE INTO {{table}} t USING {SOURCE_SQL} s ON t.id = s.id "
               "WHEN MATCHED AND s.v < 0 THEN DELETE "
               "WHEN MATCHED AND s.v > 500 THEN UPDATE SET v = s.v "
               "WHEN MATCHED THEN UPDATE SET v = t.v + 1 "
               "WHEN NOT MATCHED AND s.v > 0 THEN INSERT * "
               "WHEN NOT MATCHED BY SOURCE AND t.part = 'c' AND t.id > 20 THEN DELETE "
               "WHEN NOT MATCHED BY SOURCE AND t.id < 5 THEN UPDATE SET v = t.v + 1000")

    assert r.committed and r.version == v0 + 1
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1)
    m = delta_metrics(theirs, v0 + 1)
    assert (r.metrics.num_inserted_rows, r.metrics.num_updated_rows, r.metrics.num_deleted_rows) == (
        m["numTargetRowsInserted"], m["numTargetRowsUpdated"], m["numTargetRowsDeleted"])
    assert (r.metrics.num_inserted_rows, r.metrics.num_updated_rows, r.metrics.num_deleted_rows) == (2, 6, 4)
    assert r.cdc_files and r.add_files and r.remove_files


def test_merge_source_named_by_its_own_alias(spark, delta_spark, twin):
    """Delta's convention: ``DeltaTable.merge(source.alias("s"), "t.id = s.id")`` -- the source
    DataFrame's own alias names it when no source_alias is given."""
    ours, theirs, v0 = twin("base")
    source = spark.createDataFrame(SOURCE, "id BIGINT, v BIGINT, part STRING").alias("src")
    r = (filecommit.merge(source, ours, "tgt.id = src.id", target_alias="tgt")
         .when_matched_update({"v": "src.v + tgt.v"}).when_not_matched_insert_all().execute())
    delta_runs(delta_spark, theirs,
               f"MERGE INTO {{table}} tgt USING {SOURCE_SQL.replace(' s(', ' src(')} src ON tgt.id = src.id "
               "WHEN MATCHED THEN UPDATE SET v = src.v + tgt.v WHEN NOT MATCHED THEN INSERT *")
    assert r.committed and r.version == v0 + 1
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1)
    # Without an alias of its own the source is still called "source".
    plain = spark.createDataFrame([(1, 5, "a")], "id BIGINT, v BIGINT, part STRING")
    r = filecommit.merge(plain, ours, "target.id = source.id").when_matched_delete().execute()
    assert r.committed and r.metrics.num_deleted_rows == 1


def test_merge_inserting_some_columns_with_txn(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    source = spark.createDataFrame([(7, 1, "b"), (70, 2, "c")], "ID BIGINT, value BIGINT, part STRING")
    build = (filecommit.merge(source, ours, "t.id = s.ID", source_alias="s", target_alias="t")
             .when_matched_update({"V": "s.value * 1000"})
             .when_not_matched_insert({"id": "s.ID", "part": "s.part"}))
    r = build.execute(txn=("nightly-merge", 1))
    again = build.execute(txn=("nightly-merge", 1))
    delta_runs(delta_spark, theirs, "MERGE INTO {table} t USING (SELECT * FROM VALUES (7, 1, 'b'), (70, 2, 'c') "
               "AS s(ID, value, part)) s ON t.id = s.ID WHEN MATCHED THEN UPDATE SET v = s.value * 1000 "
               "WHEN NOT MATCHED THEN INSERT (id, part) VALUES (s.ID, s.part)")
    assert r.committed and not again.committed and again.version == v0 + 1
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1)
    assert (r.metrics.num_updated_rows, r.metrics.num_inserted_rows) == (1, 1)


def test_merge_rewrites_only_files_with_matched_rows(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    source = spark.createDataFrame([(3, 1, "a"), (50, 2, "b")], "id BIGINT, v BIGINT, part STRING")
    r = (filecommit.merge(source, ours, "target.id = source.id")
         .when_matched_update_all().when_not_matched_insert_all().execute())
    delta_runs(delta_spark, theirs, "MERGE INTO {table} t USING (SELECT * FROM VALUES (3, 1, 'a'), (50, 2, 'b') "
               "AS s(id, v, part)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1)
    assert removed_paths(ours, v0 + 1) == removed_paths(theirs, v0 + 1) and len(r.remove_files) == 1
    m = delta_metrics(theirs, v0 + 1)
    assert r.metrics.num_copied_rows == m["numTargetRowsCopied"]


def test_merge_with_a_source_row_matching_twice_is_refused(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    logs, files = log_file_names(ours), data_files(ours)
    source = spark.createDataFrame([(5, 1, "x"), (5, 2, "y")], "id BIGINT, v BIGINT, part STRING")
    with pytest.raises(PySparkException) as e:
        (filecommit.merge(source, ours, "target.id = source.id")
         .when_matched_update({"v": "source.v"}).when_not_matched_insert_all().execute())
    assert e.value.getCondition() == "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"
    assert e.value.getSqlState() == "21506"
    assert log_file_names(ours) == logs and data_files(ours) == files
    answer = delta_spark.read_one({"kind": "sql", "path": theirs, "sql":
                                   "MERGE INTO {table} t USING (SELECT * FROM VALUES (5, 1, 'x'), (5, 2, 'y') "
                                   "AS s(id, v, part)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
                                   "WHEN NOT MATCHED THEN INSERT *"})
    assert not answer["ok"] and answer["condition"] == "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"
    # An unconditional delete may match several source rows (Delta's exception to the rule).
    r = filecommit.merge(source, ours, "target.id = source.id").when_matched_delete().execute()
    assert r.committed and r.metrics.num_deleted_rows == 1


def test_merge_clause_rules_and_unknown_columns(spark, twin):
    ours, _, v0 = twin("base")
    source = spark.createDataFrame([(1, 1, "a")], "id BIGINT, v BIGINT, part STRING")
    cases = [
        (lambda: filecommit.merge(source, ours, "target.id = source.id")
         .when_matched_update({"v": "1"}).when_matched_delete().when_matched_delete("source.v > 0").execute(),
         "DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION"),
        (lambda: filecommit.merge(source, ours, "target.id = source.id")
         .when_matched_update({"nope": "1"}).execute(), "DELTA_MERGE_UNRESOLVED_EXPRESSION"),
        (lambda: filecommit.update(spark, ours, set={"nope": "1"}), "DELTA_MERGE_UNRESOLVED_EXPRESSION"),
        (lambda: filecommit.delete(spark, ours + "_missing", "id = 1"), "DELTA_MISSING_DELTA_TABLE"),
    ]
    logs = log_file_names(ours)
    for call, condition in cases:
        with pytest.raises(PySparkException) as e:
            call()
        assert e.value.getCondition() == condition, str(e.value)
    with pytest.raises(PySparkException) as e:
        filecommit.delete(spark, ours, "no_such_column = 1")
    assert "UNRESOLVED_COLUMN" in (e.value.getCondition() or "")
    assert log_file_names(ours) == logs


def test_client_checks_before_anything_is_sent(spark, table_path):
    from pyspark.errors import PySparkTypeError, PySparkValueError

    with pytest.raises(PySparkValueError) as e:
        filecommit.update(spark, table_path, set={})
    assert e.value.getCondition() == "CANNOT_BE_EMPTY"
    with pytest.raises(PySparkTypeError):
        filecommit.delete(spark, table_path, 42)  # type: ignore[arg-type]
    with pytest.raises(PySparkValueError):
        filecommit.merge(spark.range(1), table_path, "target.id = source.id").execute()
    with pytest.raises(PySparkValueError):
        filecommit.merge(spark.range(1), table_path, "a.id = b.id", source_alias="a", target_alias="A")
