"""A table owns its directory tree, and nothing else.

Protocol "Delta Table Specification" roots a table at the directory that holds its ``_delta_log``;
VACUUM and the abort sweep list everything below that directory as the table's. So:

- no table or batch-id sink is created inside another table or sink, above one (a ``_delta_log``
  or ``_spark_metadata`` below it) or at an allowed root itself: ``FILECOMMIT_TABLE_LOCATION_OVERLAP``,
  refused before anything is written (the directory tree is unchanged);
- tables nested that way by other tools (here delta-rs) or before this rule keep their files when
  the outer table is vacuumed or a write to it fails: VACUUM and the sweep do not enter a directory
  that holds a ``_delta_log`` or ``_spark_metadata``.

Nested tables are read back with delta-rs and with Spark + Delta (``delta_spark``), sinks with
Spark's file-sink reader.
"""

from __future__ import annotations

import os
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import delta_rows, error_class
from pyspark.errors import PySparkException
from pyspark.errors.exceptions.connect import SparkConnectGrpcException
from pyspark.sql import functions as F

import filecommit

pytestmark = pytest.mark.slow

OVERLAP = "FILECOMMIT_TABLE_LOCATION_OVERLAP"
MONTH_AGO = time.time() - 30 * 24 * 3600




def _tree(root: str) -> dict[str, tuple]:
    """Every directory and file under ``root`` with (size, mtime ns) for files: the 'unchanged' check."""
    out: dict[str, tuple] = {}
    for d, _dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        out[rel + "/"] = ()
        for f in files:
            st = os.stat(os.path.join(d, f))
            out[os.path.join(rel, f)] = (st.st_size, st.st_mtime_ns)
    return out


def _age_tree(root: str) -> None:
    """Sets every file under ``root`` (log included) a month back: older than any retention."""
    for d, _, files in os.walk(root):
        for f in files:
            os.utime(os.path.join(d, f), (MONTH_AGO, MONTH_AGO))


def _ids_delta_rs(path: str) -> list[int]:
    return sorted(int(x) for x in delta_rows(path, ["id"])["id"])


def _ids_delta_spark(delta_spark, path: str) -> list[int]:
    answer = delta_spark.read([{"path": path, "kind": "table"}])[0]
    assert answer["ok"], answer
    return sorted(int(r["id"]) for r in answer["rows"])


def _delta_rs_parent(path: str, ids: list[int], configuration: dict | None = None) -> None:
    """A Delta table made by another tool (delta-rs) at ``path``, whatever lies below it."""
    from deltalake import write_deltalake

    write_deltalake(path, pa.table({"id": pa.array(ids, pa.int64())}), configuration=configuration)


def _nested_layout(spark, base: str, configuration: dict | None = None) -> dict:
    """``base/a/nested`` (a table, ours), ``base/a/sink`` (a sink, ours), then ``base/a`` (a table
    made by delta-rs over them, as before this rule or by another tool); every file a month old."""
    parent = os.path.join(base, "a")
    nested = os.path.join(parent, "nested")
    sink = os.path.join(parent, "sink")
    filecommit.write(spark.range(0, 3), nested)
    filecommit.write_batch(spark.range(10, 14), sink, batch_id=0)
    _delta_rs_parent(parent, [100, 101], configuration)
    with open(os.path.join(parent, "stray.parquet"), "wb") as f:
        f.write(b"not referenced by the parent")
    _age_tree(base)
    return {"parent": parent, "nested": nested, "sink": sink}


def _assert_nested_intact(spark, delta_spark, paths: dict, nested_files: dict, sink_files: dict) -> None:
    assert _tree(paths["nested"]) == nested_files, "the nested table's files are untouched"
    assert _tree(paths["sink"]) == sink_files, "the nested sink's files are untouched"
    assert _ids_delta_rs(paths["nested"]) == [0, 1, 2]
    assert _ids_delta_spark(delta_spark, paths["nested"]) == [0, 1, 2]
    assert sorted(r["id"] for r in spark.read.parquet(paths["sink"]).collect()) == [10, 11, 12, 13]


def test_vacuum_with_the_shortest_retention_keeps_a_nested_table_and_sink(spark, delta_spark, tmp_path):
    base = str(tmp_path)
    # the parent made by another tool with its retention property at 0 (this server refuses to set
    # one below its floor), then VACUUM of the parent at the shortest retention the server allows
    zero = {"delta.deletedFileRetentionDuration": "interval 0 seconds"}
    paths = _nested_layout(spark, base, zero)
    nested_files, sink_files = _tree(paths["nested"]), _tree(paths["sink"])
    r = filecommit.vacuum(spark, paths["parent"], retention_hours=168)
    assert not os.path.exists(os.path.join(paths["parent"], "stray.parquet")), "VACUUM ran on the parent"
    assert not any("/nested/" in f or "/sink/" in f for f in r.files), r.files
    _assert_nested_intact(spark, delta_spark, paths, nested_files, sink_files)
    assert _ids_delta_rs(paths["parent"]) == [100, 101]


def test_vacuum_with_default_retention_keeps_old_files_of_a_nested_table(spark, delta_spark, tmp_path):
    paths = _nested_layout(spark, str(tmp_path))
    nested_files, sink_files = _tree(paths["nested"]), _tree(paths["sink"])
    r = filecommit.vacuum(spark, paths["parent"])
    assert not os.path.exists(os.path.join(paths["parent"], "stray.parquet")), "VACUUM ran on the parent"
    assert not any("/nested/" in f or "/sink/" in f for f in r.files), r.files
    _assert_nested_intact(spark, delta_spark, paths, nested_files, sink_files)


def test_a_failed_write_to_the_parent_leaves_a_nested_table_alone(spark, delta_spark, tmp_path):
    paths = _nested_layout(spark, str(tmp_path))
    nested_files, sink_files = _tree(paths["nested"]), _tree(paths["sink"])
    parent_before = set(os.listdir(paths["parent"]))
    bad = spark.range(0, 40, 1, 4).select(
        F.when(F.col("id") == 39, F.raise_error(F.lit("boom"))).otherwise(F.col("id")).alias("id"))
    with pytest.raises(SparkConnectGrpcException):
        filecommit.write(bad, paths["parent"])
    assert set(os.listdir(paths["parent"])) == parent_before, "the failed write's files are swept"
    _assert_nested_intact(spark, delta_spark, paths, nested_files, sink_files)
    # appends to tables that already exist are not checked: both still take writes
    assert filecommit.write(spark.range(200, 202), paths["parent"]).committed
    assert filecommit.write(spark.range(3, 4), paths["nested"]).committed
    assert _ids_delta_rs(paths["parent"]) == [100, 101, 200, 201]
    assert _ids_delta_spark(delta_spark, paths["nested"]) == [0, 1, 2, 3]


@pytest.mark.parametrize("below", ["t", os.path.join("x", "y", "t")])
def test_a_table_above_a_table_is_refused(spark, delta_spark, tmp_path, below):
    parent = str(tmp_path / "a")
    filecommit.write(spark.range(0, 3), os.path.join(parent, below))
    before = _tree(str(tmp_path))
    for stage in (False, True):
        with pytest.raises(PySparkException) as e:
            filecommit.write(spark.range(5), parent, stage=stage)
        assert error_class(e) == OVERLAP
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.range(5), str(tmp_path))
    assert error_class(e) == OVERLAP
    assert _tree(str(tmp_path)) == before, "nothing written"
    assert _ids_delta_spark(delta_spark, os.path.join(parent, below)) == [0, 1, 2]


def test_a_table_above_a_sink_is_refused(spark, tmp_path):
    parent = str(tmp_path / "a")
    filecommit.write_batch(spark.range(3), os.path.join(parent, "s", "sink"), batch_id=0)
    before = _tree(str(tmp_path))
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.range(5), parent)
    assert error_class(e) == OVERLAP
    assert _tree(str(tmp_path)) == before


@pytest.mark.parametrize("inside", ["t", os.path.join("p=1", "t"), os.path.join("_delta_log", "t")])
def test_a_table_or_sink_inside_a_table_is_refused(spark, delta_spark, tmp_path, inside):
    parent = str(tmp_path / "a")
    filecommit.write(spark.range(0, 3), parent)
    before = _tree(str(tmp_path))
    for stage in (False, True):
        with pytest.raises(PySparkException) as e:
            filecommit.write(spark.range(5), os.path.join(parent, inside), stage=stage)
        assert error_class(e) == OVERLAP
    with pytest.raises(PySparkException) as e:
        filecommit.write_batch(spark.range(5), os.path.join(parent, inside), batch_id=0)
    assert error_class(e) == OVERLAP
    with pytest.raises(PySparkException) as e:
        filecommit.write_batch(spark.range(5), parent, batch_id=0)
    assert error_class(e) == OVERLAP
    with pytest.raises(PySparkException) as e:
        filecommit.write_batch(spark.range(5), str(tmp_path), batch_id=0)
    assert error_class(e) == OVERLAP
    assert _tree(str(tmp_path)) == before, "nothing written"
    assert _ids_delta_rs(parent) == [0, 1, 2]
    assert _ids_delta_spark(delta_spark, parent) == [0, 1, 2]


def test_a_table_or_sink_inside_a_sink_is_refused(spark, tmp_path):
    sink = str(tmp_path / "s")
    filecommit.write_batch(spark.range(3), sink, batch_id=0)
    before = _tree(str(tmp_path))
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.range(5), os.path.join(sink, "t"))
    assert error_class(e) == OVERLAP
    with pytest.raises(PySparkException) as e:
        filecommit.write_batch(spark.range(5), os.path.join(sink, "x", "inner"), batch_id=0)
    assert error_class(e) == OVERLAP
    assert _tree(str(tmp_path)) == before, "nothing written"
    assert sorted(r["id"] for r in spark.read.parquet(sink).collect()) == [0, 1, 2]


@pytest.mark.skipif(bool(os.environ.get("FILECOMMIT_REMOTE")), reason="the remote server's allowedRoots are its own")
def test_a_table_or_sink_at_an_allowed_root_is_refused(spark):
    # the embedded server's roots: the temp dir, and $FILECOMMIT_TEST_DIR when set (conftest.py)
    root = os.environ.get("FILECOMMIT_TEST_DIR") or os.path.realpath(tempfile.gettempdir())
    before = set(os.listdir(root))
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.range(5), root)
    assert error_class(e) == OVERLAP
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.range(5), root + "/")
    assert error_class(e) == OVERLAP
    with pytest.raises(PySparkException) as e:
        filecommit.write_batch(spark.range(5), root, batch_id=0)
    assert error_class(e) == OVERLAP
    assert not os.path.exists(os.path.join(root, "_delta_log"))
    assert not os.path.exists(os.path.join(root, "_spark_metadata"))
    assert not {f for f in set(os.listdir(root)) - before if f.startswith("part-")}, "no data file at the root"


@pytest.mark.parametrize("stage", [False, True])
def test_a_table_over_someone_elses_files_is_refused(spark, tmp_path, stage):
    """A directory of another writer's Parquet files is no table: a new table there is refused with
    Delta's class (a later VACUUM would delete those files), and nothing is written into it."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    pq.write_table(pa.table({"id": [1, 2]}), str(theirs / "part-00000-data.parquet"))
    before = _tree(str(theirs))
    with pytest.raises(SparkConnectGrpcException) as e:
        filecommit.write(spark.range(5), str(theirs), stage=stage)
    assert error_class(e) == "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.range(5).write.format("delta").save(str(theirs))
    assert error_class(e) == "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"
    assert _tree(str(theirs)) == before, "nothing written"


def test_a_failed_first_write_leaves_nothing_and_a_killed_one_can_be_retried(spark, delta_spark, tmp_path):
    """The new table's directory is claimed (its _delta_log made) before any data file: a first write
    that fails leaves no file at all, and data files a killed first write left beside that claim do
    not stop its retry (they are the table's own, unreferenced: VACUUM's to delete)."""
    path = str(tmp_path / "t")
    with pytest.raises(PySparkException) as e:  # row 0 breaks the new table's constraint
        filecommit.write(spark.range(3), path, table_properties={"delta.constraints.pos": "id > 0"})
    assert error_class(e) == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
    assert not os.path.exists(path) or all(k.endswith("/") for k in _tree(path)), _tree(path)
    assert not os.path.exists(os.path.join(path, "_delta_log"))
    os.makedirs(os.path.join(path, "_delta_log"))
    pq.write_table(pa.table({"id": [9]}), os.path.join(path, "part-00000-killed.parquet"))
    assert filecommit.write(spark.range(3), path).version == 0
    assert sorted(delta_rows(path)["id"].tolist()) == [0, 1, 2]
