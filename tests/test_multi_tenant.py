"""Two tenants on one shared server, one of them hostile: nothing the hostile client does reaches
the other's tables.

The victim (the suite's session) owns a partitioned table with the change data feed, deletion
vectors, a pending staged commit, and a batch-id sink, all under its own directory. The hostile
client (an independent Connect session on the same server) then tries every attack a client could
use against a shared server: settings that pick the server's file system or lower its retention,
table properties and VACUUM arguments below the retention floor, VACUUM of the victim's table,
tables and sinks created above, inside and around the victim's, write options that reach Hadoop,
and foreign files staged into the victim's table. Each is refused with its error class. Afterwards
the victim's directory holds exactly the same files (names, sizes, modification times), delta-rs
and Spark + Delta read exactly the same rows and versions, and the victim publishes its staged
commit and its next sink batch as if nothing had happened.
"""

from __future__ import annotations

import os

import pytest
from helpers import file_tree, second_session, versioned_rows_delta_rs, versioned_rows_spark_delta
from pyspark.errors import PySparkException

import filecommit
from filecommit import errors

pytestmark = pytest.mark.slow








def _call_refused(condition: str, call, *args, **kwargs):
    with pytest.raises(PySparkException) as excinfo:
        call(*args, **kwargs)
    got = getattr(excinfo.value, "getCondition", lambda: None)()
    assert got == condition, f"{call.__name__}: expected {condition}, got {got}: {excinfo.value}"
    return excinfo.value


@pytest.fixture
def tenants(tmp_path):
    victim, hostile = tmp_path / "victim", tmp_path / "hostile"
    victim.mkdir()
    hostile.mkdir()
    return str(tmp_path), str(victim), str(hostile)


def test_a_hostile_tenant_cannot_touch_another_tenants_tables(spark, delta_spark, tenants):
    parent, victim_dir, hostile_dir = tenants
    table = os.path.join(victim_dir, "orders")
    sink = os.path.join(victim_dir, "events")

    # The victim's tables: three versions with CDF and a deletion vector, a staged commit, a sink.
    rows = [(i, i * 10, "ab"[i % 2]) for i in range(40)]
    filecommit.write(spark.createDataFrame(rows, "id long, v long, part string"), table, partition_by=["part"],
                     table_properties={"delta.enableChangeDataFeed": "true",
                                       "delta.enableDeletionVectors": "true"})
    filecommit.delete(spark, table, "id % 7 = 0")
    filecommit.update(spark, table, set={"v": "v + 1"}, condition="id % 5 = 0")
    staged = filecommit.write(spark.createDataFrame([(100, 1000, "a")], "id long, v long, part string"), table,
                              stage=True)
    filecommit.write_batch(spark.createDataFrame([(1, "x")], "id long, s string"), sink, batch_id=0)

    files_before = file_tree(victim_dir)
    rs_before = versioned_rows_delta_rs(table)
    spark_before = versioned_rows_spark_delta(delta_spark, table)
    assert spark_before[0] == 2 and rs_before == spark_before

    hostile = second_session(spark)
    try:
        mine = os.path.join(hostile_dir, "mine")
        filecommit.write(hostile.createDataFrame([(1, 1, "a")], "id long, v long, part string"), mine)
        small = hostile.createDataFrame([(9, 9, "a")], "id long, v long, part string")

        # Session settings that would pick the server's file system, its retention or its roots.
        for key, value in (("fs.file.impl", "does.not.Exist"), ("fs.defaultFS", "hdfs://127.0.0.1:1/"),
                           ("fs.AbstractFileSystem.file.impl", "does.not.Exist"),
                           ("spark.filecommit.retention.minimum", "0"),
                           ("spark.filecommit.vacuum.retentionCheck.enabled", "false"),
                           ("spark.filecommit.allowedRoots", "file:/")):
            hostile.conf.set(key, value)
            try:
                _call_refused(errors.CANNOT_MODIFY_STATIC_CONFIG, filecommit.write, small, table)
                _call_refused(errors.CANNOT_MODIFY_STATIC_CONFIG, filecommit.vacuum, hostile, table)
            finally:
                hostile.conf.unset(key)

        # Write options that reach the Hadoop configuration of the victim's table.
        for key, value in (("fs.file.impl", "does.not.Exist"),
                           ("mapreduce.outputcommitter.factory.class", "does.not.Exist")):
            _call_refused(errors.CANNOT_MODIFY_STATIC_CONFIG, filecommit.write, small, table, options={key: value})

        # Retention below the server's floor: on its own table, and VACUUM of the victim's.
        _call_refused(errors.FILECOMMIT_RETENTION_BELOW_MINIMUM, filecommit.set_table_properties, hostile, mine,
                      {"delta.deletedFileRetentionDuration": "interval 0 seconds"})
        _call_refused(errors.FILECOMMIT_RETENTION_BELOW_MINIMUM, filecommit.set_table_properties, hostile, table,
                      {"delta.deletedFileRetentionDuration": "interval 1 hours"})
        for path in (mine, table):
            _call_refused(errors.DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT, filecommit.vacuum, hostile, path,
                          retention_hours=0)
        # VACUUM within the rules is allowed, and deletes nothing of the victim's.
        assert filecommit.vacuum(hostile, table).files == []

        # Tables and sinks above, inside and around the victim's.
        for path in (parent, victim_dir, os.path.join(table, "nested"), os.path.join(table, "part=a", "t"),
                     os.path.join(sink, "t")):
            _call_refused(errors.FILECOMMIT_TABLE_LOCATION_OVERLAP, filecommit.write, small, path)
        for path in (victim_dir, os.path.join(table, "s")):
            _call_refused(errors.FILECOMMIT_TABLE_LOCATION_OVERLAP, filecommit.write_batch,
                          hostile.createDataFrame([(1, "x")], "id long, s string"), path, batch_id=0)

        # The victim's own data files staged again into its table: refused, nothing staged.
        data_file = next(os.path.relpath(p, "orders") for p in files_before
                         if p.startswith("orders/part=") and p.endswith(".parquet"))
        _call_refused(errors.FILECOMMIT_INVALID_STAGED_FILE, filecommit.stage_files, hostile, table, [data_file])
    finally:
        hostile.stop()

    # Exactly the same files, rows and versions for both independent readers.
    assert file_tree(victim_dir) == files_before
    assert versioned_rows_delta_rs(table) == rs_before
    assert versioned_rows_spark_delta(delta_spark, table) == spark_before

    # The victim goes on: its staged commit publishes, its sink takes the next batch.
    published = filecommit.commit(spark, table, staged)
    assert published.committed and published.version == 3
    assert filecommit.write_batch(spark.createDataFrame([(2, "y")], "id long, s string"), sink,
                                  batch_id=1).committed
    version, after = versioned_rows_spark_delta(delta_spark, table)
    assert version == 3 and after == sorted(spark_before[1] + [(100, 1000, "a")])
    assert versioned_rows_delta_rs(table) == (3, after)
    assert sorted(r.id for r in spark.read.parquet(sink).collect()) == [1, 2]
