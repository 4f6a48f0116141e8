"""Row-level changes (``filecommit.delete`` / ``update`` / ``merge``) checked against Delta itself.

Every table here is made by real delta-spark 4.4.0 (``.venv-delta``) and copied twice: filecommit
changes one copy, Delta Lake on Spark runs the same statement (``DELETE`` / ``UPDATE`` / ``MERGE``
SQL) on the other. The reference answers are Delta's: Spark + Delta reads both copies (table and
``readChangeFeed`` of the new version) and they must hold the same rows; the files Delta rewrote
are the files we must rewrite; Delta's ``operationMetrics`` are our row metrics. delta-rs reads our
copy as a third reader. Refusals carry Delta's error class and leave no commit and no file.
"""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
from delta_tables import log_file_names
from helpers import canonical, data_files, delta_table, log_actions, sql_steps, twin_copier, values_sql
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

COLS = ["id", "v", "part"]
CDF_COLS = COLS + ["_change_type", "_commit_version"]


# 30 rows in 3 partitions, 3 INSERTs: at least 9 files (each INSERT writes one file or more per part).
BASE_ROWS = [(i, i * 10, "abc"[i % 3]) for i in range(1, 31)]
FIXTURES = {
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


@pytest.fixture
def twin(made, tmp_path, request):
    """``twin(name)``: two fresh copies of fixture ``name``: (ours, Delta's, version). Parametrized
    indirectly with ``"s3"`` (:data:`twin_on_s3`), ours is an ``s3a://`` copy in MinIO."""
    return twin_copier(made, tmp_path, getattr(request, "param", "local"))


# Runs a test with our copy local and in the session's MinIO bucket.
twin_on_s3 = pytest.mark.parametrize("twin", ["local", "s3"], indirect=True)


def _table(path):
    return "delta.`" + path + "`"


def delta_runs(delta_spark, path, statement):
    """Delta Lake on Spark runs ``statement`` ({table} = the table at ``path``); its answer."""
    r = delta_spark.read_one({"kind": "sql", "sql": statement, "path": path})
    assert r["ok"], f"Delta refused: {r}"
    return r


def _dicts_frame(rows, columns):
    return canonical(pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns), columns)


def _assert_same(got, expected, what):
    try:
        pd.testing.assert_frame_equal(got, expected, check_dtype=False)
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
    _assert_same(_dicts_frame(got[0]["rows"], columns), _dicts_frame(got[1]["rows"], columns), "table rows")
    if cdf:
        feed = _dicts_frame(got[2]["rows"], columns + ["_change_type", "_commit_version"])
        _assert_same(feed, _dicts_frame(got[3]["rows"], columns + ["_change_type", "_commit_version"]), "change feed")
        assert len(feed) > 0 and set(feed["_commit_version"]) == {float(version)}
    if delta_rs:
        import pyarrow as pa

        _assert_same(canonical(delta_table(ours).to_pandas(), columns), _dicts_frame(got[1]["rows"], columns),
                     "delta-rs read")
        if cdf and delta_rs_cdf:
            cols = columns + ["_change_type", "_commit_version"]
            feed = pa.table(delta_table(ours).load_cdf(starting_version=version, ending_version=version)).to_pandas()
            _assert_same(canonical(feed, cols), _dicts_frame(got[3]["rows"], cols), "delta-rs change feed")
    return got[0]


def removed_paths(path, version):
    return sorted(a["remove"]["path"] for a in log_actions(path)[version] if "remove" in a)


def delta_metrics(path, version):
    info = [a["commitInfo"] for a in log_actions(path)[version] if "commitInfo" in a][0]
    return {k: int(v) for k, v in info.get("operationMetrics", {}).items()}


def _active_files(path):
    from deltalake import DeltaTable

    return DeltaTable(path).file_uris()


# ---------------------------------------------------------------------------------------------
# DELETE
# ---------------------------------------------------------------------------------------------

def test_delete_by_a_data_predicate_rewrites_only_files_with_matching_rows(spark, delta_spark, twin):
    ours, theirs, v0 = twin("base")
    files_before = len(_active_files(ours))
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
# UPDATE# ---------------------------------------------------------------------------------------------
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
    _assert_same(_dicts_frame(reads[0]["rows"], COLS), _dicts_frame(reads[1]["rows"], COLS), "table rows")
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
