"""Delta through Spark's standard API: ``df.write.format("delta")`` / ``format("filecommit")`` with
every save mode and Delta's writer options, through the server's commit path, read back by
delta-rs and by Spark + Delta; failures carry error classes and arrive as pyspark's types
(``AnalysisException``, ``IllegalArgumentException``, ...), never ``INTERNAL_ERROR``.

The writes go through a plain pyspark Spark Connect session (``second_session``): nothing of
filecommit's client is involved, as for any Spark Connect client.
"""

from __future__ import annotations

import os
import threading

import pytest
from deltalake import DeltaTable
from helpers import adds_in_log, delta_rows, error_class, log_actions, result_frame, rows_frame, second_session
from pyspark.errors import AnalysisException, IllegalArgumentException
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

import filecommit

pytestmark = pytest.mark.slow

SCHEMA = "id long, name string, part string"


@pytest.fixture(scope="module")
def plain(spark):
    """A plain pyspark Connect session on the suite's server."""
    session = second_session(spark)
    yield session
    session.stop()


def _schema_df(spark, rows, schema=SCHEMA):
    return spark.createDataFrame(rows, schema)


def _delta_spark_rows(delta_spark, path, columns):
    """The table's rows as Spark + Delta reads them, canonical."""
    out = delta_spark.read([{"kind": "table", "path": path}])[0]
    assert out.get("ok", True), out
    return result_frame(out, columns), out["latest_version"]


def _expect(rows, columns):
    return rows_frame(rows, columns)


@pytest.mark.parametrize("fmt", ["delta", "filecommit"])
def test_every_save_mode(plain, delta_spark, table_path, fmt):
    """append creates then adds, error(ifexists) refuses an existing table, ignore leaves it, overwrite
    replaces it: each one commit (or none), as delta-rs and Spark + Delta read the table."""
    cols = ["id", "name", "part"]
    _schema_df(plain, [(1, "a", "x")]).write.format(fmt).mode("append").save(table_path)
    _schema_df(plain, [(2, "b", "y")]).write.format(fmt).mode("append").save(table_path)
    with pytest.raises(AnalysisException) as e:  # pyspark's Connect client sends "errorifexists" as "error"
        _schema_df(plain, [(3, "c", "z")]).write.format(fmt).mode("error").save(table_path)
    assert error_class(e) == "DELTA_TABLE_ALREADY_EXISTS"
    with pytest.raises(AnalysisException):
        _schema_df(plain, [(3, "c", "z")]).write.format(fmt).save(table_path)  # Spark's default mode
    _schema_df(plain, [(4, "d", "w")]).write.format(fmt).mode("ignore").save(table_path)
    assert DeltaTable(table_path).version() == 1
    assert delta_rows(table_path, cols).equals(_expect([(1, "a", "x"), (2, "b", "y")], cols))
    _schema_df(plain, [(5, "e", "v")]).write.format(fmt).mode("overwrite").save(table_path)
    ops = [(a["commitInfo"]["operation"], a["commitInfo"]["operationParameters"]["mode"])
           for v, acts in sorted(log_actions(table_path).items()) for a in acts if "commitInfo" in a]
    assert ops == [("WRITE", "Append"), ("WRITE", "Append"), ("WRITE", "Overwrite")]
    expected = _expect([(5, "e", "v")], cols)
    assert delta_rows(table_path, cols).equals(expected)
    if fmt == "delta":  # one Spark + Delta read (the two names run the same code)
        theirs, version = _delta_spark_rows(delta_spark, table_path, cols)
        assert theirs.equals(expected) and version == 2
    # A new table in modes error and ignore.
    fresh = table_path + "_new"
    _schema_df(plain, [(1, "a", "x")]).write.format(fmt).mode("error").save(fresh)
    _schema_df(plain, [(2, "b", "y")]).write.format(fmt).mode("ignore").save(fresh + "2")
    assert delta_rows(fresh, cols).equals(_expect([(1, "a", "x")], cols))
    assert delta_rows(fresh + "2", cols).equals(_expect([(2, "b", "y")], cols))
    # Reads as today, under both names.
    assert sorted(r.id for r in plain.read.format(fmt).load(table_path).collect()) == [5]
    assert sorted(r.id for r in plain.read.format(fmt).option("versionAsOf", 1).load(table_path).collect()) == [1, 2]


def test_partitions_replace_where_and_dynamic_overwrite(plain, delta_spark, table_path):
    """partitionBy makes the partition columns; replaceWhere replaces the matching partitions only;
    partitionOverwriteMode=dynamic replaces only the partitions the data writes into."""
    cols = ["id", "name", "part"]
    w = _schema_df(plain, [(1, "a", "x"), (2, "b", "y"), (3, "c", "z")]).write.format("delta")
    w.mode("overwrite").partitionBy("part").save(table_path)
    md = next(a["metaData"] for a in log_actions(table_path)[0] if "metaData" in a)
    assert md["partitionColumns"] == ["part"]
    (_schema_df(plain, [(10, "r", "x")]).write.format("delta").mode("overwrite")
     .option("replaceWhere", "part = 'x'").save(table_path))
    (_schema_df(plain, [(20, "d", "y"), (21, "d", "new")]).write.format("delta").mode("overwrite")
     .option("partitionOverwriteMode", "dynamic").save(table_path))
    expected = _expect([(10, "r", "x"), (20, "d", "y"), (21, "d", "new"), (3, "c", "z")], cols)
    assert delta_rows(table_path, cols).equals(expected)
    theirs, _ = _delta_spark_rows(delta_spark, table_path, cols)
    assert theirs.equals(expected)
    removed = [a["remove"]["partitionValues"] for a in log_actions(table_path)[2] if "remove" in a]
    assert removed == [{"part": "y"}]
    with pytest.raises(AnalysisException) as e:  # rows outside the predicate
        (_schema_df(plain, [(11, "r", "y")]).write.format("delta").mode("overwrite")
         .option("replaceWhere", "part = 'x'").save(table_path))
    assert error_class(e) == "DELTA_REPLACE_WHERE_MISMATCH"
    with pytest.raises(AnalysisException) as e:
        (_schema_df(plain, [(11, "r", "x")]).write.format("delta").mode("overwrite")
         .option("replaceWhere", "part = 'x'").option("partitionOverwriteMode", "dynamic").save(table_path))
    assert error_class(e) == "DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE"
    with pytest.raises(IllegalArgumentException) as e:
        (_schema_df(plain, [(11, "r", "x")]).write.format("delta").mode("overwrite")
         .option("partitionOverwriteMode", "sometimes").save(table_path))
    assert error_class(e) == "DELTA_ILLEGAL_OPTION"
    assert DeltaTable(table_path).version() == 2


def test_schema_options(plain, table_path):
    """Without mergeSchema a new column is refused; mergeSchema adds it; overwriteSchema replaces
    the schema and the partition columns."""
    _schema_df(plain, [(1, "a", "x")]).write.format("delta").save(table_path)
    wider = plain.createDataFrame([(2, "b", "y", 2.5)], SCHEMA + ", score double")
    with pytest.raises(AnalysisException) as e:
        wider.write.format("delta").mode("append").save(table_path)
    assert error_class(e) == "DELTA_METADATA_MISMATCH"
    wider.write.format("delta").mode("append").option("mergeSchema", "true").save(table_path)
    cols = ["id", "name", "part", "score"]
    assert delta_rows(table_path, cols).equals(_expect([(1, "a", "x", None), (2, "b", "y", 2.5)], cols))
    other = plain.createDataFrame([("k", 7)], "key string, n int")
    other.write.format("delta").mode("overwrite").option("overwriteSchema", "true").partitionBy("key").save(table_path)
    assert delta_rows(table_path, ["key", "n"]).equals(_expect([("k", 7)], ["key", "n"]))
    assert DeltaTable(table_path).version() == 2
    assert DeltaTable(table_path).metadata().partition_columns == ["key"]
    with pytest.raises(IllegalArgumentException) as e:
        other.write.format("delta").mode("append").option("overwriteSchema", "true").save(table_path)
    assert error_class(e) == "DELTA_ILLEGAL_OPTION"


def test_idempotent_writes_user_metadata_and_file_size(plain, table_path):
    """txnAppId/txnVersion: a version already applied is skipped; userMetadata lands in
    commitInfo; maxRecordsPerFile splits the files."""
    df = plain.range(5).selectExpr("id", "cast(id as string) as name")
    for _ in range(2):
        (df.write.format("delta").mode("append").option("txnAppId", "app").option("txnVersion", "1")
         .option("userMetadata", "nightly load").option("maxRecordsPerFile", "2").save(table_path))
    dt = DeltaTable(table_path)
    assert dt.version() == 0
    assert dt.history()[0]["userMetadata"] == "nightly load"
    assert next(a["txn"] for a in log_actions(table_path)[0] if "txn" in a)["appId"] == "app"
    assert sorted(a["stats"] and int(__import__("json").loads(a["stats"])["numRecords"])
                  for a in adds_in_log(table_path, 0)) == [1, 2, 2]
    (df.write.format("delta").mode("append").option("txnAppId", "app").option("txnVersion", "2")
     .save(table_path))
    assert DeltaTable(table_path).version() == 1
    assert len(delta_rows(table_path)) == 10
    with pytest.raises(IllegalArgumentException) as e:
        df.write.format("delta").mode("append").option("txnAppId", "app").save(table_path)
    assert error_class(e) == "DELTA_ILLEGAL_OPTION"
    with pytest.raises(IllegalArgumentException) as e:
        df.write.format("delta").mode("append").option("txnAppId", "app").option("txnVersion", "x").save(table_path)
    assert error_class(e) == "DELTA_ILLEGAL_OPTION"


def test_concurrent_appends_all_land(plain, spark, table_path):
    """Appends racing through format("delta") (several sessions) all commit, as with filecommit.write."""
    _schema_df(plain, [(0, "seed", "x")]).write.format("delta").save(table_path)
    sessions = [second_session(spark) for _ in range(3)]
    errors = []

    def append(s, i):
        try:
            _schema_df(s, [(i, "w", "x")]).write.format("delta").mode("append").save(table_path)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    try:
        threads = [threading.Thread(target=append, args=(s, i + 1)) for i, s in enumerate(sessions)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for s in sessions:
            s.stop()
    assert errors == []
    assert sorted(delta_rows(table_path)["id"]) == [0, 1, 2, 3]


@pytest.mark.refused_in_shared_mode("passes dotted settings as writer options, refused there before the plan runs "
                                     "(FILECOMMIT_SHARED_MODE_REFUSED)")
def test_failures_carry_classes_and_pyspark_types(plain, table_path, tmp_path):
    """Every failure of the standard API carries an error class, never INTERNAL_ERROR, and arrives
    as the pyspark type Delta's error would; nothing is written."""
    df = _schema_df(plain, [(1, "a", "x")])
    with pytest.raises(IllegalArgumentException) as e:
        df.write.format("delta").save()
    assert error_class(e) == "INVALID_EMPTY_LOCATION"
    with pytest.raises(AnalysisException) as e:
        df.write.format("delta").save("/proc/filecommit_outside_roots")
    assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
    with pytest.raises(AnalysisException) as e:  # a Hadoop setting as a writer option
        df.write.format("delta").option("fs.file.impl", "org.example.Fs").save(table_path)
    assert error_class(e) == "CANNOT_MODIFY_STATIC_CONFIG"
    with pytest.raises(AnalysisException) as e:
        df.write.format("delta").option("delta.noSuchProperty", "1").save(table_path)
    assert error_class(e) == "DELTA_UNKNOWN_CONFIGURATION"
    assert not os.path.exists(table_path)
    with pytest.raises(AnalysisException) as e:
        plain.read.format("delta").load(str(tmp_path / "nothing_here")).collect()
    assert error_class(e) == "DELTA_MISSING_DELTA_TABLE"
    # Tables by name (the server's catalog, tests/test_catalog.py): a second creation of a name
    # fails with a class, not INTERNAL_ERROR.
    df.write.format("delta").saveAsTable("t_standard_api")
    for attempt in [lambda: df.write.format("delta").saveAsTable("t_standard_api"),
                    lambda: df.writeTo("t_standard_api").using("delta").create()]:
        with pytest.raises(SparkConnectGrpcException) as e:
            attempt()
        assert error_class(e) not in (None, "INTERNAL_ERROR"), e.value
    plain.sql("DROP TABLE t_standard_api").collect()


def test_contract_errors_are_typed_too(spark, table_path):
    """filecommit's own commands raise the same pyspark types; its error constants still match."""
    df = _schema_df(spark, [(1, "a", "x")])
    filecommit.write(df, table_path)
    with pytest.raises(AnalysisException) as e:
        filecommit.write(df, table_path, mode="error")
    assert error_class(e) == filecommit.errors.DELTA_TABLE_ALREADY_EXISTS
    assert e.value.getSqlState() == "42P07"
    filecommit.set_table_properties(spark, table_path, {"delta.appendOnly": "true"})
    with pytest.raises(SparkConnectGrpcException) as e:
        filecommit.write(df, table_path, mode="overwrite")
    assert error_class(e) == filecommit.errors.DELTA_CANNOT_MODIFY_APPEND_ONLY
    assert type(e.value).__name__ == "UnsupportedOperationException"


@pytest.mark.refused_in_shared_mode("slows the write job with reflect('java.lang.Thread', 'sleep', ...)")
def test_conflict_arrives_as_deltas_conflict_type(spark, plain, table_path):
    """A format("delta") overwrite that loses the race to an append into the partition it read
    (Serializable) fails with DELTA_CONCURRENT_APPEND, committing nothing: a Java
    ConcurrentModificationException as Delta's, which filecommit's client raises as
    ``filecommit.conflicts.ConcurrentAppendException`` and plain pyspark as UnknownException."""
    import time

    from pyspark.sql.connect import functions as F

    import filecommit.conflicts

    (_schema_df(plain, [(1, "a", "x")]).write.format("delta").partitionBy("part")
     .option("delta.isolationLevel", "Serializable").save(table_path))
    slow = (_schema_df(spark, [(2, "b", "x")]).repartition(1)
            .withColumn("id", F.expr("id + 0 * length(coalesce(reflect('java.lang.Thread', 'sleep', "
                                          "cast(4000 as bigint)), ''))")))
    errors = []

    def overwrite():
        try:
            slow.write.format("delta").mode("overwrite").option("replaceWhere", "part = 'x'").save(table_path)
        except Exception as e:  # noqa: BLE001 - checked below
            errors.append(e)

    t = threading.Thread(target=overwrite)
    t.start()
    time.sleep(1.5)
    _schema_df(plain, [(3, "c", "x")]).write.format("delta").mode("append").save(table_path)
    t.join(timeout=300)
    assert len(errors) == 1, errors
    e = errors[0]
    assert isinstance(e, filecommit.conflicts.ConcurrentAppendException), type(e).__mro__
    assert isinstance(e, filecommit.conflicts.CommitConflict)
    assert e.getCondition() == "DELTA_CONCURRENT_APPEND" and e.getSqlState() == "2D521"
    assert DeltaTable(table_path).version() == 1
    assert sorted(delta_rows(table_path)["id"]) == [1, 3]
