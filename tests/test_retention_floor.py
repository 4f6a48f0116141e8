"""The operator's retention floor and the writes in flight VACUUM must not touch.

Invariant: no file a table may still need is deleted because a client asked. A client cannot set
``delta.deletedFileRetentionDuration`` below the server's floor (``spark.filecommit.retention.minimum``,
168 hours on the test server, the default), cannot run VACUUM with a shorter retention, and cannot
lower the floor or turn the check off from its session; a table another tool gave a lower property
is vacuumed with the floor. Files of a write (or a RESTORE) in flight on the server are kept by
VACUUM whatever their age, and the write then commits readable data.

Outcomes are read from the log by delta-rs and by Spark + Delta; files are made old with
``os.utime`` (and tombstones by editing a Delta-made log before the server first reads it) instead
of asking for a zero retention.
"""

from __future__ import annotations

import json
import os
import threading
import time

import faults
import pytest
from deltalake import DeltaTable
from helpers import copy_fixture, data_files, delta_rows, error_class, log_actions, second_session
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

KEY = "delta.deletedFileRetentionDuration"
DAY_S = 86_400
FIXTURES = {
    # Another tool's table with no retention at all.
    "zero": [{"sql": s} for s in (
        f"CREATE TABLE {{table}} (id BIGINT) USING delta TBLPROPERTIES ('{KEY}' = 'interval 0 hours', "
        "'delta.enableDeletionVectors' = 'false')",
        "INSERT INTO {table} VALUES (1), (2), (3)",
        "DELETE FROM {table} WHERE id = 1",
    )],
    # Version 1 holds rows 1-3; version 2 removed them all (tombstones to age).
    "removed": [{"sql": s} for s in (
        "CREATE TABLE {table} (id BIGINT) USING delta TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')",
        "INSERT INTO {table} VALUES (1), (2), (3)",
        "DELETE FROM {table}",
    )],
}


def _age_days(path, days):
    t = time.time() - days * DAY_S
    os.utime(path, (t, t))


def _rs_property(path):
    return DeltaTable(path).metadata().configuration.get(KEY)


def _spark_ids(delta_spark, path):
    got = delta_spark.read_one({"path": path, "kind": "table"})
    assert got["ok"], got.get("error")
    return sorted(r["id"] for r in got["rows"])


def test_a_property_below_the_floor_is_refused_before_anything_is_committed(spark, delta_spark, tmp_path):
    path = str(tmp_path / "t")
    filecommit.write(spark.createDataFrame([(1,)], "id long"), path)
    for value in ("interval 0 seconds", "interval 167 hours", "interval 6 days"):
        with pytest.raises(PySparkException) as e:
            filecommit.set_table_properties(spark, path, {KEY: value})
        assert error_class(e) == filecommit.errors.FILECOMMIT_RETENTION_BELOW_MINIMUM, value
    assert sorted(log_actions(path)) == [0], "nothing committed"
    assert _rs_property(path) is None
    assert KEY not in delta_spark.read_one({"kind": "detail", "path": path})["properties"]
    # A new table asking for it is not created, and leaves no files behind.
    fresh = str(tmp_path / "fresh")
    with pytest.raises(PySparkException) as e:
        filecommit.write(spark.createDataFrame([(1,)], "id long"), fresh, table_properties={KEY: "interval 0 hours"})
    assert error_class(e) == filecommit.errors.FILECOMMIT_RETENTION_BELOW_MINIMUM
    assert not os.path.exists(os.path.join(fresh, "_delta_log"))
    assert not os.path.exists(fresh) or not data_files(fresh), "no debris"
    # At or above the floor is a property like any other.
    filecommit.set_table_properties(spark, path, {KEY: "interval 8 days"})
    assert _rs_property(path) == "interval 8 days"
    assert delta_spark.read_one({"kind": "detail", "path": path})["properties"][KEY] == "interval 8 days"


def test_vacuum_below_the_floor_is_refused_and_the_floor_wins_over_a_lower_property(
        spark, delta_spark, made, tmp_path):
    path = copy_fixture(made, "zero", tmp_path)
    stray_new, stray_old = (os.path.join(path, n) for n in ("stray-3d.parquet", "stray-9d.parquet"))
    for f, days in ((stray_new, 3), (stray_old, 9)):
        with open(f, "wb") as fh:
            fh.write(b"not referenced")
        _age_days(f, days)
    before = data_files(path)
    for hours in (0, 1, 167.9):
        with pytest.raises(PySparkException) as e:
            filecommit.vacuum(spark, path, retention_hours=hours)
        assert error_class(e) == filecommit.errors.DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT, hours
        assert float(e.value.getMessageParameters()["configuredRetentionHours"]) == 168.0
    assert data_files(path) == before, "nothing deleted"
    # No retention given: max(table's 0 hours, floor) = 168 hours. The file the DELETE removed a
    # moment ago stays (time travel to version 1 keeps working); only the 9-day-old stray goes.
    done = filecommit.vacuum(spark, path)
    assert [os.path.basename(f) for f in done.files] == ["stray-9d.parquet"]
    assert os.path.exists(stray_new)
    assert _spark_ids(delta_spark, path) == [2, 3]
    assert sorted(delta_rows(path, ["id"])["id"].astype(int)) == [2, 3]
    assert sorted(DeltaTable(path, version=1).to_pandas()["id"].tolist()) == [1, 2, 3]


def test_a_client_session_cannot_lower_the_floor_or_turn_the_check_off(spark, made, tmp_path):
    path = copy_fixture(made, "zero", tmp_path)
    stray = os.path.join(path, "stray.parquet")
    with open(stray, "wb") as fh:
        fh.write(b"x")
    _age_days(stray, 1)
    other = second_session(spark)
    try:
        for key, value in (("spark.filecommit.retention.minimum", "0"),
                           ("spark.filecommit.vacuum.retentionCheck.enabled", "false")):
            other.conf.set(key, value)
            with pytest.raises(PySparkException) as e:
                filecommit.vacuum(other, path, retention_hours=0)
            assert error_class(e) == filecommit.errors.CANNOT_MODIFY_STATIC_CONFIG, key
            other.conf.unset(key)
        # Delta's own switch is a session setting there; here it changes nothing.
        other.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        with pytest.raises(PySparkException) as e:
            filecommit.vacuum(other, path, retention_hours=0)
        assert error_class(e) == filecommit.errors.DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT
        with pytest.raises(PySparkException) as e:
            filecommit.set_table_properties(other, path, {KEY: "interval 0 seconds"})
        assert error_class(e) == filecommit.errors.FILECOMMIT_RETENTION_BELOW_MINIMUM
    finally:
        other.stop()
    assert os.path.exists(stray)


def _in_background(fn):
    out, errors = {}, []

    def run():
        try:
            out["result"] = fn()
        except Exception as e:  # noqa: BLE001 - reported to the test
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    return t, out, errors


def _wait_fired(fault, thread, errors, timeout=120):
    deadline = time.monotonic() + timeout
    while fault.fired() == 0:
        assert thread.is_alive() and not errors, errors
        assert time.monotonic() < deadline, "the held commit was never reached"
        time.sleep(0.05)


def test_a_write_in_flight_keeps_its_files_through_vacuum_whatever_their_age(spark, delta_spark, tmp_path):
    path = str(tmp_path / "t")
    filecommit.write(spark.range(0, 10).selectExpr("id"), path)
    before = set(data_files(path))
    other = second_session(spark)
    hold = faults.arm(path, faults.COMMIT_HOLD, version=1)
    try:
        t, out, errors = _in_background(lambda: filecommit.write(other.range(10, 1000).selectExpr("id"), path))
        _wait_fired(hold, t, errors)
        written = sorted(set(data_files(path)) - before)
        assert written, "the write's files are on disk, not yet in the log"
        for f in written:
            _age_days(os.path.join(path, f), 9)  # older than any retention the floor allows
        done = filecommit.vacuum(spark, path)
        assert not {os.path.basename(f) for f in done.files} & {os.path.basename(f) for f in written}
        assert all(os.path.exists(os.path.join(path, f)) for f in written)
    finally:
        hold.disarm()
    t.join(timeout=300)
    other.stop()
    assert not errors, errors
    assert out["result"].version == 1
    assert _spark_ids(delta_spark, path) == list(range(1000))
    assert sorted(delta_rows(path, ["id"])["id"].astype(int)) == list(range(1000))


def test_restore_between_its_check_and_its_commit_keeps_its_files_from_vacuum(spark, delta_spark, made, tmp_path):
    path = copy_fixture(made, "removed", tmp_path)
    # Nine days pass for the files of version 1 and for the tombstones of version 2 (the log is
    # edited before the server first reads the table), while version 1 itself stays restorable.
    old_ms = int((time.time() - 9 * DAY_S) * 1000)
    commit = os.path.join(path, "_delta_log", f"{2:020d}.json")
    with open(commit) as fh:
        actions = [json.loads(line) for line in fh if line.strip()]
    removed = [a["remove"]["path"] for a in actions if "remove" in a]
    assert removed
    for a in actions:
        if "remove" in a:
            a["remove"]["deletionTimestamp"] = old_ms
    with open(commit, "w") as fh:
        fh.write("".join(json.dumps(a) + "\n" for a in actions))
    sidecar = os.path.join(path, "_delta_log", f".{2:020d}.json.crc")  # Hadoop's checksum of the old bytes
    if os.path.exists(sidecar):
        os.remove(sidecar)
    for p in removed:
        _age_days(os.path.join(path, p), 9)
    assert filecommit.vacuum(spark, path, dry_run=True).files, "VACUUM would delete version 1's files"
    other = second_session(spark)
    hold = faults.arm(path, faults.COMMIT_HOLD, version=3)
    try:
        t, out, errors = _in_background(lambda: filecommit.restore(other, path, version=1))
        _wait_fired(hold, t, errors)  # RESTORE checked that the files exist and is about to commit
        done = filecommit.vacuum(spark, path)
        assert not {os.path.basename(f) for f in done.files} & {os.path.basename(p) for p in removed}
    finally:
        hold.disarm()
    t.join(timeout=300)
    other.stop()
    assert not errors, errors
    assert out["result"].version == 3
    assert all(os.path.exists(os.path.join(path, p)) for p in removed)
    assert _spark_ids(delta_spark, path) == [1, 2, 3]
    assert sorted(delta_rows(path, ["id"])["id"].astype(int)) == [1, 2, 3]
