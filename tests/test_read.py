"""Reads through the plugin's data source (``spark.read.format("filecommit")``) against Spark + Delta.

Every table is made by real delta-spark 4.4.0 (``.venv-delta``) or by filecommit's own writes and
row-level changes; every expectation is what Spark + Delta reads from the same files (snapshot,
``versionAsOf``, ``TIMESTAMP AS OF``, ``readChangeFeed``, error classes), never our own answer.
"""

from __future__ import annotations

import os

import delta_spark_reader
import pytest
from delta_spark_reader import _plain
from helpers import copy_fixture, error_class, second_session, sql_steps
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

CDF = "'delta.enableChangeDataFeed' = 'true'"


FIXTURES = {
    # 8 appends, multi-part classic checkpoints (one action per part) every 3 commits, JSON commits
    # 0-5 deleted (log clean-up): versions 6-8 stay readable from the checkpoint at 6; change feed on.
    "cleaned": dict(steps=sql_steps(
        "SET spark.databricks.delta.checkpoint.partSize = 1",
        "CREATE TABLE {table} (id BIGINT, name STRING) USING delta TBLPROPERTIES ('delta.checkpointInterval' = '3', "
        f"{CDF})",
        *[f"INSERT INTO {{table}} VALUES ({i}, 'n{i}')" for i in range(1, 9)],
        "RESET spark.databricks.delta.checkpoint.partSize"),
        drop_commits_before=6),
    # V2 checkpoints (checkpointPolicy v2) every 2 commits, a delete in between.
    "v2cp": dict(steps=sql_steps(
        "CREATE TABLE {table} (id BIGINT, name STRING) USING delta TBLPROPERTIES ("
        "'delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '2')",
        *[f"INSERT INTO {{table}} VALUES ({i}, 'v{i}'), ({i + 10}, 'w{i}')" for i in range(1, 4)],
        "DELETE FROM {table} WHERE id = 12")),
    # Deletion vectors (a file removed whole by the last DELETE) and the change data feed.
    "dv_cdf": dict(steps=sql_steps(
        "CREATE TABLE {table} (id BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        f"TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', {CDF})",
        "INSERT INTO {table} VALUES (1, 'a'), (2, 'a'), (3, 'a'), (4, 'b'), (5, 'b')",
        "INSERT INTO {table} VALUES (6, 'a')",
        "DELETE FROM {table} WHERE id IN (2, 4)",
        "UPDATE {table} SET id = 30 WHERE id = 3",
        "DELETE FROM {table} WHERE id = 6")),
    # Column mapping by name: a renamed and a dropped column.
    "cm_name": dict(steps=sql_steps(
        "CREATE TABLE {table} (id BIGINT, name STRING, extra INT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",
        "INSERT INTO {table} VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'y')",
        "ALTER TABLE {table} RENAME COLUMN name TO label",
        "ALTER TABLE {table} DROP COLUMN extra",
        "INSERT INTO {table} VALUES (3, 'c', 'x')")),
    # Column mapping by id, the partition column and a nested field renamed.
    "cm_id": dict(steps=sql_steps(
        "CREATE TABLE {table} (id BIGINT, s STRUCT<a: INT, b: STRING>, part STRING) USING delta "
        "PARTITIONED BY (part) TBLPROPERTIES ('delta.columnMapping.mode' = 'id')",
        "INSERT INTO {table} VALUES (1, named_struct('a', 1, 'b', 'p'), 'x'), (2, named_struct('a', 2, 'b', 'q'), 'y')",
        "ALTER TABLE {table} RENAME COLUMN part TO region",
        "ALTER TABLE {table} RENAME COLUMN s.b TO bb")),
    "generated": dict(steps=sql_steps(
        "CREATE TABLE {table} (ts TIMESTAMP, d DATE GENERATED ALWAYS AS (CAST(ts AS DATE)), v INT, "
        "b INT GENERATED ALWAYS AS (v * 2)) USING delta PARTITIONED BY (d)",
        "INSERT INTO {table} (ts, v) VALUES (TIMESTAMP'2024-01-01 12:00:00', 1), (TIMESTAMP'2024-01-02 12:00:00', 2)")),
    # Partition values of several types, NULL and strings that need escaping in paths.
    "parts": dict(steps=sql_steps(
        "CREATE TABLE {table} (id BIGINT, s STRING, n INT, d DATE, t TIMESTAMP) USING delta "
        "PARTITIONED BY (s, n, d, t)",
        "INSERT INTO {table} VALUES (1, 'a b', 1, DATE'2024-01-01', TIMESTAMP'2024-01-01 10:00:00'), "
        "(2, 'x/y=z%', NULL, NULL, NULL), (3, NULL, -5, DATE'1999-12-31', TIMESTAMP'2000-06-01 00:00:01.5'), "
        "(4, '', 7, DATE'2024-02-29', TIMESTAMP'2024-02-29 23:59:59'), (5, 'ünï{}', 8, DATE'2024-03-01', NULL)")),
    # timestamp / timestamp_ntz / decimal columns, in-commit timestamps.
    "timestamps": dict(steps=sql_steps(
        "CREATE TABLE {table} (id BIGINT, t TIMESTAMP, tn TIMESTAMP_NTZ, dec DECIMAL(12, 3)) USING delta "
        "TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')",
        "INSERT INTO {table} VALUES (1, TIMESTAMP'2024-01-01 10:00:00.123456', "
        "TIMESTAMP_NTZ'2024-01-01 10:00:00.654321', 1.5), (2, NULL, NULL, NULL)",
        "INSERT INTO {table} VALUES (3, TIMESTAMP'1970-01-01 00:00:00', TIMESTAMP_NTZ'2100-01-01 00:00:00', -2.25)")),
    # The change data feed switched on at version 2: inserts, an update and a delete (cdc files), a
    # whole-partition delete (no cdc file) and an append after it.
    "cdf": dict(steps=sql_steps(
        "CREATE TABLE {table} (id BIGINT, name STRING, part STRING) USING delta PARTITIONED BY (part)",
        "INSERT INTO {table} VALUES (1, 'a', 'x'), (2, 'b', 'y')",
        f"ALTER TABLE {{table}} SET TBLPROPERTIES ({CDF})",
        "INSERT INTO {table} VALUES (3, 'c', 'x'), (4, 'd', 'z')",
        "UPDATE {table} SET name = 'B' WHERE id = 2",
        "DELETE FROM {table} WHERE id = 3",
        "DELETE FROM {table} WHERE part = 'z'",
        "INSERT INTO {table} VALUES (5, 'e', 'x')")),
}


# ------------------------------------------------------------------------------- comparison

def _sorted(rows, columns):
    return sorted(([_plain(r.get(c)) for c in columns] for r in rows), key=repr)


def _ours(df):
    """Our rows, rendered as tests/delta_spark_reader.py renders Spark + Delta's."""
    return delta_spark_reader._collected(df)


def _assert_same(ours, theirs, what):
    assert theirs.get("ok", True), f"{what}: Spark + Delta failed: {theirs.get('error')}\n{theirs.get('detail')}"
    assert sorted(ours["columns"]) == sorted(theirs["columns"]), what
    cols = theirs["columns"]
    got, expected = _sorted(ours["rows"], cols), _sorted(theirs["rows"], cols)
    assert got == expected, f"{what}:\n ours:   {got}\n delta:  {expected}"


def _filecommit_read(spark, path, **options):
    reader = spark.read.format("filecommit")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(path)


def _history(delta_spark, path):
    """version -> commit timestamp string, as Spark + Delta's DESCRIBE HISTORY gives them."""
    hist = delta_spark.read_one({"kind": "sql", "path": path, "sql": "DESCRIBE HISTORY {table}"})
    assert hist["ok"], hist
    return {r["version"]: r["timestamp"] for r in sorted(hist["rows"], key=lambda r: r["version"])}


# ------------------------------------------------------------------------------- snapshots

def test_snapshot_reads_equal_delta(spark, made, delta_spark):
    """Latest snapshot, the earliest version still recreatable and the one before the latest, per
    fixture, equal Spark + Delta's reads of the same versions."""
    reads, ours, names = [], [], []
    for name, m in made.items():
        first = 6 if name == "cleaned" else 0  # the earliest version still recreatable
        versions = [None, first] + ([m["version"] - 1] if m["version"] - 1 > first else [])
        for v in versions:
            reads.append({"kind": "table", "path": m["path"], "version": v})
            opts = {} if v is None else {"versionAsOf": v}
            ours.append(_ours(_filecommit_read(spark, m["path"], **opts)))
            names.append(f"{name}@{v}")
    for got, theirs, what in zip(ours, delta_spark.read(reads), names, strict=True):
        _assert_same(got, theirs, what)


def test_column_pruning_and_filters_equal_delta(spark, made, delta_spark):
    """Filters on partition and data columns (pruning, skipping) and a projection read what Delta reads."""
    cases = [
        ("parts", "s IS NULL OR n > 1", ["id", "s"]),
        ("parts", "s = 'x/y=z%'", ["id", "t"]),
        ("parts", "d >= DATE'2024-01-01' AND t IS NOT NULL", ["id", "d"]),
        ("dv_cdf", "part = 'a' AND id > 1", ["id"]),
        ("cm_name", "label IN ('a', 'c') AND part = 'x'", ["label", "id"]),
        ("cm_id", "region = 'y' OR s.a = 1", ["id", "s"]),
        ("timestamps", "t < TIMESTAMP'2024-01-01 10:00:00.2' AND dec = 1.5", ["id", "tn"]),
        ("cleaned", "id BETWEEN 3 AND 6", ["name"]),
    ]
    reads = [{"kind": "sql", "path": made[n]["path"],
              "sql": f"SELECT {', '.join(c)} FROM {{table}} WHERE {w}"} for n, w, c in cases]
    for (n, w, c), theirs in zip(cases, delta_spark.read(reads), strict=True):
        _assert_same(_ours(_filecommit_read(spark, made[n]["path"]).where(w).select(*c)), theirs, f"{n}: {w}")
    assert _filecommit_read(spark, made["parts"]["path"]).count() == len(made["parts"]["rows"])


def test_time_travel_by_timestamp_equals_delta(spark, made, delta_spark):
    """timestampAsOf at each commit's own timestamp (in-commit timestamps, and file times) equals
    Delta's TIMESTAMP AS OF; out-of-range times fail with Delta's classes."""
    for name in ("timestamps", "cdf"):
        path = made[name]["path"]
        hist = _history(delta_spark, path)
        reads = [{"kind": "sql", "path": path, "sql": f"SELECT * FROM {{table}} TIMESTAMP AS OF '{ts}'"}
                 for ts in hist.values()]
        for ts, theirs in zip(hist.values(), delta_spark.read(reads), strict=True):
            _assert_same(_ours(_filecommit_read(spark, path, timestampAsOf=ts)), theirs, f"{name} at {ts}")
        for ts in ("1999-01-01 00:00:00", "2999-01-01 00:00:00"):
            theirs = delta_spark.read_one({"kind": "sql", "path": path,
                                           "sql": f"SELECT * FROM {{table}} TIMESTAMP AS OF '{ts}'"})
            assert not theirs["ok"]
            with pytest.raises(PySparkException) as e:
                _filecommit_read(spark, path, timestampAsOf=ts).collect()
            assert error_class(e) == theirs["condition"], (ts, theirs)


def test_time_travel_errors_match_delta(spark, made, delta_spark):
    cleaned = made["cleaned"]["path"]
    for v in (3, 99):
        theirs = delta_spark.read_one({"kind": "table", "path": cleaned, "version": v})
        assert not theirs["ok"]
        with pytest.raises(PySparkException) as e:
            _filecommit_read(spark, cleaned, versionAsOf=v).collect()
        assert error_class(e) == theirs["condition"] == "DELTA_VERSION_NOT_FOUND"
    with pytest.raises(PySparkException) as e:
        _filecommit_read(spark, cleaned, versionAsOf=7, timestampAsOf="2024-01-01").collect()
    assert error_class(e) == "DELTA_ONEOF_IN_TIMETRAVEL"
    with pytest.raises(PySparkException) as e:
        _filecommit_read(spark, cleaned, versionAsOf="latest").collect()
    assert error_class(e) == "DELTA_ILLEGAL_OPTION"
    with pytest.raises(PySparkException) as e:
        _filecommit_read(spark, os.path.dirname(cleaned)).collect()
    assert error_class(e) == "DELTA_MISSING_DELTA_TABLE"


def test_unsupported_reader_feature_is_refused(spark, made, tmp_path):
    """A table whose protocol needs a reader feature we do not honour is refused, naming it."""
    import json

    path = copy_fixture(made, "dv_cdf", tmp_path)
    log = os.path.join(path, "_delta_log")
    latest = max(int(f.split(".")[0]) for f in os.listdir(log) if f.endswith(".json") and not f.startswith("."))
    with open(os.path.join(log, f"{latest + 1:020d}.json"), "w") as fh:
        fh.write(json.dumps({"commitInfo": {"timestamp": 1, "operation": "UPGRADE PROTOCOL"}}) + "\n")
        fh.write(json.dumps({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                                          "readerFeatures": ["deletionVectors", "madeUpFeature"],
                                          "writerFeatures": ["deletionVectors", "madeUpFeature"]}}) + "\n")
    with pytest.raises(PySparkException) as e:
        _filecommit_read(spark, path).collect()
    assert error_class(e) == "DELTA_UNSUPPORTED_FEATURES_FOR_READ"
    assert "madeUpFeature" in str(e.value)


# ------------------------------------------------------------------------------- change data feed

def test_change_feed_equals_delta(spark, made, delta_spark):
    """readChangeFeed over every range that starts at or after the feed was enabled equals Delta's."""
    ranges = {"cdf": [(2, None), (3, 5), (4, 4), (6, 7), (2, 2)], "dv_cdf": [(0, None), (1, 3), (3, 5), (5, 5)],
              "cleaned": [(6, None), (7, 8)]}
    reads, ours, what = [], [], []
    for name, rs in ranges.items():
        for start, end in rs:
            reads.append({"kind": "cdf", "path": made[name]["path"], "startingVersion": start, "endingVersion": end})
            opts = {"readChangeFeed": "true", "startingVersion": start}
            if end is not None:
                opts["endingVersion"] = end
            ours.append(_ours(_filecommit_read(spark, made[name]["path"], **opts)))
            what.append(f"{name} [{start}, {end}]")
    for got, theirs, w in zip(ours, delta_spark.read(reads), what, strict=True):
        _assert_same(got, theirs, w)


def test_change_feed_errors_match_delta(spark, made, delta_spark):
    """Before the feed was enabled, into cleaned log, after the latest version, end before start."""
    cases = [("cdf", 0, None), ("cdf", 1, 3), ("cdf", 9, None), ("cdf", 5, 3), ("cleaned", 2, None),
             ("cleaned", 0, 7)]
    theirs = delta_spark.read([{"kind": "cdf", "path": made[n]["path"], "startingVersion": s, "endingVersion": e}
                               for n, s, e in cases])
    for (n, s, e), t in zip(cases, theirs, strict=True):
        path = made[n]["path"]
        assert not t["ok"], (n, s, e, t)
        opts = {"readChangeFeed": "true", "startingVersion": s}
        if e is not None:
            opts["endingVersion"] = e
        with pytest.raises(PySparkException) as exc:
            _filecommit_read(spark, path, **opts).collect()
        assert error_class(exc) == t["condition"], (n, s, e, t)
    with pytest.raises(PySparkException) as exc:
        _filecommit_read(spark, made["cdf"]["path"], readChangeFeed="true").collect()
    assert error_class(exc) == "DELTA_NO_START_FOR_CDC_READ"


def test_change_feed_by_timestamp(spark, made, delta_spark):
    """startingTimestamp / endingTimestamp select the versions Delta selects for the same times."""
    path = made["cdf"]["path"]
    ts = _history(delta_spark, path)
    theirs = delta_spark.read_one({"kind": "cdf", "path": path, "startingVersion": 3, "endingVersion": 5})
    got = _ours(_filecommit_read(spark, path, readChangeFeed="true", startingTimestamp=ts[3], endingTimestamp=ts[5]))
    _assert_same(got, theirs, "cdf by timestamps [3, 5]")


# ------------------------------------------------------------------------------- our own writes

def test_reads_after_our_writes_equal_delta(spark, made, delta_spark, tmp_path):
    """After each of filecommit's appends, deletes (deletion vectors), updates and merges on a Delta
    table with deletion vectors and the change feed: the read at every version and the change feed
    equal Spark + Delta's. (The same commands on an s3a:// table, read back by Spark + Delta, are in
    test_s3's every-command test.)"""
    from pyspark.sql import functions as F

    path = copy_fixture(made, "dv_cdf", tmp_path)
    first = made["dv_cdf"]["version"] + 1
    rows = spark.range(100, 400).select(F.col("id"), (F.col("id") % 3).cast("string").alias("part"))
    filecommit.write(rows, path)
    filecommit.write(spark.range(400, 420).select(F.col("id"), F.lit(None).cast("string").alias("part")), path)
    filecommit.delete(spark, path, "id % 7 = 0")
    filecommit.update(spark, path, {"id": "id + 1000"}, "id % 5 = 1 AND part IS NOT NULL")
    filecommit.delete(spark, path, "part = '2'")
    src = spark.range(390, 410).select(F.col("id"), F.lit("9").alias("part"))
    filecommit.merge(src, path, "t.id = s.id", source_alias="s", target_alias="t") \
        .when_matched_update({"part": "s.part"}).when_not_matched_insert_all().execute()
    latest = first + 5
    reads = [{"kind": "table", "path": path, "version": v} for v in range(first - 1, latest + 1)]
    reads.append({"kind": "cdf", "path": path, "startingVersion": 0, "endingVersion": None})
    reads.append({"kind": "cdf", "path": path, "startingVersion": first + 1, "endingVersion": first + 3})
    theirs = delta_spark.read(reads)
    for i, v in enumerate(range(first - 1, latest + 1)):
        _assert_same(_ours(_filecommit_read(spark, path, versionAsOf=v)), theirs[i], f"version {v}")
    _assert_same(_ours(_filecommit_read(spark, path, readChangeFeed="true", startingVersion=0)), theirs[-2], "cdf [0,]")
    _assert_same(_ours(_filecommit_read(spark, path, readChangeFeed="true", startingVersion=first + 1,
                                        endingVersion=first + 3)), theirs[-1], "cdf middle")


# ------------------------------------------------------------------------------- history, format("delta")

def test_history_equals_delta(spark, made, delta_spark):
    """filecommit.history: versions, operations, parameters, metrics and timestamps as Delta's
    DESCRIBE HISTORY lists them (a cleaned log lists only the commits still there)."""
    for name in ("cdf", "cleaned", "dv_cdf"):
        path = made[name]["path"]
        theirs = delta_spark.read_one({"kind": "sql", "path": path, "sql": "DESCRIBE HISTORY {table}"})
        assert theirs["ok"], theirs
        expected = sorted(theirs["rows"], key=lambda r: -r["version"])
        got = filecommit.history(spark, path)
        assert [c.version for c in got] == [r["version"] for r in expected], name
        for c, r in zip(got, expected, strict=True):
            assert isinstance(c, filecommit.Commit)
            assert (c.operation, c.parameters, c.metrics, str(c.timestamp)) == (
                r["operation"], r["operationParameters"], r["operationMetrics"], r["timestamp"]), (name, c.version)
        assert [c.version for c in filecommit.history(spark, path, limit=2)] == [r["version"] for r in expected[:2]]


def test_format_delta_alias_reads_the_same(spark, made, delta_spark):
    """With spark.filecommit.read.deltaFormat on (the test server sets it; it has no delta-spark),
    a client that knows nothing of filecommit reads with format("delta") and Delta's options."""
    if os.environ.get("FILECOMMIT_REMOTE"):
        pytest.skip("the remote server's configuration is not the suite's to set")
    path = made["cdf"]["path"]
    theirs = delta_spark.read([{"kind": "table", "path": path, "version": 3},
                               {"kind": "cdf", "path": path, "startingVersion": 3, "endingVersion": 5}])
    plain = second_session(spark)  # a plain pyspark Connect session: no filecommit code involved
    try:
        _assert_same(_ours(plain.read.format("delta").option("versionAsOf", 3).load(path)), theirs[0], "delta@3")
        _assert_same(_ours(plain.read.format("delta").option("readChangeFeed", "true").option("startingVersion", 3)
                           .option("endingVersion", 5).load(path)), theirs[1], "delta cdf [3, 5]")
        _assert_same(_ours(plain.read.format("filecommit").load(path)), made["cdf"], "filecommit, plain session")
    finally:
        plain.stop()
