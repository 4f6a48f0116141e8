"""Delta Lake's own documented examples, run unchanged against the plugin's server.

The examples are those of Delta's quickstart, https://docs.delta.io/latest/quick-start.html
("Create a table", "Read data", "Update table data" / "Overwrite", "Conditional update without
overwrite" in SQL, "Read older versions of data using time travel"), and the utility statements of
https://docs.delta.io/latest/delta-utility.html (DESCRIBE HISTORY, DESCRIBE DETAIL, VACUUM,
RESTORE) and https://docs.delta.io/latest/optimizations-oss.html (OPTIMIZE, ZORDER BY), with one
change only: the docs' table path (``/tmp/delta-table``) is a temporary directory. Every statement
is plain pyspark / Spark SQL through Spark Connect; every result is checked with Spark + Delta (the
``delta_spark`` fixture: delta-spark reads the table, and runs the same statement on it where the
columns of the answer are compared) and with delta-rs.

Out of scope: the DeltaTable Python API (``delta.tables`` / ``delta.connect``: ``DeltaTable.forPath``,
``.update``, ``.merge``, ``.history``) of the quickstart's Python tabs, which needs delta-spark's
Python package on the client; and the streaming examples.

Also here: every failure of the standard API (``format("delta")``, ``saveAsTable``, SQL DML and the
maintenance statements) carries an error class other than ``INTERNAL_ERROR``.
"""

from __future__ import annotations

import uuid

import pandas as pd
import pytest
from deltalake import DeltaTable
from helpers import delta_rows, error_class, log_actions, rows_frame
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

pytestmark = pytest.mark.slow


def _sorted_ids(rows):
    return sorted(r[0] for r in rows)


def _rs_ids(path, version=None):
    return sorted(delta_rows(path, ["id"], version=version)["id"].tolist())


def _spark_ids(out):
    assert out.get("ok", True), out
    return sorted(r["id"] for r in out["rows"])


def test_quickstart_python_dataframe_examples(spark, delta_spark, tmp_path):
    path = str(tmp_path / "delta-table")
    # Create a table
    data = spark.range(0, 5)
    data.write.format("delta").save(path)
    # Read data
    df = spark.read.format("delta").load(path)
    assert _sorted_ids(df.collect()) == [0, 1, 2, 3, 4]
    # Update table data: overwrite
    data = spark.range(5, 10)
    data.write.format("delta").mode("overwrite").save(path)
    df = spark.read.format("delta").load(path)
    assert _sorted_ids(df.collect()) == [5, 6, 7, 8, 9]
    # Read older versions of data using time travel
    df = spark.read.format("delta").option("versionAsOf", 0).load(path)
    assert _sorted_ids(df.collect()) == [0, 1, 2, 3, 4]
    assert _rs_ids(path) == [5, 6, 7, 8, 9]
    assert _rs_ids(path, version=0) == [0, 1, 2, 3, 4]
    latest, v0 = delta_spark.read([{"kind": "table", "path": path}, {"kind": "table", "path": path, "version": 0}])
    assert _spark_ids(latest) == [5, 6, 7, 8, 9] and latest["latest_version"] == 1
    assert _spark_ids(v0) == [0, 1, 2, 3, 4]


def test_quickstart_sql_examples(spark, delta_spark, tmp_path):
    path = str(tmp_path / "delta-table")
    t = f"delta.`{path}`"
    expected = {}
    spark.sql(f"CREATE TABLE {t} USING DELTA AS SELECT col1 as id FROM VALUES 0,1,2,3,4").collect()
    expected[0] = [0, 1, 2, 3, 4]
    assert _sorted_ids(spark.sql(f"SELECT * FROM {t}").collect()) == expected[0]
    spark.sql(f"INSERT OVERWRITE {t} SELECT col1 as id FROM VALUES 5,6,7,8,9").collect()
    expected[1] = [5, 6, 7, 8, 9]
    assert [tuple(r) for r in spark.sql(f"UPDATE {t} SET id = id + 100 WHERE id % 2 == 0").collect()] == [(2,)]
    expected[2] = [5, 7, 9, 106, 108]
    assert [tuple(r) for r in spark.sql(f"DELETE FROM {t} WHERE id % 2 == 0").collect()] == [(2,)]
    expected[3] = [5, 7, 9]
    spark.sql("CREATE TEMP VIEW newData AS SELECT col1 AS id FROM VALUES 1,3,5,7,9,11,13,15,17,19").collect()
    merged = spark.sql(f"MERGE INTO {t} AS oldData USING newData ON oldData.id = newData.id "
                       "WHEN MATCHED THEN UPDATE SET id = newData.id "
                       "WHEN NOT MATCHED THEN INSERT (id) VALUES (newData.id)").collect()
    assert [tuple(r) for r in merged] == [(10, 3, 0, 7)]
    expected[4] = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
    assert _sorted_ids(spark.sql(f"SELECT * FROM {t}").collect()) == expected[4]
    assert _sorted_ids(spark.sql(f"SELECT * FROM {t} VERSION AS OF 0").collect()) == expected[0]
    for v, ids in expected.items():
        assert _rs_ids(path, version=v) == ids, v
    reads = delta_spark.read([{"kind": "table", "path": path, "version": v} for v in expected])
    for (v, ids), out in zip(expected.items(), reads, strict=True):
        assert _spark_ids(out) == ids, v
    assert reads[0]["latest_version"] == 4


def _rows_by_column(df):
    return [r.asDict(recursive=True) for r in df.collect()]


def test_utility_statements_answer_as_delta(spark, delta_spark, tmp_path):
    """DESCRIBE HISTORY / DETAIL, OPTIMIZE (WHERE, ZORDER BY), VACUUM, RESTORE, table_changes on a
    table by name and by path: Delta's columns (compared with delta-spark running the same statement
    on the same table), the commits read back by delta-rs and Spark + Delta."""
    path = str(tmp_path / "events")
    name = f"events_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} (eventType STRING, date STRING, n BIGINT) USING DELTA PARTITIONED BY (date) "
              f"LOCATION '{path}' TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')").collect()
    for i in range(3):
        spark.sql(f"INSERT INTO {name} VALUES ('e{i}', '2017-01-0{1 + i % 2}', {i}), ('x{i}', '2016-12-31', {i})")\
            .collect()
    # versions 0 (create) .. 3; files: 2017-01-01 two, 2017-01-02 one, 2016-12-31 three.
    detail = spark.sql(f"DESCRIBE DETAIL {name}")
    d = _rows_by_column(detail)[0]
    assert d["format"] == "delta" and d["name"] == f"spark_catalog.default.{name}"
    assert d["numFiles"] == len(DeltaTable(path).file_uris()) == 6
    assert d["partitionColumns"] == ["date"]
    assert d["properties"]["delta.enableChangeDataFeed"] == "true"
    theirs = delta_spark.read([{"kind": "sql", "sql": "DESCRIBE DETAIL {table}", "path": path},
                               {"kind": "sql", "sql": "DESCRIBE HISTORY {table}", "path": path}])
    assert all(o.get("ok", True) for o in theirs), theirs
    assert detail.columns == theirs[0]["columns"]
    ref = theirs[0]["rows"][0]
    for k in ("id", "numFiles", "sizeInBytes", "partitionColumns", "minReaderVersion", "minWriterVersion",
              "tableFeatures", "properties", "clusteringColumns"):
        assert d[k] == ref[k], k
    history = spark.sql(f"DESCRIBE HISTORY delta.`{path}`")
    assert history.columns == theirs[1]["columns"]
    hrows = _rows_by_column(history)
    assert [h["version"] for h in hrows] == [3, 2, 1, 0] == [h["version"] for h in theirs[1]["rows"]]
    assert [h["operation"] for h in hrows] == [h["operation"] for h in theirs[1]["rows"]]
    assert [h["version"] for h in _rows_by_column(spark.sql(f"DESCRIBE HISTORY {name} LIMIT 1"))] == [3]
    # OPTIMIZE with a partition predicate, then ZORDER BY (Delta's docs' forms).
    opt = spark.sql(f"OPTIMIZE {name} WHERE date >= '2017-01-01'")
    assert opt.columns == ["path", "metrics"]
    m = opt.collect()[0]["metrics"]
    # only 2017-01-01 has more than one file to compact
    assert (m["numFilesAdded"], m["numFilesRemoved"], m["partitionsOptimized"]) == (1, 2, 1)
    assert m["filesRemoved"]["totalFiles"] == 2
    assert m["filesRemoved"]["totalSize"] == sum(a["remove"]["size"] for a in log_actions(path)[4] if "remove" in a)
    z = spark.sql(f"OPTIMIZE '{path}' ZORDER BY (eventType)").collect()[0]["metrics"]
    log5 = log_actions(path)[5]
    assert z["numFilesRemoved"] == sum(1 for a in log5 if "remove" in a) > 0
    assert z["numFilesAdded"] == sum(1 for a in log5 if "add" in a) > 0
    assert DeltaTable(path).version() == 5
    # VACUUM at the default retention deletes nothing yet; DRY RUN lists nothing.
    assert spark.sql(f"VACUUM {name} DRY RUN").collect() == []
    vac = spark.sql(f"VACUUM delta.`{path}` RETAIN 168 HOURS")
    assert vac.columns == ["path"] and len(vac.collect()) == 1
    # RESTORE to version 1 by name, then TIMESTAMP AS OF by path.
    restored = spark.sql(f"RESTORE TABLE {name} TO VERSION AS OF 1")
    assert restored.columns == ["table_size_after_restore", "num_of_files_after_restore", "num_removed_files",
                                "num_restored_files", "removed_files_size", "restored_files_size"]
    r = restored.collect()[0]
    assert r["num_of_files_after_restore"] == 2 and r["num_restored_files"] == 2
    want = [("e0", "2017-01-01", 0), ("x0", "2016-12-31", 0)]
    cols = ["eventType", "date", "n"]
    pd.testing.assert_frame_equal(delta_rows(path, cols), rows_frame(want, cols))
    table_read, hist = delta_spark.read([{"kind": "table", "path": path}, {"kind": "history", "path": path}])
    assert sorted((x["eventType"], x["date"], x["n"]) for x in table_read["rows"]) == sorted(want)
    assert table_read["latest_version"] == 6
    assert [h["operation"] for h in hist["rows"]][:3] == ["RESTORE", "OPTIMIZE", "OPTIMIZE"]
    # table_changes: by name and by path, against Delta's change feed.
    changes = spark.sql(f"SELECT * FROM table_changes('{name}', 1, 3)")
    cdf = delta_spark.read_one({"kind": "cdf", "path": path, "startingVersion": 1, "endingVersion": 3})
    assert set(changes.columns) == set(cdf["columns"])
    key = lambda x: (x["_commit_version"], x["eventType"], x["_change_type"])  # noqa: E731
    assert sorted(key(x) for x in _rows_by_column(changes)) == sorted(key(x) for x in cdf["rows"])
    by_path = spark.sql(f"SELECT count(*) FROM table_changes('delta.`{path}`', 2)").collect()[0][0]
    assert by_path == sum(1 for x in _rows_by_column(spark.sql(f"SELECT * FROM table_changes('{name}', 2)")))
    # a timestamp bound, as a string and as a TIMESTAMP value: version 1's commit timestamp starts at 1
    at = hrows[-2]["timestamp"].isoformat(sep=" ")
    from_one = spark.sql(f"SELECT count(*) FROM table_changes('{name}', 1, 3)").collect()[0][0]
    for start in (f"'{at}'", f"TIMESTAMP '{at}'"):
        assert spark.sql(f"SELECT count(*) FROM table_changes('{name}', {start}, 3)").collect()[0][0] == from_one




@pytest.fixture(scope="module")
def failing_table(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("failures") / "t")
    name = f"f_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} (id BIGINT, part STRING) USING DELTA PARTITIONED BY (part) LOCATION '{path}'")\
        .collect()
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')").collect()
    from helpers import shared_mode

    if shared_mode():  # a shared server refuses a managed non-Delta table (docs/sharing.md)
        return name, path, None
    parquet = f"p_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {parquet} (id BIGINT) USING parquet").collect()
    return name, path, parquet


_FAILURES = {
    # format("delta")
    "read_missing_path": ("read_missing", "DELTA_MISSING_DELTA_TABLE"),
    "read_bad_version": ("read_version", "DELTA_VERSION_NOT_FOUND"),
    "read_both_time_travel_options": ("read_both", None),
    "save_error_if_exists": ("save_exists", "DELTA_TABLE_ALREADY_EXISTS"),
    # saveAsTable / SQL DML
    "save_as_table_existing": ("save_as_table", "TABLE_OR_VIEW_ALREADY_EXISTS"),
    "insert_missing_table": ("sql:INSERT INTO no_such_table_xyz VALUES (1)", "TABLE_OR_VIEW_NOT_FOUND"),
    "delete_bad_predicate": ("sql:DELETE FROM {name} WHERE nope = 1", "UNRESOLVED_COLUMN.WITH_SUGGESTION"),
    "update_time_travel": ("sql:UPDATE {name} VERSION AS OF 0 SET id = 1", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    # a time-travel version given to a statement that writes (Delta: a syntax error)
    "update_at_version": ("sql:UPDATE {name}@v0 SET id = 1", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "delete_time_travel": ("sql:DELETE FROM {name} VERSION AS OF 0 WHERE id = 1", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "delete_at_version": ("sql:DELETE FROM {name}@v0", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "merge_at_version": ("sql:MERGE INTO {name}@v0 t USING (SELECT 1L AS id) s ON t.id = s.id "
                         "WHEN MATCHED THEN DELETE", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "merge_time_travel": ("sql:MERGE INTO {name} TIMESTAMP AS OF '2020-01-01' t USING (SELECT 1L AS id) s "
                          "ON t.id = s.id WHEN MATCHED THEN DELETE", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "optimize_at_version": ("sql:OPTIMIZE {name}@v0", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "optimize_time_travel": ("sql:OPTIMIZE {name} VERSION AS OF 0", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "optimize_time_travel_name": ("sql:OPTIMIZE `{name}@v0` ZORDER BY (id)", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "vacuum_at_version": ("sql:VACUUM {name}@v0", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "vacuum_time_travel_name": ("sql:VACUUM `{name}@v0` RETAIN 0 HOURS", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "restore_at_version": ("sql:RESTORE TABLE {name}@v1 TO VERSION AS OF 0", "FILECOMMIT_TIME_TRAVEL_WRITE"),
    "restore_time_travel_name": ("sql:RESTORE TABLE `{name}@v1` TO VERSION AS OF 0",
                                 "FILECOMMIT_TIME_TRAVEL_WRITE"),
    # Delta statements this server does not run: a class naming them, never a syntax error
    "convert_to_delta_no_statistics": ("sql:CONVERT TO DELTA parquet.`{missing}` NO STATISTICS",
                                       "FILECOMMIT_UNSUPPORTED_OPERATION"),
    "convert_to_delta_missing_path": ("sql:CONVERT TO DELTA parquet.`{missing}`", "PATH_NOT_FOUND"),
    "generate_manifest": ("sql:GENERATE symlink_format_manifest FOR TABLE {name}", "FILECOMMIT_UNSUPPORTED_OPERATION"),
    "reorg_purge": ("sql:REORG TABLE {name} APPLY (PURGE)", "FILECOMMIT_UNSUPPORTED_OPERATION"),
    "vacuum_lite": ("sql:VACUUM {name} LITE", "FILECOMMIT_UNSUPPORTED_OPERATION"),
    "optimize_full": ("sql:OPTIMIZE {name} FULL", "DELTA_OPTIMIZE_FULL_NOT_SUPPORTED"),
    "vacuum_full_retention_too_short": ("sql:VACUUM {name} FULL RETAIN 0 HOURS",
                                        "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"),
    "select_bad_version": ("sql:SELECT * FROM {name} VERSION AS OF 99", "DELTA_VERSION_NOT_FOUND"),
    # the maintenance statements
    "optimize_missing_table": ("sql:OPTIMIZE no_such_table_xyz", "TABLE_OR_VIEW_NOT_FOUND"),
    "optimize_missing_path": ("sql:OPTIMIZE '{missing}'", "DELTA_MISSING_DELTA_TABLE"),
    "optimize_non_partition_predicate": ("sql:OPTIMIZE {name} WHERE id = 1", "DELTA_NON_PARTITION_COLUMN_REFERENCE"),
    "optimize_zorder_partition_column": ("sql:OPTIMIZE {name} ZORDER BY (part)", "DELTA_ZORDERING_ON_PARTITION_COLUMN"),
    "optimize_zorder_unknown_column": ("sql:OPTIMIZE {name} ZORDER BY (nope)", "DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST"),
    "vacuum_retention_too_short": ("sql:VACUUM {name} RETAIN 0 HOURS", "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"),
    "vacuum_missing_path": ("sql:VACUUM delta.`{missing}`", "DELTA_MISSING_DELTA_TABLE"),
    "restore_bad_version": ("sql:RESTORE TABLE {name} TO VERSION AS OF 99", "DELTA_CANNOT_RESTORE_TABLE_VERSION"),
    "restore_bad_timestamp": ("sql:RESTORE TABLE {name} TO TIMESTAMP AS OF 'not a time'", "DELTA_TIMESTAMP_INVALID"),
    "history_missing_table": ("sql:DESCRIBE HISTORY no_such_table_xyz", "TABLE_OR_VIEW_NOT_FOUND"),
    "detail_missing_path": ("sql:DESCRIBE DETAIL '{missing}'", "DELTA_MISSING_DELTA_TABLE"),
    "table_changes_no_cdf": ("sql:SELECT * FROM table_changes('{name}', 0)", "DELTA_MISSING_CHANGE_DATA"),
    "table_changes_bad_range": ("sql:SELECT * FROM table_changes('{name}', 1, 0)", "DELTA_INVALID_CDC_RANGE"),
    "optimize_syntax": ("sql:OPTIMIZE {name} ZORDER (id", "PARSE_SYNTAX_ERROR"),
    "optimize_unparsable_where": ("sql:OPTIMIZE {name} WHERE part = = 'a'", "DELTA_FAILED_RECOGNIZE_PREDICATE"),
    "history_negative_limit": ("sql:DESCRIBE HISTORY {name} LIMIT -1", None),
    "restore_non_delta_table": ("sql:RESTORE TABLE {parquet} TO VERSION AS OF 0", "DELTA_MISSING_DELTA_TABLE"),
    "detail_non_delta_table": ("sql:DESCRIBE DETAIL {parquet}", "DELTA_MISSING_DELTA_TABLE"),
    "table_changes_one_argument": ("sql:SELECT * FROM table_changes('{name}')", None),
    "table_changes_missing_table": ("sql:SELECT * FROM table_changes('no_such_table_xyz', 0)",
                                    "TABLE_OR_VIEW_NOT_FOUND"),
    "table_changes_not_constant": ("sql:SELECT * FROM table_changes('{name}', rand())",
                                   "DELTA_CDC_NON_CONSTANT_ARGUMENT"),
    "read_version_not_a_number": ("read_version_text", None),
    "read_timestamp_garbage": ("read_timestamp_garbage", None),
    "write_replace_where_and_dynamic": ("write_conflicting", None),
    "save_as_table_schema_mismatch": ("save_as_table_mismatch", None),
    "insert_wrong_arity": ("sql:INSERT INTO {name} VALUES (1, 'a', 3)",
                           "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS"),
    "update_type_mismatch": ("sql:UPDATE {name} SET id = 'x' || id", None),
    "merge_multiple_matches": ("sql:MERGE INTO {name} t USING (SELECT 1L AS id UNION ALL SELECT 1L) s ON t.id = s.id "
                               "WHEN MATCHED THEN UPDATE SET part = 'z'",
                               "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"),
}


@pytest.mark.parametrize("case", sorted(_FAILURES))
def test_standard_api_failures_carry_an_error_class(spark, failing_table, tmp_path, case):
    name, path, parquet = failing_table
    what, expected = _FAILURES[case]
    if parquet is None and "{parquet}" in what:
        pytest.skip("refused in shared mode: a managed non-Delta table (FILECOMMIT_SHARED_MODE_REFUSED, docs/sharing.md)")
    missing = str(tmp_path / "missing")
    before = DeltaTable(path).version()
    with pytest.raises(SparkConnectGrpcException) as e:
        if what.startswith("sql:"):
            spark.sql(what[4:].format(name=name, missing=missing, parquet=parquet)).collect()
        elif what == "read_missing":
            spark.read.format("delta").load(missing).collect()
        elif what == "read_version":
            spark.read.format("delta").option("versionAsOf", 99).load(path).collect()
        elif what == "read_both":
            spark.read.format("delta").option("versionAsOf", 0).option("timestampAsOf", "2020-01-01")\
                .load(path).collect()
        elif what == "save_exists":
            spark.range(1).write.format("delta").mode("error").save(path)
        elif what == "save_as_table":
            spark.range(1).write.format("delta").saveAsTable(name)
        elif what == "save_as_table_mismatch":
            spark.range(1).selectExpr("'x' AS id").write.format("delta").mode("append").saveAsTable(name)
        elif what == "read_version_text":
            spark.read.format("delta").option("versionAsOf", "abc").load(path).collect()
        elif what == "read_timestamp_garbage":
            spark.read.format("delta").option("timestampAsOf", "garbage").load(path).collect()
        elif what == "write_conflicting":
            spark.createDataFrame([(3, "a")], "id long, part string").write.format("delta").mode("overwrite")\
                .option("replaceWhere", "part = 'a'").option("partitionOverwriteMode", "dynamic").save(path)
    condition = error_class(e)
    assert condition is not None and condition != "INTERNAL_ERROR", (case, condition, str(e.value)[:400])
    if expected is not None:
        assert condition == expected, (case, condition)
    assert DeltaTable(path).version() == before  # nothing committed
