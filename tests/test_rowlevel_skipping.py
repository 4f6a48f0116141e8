"""DELETE / UPDATE / MERGE skip files by their statistics, and MERGE writes deletion vectors.

Tables are made by real delta-spark 4.4.0 (``.venv-delta``): several INSERTs with disjoint ``id``
ranges, so each file's ``minValues`` / ``maxValues`` / ``nullCount`` rule out most conditions.
That a file was skipped is shown by making it unreadable in our copy before the change (and
restoring its bytes after): the change succeeds only if it never opened it. Which files may be
skipped is computed here from the raw log's statistics, independently of our code; the results
(rows, change feed, files removed, Delta's metrics) are compared with Delta Lake on Spark running
the same statement on a twin copy, and read by delta-rs.
"""

from __future__ import annotations

import json
import os

import pytest
from delta_tables import log_file_names
from helpers import canonical, data_files, log_state
from pyspark.errors import PySparkException
from rowlevel_tables import assert_same_as_delta, delta_metrics, delta_runs, removed_paths

import filecommit

pytestmark = pytest.mark.slow

COLS = ["id", "v", "x"]


def _insert(lo, hi, null_x=False):
    rows = ", ".join(f"({i}, {i * 10}, {'NULL' if null_x else i})" for i in range(lo, hi + 1))
    return {"sql": f"INSERT INTO {{table}} VALUES {rows}"}


def _ranges(props):
    # Four INSERTs: ids 1-10, 11-20, 21-30 (x NULL), 31-40; each range in its own files.
    return [{"sql": f"CREATE TABLE {{table}} (id BIGINT, v BIGINT, x BIGINT) USING delta TBLPROPERTIES ({props})"},
            _insert(1, 10), _insert(11, 20), _insert(21, 30, null_x=True), _insert(31, 40)]


CDF = "'delta.enableChangeDataFeed' = 'true'"
FIXTURES = {
    "stats": _ranges(CDF + ", 'delta.enableDeletionVectors' = 'false'"),
    "stats_dv": _ranges(CDF + ", 'delta.enableDeletionVectors' = 'true'"),
    # No min/max/null-count statistics at all: nothing can be skipped.
    "nostats": _ranges(CDF + ", 'delta.enableDeletionVectors' = 'false', 'delta.dataSkippingNumIndexedCols' = '0'"),
    "parts_dv": [
        {"sql": "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
                "TBLPROPERTIES (" + CDF + ", 'delta.enableDeletionVectors' = 'true')"},
        {"sql": "INSERT INTO {table} VALUES " + ", ".join(f"({i}, {i * 10}, '{'ab'[i % 2]}')" for i in range(1, 41))}],
}


def _stats(add):
    return json.loads(add["stats"]) if add.get("stats") else {}


def _unreadable_unless(path, may_hold, keep=()):
    """Overwrites every active data file whose raw-log statistics fail ``may_hold(stats)`` (and
    whose path is not in ``keep``) with garbage; returns {file: original bytes} to restore."""
    saved = {}
    for add in log_state(path)["active"].values():
        if not may_hold(_stats(add)) and add["path"] not in keep:
            f = os.path.join(path, add["path"])
            with open(f, "rb") as fh:
                saved[f] = fh.read()
            with open(f, "wb") as fh:
                fh.write(b"not parquet")
    return saved


def _restore(saved):
    for f, data in saved.items():
        with open(f, "wb") as fh:
            fh.write(data)


def _in_range(lo, hi):
    return lambda s: s["minValues"]["id"] <= hi and s["maxValues"]["id"] >= lo


def _source(spark, rows):
    return spark.createDataFrame(rows, "id BIGINT, v BIGINT, x BIGINT").alias("s")


def _values_sql(rows):
    return "SELECT * FROM VALUES " + ", ".join(f"({i}L, {v}L, {x}L)" for i, v, x in rows) + " AS s(id, v, x)"


SRC = [(13, 1, 0), (25, 2, 0), (35, 3, 0), (99, 4, 0)]
CASES = {
    # name: (fixture, ours(spark, path), Delta's statement, stats -> may hold an affected row)
    "delete_range": (
        "stats", lambda spark, p: filecommit.delete(spark, p, "id >= 12 AND id <= 14"),
        "DELETE FROM {table} WHERE id >= 12 AND id <= 14", _in_range(12, 14)),
    "update_is_null": (
        "stats", lambda spark, p: filecommit.update(spark, p, set={"v": "v + 1"}, condition="x IS NULL"),
        "UPDATE {table} SET v = v + 1 WHERE x IS NULL", lambda s: s["nullCount"]["x"] > 0),
    "update_dv_equal": (
        "stats_dv", lambda spark, p: filecommit.update(spark, p, set={"v": "-v"}, condition="id = 35"),
        "UPDATE {table} SET v = -v WHERE id = 35", _in_range(35, 35)),
    "delete_dv_is_not_null_range": (
        "stats_dv", lambda spark, p: filecommit.delete(spark, p, "x IS NOT NULL AND id > 18 AND id < 24"),
        "DELETE FROM {table} WHERE x IS NOT NULL AND id > 18 AND id < 24",
        lambda s: s["nullCount"]["x"] < s["numRecords"] and _in_range(19, 23)(s)),
    # MERGE: the ON condition's conjuncts on the target alone prune.
    "merge_upsert": (
        "stats", lambda spark, p: filecommit.merge(_source(spark, SRC), p, "target.id = s.id AND target.id > 30")
        .when_matched_update({"v": "s.v"}).when_not_matched_insert_all().execute(),
        f"MERGE INTO {{table}} target USING ({_values_sql(SRC)}) s ON target.id = s.id AND target.id > 30 "
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *", _in_range(31, 1 << 40)),
    # MATCHED clauses only: the OR of their target-only conditions prunes too (ids 25 match, unchanged).
    "merge_dv_matched_only": (
        "stats_dv", lambda spark, p: filecommit.merge(_source(spark, SRC), p, "target.id = s.id")
        .when_matched_delete("target.id < 20").when_matched_update({"v": "s.v"}, "target.id > 32").execute(),
        f"MERGE INTO {{table}} target USING ({_values_sql(SRC)}) s ON target.id = s.id "
        "WHEN MATCHED AND target.id < 20 THEN DELETE WHEN MATCHED AND target.id > 32 THEN UPDATE SET v = s.v",
        lambda s: s["minValues"]["id"] < 20 or s["maxValues"]["id"] > 32),
}


@pytest.mark.parametrize("case", list(CASES))
def test_changes_skip_files_whose_statistics_rule_out_every_affected_row(spark, delta_spark, twin, case):
    fixture, ours_change, statement, may_hold = CASES[case]
    ours, theirs, v0 = twin(fixture)
    saved = _unreadable_unless(ours, may_hold)
    kept = len(log_state(ours)["active"]) - len(saved)
    assert saved and kept > 0, "the statistics must rule out some files and not all"
    try:
        r = ours_change(spark, ours)
    finally:
        _restore(saved)
    delta_runs(delta_spark, theirs, statement)
    assert r.committed and r.version == v0 + 1
    assert removed_paths(ours, v0 + 1) == removed_paths(theirs, v0 + 1)
    dv = fixture.endswith("_dv")
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1, columns=COLS, delta_rs=not dv)
    if dv:
        assert _delta_rs(ours).equals(_delta_rs(theirs))
    ours_m, theirs_m = delta_metrics(ours, v0 + 1), delta_metrics(theirs, v0 + 1)
    for k in ("numDeletedRows", "numUpdatedRows", "numCopiedRows", "numTargetRowsDeleted", "numTargetRowsUpdated",
              "numTargetRowsInserted", "numTargetRowsCopied", "numDeletionVectorsAdded", "numDeletionVectorsRemoved",
              "numDeletionVectorsUpdated", "numTargetDeletionVectorsAdded", "numTargetDeletionVectorsRemoved",
              "numTargetDeletionVectorsUpdated", "numRemovedFiles", "numTargetFilesRemoved"):
        if k in theirs_m:
            assert ours_m.get(k) == theirs_m[k], f"{k}: ours {ours_m.get(k)}, Delta's {theirs_m[k]}"


def _delta_rs(path):
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder

    got = QueryBuilder().register("t", DeltaTable(path)).execute("SELECT id, v, x FROM t").read_all()
    return canonical(pa.table(got), COLS)


def test_without_statistics_no_file_is_skipped(spark, delta_spark, twin):
    ours, theirs, v0 = twin("nostats")
    adds = list(log_state(ours)["active"].values())
    assert all("minValues" not in _stats(a) for a in adds)
    # Which files hold ids 12-14, from the files themselves (the log has no statistics to say).
    import pyarrow.parquet as pq

    def ids(a):
        return pq.read_table(os.path.join(ours, a["path"]), columns=["id"])["id"].to_pylist()

    holds = {a["path"] for a in adds if any(12 <= i <= 14 for i in ids(a))}
    saved = _unreadable_unless(ours, lambda s: False, keep=holds)
    assert holds and len(saved) == len(adds) - len(holds)
    logs, files = log_file_names(ours), data_files(ours)
    with pytest.raises(PySparkException):
        filecommit.delete(spark, ours, "id >= 12 AND id <= 14")
    _restore(saved)
    assert log_file_names(ours) == logs and data_files(ours) == files
    r = filecommit.delete(spark, ours, "id >= 12 AND id <= 14")
    delta_runs(delta_spark, theirs, "DELETE FROM {table} WHERE id >= 12 AND id <= 14")
    assert r.committed and removed_paths(ours, v0 + 1) == removed_paths(theirs, v0 + 1)
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1, columns=COLS)


# ---------------------------------------------------------------------------------------------
# MERGE with deletion vectors
# ---------------------------------------------------------------------------------------------

def _parquet(path):
    return sorted(f for f in data_files(path) if f.endswith(".parquet") and not f.startswith("_change_data"))


MERGES = [
    # (source rows, ON, clauses as ours(builder), Delta's clauses)
    ([(3, -1, 0), (13, -2, 0), (14, 0, 0), (50, -4, 0)], "target.id = s.id",
     lambda b: b.when_matched_delete("s.v = 0").when_matched_update({"v": "s.v", "x": "target.x + 1"})
     .when_not_matched_insert_all(),
     "WHEN MATCHED AND s.v = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v, x = target.x + 1 "
     "WHEN NOT MATCHED THEN INSERT *"),
    # Second MERGE on the same files: DVs updated, a file emptied, by-source clause.
    ([(1, 0, 0), (2, 0, 0), (4, 7, 0), (5, 0, 0), (6, 0, 0), (7, 0, 0), (8, 0, 0), (9, 0, 0), (10, 0, 0),
      (13, 5, 0)], "target.id = s.id",
     lambda b: b.when_matched_delete("target.id <= 10").when_matched_update({"v": "s.v"})
     .when_not_matched_by_source_update({"v": "target.v + 1000"}, "target.id > 38"),
     "WHEN MATCHED AND target.id <= 10 THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v "
     "WHEN NOT MATCHED BY SOURCE AND target.id > 38 THEN UPDATE SET v = target.v + 1000"),
]


def test_merge_marks_changed_rows_in_deletion_vectors_and_writes_only_new_rows(spark, delta_spark, twin):
    ours, theirs, v0 = twin("stats_dv")
    fixture_files = {p for p, _ in log_state(ours)["active"]}
    for i, (rows, on, ours_clauses, delta_clauses) in enumerate(MERGES):
        version = v0 + 1 + i
        before = _parquet(ours)
        r = ours_clauses(filecommit.merge(_source(spark, rows), ours, on)).execute()
        delta_runs(delta_spark, theirs, f"MERGE INTO {{table}} target USING ({_values_sql(rows)}) s ON {on} "
                   + delta_clauses)
        assert r.committed and r.version == version
        # No data file rewritten: the old ones stay, new ones hold only updated and inserted rows.
        assert set(before) <= set(_parquet(ours))
        assert r.metrics.num_copied_rows == 0
        written = sum(json.loads(a.stats)["numRecords"] for a in r.add_files if a.deletion_vector is None)
        assert written == r.metrics.num_updated_rows + r.metrics.num_inserted_rows
        assert all(a.deletion_vector.storage_type == "u" for a in r.add_files if a.deletion_vector)
        # The same files of the fixture removed; files written by the first MERGE are named differently.
        mine, delta = removed_paths(ours, version), removed_paths(theirs, version)
        assert [p for p in mine if p in fixture_files] == [p for p in delta if p in fixture_files]
        assert len(mine) == len(delta)
        assert_same_as_delta(delta_spark, ours, theirs, version, columns=COLS, delta_rs=False)
        assert _delta_rs(ours).equals(_delta_rs(theirs))
        ours_m, theirs_m = delta_metrics(ours, version), delta_metrics(theirs, version)
        keys = ["numTargetRowsDeleted", "numTargetRowsUpdated", "numTargetRowsInserted", "numTargetRowsCopied"]
        if i == 0:
            # File-level metrics on the fixture's own files; after that the layouts differ (how many
            # files each writer split the first MERGE's new rows into), and so do these counts.
            keys += ["numTargetDeletionVectorsAdded", "numTargetDeletionVectorsRemoved",
                     "numTargetDeletionVectorsUpdated", "numTargetFilesRemoved"]
        for k in keys:
            assert ours_m.get(k) == theirs_m.get(k), f"{k}: ours {ours_m.get(k)}, Delta's {theirs_m.get(k)}"


def test_merge_with_not_matched_by_source_reads_every_partition(spark, delta_spark, twin):
    """A partition conjunct in ON does not prune when NOT MATCHED BY SOURCE clauses may change rows
    of other partitions (Delta reads every file then)."""
    ours, theirs, v0 = twin("parts_dv")
    rows = [(2, -1, 0), (3, -1, 0)]
    spark_rows = spark.createDataFrame([(i, v, "a") for i, v, _ in rows], "id BIGINT, v BIGINT, part STRING").alias("s")
    r = (filecommit.merge(spark_rows, ours, "target.id = s.id AND target.part = 'a'")
         .when_matched_update({"v": "s.v"}).when_not_matched_by_source_delete("target.v > 350").execute())
    src = "SELECT * FROM VALUES " + ", ".join(f"({i}L, {v}L, 'a')" for i, v, _ in rows) + " AS s(id, v, part)"
    delta_runs(delta_spark, theirs, f"MERGE INTO {{table}} target USING ({src}) s ON target.id = s.id AND "
               "target.part = 'a' WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED BY SOURCE AND target.v > 350 "
               "THEN DELETE")
    assert r.committed
    assert removed_paths(ours, v0 + 1) == removed_paths(theirs, v0 + 1)
    assert_same_as_delta(delta_spark, ours, theirs, v0 + 1, columns=["id", "v", "part"], delta_rs=False)
    m, d = delta_metrics(ours, v0 + 1), delta_metrics(theirs, v0 + 1)
    for k in ("numTargetRowsDeleted", "numTargetRowsUpdated", "numTargetDeletionVectorsAdded"):
        assert m[k] == d[k], f"{k}: ours {m[k]}, Delta's {d[k]}"
    assert m["numTargetRowsDeleted"] == 5  # ids 36..40, in both partitions
