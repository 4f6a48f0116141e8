"""Server-owned settings are refused by meaning: what reaches Hadoop is the server's.

Spark copies every session setting into the Hadoop configuration of a session verbatim
(``SessionState.newHadoopConf``), and the writers copy every writer option into it too. That
configuration opens the file system that reads, writes and deletes, and names the committers
Spark loads. So a client that sets ``fs.file.impl``, ``fs.defaultFS``, a viewfs mount table, a
committer class, or any other key Hadoop reads, whether in its session, as ``spark.hadoop.<key>``
or as a write option, gets Spark's ``CANNOT_MODIFY_STATIC_CONFIG`` before anything is read or
written: the table reads the same with delta-rs and with Spark + Delta, no file appeared, no class
was loaded. Once it unsets the key the same session writes normally. Harmless keys (Spark's SQL
settings, data source options, Parquet's value-only writer settings) still reach the files.
"""

from __future__ import annotations

import os
from urllib.parse import unquote

import pyarrow.parquet as pq
import pytest
from helpers import delta_rows, second_session
from pyspark.errors import PySparkException

import filecommit
from filecommit import errors

pytestmark = pytest.mark.slow

NO_CLASS = "does.not.Exist"

# Each: keys a hostile client sets together. The refusal names the first key in sorted order.
ATTACKS = [
    pytest.param({"fs.file.impl": NO_CLASS, "fs.file.impl.disable.cache": "true"}, id="fs-file-impl"),
    pytest.param({"fs.defaultFS": "hdfs://127.0.0.1:9/"}, id="fs-defaultFS"),
    pytest.param({"fs.AbstractFileSystem.file.impl": NO_CLASS}, id="abstract-file-system"),
    pytest.param({"mapreduce.outputcommitter.factory.class": NO_CLASS}, id="committer-factory-class"),
    pytest.param({"spark.hadoop.fs.defaultFS": "hdfs://127.0.0.1:9/"}, id="spark-hadoop-defaultFS"),
    pytest.param({"spark.hadoop.mapreduce.outputcommitter.factory.class": NO_CLASS},
                 id="spark-hadoop-committer-factory"),
]
# Spark's ParquetUtils.prepareWrite loads this class from the write's Hadoop configuration. In a
# session Spark itself only accepts a loadable OutputCommitter (its SQLConf check), so the session
# attack names a real one that is not the server's; an option reaches Hadoop unchecked.
SESSION_ATTACKS = ATTACKS + [pytest.param(
    {"spark.sql.parquet.output.committer.class": "org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter"},
    id="parquet-committer-class")]
OPTION_ATTACKS = ATTACKS + [pytest.param(
    {"spark.sql.parquet.output.committer.class": NO_CLASS}, id="parquet-committer-class")]


def _all_files(root: str) -> set[str]:
    """Every file under ``root`` (relative paths), ``_delta_log`` included."""
    out = set()
    for d, _, names in os.walk(root):
        out |= {os.path.relpath(os.path.join(d, n), root) for n in names}
    return out


def _one_row_table(spark, path: str) -> set[str]:
    r = filecommit.write(spark.createDataFrame([(1,)], "id long"), path)
    assert r.committed and r.version == 0
    return _all_files(path)


def _assert_refused(excinfo, keys) -> None:
    assert excinfo.value.getCondition() == errors.CANNOT_MODIFY_STATIC_CONFIG, excinfo.value
    assert excinfo.value.getSqlState() == "46110"
    assert excinfo.value.getMessageParameters().get("key") == min(keys)


def _assert_unchanged(path: str, before: set[str], delta_spark) -> None:
    """Nothing written: the same files, version 0 with the one row for delta-rs and Spark + Delta."""
    assert _all_files(path) == before, "no file appeared or went"
    assert list(delta_rows(path)["id"]) == [1]
    from deltalake import DeltaTable

    assert DeltaTable(path).version() == 0
    read = delta_spark.read_one({"path": path, "kind": "table"})
    assert read["ok"], read
    assert read["version"] == 0 and [r["id"] for r in read["rows"]] == [1]


def _assert_usable_again(session, path: str) -> None:
    r = filecommit.write(session.createDataFrame([(2,)], "id long"), path)
    assert r.committed and r.version == 1
    assert list(delta_rows(path)["id"]) == [1, 2]


@pytest.mark.parametrize("keys", SESSION_ATTACKS)
def test_a_session_setting_that_reaches_hadoop_is_refused_before_anything_is_written(
        spark, delta_spark, table_path, keys):
    before = _one_row_table(spark, table_path)
    session = second_session(spark)
    try:
        for k, v in keys.items():
            session.conf.set(k, v)
        with pytest.raises(PySparkException) as excinfo:
            filecommit.write(session.createDataFrame([(2,)], "id long"), table_path)
        _assert_refused(excinfo, keys)
        # Every command of the session is refused, not only writes.
        with pytest.raises(PySparkException) as deleting:
            filecommit.delete(session, table_path, "id = 1")
        _assert_refused(deleting, keys)
        _assert_unchanged(table_path, before, delta_spark)
        for k in keys:
            session.conf.unset(k)
        _assert_usable_again(session, table_path)
    finally:
        session.stop()


@pytest.mark.parametrize("keys", OPTION_ATTACKS)
def test_a_write_option_that_reaches_hadoop_is_refused_before_anything_is_written(
        spark, delta_spark, table_path, keys):
    before = _one_row_table(spark, table_path)
    df = spark.createDataFrame([(2,)], "id long")
    with pytest.raises(PySparkException) as excinfo:
        filecommit.write(df, table_path, options={**keys, "compression": "gzip"})
    _assert_refused(excinfo, keys)
    with pytest.raises(PySparkException) as deleting:
        filecommit.delete(spark, table_path, "id = 1", options=keys)
    _assert_refused(deleting, keys)
    _assert_unchanged(table_path, before, delta_spark)
    _assert_usable_again(spark, table_path)


def test_a_viewfs_mount_table_cannot_send_a_write_elsewhere(spark, delta_spark, table_path, tmp_path):
    # The allowed roots and the table path are resolved through the same mount table, so both look
    # like viewfs://fc/<tmp>/...: a check on that view passes while the files go to the link target.
    before = _one_row_table(spark, table_path)
    elsewhere = tmp_path / "elsewhere"
    root = os.path.dirname(os.path.realpath(table_path))
    keys = {"fs.defaultFS": "viewfs://fc/", f"fs.viewfs.mounttable.fc.link.{root}": f"file://{elsewhere}"}
    session = second_session(spark)
    try:
        for k, v in keys.items():
            session.conf.set(k, v)
        with pytest.raises(PySparkException) as excinfo:
            filecommit.write(session.createDataFrame([(2,)], "id long"), table_path)
        _assert_refused(excinfo, keys)
        assert not elsewhere.exists(), "nothing written at the mount link's target"
        _assert_unchanged(table_path, before, delta_spark)
        for k in keys:
            session.conf.unset(k)
        _assert_usable_again(session, table_path)
    finally:
        session.stop()


def test_a_sink_batch_with_a_file_system_option_is_refused(spark, table_path):
    keys = {"fs.file.impl": NO_CLASS, "fs.file.impl.disable.cache": "true"}
    df = spark.createDataFrame([(1,)], "id long")
    with pytest.raises(PySparkException) as excinfo:
        filecommit.write_batch(df, table_path, batch_id=0, options=keys)
    _assert_refused(excinfo, keys)
    assert not os.path.exists(table_path), "nothing written"
    r = filecommit.write_batch(df, table_path, batch_id=0)
    assert r.committed


def test_a_read_of_a_session_that_picks_the_file_system_is_refused(spark, table_path):
    _one_row_table(spark, table_path)
    keys = {"fs.file.impl": NO_CLASS, "fs.file.impl.disable.cache": "true"}
    session = second_session(spark)
    try:
        for k, v in keys.items():
            session.conf.set(k, v)
        with pytest.raises(PySparkException) as excinfo:
            session.read.format("filecommit").load(table_path).collect()
        _assert_refused(excinfo, keys)
        for k in keys:
            session.conf.unset(k)
        assert [r.id for r in session.read.format("filecommit").load(table_path).collect()] == [1]
    finally:
        session.stop()


def test_harmless_settings_still_reach_the_files(spark, table_path):
    # Spark's SQL settings, Parquet's value-only writer settings (in the session, as
    # spark.hadoop.<key> and as options), and a server-owned key set to the server's own value.
    session = second_session(spark)
    try:
        roots = session.conf.get("spark.filecommit.allowedRoots")
        harmless = {
            "spark.sql.parquet.compression.codec": "gzip",
            "parquet.enable.dictionary": "false",
            "spark.hadoop.parquet.block.size": "1048576",
            "spark.filecommit.allowedRoots": roots,
        }
        for k, v in harmless.items():
            session.conf.set(k, v)
        df = session.createDataFrame([(i, "same") for i in range(50)], "id long, name string")
        r = filecommit.write(df, table_path, options={"parquet.page.size": "65536", "maxRecordsPerFile": "1000"})
        (add,) = r.add_files
        col = pq.ParquetFile(os.path.join(table_path, unquote(add.path))).metadata.row_group(0).column(1)
        assert col.compression == "GZIP"
        assert not any("DICTIONARY" in e for e in col.encodings), col.encodings
        assert len(delta_rows(table_path)) == 50
    finally:
        session.stop()
