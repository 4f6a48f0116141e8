"""Faults of the log around the commit, through injected storage faults (``tests/faults.py``):
a failed listing of ``_delta_log`` fails the command before anything is written, a failed checkpoint
or ``_last_checkpoint`` never fails the command, and the batch-id sink's ``_spark_metadata`` log
through a fault before or after its write converges when the same batch id is written again.
Tables are judged by the independent checks of ``tests/fault_checks.py``.
"""

from __future__ import annotations

import os
import time

import faults
import pytest
from delta_tables import commit_versions
from fault_checks import (
    APP,
    COMMANDS,
    DEFINITE,
    check_table,
    check_with_spark_delta,
    make_table,
    schema_df,
)
from helpers import checkpoint_versions, data_files, error_class
from pyspark.errors import PySparkException

import filecommit
from filecommit import errors

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("faults_available")]

# Reading and listing the log; checkpoints
# ---------------------------------------------------------------------------------------------

def _update_through_a_failed_listing(spark, table_path):
    """Versions 0-1 by filecommit and 2 by another writer (delta-rs: a table property, i.e. a
    metadata change, which the server's snapshot cache does not roll forward over), so the server
    must list the log to load the latest snapshot; that listing fails once while an update starts.
    Returns the update's exception, the rows and the data files before it."""
    from deltalake import DeltaTable

    rows = make_table(spark, table_path)
    DeltaTable(table_path).alter.set_table_properties({"delta.logRetentionDuration": "interval 31 days"})
    files = data_files(table_path)
    fault = faults.arm(table_path, faults.LIST, times=1)
    with pytest.raises(PySparkException) as info:
        COMMANDS["update"].run(spark, table_path, (APP, 1))
    fault.disarm()
    assert fault.fired() == 1
    return info.value, rows, files


def test_a_failed_listing_fails_the_command_before_anything_is_written(spark, delta_spark, table_path):
    _, rows, files = _update_through_a_failed_listing(spark, table_path)
    assert commit_versions(table_path) == [0, 1, 2] and data_files(table_path) == files
    check_table(table_path, rows)
    assert COMMANDS["update"].run(spark, table_path, (APP, 1)).committed
    rows = COMMANDS["update"].apply(rows)
    check_table(table_path, rows)
    check_with_spark_delta(delta_spark, table_path, [3], rows)


def test_a_failed_listing_is_reported_with_an_error_class(spark, table_path):
    error, _, _ = _update_through_a_failed_listing(spark, table_path)
    assert error_class(error) == errors.FILECOMMIT_LOG_READ_FAILED, f"got: {str(error).splitlines()[0]}"


@pytest.mark.parametrize("point", [faults.CHECKPOINT_BEFORE, faults.LAST_CHECKPOINT_BEFORE,
                                   faults.LAST_CHECKPOINT_AFTER])
def test_a_failed_checkpoint_never_fails_the_command(spark, delta_spark, table_path, point):
    """Checkpoints are post-commit work: the command reports its commit, readers find the table
    through the JSON commits, and a later checkpoint is written once the store recovers."""
    rows = make_table(spark, table_path)
    fault = faults.arm(table_path, point, times=faults.ALWAYS)
    for step, name in enumerate(["append", "update", "set_properties"], start=1):
        result = COMMANDS[name].run(spark, table_path, (APP, step))
        rows = COMMANDS[name].apply(rows)
        assert result.committed and result.version == 1 + step
        check_table(table_path, rows)
    deadline = time.monotonic() + 30  # checkpoints run in the background
    while fault.fired() < 2 and time.monotonic() < deadline:  # versions 2 and 4 are tried
        time.sleep(0.05)
    fault.disarm()
    assert fault.fired() >= 1
    if point == faults.CHECKPOINT_BEFORE:
        assert checkpoint_versions(table_path) == []
    else:
        assert 2 in checkpoint_versions(table_path)
    check_with_spark_delta(delta_spark, table_path, [2, 3, 4], rows)
    result = COMMANDS["delete"].run(spark, table_path, (APP, 9))
    assert result.committed and result.version == 5
    rows = COMMANDS["delete"].apply(rows)
    assert COMMANDS["append"].run(spark, table_path, (APP, 10)).version == 6
    rows = COMMANDS["append"].apply(rows)
    assert 6 in checkpoint_versions(table_path, wait_for=[6])
    check_table(table_path, rows)
    check_with_spark_delta(delta_spark, table_path, [6], rows)


# ---------------------------------------------------------------------------------------------
# The batch-id sink's _spark_metadata log
# ---------------------------------------------------------------------------------------------

def _sink_rows(spark, path) -> list:
    return sorted((r["id"], r["part"], r["v"]) for r in spark.read.parquet(path).collect())


def _sink_log_files(path) -> list:
    import json

    out = []
    log = os.path.join(path, "_spark_metadata")
    for name in os.listdir(log):
        if name.startswith("."):
            continue
        with open(os.path.join(log, name)) as fh:
            out += [json.loads(line)["path"] for line in fh.read().split("\n")[1:] if line.strip()]
    return out


def _check_sink(spark, path, expected: list) -> None:
    from urllib.parse import unquote, urlparse

    listed = _sink_log_files(path)
    gone = [p for p in listed if not os.path.exists(unquote(urlparse(p).path))]
    assert not gone, f"the sink log lists files that are gone: {gone}"
    assert _sink_rows(spark, path) == sorted(expected)


def _batch_through_a_log_fault(session, table_path, point, compact):
    """Batch 0, then batch 1 with ``point`` armed once (batch 1 is a compaction batch, ``1.compact``,
    when ``compactInterval`` is 2). Returns batch 1's result or exception, whether its log file
    landed, the rows of both batches and the data files before batch 1."""
    session.conf.set("spark.sql.streaming.fileSink.log.compactInterval", "2" if compact else "10")
    rows0 = [(i, "a", i) for i in range(5)]
    rows1 = [(i, "b", i) for i in range(100, 104)]
    assert filecommit.write_batch(schema_df(session, rows0), table_path, batch_id=0, partition_by=["part"]).committed
    before = data_files(table_path)
    fault = faults.arm(table_path, point, times=1)
    try:
        outcome = filecommit.write_batch(schema_df(session, rows1), table_path, batch_id=1, partition_by=["part"])
    except Exception as e:  # noqa: BLE001 - judged by the caller
        outcome = e
    fault.disarm()
    assert fault.fired() == 1, fault
    landed = os.path.exists(os.path.join(table_path, "_spark_metadata", "1.compact" if compact else "1"))
    assert landed == (point == faults.SINK_AFTER)
    return outcome, landed, rows0, rows1, before


@pytest.mark.parametrize("point", [faults.SINK_BEFORE, faults.SINK_AFTER])
@pytest.mark.parametrize("compact", [False, True], ids=["batch", "compaction"])
def test_sink_batch_through_a_log_fault_then_retry_with_the_same_batch_id(spark, table_path, point, compact):
    from helpers import second_session

    session = second_session(spark)
    try:
        outcome, landed, rows0, rows1, before = _batch_through_a_log_fault(session, table_path, point, compact)
        if not landed:
            assert isinstance(outcome, Exception), "a batch whose log file did not land is not reported committed"
            assert data_files(table_path) == before, "the files of a batch that did not land are deleted"
            _check_sink(session, table_path, rows0)
        else:
            _check_sink(session, table_path, rows0 + rows1)
        again = filecommit.write_batch(schema_df(session, rows1), table_path, batch_id=1, partition_by=["part"])
        assert again.committed == (not landed), "the same batch id again: skipped exactly when it had landed"
        _check_sink(session, table_path, rows0 + rows1)
    finally:
        session.stop()


@pytest.mark.parametrize("point", [faults.SINK_BEFORE, faults.SINK_AFTER])
def test_sink_log_fault_reaches_the_client_as_success_or_a_definite_class(spark, table_path, point):
    from helpers import second_session

    session = second_session(spark)
    try:
        outcome, landed, *_ = _batch_through_a_log_fault(session, table_path, point, False)
    finally:
        session.stop()
    if landed:
        assert not isinstance(outcome, Exception) and outcome.committed, f"batch 1 landed; the client got {outcome!r}"
    else:
        assert error_class(outcome) in DEFINITE, f"got {error_class(outcome)!r}: {str(outcome).splitlines()[0][:300]}"
