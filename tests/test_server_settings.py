"""The server's safety is the server's: a client session cannot change how commits are published.

LogStore classes (``spark.delta.logStore.*``) and their settings (``spark.io.delta.storage.*``),
filecommit's own settings (``spark.filecommit.*``) and file-system implementation classes
(``fs.*.impl``, also as ``spark.hadoop.fs.*.impl``) come from the server's static configuration
only (tests/test_server_owned_settings.py: every key that reaches Hadoop). A session that sets one gets Spark's ``CANNOT_MODIFY_STATIC_CONFIG`` before
anything is written; the same session, once it unsets the key, writes normally.
"""

from __future__ import annotations

import os

import pytest
from helpers import data_files, delta_rows, error_class, log_actions, second_session
from pyspark.errors import PySparkException

import filecommit
from filecommit import errors

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("key, value", [
    ("spark.delta.logStore.file.impl", "io.delta.storage.LocalLogStore"),
    ("spark.delta.logStore.class", "io.delta.storage.HDFSLogStore"),
    ("spark.filecommit.allowedRoots", "file:/"),
    ("spark.hadoop.fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem"),
    ("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem"),
    ("spark.io.delta.storage.S3DynamoDBLogStore.ddb.tableName", "someone_elses_table"),
])
def test_a_session_cannot_change_a_server_owned_setting(spark, table_path, key, value):
    session = second_session(spark)
    try:
        session.conf.set(key, value)
        with pytest.raises(PySparkException) as excinfo:
            filecommit.write(session.createDataFrame([(1,)], "id long"), table_path)
        assert excinfo.value.getCondition() == errors.CANNOT_MODIFY_STATIC_CONFIG
        assert excinfo.value.getSqlState() == "46110"
        assert excinfo.value.getMessageParameters().get("key") == key
        assert not os.path.exists(table_path), "nothing written"
        session.conf.unset(key)
        r = filecommit.write(session.createDataFrame([(1,)], "id long"), table_path)
        assert r.committed and r.version == 0
        assert list(delta_rows(table_path)["id"]) == [1]
    finally:
        session.stop()


@pytest.mark.parametrize("key,value", [("spark.sql.files.ignoreMissingFiles", "true"),
                                       ("spark.sql.files.ignoreCorruptFiles", "true"),
                                       ("spark.sql.parquet.datetimeRebaseModeInRead", "LEGACY")])
def test_rewrites_refuse_settings_that_read_the_table_wrongly(spark, tmp_path, key, value):
    """A rewrite commits what it read: with a data file gone behind the table's back and
    ignoreMissingFiles on, DELETE would remove that file's rows for good. DELETE / UPDATE / MERGE /
    OPTIMIZE refuse such settings before reading anything; reads may keep them."""
    path = str(tmp_path / "t")
    filecommit.write(spark.createDataFrame([(i, "ab"[i % 2]) for i in range(6)], "id long, part string"), path,
                     partition_by=["part"])
    lost = next(f for f in data_files(path) if f.endswith(".parquet"))
    os.remove(os.path.join(path, lost))  # lost behind the table's back
    spark.conf.set(key, value)
    try:
        for rewrite in (lambda: filecommit.delete(spark, path, "id = 0"),
                        lambda: filecommit.update(spark, path, set={"id": "id + 1"}),
                        lambda: filecommit.optimize(spark, path)):
            with pytest.raises(PySparkException) as e:
                rewrite()
            assert error_class(e) == "FILECOMMIT_UNSAFE_READ_SETTING"
            assert e.value.getMessageParameters()["key"] == key
    finally:
        spark.conf.unset(key)
    assert sorted(log_actions(path)) == [0], "nothing committed"
