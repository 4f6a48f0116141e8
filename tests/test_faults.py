"""Every command through injected storage faults (``tests/faults.py``; the server-side wrappers are
``io.filecommit.testing.faults``): the store fails before a commit is written, loses the response
after it landed (``IOException``), or answers ``FileAlreadyExistsException`` for a put of its own
that had landed (what GCS or S3 + DynamoDB do when they retry one); reading the commit back,
listing the log, writing checkpoints and ``_last_checkpoint``, and the batch sink's
``_spark_metadata`` log fail too.

After every fault the table is judged by independent readers, never by the code under test:

* the raw log replayed with the ``json`` module: commit versions contiguous, every line a whole
  JSON action (no half-written commit), and every file any version references — data files and
  deletion vector files — on disk (PROTOCOL.md "Add File and Remove File", "Deletion Vector
  Descriptor");
* delta-rs loads the table, every ``file_uris()`` entry exists, and its rows are the expected ones;
* Spark + Delta (``delta_spark``) reads the latest version and the version the command produced;
* the command either reported success and its rows are there exactly once, or raised a definite
  error class: ``FILECOMMIT_LOG_WRITE_FAILED`` (nothing committed: rows absent, no debris) or
  ``FILECOMMIT_COMMIT_STATE_UNKNOWN`` (the commit may have landed; every file kept);
* calling again with the same ``txn`` converges: the ``txn`` (PROTOCOL.md "Transaction
  Identifiers") is in exactly one commit and the rows are those of one application.

Expected rows are computed in Python from the commands' meaning (``tests/fault_checks.py``).
Faults of log listing, checkpoints and the batch sink's log are in
``tests/test_faults_log_and_sink.py``.
"""

from __future__ import annotations

import os
import shutil

import faults
import pytest
from delta_tables import commit_versions
from fault_checks import (
    APP,
    COMMANDS,
    DEFINITE,
    LOG_WRITE_FAILED,
    SEQUENCE,
    STATE_UNKNOWN,
    check_log,
    check_table,
    check_with_spark_delta,
    make_table,
    run_faulted,
    txn_commits,
)
from helpers import checkpoint_versions, data_files, error_class, log_state, shared_dir
from pyspark.errors import PySparkException

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("faults_available")]

# One fault, every command
# ---------------------------------------------------------------------------------------------

# A write that fails before it lands is tried again at the same version inside the commit loop,
# whatever the command: a few commands show it. A commit that landed and is reported failed (lost
# response, FileAlreadyExists) meets each command's conflict rules: every command.
MATRIX = [(name, point) for name in COMMANDS for point in (faults.COMMIT_AFTER, faults.COMMIT_EXISTS)] \
    + [(name, faults.COMMIT_BEFORE) for name in ("create", "append", "delete", "set_properties")]


@pytest.mark.parametrize("name, point", MATRIX)
def test_one_commit_fault_then_retry_with_the_same_txn(spark, delta_spark, table_path, name, point):
    command = COMMANDS[name]
    rows = None if command.new_table else make_table(spark, table_path)
    fault = faults.arm(table_path, point, times=1)
    expected = run_faulted(spark, table_path, command, (APP, 1), rows, fault)
    latest = commit_versions(table_path)[-1]
    if not command.new_table:
        assert checkpoint_versions(table_path, wait_for=[2]) == [2], "the command's version 2 is checkpointed"
    check_with_spark_delta(delta_spark, table_path, [latest], expected)


@pytest.mark.parametrize("point", [faults.COMMIT_AFTER, faults.COMMIT_EXISTS])
def test_every_commit_loses_its_response_append_to_merge(spark, delta_spark, table_path, point):
    """The acceptance sequence: each commit lands and the store reports an error (every time).
    After each command: readable, nothing referenced missing, the client told success or a definite
    class, the txn in exactly one commit."""
    fault = faults.arm(table_path, point, times=faults.ALWAYS)
    rows: set | None = None
    fired = 0
    for step, name in enumerate(SEQUENCE, start=1):
        command = COMMANDS[name]
        before = commit_versions(table_path)[-1] if os.path.isdir(os.path.join(table_path, "_delta_log")) else -1
        expected = command.apply(rows)
        try:
            result = command.run(spark, table_path, (APP, step))
            assert result.committed and result.version == before + 1 == commit_versions(table_path)[-1], (
                f"{name}: result {result.version}, log {commit_versions(table_path)}")
        except Exception as e:  # noqa: BLE001 - judged by class
            assert error_class(e) in DEFINITE, (
                f"{name} (step {step}) under {point}: got {error_class(e)!r}: {str(e).splitlines()[0][:300]}")
            check_log(table_path)
            again = command.run(spark, table_path, (APP, step))
            assert again.version == commit_versions(table_path)[-1]
        assert fault.fired() > fired, f"{name}: the fault was not hit"
        fired = fault.fired()
        assert len(txn_commits(table_path, APP, step)) == 1, f"{name}: txn in {txn_commits(table_path, APP, step)}"
        check_table(table_path, expected)
        rows = expected
    fault.disarm()
    versions = commit_versions(table_path)
    assert versions == list(range(len(SEQUENCE)))
    assert {2, 4} <= set(checkpoint_versions(table_path, wait_for=[2, 4]))
    check_with_spark_delta(delta_spark, table_path, versions, rows)


def test_a_store_that_never_publishes_fails_with_log_write_failed_and_leaves_nothing(spark, delta_spark, table_path):
    rows = make_table(spark, table_path)
    files = data_files(table_path)
    fault = faults.arm(table_path, faults.COMMIT_BEFORE, times=faults.ALWAYS)
    with pytest.raises(PySparkException) as info:
        COMMANDS["append"].run(spark, table_path, (APP, 1))
    fault.disarm()
    assert error_class(info.value) == LOG_WRITE_FAILED, str(info.value).splitlines()[0]
    assert fault.fired() >= 2, "the same version is tried again before giving up"
    assert commit_versions(table_path) == [0, 1]
    assert data_files(table_path) == files, "the failed command's files are deleted"
    check_table(table_path, rows)
    # After the store recovers, the same txn commits once.
    assert COMMANDS["append"].run(spark, table_path, (APP, 1)).committed
    expected = COMMANDS["append"].apply(rows)
    assert txn_commits(table_path, APP, 1) == [2]
    check_table(table_path, expected)
    check_with_spark_delta(delta_spark, table_path, [2], expected)


def test_a_lost_response_whose_commit_cannot_be_read_back_is_state_unknown_and_keeps_every_file(
        spark, delta_spark, table_path):
    rows = make_table(spark, table_path)
    lost = faults.arm(table_path, faults.COMMIT_AFTER, times=1)
    unreadable = faults.arm(table_path, faults.COMMIT_READ, times=faults.ALWAYS, version=2)
    with pytest.raises(PySparkException) as info:
        COMMANDS["update"].run(spark, table_path, (APP, 1))
    lost.disarm()
    unreadable.disarm()
    assert lost.fired() == 1 and unreadable.fired() >= 1, (lost, unreadable)
    assert error_class(info.value) == STATE_UNKNOWN, str(info.value).splitlines()[0]
    expected = COMMANDS["update"].apply(rows)
    check_table(table_path, expected)  # the commit had landed: its files are all there
    again = COMMANDS["update"].run(spark, table_path, (APP, 1))
    assert not again.committed, "the retry finds its txn applied"
    assert txn_commits(table_path, APP, 1) == [2]
    check_table(table_path, expected)
    check_with_spark_delta(delta_spark, table_path, [2], expected)


# ---------------------------------------------------------------------------------------------
# Tables that real Delta made, with deletion vectors
# ---------------------------------------------------------------------------------------------

DV_ROWS = [(i, "a" if i % 2 else "b", i * 10) for i in range(1, 9)] + [(9, "a", 90)]


@pytest.fixture(scope="module")
def dv_template(delta_spark, tmp_path_factory):
    """A partitioned table with deletion vectors on, made by Spark + Delta: versions 0-3 (Delta's
    checkpoint at 2); the next commit, version 4, is a checkpoint version."""
    path = os.path.join(shared_dir(tmp_path_factory.mktemp("dv_template")), "dv")
    values = ", ".join(f"({i}, '{p}', {v})" for i, p, v in DV_ROWS[:6])
    made = delta_spark.make([{"name": "dv", "path": path, "steps": [
        {"sql": "CREATE TABLE {table} (id BIGINT, part STRING, v BIGINT) USING delta PARTITIONED BY (part) "
                "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.checkpointInterval' = '2')"},
        {"sql": f"INSERT INTO {{table}} VALUES {values}"},
        {"sql": "INSERT INTO {table} VALUES (7, 'a', 70), (8, 'b', 80)"},
        {"sql": "INSERT INTO {table} VALUES (9, 'a', 90)"},
    ]}])()["dv"]
    assert made["ok"], made
    assert "deletionVectors" in made["detail"]["tableFeatures"]
    return path


def dv_copy(template, table_path) -> set:
    shutil.copytree(template, table_path)
    assert commit_versions(table_path) == [0, 1, 2, 3]
    return set(DV_ROWS)


def deletion_vectors(table: str) -> list:
    return [a for a in log_state(table)["active"].values() if a.get("deletionVector")]


@pytest.mark.parametrize("point", [faults.COMMIT_AFTER, faults.COMMIT_EXISTS])
@pytest.mark.parametrize("name", ["delete", "update", "merge"])
def test_row_level_change_on_a_deletion_vector_table_through_one_fault(
        spark, delta_spark, dv_template, table_path, name, point):
    rows = dv_copy(dv_template, table_path)
    command = COMMANDS[name]
    fault = faults.arm(table_path, point, times=1)
    expected = run_faulted(spark, table_path, command, (APP, 1), rows, fault, dv_reader=delta_spark)
    if name in ("delete", "update"):
        assert deletion_vectors(table_path), "the change marks rows in deletion vectors"
    assert 4 in checkpoint_versions(table_path, wait_for=[4])
    check_with_spark_delta(delta_spark, table_path, [4], expected)


@pytest.mark.parametrize("point", [faults.COMMIT_AFTER, faults.COMMIT_EXISTS])
def test_every_commit_loses_its_response_on_a_deletion_vector_table(
        spark, delta_spark, dv_template, table_path, point):
    rows = dv_copy(dv_template, table_path)
    fault = faults.arm(table_path, point, times=faults.ALWAYS)
    for step, name in enumerate(["delete", "update", "merge", "append"], start=1):
        command = COMMANDS[name]
        expected = command.apply(rows)
        try:
            result = command.run(spark, table_path, (APP, step))
            assert result.committed and result.version == commit_versions(table_path)[-1] == 3 + step
        except Exception as e:  # noqa: BLE001 - judged by class
            assert error_class(e) in DEFINITE, f"{name} under {point}: {error_class(e)!r}: {str(e).splitlines()[0][:300]}"
            command.run(spark, table_path, (APP, step))
        assert len(txn_commits(table_path, APP, step)) == 1
        check_table(table_path, expected, delta_spark)
        rows = expected
    fault.disarm()
    assert fault.fired() >= 4
    check_with_spark_delta(delta_spark, table_path, commit_versions(table_path)[4:], rows)


def test_a_failed_deletion_vector_delete_leaves_no_deletion_vector_files(spark, delta_spark, dv_template, table_path):
    rows = dv_copy(dv_template, table_path)
    files = data_files(table_path)
    fault = faults.arm(table_path, faults.COMMIT_BEFORE, times=faults.ALWAYS)
    with pytest.raises(PySparkException) as info:
        COMMANDS["delete"].run(spark, table_path, (APP, 1))
    fault.disarm()
    assert error_class(info.value) == LOG_WRITE_FAILED, str(info.value).splitlines()[0]
    assert data_files(table_path) == files, "new deletion vector files of the failed delete are deleted"
    check_table(table_path, rows, delta_spark)
