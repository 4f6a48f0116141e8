"""Every outcome from the log: what a command reports, and which files it deletes, is decided by
reading the version it tried back from the log, never guessed from what the store threw.

Invariants checked here from outside, through the fault-injection jar (``tests/faults.py``):

* an ``Error`` (here ``StackOverflowError``, as the store could throw it; out of memory alike) thrown
  by the store's write of a commit, before or after the commit file landed, is decided by reading
  the version back (PROTOCOL.md "Commit Provenance Information": ``commitInfo.txnId``): ours ->
  reported committed, its files kept; absent -> tried again; unreadable ->
  ``FILECOMMIT_COMMIT_STATE_UNKNOWN`` with every file kept. Nothing is deleted unless the log
  proves no version references it. Grouped blind appends and commits alone alike.

The tables are judged by independent readers: the raw log replayed with ``json``, delta-rs
(``deltalake``), and Spark + Delta (the ``delta_spark`` fixture).
"""

from __future__ import annotations

import faults
import pytest
from delta_tables import commit_versions
from fault_checks import (
    APP,
    COMMANDS,
    STATE_UNKNOWN,
    check_table,
    check_with_spark_delta,
    make_table,
    txn_commits,
)
from helpers import data_files, error_class
from pyspark.errors import PySparkException

from filecommit import errors

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("faults_available")]


# append: a blind append (committed through the group commit); overwrite and update: alone.
COMMANDS_UNDER_ERRORS = ["append", "overwrite", "update"]


@pytest.mark.parametrize("name", COMMANDS_UNDER_ERRORS)
def test_an_error_after_the_commit_landed_is_reported_committed_and_keeps_its_files(
        spark, delta_spark, table_path, name):
    rows = make_table(spark, table_path)
    command = COMMANDS[name]
    fault = faults.arm(table_path, faults.COMMIT_ERROR_AFTER, times=1, version=2)
    try:
        result = command.run(spark, table_path, (APP, 1))
    finally:
        fault.disarm()
    assert fault.fired() == 1, fault
    assert result.committed and result.version == 2, result
    expected = command.apply(rows)
    assert commit_versions(table_path) == [0, 1, 2]
    assert txn_commits(table_path, APP, 1) == [2]
    check_table(table_path, expected)  # delta-rs: every file the log references is on disk
    check_with_spark_delta(delta_spark, table_path, [2], expected)


@pytest.mark.parametrize("name", COMMANDS_UNDER_ERRORS)
def test_an_error_before_the_write_is_decided_from_the_log_and_commits_once(spark, delta_spark, table_path, name):
    rows = make_table(spark, table_path)
    command = COMMANDS[name]
    fault = faults.arm(table_path, faults.COMMIT_ERROR_BEFORE, times=1, version=2)
    try:
        result = command.run(spark, table_path, (APP, 1))
    finally:
        fault.disarm()
    assert fault.fired() == 1, fault
    assert result.committed and result.version == 2, result
    expected = command.apply(rows)
    assert txn_commits(table_path, APP, 1) == [2]
    check_table(table_path, expected)
    check_with_spark_delta(delta_spark, table_path, [2], expected)


@pytest.mark.parametrize("name", ["append", "update"])
def test_an_error_whose_commit_cannot_be_read_back_is_state_unknown_and_keeps_every_file(
        spark, delta_spark, table_path, name):
    rows = make_table(spark, table_path)
    command = COMMANDS[name]
    error = faults.arm(table_path, faults.COMMIT_ERROR_AFTER, times=1, version=2)
    unreadable = faults.arm(table_path, faults.COMMIT_READ, times=faults.ALWAYS, version=2)
    try:
        with pytest.raises(PySparkException) as info:
            command.run(spark, table_path, (APP, 1))
    finally:
        error.disarm()
        unreadable.disarm()
    assert error.fired() == 1 and unreadable.fired() >= 1, (error, unreadable)
    assert error_class(info.value) == STATE_UNKNOWN, str(info.value).splitlines()[0]
    expected = command.apply(rows)
    check_table(table_path, expected)  # it had landed: every file it references is kept
    again = command.run(spark, table_path, (APP, 1))
    assert not again.committed, "the retry finds its txn applied"
    assert txn_commits(table_path, APP, 1) == [2]
    check_with_spark_delta(delta_spark, table_path, [2], expected)


def test_a_store_that_keeps_throwing_errors_fails_definitely_and_leaves_no_debris(spark, delta_spark, table_path):
    rows = make_table(spark, table_path)
    files = data_files(table_path)
    fault = faults.arm(table_path, faults.COMMIT_ERROR_BEFORE, times=faults.ALWAYS)
    try:
        with pytest.raises(PySparkException) as info:
            COMMANDS["overwrite"].run(spark, table_path, (APP, 1))
    finally:
        fault.disarm()
    assert error_class(info.value) == errors.FILECOMMIT_LOG_WRITE_FAILED, str(info.value).splitlines()[0]
    assert commit_versions(table_path) == [0, 1]
    assert data_files(table_path) == files, "the log proves no version references them: deleted"
    check_table(table_path, rows)
    check_with_spark_delta(delta_spark, table_path, [1], rows)


# ---------------------------------------------------------------------------------------------
# ADD CONSTRAINT against a racing append
