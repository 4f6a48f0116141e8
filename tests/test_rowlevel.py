"""Row-level changes (``filecommit.delete`` / ``update``) checked against Delta itself.

Every table here is made by real delta-spark 4.4.0 (``.venv-delta``) and copied twice: filecommit
changes one copy, Delta Lake on Spark runs the same statement (``DELETE`` / ``UPDATE`` / ``MERGE``
SQL) on the other. The reference answers are Delta's: Spark + Delta reads both copies (table and
``readChangeFeed`` of the new version) and they must hold the same rows; the files Delta rewrote
are the files we must rewrite; Delta's ``operationMetrics`` are our row metrics. delta-rs reads our
copy as a third reader. Refusals carry Delta's error class and leave no commit and no file. The
tables and checks are in ``tests/rowlevel_tables.py``; MERGE is in ``tests/test_merge.py``.
"""

from __future__ import annotations

import json
import os

import pytest
from delta_tables import log_file_names
from helpers import data_files, log_actions
from pyspark.errors import PySparkException
from rowlevel_tables import (
    COLS,
    ROWLEVEL_FIXTURES,
    active_files,
    assert_same,
    assert_same_as_delta,
    delta_metrics,
    delta_runs,
    dicts_frame,
    removed_paths,
    twin_on_s3,
)

import filecommit

pytestmark = pytest.mark.slow

# The module's tables (conftest's made).
FIXTURES = ROWLEVEL_FIXTURES


# ---------------------------------------------------------------------------------------------
# DELETE
# ---------------------------------------------------------------------------------------------

def test_delete_by_a_data_predicate_rewrites_only_files_with_matching_rows(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    files_before = len(active_files(ours))
    r = filecommit.delete(spark, ours, "v % 70 = 0 AND id > 3")
    delta_runs(delta_spark, theirs, "DELETE FROM {table} WHERE v % 70 = 0 AND id > 3")

    assert r.committed and r.version == v0 + 1
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1)
    # Exactly the files Delta rewrote, a strict subset of the table's files.
    assert removed_paths(ours, v0 + 1) == removed_paths(theirs, v0 + 1)
    assert 0 < len(r.remove_files) < files_before
    assert sorted(f.path for f in r.remove_files) == removed_paths(ours, v0 + 1)
    m = delta_metrics(theirs, v0 + 1)
    assert (r.metrics.num_deleted_rows, r.metrics.num_copied_rows) == (m["numDeletedRows"], m["numCopiedRows"])
    assert r.metrics.num_deleted_rows == 4  # ids 7, 14, 21, 28
    assert r.cdc_files and all(f.path.startswith("_change_data/") for f in r.cdc_files)


def test_delete_by_a_partition_predicate_drops_files_without_rewriting(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    r = filecommit.delete(spark, ours, "part = 'b'")
    delta_runs(delta_spark, theirs, "DELETE FROM {table} WHERE part = 'b'")

    assert r.committed and r.add_files == []
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1)
    assert removed_paths(ours, v0 + 1) == removed_paths(theirs, v0 + 1)
    assert all(f.partition_values == {"part": "b"} for f in r.remove_files)
    assert r.metrics.num_deleted_rows == 10 and r.metrics.num_copied_rows == 0


def test_delete_without_condition_and_with_no_match(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    nothing = filecommit.delete(spark, ours, "id > 1000")
    assert not nothing.committed and nothing.version == v0
    assert log_file_names(ours) == log_file_names(theirs)

    r = filecommit.delete(spark, ours)
    delta_runs(delta_spark, theirs, "DELETE FROM {table}")
    assert r.metrics.num_deleted_rows == 30
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1)


def test_partition_values_that_need_escaping_and_null(spark, delta_spark, twin):
    ours, theirs, v0 = twin("odd_parts")
    filecommit.update(spark, ours, set={"v": "v + 1"}, condition="id IN (1, 2, 3, 4)")
    delta_runs(delta_spark, theirs, "UPDATE {table} SET v = v + 1 WHERE id IN (1, 2, 3, 4)")
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1, delta_rs_cdf=False)
    r = filecommit.delete(spark, ours, "part IS NULL OR part = 'c=d/e'")
    delta_runs(delta_spark, theirs, "DELETE FROM {table} WHERE part IS NULL OR part = 'c=d/e'")
    assert r.add_files == [] and r.metrics.num_deleted_rows == 3
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 2, delta_rs_cdf=False)


def test_partition_conjuncts_prune_the_files_read(spark, twin):
    """A change whose condition excludes a partition never opens its files: here they are made
    unreadable, and only a change that must read them fails (before anything is written)."""
    ours, _, v0 = twin("base")
    broken = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(ours, "part=b")) for f in fs
              if f.endswith(".parquet")]
    assert broken
    for f in broken:
        with open(f, "wb") as fh:
            fh.write(b"not parquet")
    r = filecommit.delete(spark, ours, "part = 'a' AND v > 100")
    assert r.committed and r.metrics.num_deleted_rows == 7  # ids 12, 15, ..., 30 (part a, v > 100)
    source = spark.createDataFrame([(2, 0, "c"), (5, 0, "c")], "id BIGINT, v BIGINT, part STRING")
    m = (filecommit.merge(source, ours, "target.id = source.id AND target.part = 'c'")
         .when_matched_update({"v": "source.v"}).execute())
    assert m.committed and m.metrics.num_updated_rows == 2
    logs, files = log_file_names(ours), data_files(ours)
    with pytest.raises(PySparkException):
        filecommit.update(spark, ours, set={"v": "0"}, condition="v > 100")
    assert log_file_names(ours) == logs and data_files(ours) == files


def _parquet_files(path):
    return [f for f in data_files(path) if f.endswith(".parquet") and not f.startswith("_change_data/")]


@twin_on_s3
def test_delete_and_update_write_deletion_vectors_when_the_table_takes_them(spark, delta_spark, twin):
    ours, theirs, v0 = twin("dv_cdf")
    parquet = _parquet_files(ours)
    r = filecommit.delete(spark, ours, "id % 4 = 0")
    delta_runs(delta_spark, theirs, "DELETE FROM {table} WHERE id % 4 = 0")
    # delta-rs cannot read tables with deletion vectors: Spark + Delta is the reader here.
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1, delta_rs=False)
    assert _parquet_files(ours) == parquet, "no data file was rewritten"
    assert r.metrics.num_deleted_rows == 7 and r.metrics.num_copied_rows == 0
    assert r.add_files and all(a.deletion_vector and a.deletion_vector.storage_type == "u" for a in r.add_files)
    # Each touched file comes back with its DV, unless none of its rows is left (then only removed).
    assert {a.path for a in r.add_files} <= {rm.path for rm in r.remove_files}
    gone = [rm for rm in r.remove_files if rm.path not in {a.path for a in r.add_files}]
    assert sum(a.deletion_vector.cardinality for a in r.add_files) + sum(
        json.loads(next(x["add"]["stats"] for v in log_actions(ours).values() for x in v
                        if "add" in x and x["add"]["path"] == rm.path))["numRecords"] for rm in gone) == 7
    adds = [a["add"] for a in log_actions(ours)[v0 + 1] if "add" in a]
    assert all('"tightBounds":false' in a["stats"] for a in adds)

    u = filecommit.update(spark, ours, set={"v": "v * 2"}, condition="id % 4 = 1 OR id = 2")
    delta_runs(delta_spark, theirs, "UPDATE {table} SET v = v * 2 WHERE id % 4 = 1 OR id = 2")
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 2, delta_rs=False)
    assert u.metrics.num_updated_rows == 9 and u.metrics.num_copied_rows == 0
    assert len(_parquet_files(ours)) == len(parquet) + len([a for a in u.add_files if a.deletion_vector is None])

    # Every row of a file deleted: the file is removed, not added back with a DV.
    d = filecommit.delete(spark, ours, "part = 'a' OR id < 1000")
    assert d.add_files == [] and d.remove_files
    reads = delta_spark.read([{"path": ours, "kind": "table"}])
    assert reads[0]["rows"] == []


# ---------------------------------------------------------------------------------------------
# UPDATE
# ---------------------------------------------------------------------------------------------

def test_update_with_a_condition_writes_pre_and_post_images(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    from pyspark.sql.connect import functions as F

    r = filecommit.update(spark, ours, set={"v": F.col("v") + 1, "id": "id * 100"}, condition=F.col("id") % 4 == 0)
    delta_runs(delta_spark, theirs, "UPDATE {table} SET v = v + 1, id = id * 100 WHERE id % 4 = 0")

    assert r.committed
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1)
    assert removed_paths(ours, v0 + 1) == removed_paths(theirs, v0 + 1)
    m = delta_metrics(theirs, v0 + 1)
    assert (r.metrics.num_updated_rows, r.metrics.num_copied_rows) == (m["numUpdatedRows"], m["numCopiedRows"])
    assert r.metrics.num_updated_rows == 7


def test_update_of_the_partition_column_moves_rows(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    r = filecommit.update(spark, ours, set={"part": "'z'"}, condition="id > 25")
    delta_runs(delta_spark, theirs, "UPDATE {table} SET part = 'z' WHERE id > 25")
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1)
    assert {f.partition_values["part"] for f in r.add_files} >= {"z"}
    assert r.metrics.num_updated_rows == 5


def test_update_recomputes_generated_columns(spark, delta_spark, twin):
    ours, theirs, v0 = twin("generated")
    r = filecommit.update(spark, ours, set={"v": "v + 5"}, condition="part = 'a'")
    delta_runs(delta_spark, theirs, "UPDATE {table} SET v = v + 5 WHERE part = 'a'")
    got = assert_same_as_delta(delta_spark, ours, theirs, v0 + 1, columns=COLS + ["w"])
    assert all(row["w"] == row["v"] * 2 for row in got["rows"])
    assert r.metrics.num_updated_rows == 3
    # MERGE computes the generated column for inserted and updated rows, and refuses a wrong one.
    source = spark.createDataFrame([(1, 7, "b"), (50, 5, "c")], "id BIGINT, v BIGINT, part STRING")
    m = (filecommit.merge(source, ours, "target.id = source.id")
         .when_matched_update({"v": "source.v"}).when_not_matched_insert_all().execute())
    delta_runs(delta_spark, theirs, "MERGE INTO {table} t USING (SELECT * FROM VALUES (1, 7, 'b'), (50, 5, 'c') "
               "AS s(id, v, part)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
               "WHEN NOT MATCHED THEN INSERT (id, v, part) VALUES (s.id, s.v, s.part)")
    assert (m.metrics.num_updated_rows, m.metrics.num_inserted_rows) == (1, 1)
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 2, columns=COLS + ["w"])
    with pytest.raises(PySparkException) as e:
        filecommit.update(spark, ours, set={"w": "v * 3"}, condition="id = 3")
    assert e.value.getCondition() == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"


def test_update_of_a_column_mapped_table(spark, delta_spark, twin):
    ours, theirs, v0 = twin("cm_name")
    filecommit.update(spark, ours, set={"v": "v - 1"}, condition="id > 4")
    delta_runs(delta_spark, theirs, "UPDATE {table} SET v = v - 1 WHERE id > 4")
    # delta-rs reads nulls for column-mapped tables made by Delta (before any write of ours).
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1, cdf=False, delta_rs=False)


def test_update_keeps_rows_deleted_by_deletion_vectors_deleted(spark, delta_spark, twin):
    ours, theirs, v0 = twin("dv")
    r = filecommit.update(spark, ours, set={"v": "-v"}, condition="part IN ('a', 'b') AND id < 10")
    delta_runs(delta_spark, theirs, "UPDATE {table} SET v = -v WHERE part IN ('a', 'b') AND id < 10")
    reads = delta_spark.read([{"path": ours, "kind": "table"}, {"path": theirs, "kind": "table"}])
    assert_same(dicts_frame(reads[0]["rows"], COLS), dicts_frame(reads[1]["rows"], COLS), "table rows")
    assert {2, 4, 7}.isdisjoint(row["id"] for row in reads[0]["rows"])
    assert r.metrics.num_updated_rows == 4  # ids 1, 3, 6, 9 (4 and 7 were deleted by Delta's DV)
    # Removes name the deletion vector of the (file, DV) pair they take out.
    removes = [a["remove"] for a in log_actions(ours)[v0 + 1] if "remove" in a]
    assert any(rm.get("deletionVector") for rm in removes)


def test_update_that_breaks_a_check_constraint_is_refused(spark, delta_spark, twin):
    ours, theirs, v0 = twin("check")
    logs, files = log_file_names(ours), data_files(ours)
    with pytest.raises(PySparkException) as e:
        filecommit.update(spark, ours, set={"v": "v * 100"}, condition="id = 9")
    assert e.value.getCondition() == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
    assert log_file_names(ours) == logs and data_files(ours) == files
    theirs_answer = delta_spark.read_one({"kind": "sql", "sql": "UPDATE {table} SET v = v * 100 WHERE id = 9",
                                         "path": theirs})
    assert not theirs_answer["ok"] and theirs_answer["condition"] == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"


def test_update_and_delete_are_refused_on_append_only_tables(spark, delta_spark, twin):
    ours, theirs, v0 = twin("append_only")
    logs, files = log_file_names(ours), data_files(ours)
    for change in (lambda: filecommit.delete(spark, ours, "id = 1"),
                   lambda: filecommit.update(spark, ours, set={"v": "0"})):
        with pytest.raises(PySparkException) as e:
            change()
        assert e.value.getCondition() == "DELTA_CANNOT_MODIFY_APPEND_ONLY"
    assert log_file_names(ours) == logs and data_files(ours) == files
    theirs_answer = delta_spark.read_one({"kind": "sql", "sql": "DELETE FROM {table} WHERE id = 1", "path": theirs})
    assert not theirs_answer["ok"] and theirs_answer["condition"] == "DELTA_CANNOT_MODIFY_APPEND_ONLY"
    # An insert-only merge only appends: allowed, as in Delta.
    src = spark.createDataFrame([(100, 1, "a"), (1, 1, "a")], "id BIGINT, v BIGINT, part STRING")
    r = filecommit.merge(src, ours, "target.id = source.id").when_not_matched_insert_all().execute()
    assert r.committed and r.metrics.num_inserted_rows == 1 and r.remove_files == []


def test_update_is_idempotent_with_txn(spark, twin):
    ours, _, v0 = twin("base")
    first = filecommit.update(spark, ours, set={"v": "v + 1"}, condition="id = 1", txn=("fix-job", 3))
    again = filecommit.update(spark, ours, set={"v": "v + 1"}, condition="id = 1", txn=("fix-job", 3))
    assert first.committed and first.version == v0 + 1
    assert not again.committed and again.version == v0 + 1
    from deltalake import DeltaTable

    assert DeltaTable(ours).to_pandas().set_index("id").loc[1, "v"] == 11


# ---------------------------------------------------------------------------------------------
