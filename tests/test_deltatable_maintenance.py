"""delta-spark's ``DeltaTable`` maintenance calls over Spark Connect (delta-spark 4.4's Delta Connect
client) against the suite's filecommit server: ``optimize().where(...).executeCompaction()`` /
``executeZOrderBy``, ``restoreToVersion`` / ``restoreToTimestamp``, ``vacuum``,
``upgradeTableProtocol``, ``addFeatureSupport`` and ``dropFeatureSupport``.

Tables are made by real Delta (the module's ``FIXTURES``) and copied twice (``twin``): our server
runs the call on one copy through ``DeltaTable``, Spark + Delta runs the same SQL statement on the
other (OPTIMIZE, RESTORE TABLE, VACUUM, ALTER TABLE SET TBLPROPERTIES / DROP FEATURE); result rows,
protocol actions and ``commitInfo`` operations are compared, and both copies are read back by
delta-rs and Spark + Delta. Bad input is refused with Delta's error class (filecommit's for a path
outside the allowed roots) and nothing is committed.
"""

from __future__ import annotations

import datetime
import os
import time
import uuid

import pytest
from delta.tables import DeltaTable
from deltatable_support import ROWS, both_read, delta_error, delta_rs_reads, latest_version, rows, steps, unchanged
from helpers import data_files, error_class, log_actions, spark_delta_sql
from pyspark.errors import PySparkException

pytestmark = pytest.mark.slow

FIXTURES = {
    "plain": steps(""),
    "dv": steps("TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"),
}


def _protocol(path: str) -> dict:
    """The table's protocol (the last ``protocol`` action of its log), feature lists sorted."""
    found = None
    for version in sorted(log_actions(path)):
        for a in log_actions(path)[version]:
            if "protocol" in a:
                found = dict(a["protocol"])
    for key in ("readerFeatures", "writerFeatures"):
        if key in found:
            found[key] = sorted(found[key])
    return found


def _commit_info(path: str, version: int) -> dict:
    return next(a["commitInfo"] for a in log_actions(path)[version] if "commitInfo" in a)


def _keys(value) -> object:
    """The nested key structure of a row dict (names and nesting, not values)."""
    if isinstance(value, dict):
        return {k: _keys(v) for k, v in value.items()}
    return None


# ------------------------------------------------------------------------------------------ OPTIMIZE


def test_optimize_compaction_with_a_partition_filter_matches_delta(spark, twin, delta_spark):
    ours, theirs, version = twin("plain")
    got = DeltaTable.forPath(spark, ours).optimize().where("part = 'a'").executeCompaction()
    expected = spark_delta_sql(delta_spark, theirs, "OPTIMIZE {table} WHERE part = 'a'")
    assert got.columns == ["path", "metrics"] == list(expected[0])
    o, t = rows(got)[0], expected[0]
    assert list(o["metrics"]) == list(t["metrics"])  # Delta's OptimizeMetrics fields, in its order
    assert _keys(o["metrics"]["filesAdded"]) == _keys(t["metrics"]["filesAdded"])
    # Deterministic on twin copies: the files read (same files, same sizes) and how many are written.
    # The written files' sizes differ between writers, and so do times and parallelism.
    for key in ("numFilesAdded", "numFilesRemoved", "partitionsOptimized", "totalConsideredFiles",
                "totalFilesSkipped", "numBatches", "numTableColumns"):
        assert o["metrics"][key] == t["metrics"][key], key
    assert o["metrics"]["filesRemoved"] == t["metrics"]["filesRemoved"]
    assert t["metrics"]["numFilesRemoved"] > 1
    assert o["path"].rstrip("/").endswith(os.path.basename(ours))
    both_read(delta_spark, ours, ROWS)
    delta_rs_reads(theirs, ROWS)
    assert latest_version(ours) == latest_version(theirs) == version + 1
    info = _commit_info(ours, version + 1)
    assert info["operation"] == _commit_info(theirs, version + 1)["operation"] == "OPTIMIZE"


def test_optimize_zorder_matches_delta(spark, twin, delta_spark):
    ours, theirs, version = twin("plain")
    got = DeltaTable.forPath(spark, ours).optimize().executeZOrderBy("v")
    expected = spark_delta_sql(delta_spark, theirs, "OPTIMIZE {table} ZORDER BY (v)")
    assert got.columns == list(expected[0])
    o, t = rows(got)[0]["metrics"], expected[0]["metrics"]
    assert list(o) == list(t)
    for key in ("numFilesAdded", "numFilesRemoved", "partitionsOptimized", "totalConsideredFiles"):
        assert o[key] == t[key], key
    assert o["filesRemoved"] == t["filesRemoved"]
    both_read(delta_spark, ours, ROWS)
    info, theirs_info = _commit_info(ours, version + 1), _commit_info(theirs, version + 1)
    assert info["operation"] == theirs_info["operation"] == "OPTIMIZE"
    assert info["operationParameters"]["zOrderBy"] == theirs_info["operationParameters"]["zOrderBy"]


def test_optimize_refusals_are_delta_classes(spark, twin, delta_spark):
    ours, theirs, version = twin("plain")
    t = DeltaTable.forPath(spark, ours)
    with pytest.raises(PySparkException) as e:
        t.optimize().where("v > 3").executeCompaction()  # not a partition column
    assert error_class(e) == delta_error(delta_spark, theirs, "OPTIMIZE {table} WHERE v > 3")
    with pytest.raises(PySparkException) as e:
        t.optimize().executeZOrderBy("part")  # a partition column
    assert error_class(e) == delta_error(delta_spark, theirs, "OPTIMIZE {table} ZORDER BY (part)")
    assert latest_version(ours) == version


# ------------------------------------------------------------------------------------------- RESTORE


def test_restore_to_version_matches_delta(spark, twin, delta_spark):
    ours, theirs, version = twin("dv")
    DeltaTable.forPath(spark, ours).delete("id % 3 = 0")
    spark_delta_sql(delta_spark, theirs, "DELETE FROM {table} WHERE id % 3 = 0")
    got = DeltaTable.forPath(spark, ours).restoreToVersion(1)
    expected = spark_delta_sql(delta_spark, theirs, "RESTORE TABLE {table} TO VERSION AS OF 1")
    assert got.columns == ["table_size_after_restore", "num_of_files_after_restore", "num_removed_files",
                           "num_restored_files", "removed_files_size", "restored_files_size"]
    assert got.columns == list(expected[0])
    assert rows(got) == expected  # the same files on both copies: every metric is deterministic
    assert expected[0]["num_restored_files"] > 0
    both_read(delta_spark, ours, ROWS[:20])
    delta_rs_reads(theirs, ROWS[:20])
    info = _commit_info(ours, version + 2)
    assert info["operation"] == "RESTORE"
    # filecommit writes the parameter as a string, Delta 4.4 as a JSON number
    theirs_version = _commit_info(theirs, version + 2)["operationParameters"]["version"]
    assert str(info["operationParameters"]["version"]) == str(theirs_version) == "1"


def test_restore_to_timestamp_matches_delta(spark, twin, delta_spark):
    ours, theirs, version = twin("plain")
    ms = int(os.path.getmtime(os.path.join(ours, "_delta_log", f"{1:020d}.json")) * 1000) + 1
    stamp = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    got = DeltaTable.forPath(spark, ours).restoreToTimestamp(stamp)
    expected = spark_delta_sql(delta_spark, theirs, f"RESTORE TABLE {{table}} TO TIMESTAMP AS OF '{stamp}'")
    assert rows(got) == expected
    both_read(delta_spark, ours, ROWS[:20])
    delta_rs_reads(theirs, ROWS[:20])
    assert _commit_info(ours, version + 1)["operation"] == "RESTORE"


def test_restore_refusals_are_delta_classes_and_commit_nothing(spark, twin, delta_spark):
    ours, theirs, version = twin("plain")
    t = DeltaTable.forPath(spark, ours)
    with pytest.raises(PySparkException) as e:
        t.restoreToVersion(99)
    assert error_class(e) == delta_error(delta_spark, theirs, "RESTORE TABLE {table} TO VERSION AS OF 99")
    with pytest.raises(PySparkException) as e:
        t.restoreToTimestamp("2999-01-01 00:00:00")
    assert error_class(e) == delta_error(delta_spark, theirs, "RESTORE TABLE {table} TO TIMESTAMP AS OF '2999-01-01'")
    with pytest.raises(PySparkException) as e:
        t.restoreToTimestamp("not a time")
    assert error_class(e) == delta_error(delta_spark, theirs, "RESTORE TABLE {table} TO TIMESTAMP AS OF 'not a time'")
    unchanged(ours, version)


# -------------------------------------------------------------------------------------------- VACUUM


def _stray(path: str) -> str:
    """A data file no version references, 30 days old (as a file a failed writer left behind)."""
    f = os.path.join(path, "part=a", "stray-0000.parquet")
    with open(f, "wb") as out:
        out.write(b"not referenced")
    old = time.time() - 30 * 24 * 3600
    os.utime(f, (old, old))
    return f


@pytest.mark.parametrize("hours", [None, 200.0])
def test_vacuum_deletes_what_delta_deletes(spark, twin, delta_spark, hours):
    ours, theirs, version = twin("plain")
    stray_ours, stray_theirs = _stray(ours), _stray(theirs)
    t = DeltaTable.forPath(spark, ours)
    assert (t.vacuum() if hours is None else t.vacuum(hours)) is None  # delta-spark's client returns None
    spark_delta_sql(delta_spark, theirs, "VACUUM {table}" + ("" if hours is None else f" RETAIN {int(hours)} HOURS"))
    assert not os.path.exists(stray_ours) and not os.path.exists(stray_theirs)
    # the data files left (Hadoop's .crc files beside them are no table files)
    assert [f for f in data_files(ours) if not f.endswith(".crc")] == \
        [f for f in data_files(theirs) if not f.endswith(".crc")]
    both_read(delta_spark, ours, ROWS)
    # filecommit's VACUUM commits nothing; Delta 4.4 may log VACUUM START / END commits
    assert latest_version(ours) == version


def test_vacuum_below_the_retention_is_refused(spark, twin):
    """A retention below the table's (7 days) is Delta's DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT. (The
    suite's Spark + Delta 4.4 reader ran ``VACUUM ... RETAIN 1 HOURS`` without refusing it; on this
    server the check is server-owned, ``spark.filecommit.vacuum.retentionCheck.enabled``, never a session's.)"""
    ours, _, version = twin("plain")
    stray = _stray(ours)
    for hours in (1, 0, 167.5):
        with pytest.raises(PySparkException) as e:
            DeltaTable.forPath(spark, ours).vacuum(hours)
        assert error_class(e) == "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT", hours
    with pytest.raises(PySparkException) as e:
        DeltaTable.forPath(spark, ours).vacuum(-1)
    assert error_class(e) == "DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE"
    assert os.path.exists(stray)
    assert latest_version(ours) == version


# ------------------------------------------------------------------------------ protocol and features


@pytest.mark.parametrize("reader, writer", [(1, 3), (1, 7), (3, 7), (2, 5)])
def test_upgrade_table_protocol_matches_delta(spark, twin, delta_spark, reader, writer):
    ours, theirs, version = twin("plain")
    assert DeltaTable.forPath(spark, ours).upgradeTableProtocol(reader, writer) is None
    spark_delta_sql(delta_spark, theirs, f"ALTER TABLE {{table}} SET TBLPROPERTIES ('delta.minReaderVersion' = "
                                         f"'{reader}', 'delta.minWriterVersion' = '{writer}')")
    assert _protocol(ours) == _protocol(theirs)
    assert latest_version(ours) == latest_version(theirs) == version + 1
    info, theirs_info = _commit_info(ours, version + 1), _commit_info(theirs, version + 1)
    assert info["operation"] == theirs_info["operation"] == "SET TBLPROPERTIES"
    both_read(delta_spark, ours, ROWS)


@pytest.mark.parametrize("feature", ["deletionVectors", "domainMetadata", "checkConstraints", "rowTracking",
                                     "changeDataFeed", "v2Checkpoint"])
def test_add_feature_support_matches_delta(spark, twin, delta_spark, feature):
    ours, theirs, version = twin("plain")
    assert DeltaTable.forPath(spark, ours).addFeatureSupport(feature) is None
    spark_delta_sql(delta_spark, theirs, f"ALTER TABLE {{table}} SET TBLPROPERTIES "
                                         f"('delta.feature.{feature}' = 'supported')")
    assert _protocol(ours) == _protocol(theirs)
    assert feature in _protocol(ours).get("writerFeatures", []) or _protocol(ours)["minWriterVersion"] < 7
    assert latest_version(ours) == latest_version(theirs) == version + 1
    assert _commit_info(ours, version + 1)["operation"] == "SET TBLPROPERTIES"
    both_read(delta_spark, ours, ROWS)
    # the table stays writable by both
    DeltaTable.forPath(spark, ours).delete("id < 5")
    both_read(delta_spark, ours, ROWS[5:])


def test_protocol_refusals_are_delta_classes(spark, twin, delta_spark):
    ours, theirs, version = twin("plain")
    t = DeltaTable.forPath(spark, ours)
    with pytest.raises(PySparkException) as e:
        t.addFeatureSupport("noSuchFeature")
    assert error_class(e) == delta_error(
        delta_spark, theirs, "ALTER TABLE {table} SET TBLPROPERTIES ('delta.feature.noSuchFeature' = 'supported')")
    # Delta's protocol check of the versions (its SQL answers the catalog's UNSUPPORTED_TABLE_CHANGE
    # around it, which a DeltaTable call does not go through)
    for reader, writer in ((1, 9), (4, 7), (0, 2)):
        with pytest.raises(PySparkException) as e:
            t.upgradeTableProtocol(reader, writer)
        assert error_class(e) == "DELTA_INVALID_PROTOCOL_VERSION", (reader, writer)
    assert delta_error(delta_spark, theirs, "ALTER TABLE {table} SET TBLPROPERTIES ('delta.minWriterVersion' = '9')")
    with pytest.raises(PySparkException) as e:
        t.addFeatureSupport("variantType")  # a Delta feature filecommit does not write
    assert error_class(e) == "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE"
    assert latest_version(ours) == version


def test_drop_feature_support_matches_delta(spark, twin, delta_spark):
    ours, theirs, version = twin("dv")
    t = DeltaTable.forPath(spark, ours)
    t.addFeatureSupport("checkConstraints")
    spark_delta_sql(delta_spark, theirs, "ALTER TABLE {table} SET TBLPROPERTIES "
                                         "('delta.feature.checkConstraints' = 'supported')")
    assert "checkConstraints" in _protocol(ours)["writerFeatures"]
    assert t.dropFeatureSupport("checkConstraints") is None
    spark_delta_sql(delta_spark, theirs, "ALTER TABLE {table} DROP FEATURE checkConstraints")
    assert _protocol(ours) == _protocol(theirs)
    assert "checkConstraints" not in _protocol(ours)["writerFeatures"]
    assert latest_version(ours) == latest_version(theirs) == version + 2
    info, theirs_info = _commit_info(ours, version + 2), _commit_info(theirs, version + 2)
    assert info["operation"] == theirs_info["operation"] == "DROP FEATURE"
    assert info["operationParameters"]["featureName"] == "checkConstraints"
    both_read(delta_spark, ours, ROWS)


def test_drop_feature_refusals(spark, twin, delta_spark):
    ours, theirs, version = twin("dv")
    t = DeltaTable.forPath(spark, ours)
    for feature in ("noSuchFeature", "appendOnly", "inCommitTimestamp"):
        with pytest.raises(PySparkException) as e:
            t.dropFeatureSupport(feature)
        assert error_class(e) == delta_error(delta_spark, theirs, f"ALTER TABLE {{table}} DROP FEATURE {feature}"), \
            feature
    # a reader-writer feature: Delta drops it with checkpoint protection or history truncation,
    # which filecommit does not do
    for truncate in (None, True):
        with pytest.raises(PySparkException) as e:
            t.dropFeatureSupport("deletionVectors", truncate)
        assert error_class(e) == "FILECOMMIT_DROP_FEATURE_UNSUPPORTED"
        assert e.value.getMessageParameters()["feature"] == "deletionVectors"
    assert latest_version(ours) == version
    assert "deletionVectors" in _protocol(ours)["readerFeatures"]


# ------------------------------------------------------------------------------ tables and paths


CALLS = [
    lambda t: t.optimize().executeCompaction(),
    lambda t: t.restoreToVersion(0),
    lambda t: t.vacuum(),
    lambda t: t.upgradeTableProtocol(1, 7),
    lambda t: t.addFeatureSupport("deletionVectors"),
    lambda t: t.dropFeatureSupport("checkConstraints"),
]


def test_path_outside_the_allowed_roots(spark):
    outside = f"/filecommit-not-allowed-{uuid.uuid4().hex[:8]}/t"
    for call in CALLS:
        with pytest.raises(PySparkException) as e:
            call(DeltaTable.forPath(spark, outside))
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
    assert not os.path.exists(os.path.dirname(outside))


def test_table_that_does_not_exist(spark, tmp_path):
    missing = tmp_path / "missing"
    missing.mkdir()
    for call in CALLS:
        with pytest.raises(PySparkException) as e:
            call(DeltaTable.forPath(spark, str(missing)))
        assert error_class(e) == "DELTA_MISSING_DELTA_TABLE"
    assert os.listdir(missing) == []
