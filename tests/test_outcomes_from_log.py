"""Every outcome from the log: what a command reports, and which files it deletes, is decided by
reading the version it tried back from the log, never guessed from what the store threw.

Invariants checked here from outside, through the fault-injection jar (``tests/faults.py``):

* an ``Error`` (here ``StackOverflowError``, as the store could throw it; out of memory alike) thrown
  by the store's write of a commit, before or after the commit file landed, is decided by reading
  the version back (PROTOCOL.md "Commit Provenance Information": ``commitInfo.txnId``): ours ->
  reported committed, its files kept; absent -> tried again; unreadable ->
  ``FILECOMMIT_COMMIT_STATE_UNKNOWN`` with every file kept. Nothing is deleted unless the log
  proves no version references it. Grouped blind appends and commits alone alike.
* a CHECK constraint added to an existing table (``delta.constraints.<name>``, PROTOCOL.md "Check
  Constraints") records its read of the table: an append that lands between its check and its
  commit is a conflict (``DELTA_CONCURRENT_APPEND``, Delta's class for it), so the constraint
  never commits over rows that violate it.

The tables are judged by independent readers: the raw log replayed with ``json``, delta-rs
(``deltalake``), and Spark + Delta (the ``delta_spark`` fixture).
"""

from __future__ import annotations

import os
import threading
import time

import faults
import pytest
from delta_tables import commit_versions
from helpers import data_files, log_actions
from test_faults import (
    APP,
    COMMANDS,
    STATE_UNKNOWN,
    check_log,
    check_table,
    check_with_spark_delta,
    condition,
    make_table,
    txn_commits,
)

import filecommit
from filecommit import errors

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _faults_available(spark):
    if faults.directory() is None:
        pytest.skip("the server under test was not started with the fault-injection jar")


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
        with pytest.raises(Exception) as info:
            command.run(spark, table_path, (APP, 1))
    finally:
        error.disarm()
        unreadable.disarm()
    assert error.fired() == 1 and unreadable.fired() >= 1, (error, unreadable)
    assert condition(info.value) == STATE_UNKNOWN, str(info.value).splitlines()[0]
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
        with pytest.raises(Exception) as info:
            COMMANDS["overwrite"].run(spark, table_path, (APP, 1))
    finally:
        fault.disarm()
    assert condition(info.value) == errors.FILECOMMIT_LOG_WRITE_FAILED, str(info.value).splitlines()[0]
    assert commit_versions(table_path) == [0, 1]
    assert data_files(table_path) == files, "the log proves no version references them: deleted"
    check_table(table_path, rows)
    check_with_spark_delta(delta_spark, table_path, [1], rows)


# ---------------------------------------------------------------------------------------------
# ADD CONSTRAINT against a racing append
# ---------------------------------------------------------------------------------------------

CONSTRAINT = {"delta.constraints.v_positive": "v > 0"}
VIOLATING = [(1, "a", -10), (2, "b", -20)]


def _violating_rows_spark(delta_spark, table: str) -> int:
    res = delta_spark.read_one({"kind": "sql", "path": table,
                                "sql": "SELECT count(*) AS n FROM {table} WHERE NOT (v > 0)"})
    assert res["ok"], res
    return res["rows"][0]["n"]


def _latest_configuration(table: str) -> dict:
    conf: dict = {}
    for _, actions in sorted(log_actions(table).items()):
        for a in actions:
            if "metaData" in a:
                conf = a["metaData"].get("configuration") or {}
    return conf


def _empty_table(delta_spark, table: str) -> None:
    """Version 0, no rows and no files, made by Spark + Delta."""
    made = delta_spark.make([{"name": "empty", "path": table, "steps": [
        {"sql": "CREATE TABLE {table} (id BIGINT, part STRING, v BIGINT) USING delta"}]}])()["empty"]
    assert made["ok"], made
    assert commit_versions(table) == [0]
    assert data_files(table) == []


def test_add_constraint_racing_an_append_never_commits_over_violating_rows(spark, delta_spark, table_path):
    from deltalake import DeltaTable

    _empty_table(delta_spark, table_path)
    # The constraint's commit of version 1 is held by the store, after its emptiness check, until
    # an append of rows that violate it has landed as version 1.
    held = faults.hold().__enter__()
    slow = faults.arm(table_path, faults.COMMIT_DELAY, times=1, version=1)
    outcome: dict = {}

    def add_constraint() -> None:
        try:
            outcome["result"] = filecommit.set_table_properties(spark, table_path, CONSTRAINT)
        except Exception as e:  # noqa: BLE001 - judged below by class
            outcome["error"] = e

    t = threading.Thread(target=add_constraint)
    t.start()
    try:
        deadline = time.time() + 30
        while slow.fired() == 0 and time.time() < deadline:
            time.sleep(0.05)
        assert slow.fired() == 1, f"the constraint's commit never reached the store: {outcome}"
        appended = filecommit.write(spark.createDataFrame(VIOLATING, "id long, part string, v long"), table_path)
        assert appended.committed and appended.version == 1, appended
    finally:
        held.release()
        t.join(timeout=120)
        slow.disarm()
    assert "error" in outcome, f"the constraint committed over rows it never checked: {outcome}"
    assert condition(outcome["error"]) == errors.DELTA_CONCURRENT_APPEND, str(outcome["error"]).splitlines()[0]

    check_log(table_path)
    assert commit_versions(table_path) == [0, 1]
    assert "delta.constraints.v_positive" not in _latest_configuration(table_path)
    # delta-rs and Spark + Delta: the rows are there, and no constraint is in force over them.
    dt = DeltaTable(table_path)
    assert "delta.constraints.v_positive" not in dt.metadata().configuration
    assert sorted(dt.to_pandas()["v"].tolist()) == [-20, -10]
    assert _violating_rows_spark(delta_spark, table_path) == 2
    detail = delta_spark.read_one({"kind": "sql", "path": table_path, "sql": "SHOW TBLPROPERTIES {table}"})
    assert detail["ok"], detail
    assert all(r.get("key") != "delta.constraints.v_positive" for r in detail["rows"]), detail["rows"]

    # Added again now, the check sees the rows: refused, nothing committed.
    with pytest.raises(Exception) as info:
        filecommit.set_table_properties(spark, table_path, CONSTRAINT)
    assert condition(info.value) == errors.FILECOMMIT_UNSUPPORTED_OPERATION, str(info.value).splitlines()[0]
    assert commit_versions(table_path) == [0, 1]


def test_add_constraint_on_an_empty_table_commits_and_is_enforced(spark, delta_spark, table_path):
    """The neighbour: with no race the constraint commits, and both readers see it in force."""
    from deltalake import DeltaTable

    _empty_table(delta_spark, table_path)
    result = filecommit.set_table_properties(spark, table_path, CONSTRAINT)
    assert result.committed and result.version == 1
    with pytest.raises(Exception) as info:
        filecommit.write(spark.createDataFrame(VIOLATING, "id long, part string, v long"), table_path)
    assert condition(info.value) == errors.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, str(info.value).splitlines()[0]
    filecommit.write(spark.createDataFrame([(3, "a", 30)], "id long, part string, v long"), table_path)
    dt = DeltaTable(table_path)
    assert dt.metadata().configuration.get("delta.constraints.v_positive") == "v > 0"
    assert dt.to_pandas()["v"].tolist() == [30]
    assert _violating_rows_spark(delta_spark, table_path) == 0
    assert os.path.isdir(os.path.join(table_path, "_delta_log"))
