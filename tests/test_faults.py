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

Expected rows are computed here in Python from the commands' meaning.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import faults
import pytest
from delta_tables import commit_versions
from helpers import checkpoint_versions, data_files, error_class, log_actions, log_state, shared_dir
from pyspark.errors import PySparkException

import filecommit
from filecommit import errors

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("faults_available")]

LOG_WRITE_FAILED = errors.FILECOMMIT_LOG_WRITE_FAILED
STATE_UNKNOWN = errors.FILECOMMIT_COMMIT_STATE_UNKNOWN
DEFINITE = {LOG_WRITE_FAILED, STATE_UNKNOWN}
APP = "faults"
SCHEMA = "id long, part string, v long"
COLUMNS = ["id", "part", "v"]


# ---------------------------------------------------------------------------------------------
# Independent checks
# ---------------------------------------------------------------------------------------------

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def _z85_decode(text: str) -> bytes:
    out = bytearray()
    for i in range(0, len(text), 5):
        n = 0
        for ch in text[i:i + 5]:
            n = n * 85 + _Z85.index(ch)
        out += n.to_bytes(4, "big")
    return bytes(out)


def dv_file(table: str, dv: dict) -> str | None:
    """The file of a deletion vector descriptor (PROTOCOL.md "Deletion Vector Descriptor"): ``u`` =
    a random prefix and a Z85-encoded UUID, ``deletion_vector_<uuid>.bin`` relative to the table;
    ``p`` = an absolute path; ``i`` = inline (no file)."""
    from urllib.parse import unquote, urlparse

    kind, value = dv["storageType"], dv["pathOrInlineDv"]
    if kind == "i":
        return None
    if kind == "p":
        return unquote(urlparse(value).path)
    prefix, encoded = value[:-20], value[-20:]
    name = f"deletion_vector_{uuid.UUID(bytes=_z85_decode(encoded))}.bin"
    return os.path.join(table, prefix, name) if prefix else os.path.join(table, name)


def _local(table: str, path: str) -> str:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(path)
    if parsed.scheme:
        return unquote(parsed.path)
    return os.path.join(table, unquote(path))


def check_log(table: str) -> dict:
    """The raw log, replayed version by version with ``json``: contiguous whole commits, and every
    file (data and deletion vector) of every version's active set on disk. Returns the latest
    state (``helpers.log_state``)."""
    # Checkpoints are written in the background after the command answered: a checkpoint being
    # written has its temporary file for a moment; wait (at most 30 s) until none is left.
    deadline = time.monotonic() + 30
    while True:
        names = os.listdir(os.path.join(table, "_delta_log"))
        if not [n for n in names if n.endswith(".tmp")] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not [n for n in names if n.endswith(".tmp")], f"temporary files left in the log: {names}"
    commits = log_actions(table)  # raises on a line that is not whole JSON
    versions = sorted(commits)
    assert versions == list(range(versions[0], versions[-1] + 1)), f"gap in the log: {versions}"
    for v, actions in commits.items():
        assert sum(1 for a in actions if "commitInfo" in a) <= 1, f"version {v}: several commitInfo"
        assert actions, f"version {v}: empty commit"
    if versions[0] == 0:
        active: dict = {}
        for v in versions:
            for a in commits[v]:
                if a.get("remove"):
                    r = a["remove"]
                    active.pop((r["path"], _dv_key(r.get("deletionVector"))), None)
                elif a.get("add"):
                    ad = a["add"]
                    active[(ad["path"], _dv_key(ad.get("deletionVector")))] = ad
            _assert_on_disk(table, v, active.values())
    state = log_state(table)
    _assert_on_disk(table, state["version"], state["active"].values())
    return state


def _dv_key(dv):
    if not dv:
        return None
    return f"{dv['storageType']}{dv['pathOrInlineDv']}@{dv.get('offset')}"


def _assert_on_disk(table, version, adds):
    missing = []
    for add in adds:
        f = _local(table, add["path"])
        if not os.path.exists(f):
            missing.append(add["path"])
        dv = add.get("deletionVector")
        if dv and dv_file(table, dv) and not os.path.exists(dv_file(table, dv)):
            missing.append(f"deletion vector {dv_file(table, dv)} of {add['path']}")
    assert not missing, f"version {version} references files that are gone: {missing}"


def delta_rs_rows(table: str) -> set:
    """Rows as delta-rs reads the latest version; every file it would read exists."""
    from deltalake import DeltaTable

    dt = DeltaTable(table)
    gone = [u for u in dt.file_uris() if not os.path.exists(_local(table, u))]
    assert not gone, f"delta-rs lists files that are gone: {gone}"
    df = dt.to_pandas()
    return {tuple(None if x != x else x for x in row) for row in df[COLUMNS].itertuples(index=False)}


def txn_commits(table: str, app: str, version: int) -> list[int]:
    """The versions whose commit carries ``txn(app, version)``."""
    return [v for v, actions in sorted(log_actions(table).items())
            if any(a.get("txn", {}).get("appId") == app and a["txn"].get("version") == version for a in actions)]


def _spark_delta_read(table: str, version: int | None = None) -> dict:
    """A Spark + Delta SQL read of the table (``VERSION AS OF`` when ``version`` is given); plain SQL
    rather than the ``table`` read kind, which also runs a history job."""
    at = f" VERSION AS OF {int(version)}" if version is not None else ""
    return {"kind": "sql", "path": table, "sql": f"SELECT {', '.join(COLUMNS)} FROM {{table}}{at}"}


def spark_delta_rows(delta_spark, table: str, version: int | None = None) -> list:
    """Rows as Spark + Delta reads the table (latest, or ``version``), as a sorted list of tuples."""
    read = _spark_delta_read(table, version)
    res = delta_spark.read_one(read)
    assert res["ok"], f"Spark + Delta cannot read {read}: {res}"
    return sorted(tuple(r[c] for c in COLUMNS) for r in res["rows"])


def check_table(table: str, expected: set | None, delta_spark=None) -> dict:
    """Log sound; the rows equal ``expected`` (when given) as delta-rs reads them, or Spark + Delta
    when ``delta_spark`` is given (tables with deletion vectors, which this delta-rs cannot read).
    Returns the log state."""
    state = check_log(table)
    if delta_spark is not None:
        rows = spark_delta_rows(delta_spark, table)
        reader = "Spark + Delta"
    else:
        rows = sorted(delta_rs_rows(table))
        reader = "delta-rs"
    if expected is not None:
        assert rows == sorted(expected), f"{reader} rows {rows} != expected {sorted(expected)}"
    return state


def check_with_spark_delta(delta_spark, table: str, versions, expected: set) -> None:
    """Spark + Delta reads the latest version (rows == ``expected``) and each of ``versions``."""
    reads = [_spark_delta_read(table)] + [_spark_delta_read(table, v) for v in versions]
    results = delta_spark.read(reads)
    for req, res in zip(reads, results, strict=True):
        assert res["ok"], f"Spark + Delta cannot read {req}: {res}"
    latest = sorted(tuple(r[c] for c in COLUMNS) for r in results[0]["rows"])
    assert latest == sorted(expected), f"Spark + Delta rows {latest} != expected {sorted(expected)}"


# ---------------------------------------------------------------------------------------------
# Commands and what they mean for the rows
# ---------------------------------------------------------------------------------------------

INITIAL = [(i, "a" if i % 2 else "b", i * 10) for i in range(1, 7)]
SECOND = [(7, "a", 70), (8, "b", 80)]
OVERWRITE = [(30, "a", 300), (31, "b", 310), (32, "a", 320), (33, "b", 330)]


def _schema_df(spark, rows):
    return spark.createDataFrame(rows, SCHEMA)


@dataclass(frozen=True)
class Command:
    name: str
    run: Callable  # (spark, path, txn) -> CommitResult
    apply: Callable  # set of rows -> set of rows
    new_table: bool = False


UPDATED = "id % 3 = 0 OR part = 'b'"
MERGE_SOURCE = [(1, "a", 999), (31, "b", 998), (50, "b", 500)]


def _merge(spark, path, txn):
    return (filecommit.merge(_schema_df(spark, MERGE_SOURCE), path, "target.id = source.id")
            .when_matched_update({"v": "source.v"})
            .when_not_matched_insert_all()
            .execute(txn=txn))


def _merge_rows(rows):
    """Matched target rows take the source's v; unmatched source rows are inserted."""
    source = {i: (part, v) for i, part, v in MERGE_SOURCE}
    out = {(i, part, source[i][1]) if i in source else (i, part, v) for i, part, v in rows}
    targets = {i for i, _, _ in rows}
    return out | {(i, part, v) for i, (part, v) in source.items() if i not in targets}


COMMANDS = {c.name: c for c in [
    Command("create", lambda s, p, txn: filecommit.write(_schema_df(s, INITIAL), p, partition_by=["part"],
                                                         table_properties={"delta.checkpointInterval": "2"}, txn=txn),
            lambda rows: set(INITIAL), new_table=True),
    Command("append", lambda s, p, txn: filecommit.write(_schema_df(s, [(20, "a", 200), (21, "b", 210)]), p, txn=txn),
            lambda rows: rows | {(20, "a", 200), (21, "b", 210)}),
    Command("overwrite", lambda s, p, txn: filecommit.write(_schema_df(s, OVERWRITE), p, mode="overwrite", txn=txn),
            lambda rows: set(OVERWRITE)),
    Command("replace_where", lambda s, p, txn: filecommit.write(_schema_df(s, [(40, "a", 400)]), p, mode="overwrite",
                                                                options={"replaceWhere": "part = 'a'"}, txn=txn),
            lambda rows: {r for r in rows if r[1] != "a"} | {(40, "a", 400)}),
    Command("delete", lambda s, p, txn: filecommit.delete(s, p, "id % 4 = 0 OR id IN (5, 7, 33)", txn=txn),
            lambda rows: {r for r in rows if not (r[0] % 4 == 0 or r[0] in (5, 7, 33))}),
    Command("update", lambda s, p, txn: filecommit.update(s, p, set={"v": "v + 1"}, condition=UPDATED, txn=txn),
            lambda rows: {(i, part, v + 1 if i % 3 == 0 or part == "b" else v) for i, part, v in rows}),
    Command("merge", _merge, _merge_rows),
    Command("set_properties", lambda s, p, txn: filecommit.set_table_properties(s, p, {"faults.step": "1"}, txn=txn),
            lambda rows: rows),
]}

SEQUENCE = ["create", "overwrite", "replace_where", "delete", "update", "merge", "append"]


def make_table(spark, path) -> set:
    """Versions 0 and 1 by filecommit; the next commit (version 2) is a checkpoint version
    (``delta.checkpointInterval=2``)."""
    filecommit.write(_schema_df(spark, INITIAL), path, partition_by=["part"],
                     table_properties={"delta.checkpointInterval": "2"})
    filecommit.write(_schema_df(spark, SECOND), path)
    return set(INITIAL) | set(SECOND)


def run_faulted(spark, path: str, command: Command, txn, rows_before: set | None, fault: faults.Fault,
                dv_reader=None):
    """Runs ``command`` with ``fault`` armed, checks the outcome and the table; then calls again with
    the same ``txn`` and checks it converged. Returns the rows after. ``dv_reader``: the Spark + Delta
    worker, for tables with deletion vectors (which this delta-rs cannot read): the rows are then
    left to the caller's Spark + Delta read."""
    exists = os.path.isdir(os.path.join(path, "_delta_log"))
    version_before = commit_versions(path)[-1] if exists else -1
    files_before = data_files(path) if exists else []
    expected = command.apply(rows_before)
    outcome = None
    try:
        result = command.run(spark, path, txn)
    except Exception as e:  # noqa: BLE001 - judged below by class
        outcome = e
    finally:
        fault.disarm()
    assert fault.fired() >= 1, f"the fault was never hit: {fault}"

    if outcome is None:
        assert result.committed, "a command with a new txn must commit"
        assert commit_versions(path)[-1] == version_before + 1 == result.version, (
            f"one command, one version: before {version_before}, now {commit_versions(path)}, result {result.version}")
        if dv_reader is None:
            check_table(path, expected)
        else:
            check_log(path)
    else:
        cond = error_class(outcome)
        assert cond in DEFINITE, (
            f"{command.name} under {fault.rule['point']}: neither success nor a definite error class; "
            f"got {cond!r}: {str(outcome).splitlines()[0][:300]}")
        if cond == LOG_WRITE_FAILED:
            assert (commit_versions(path)[-1] if os.path.isdir(os.path.join(path, "_delta_log")) else -1) \
                == version_before, "LOG_WRITE_FAILED but a version was added"
            if exists:
                check_table(path, rows_before, dv_reader)
            assert data_files(path) == files_before, "the files of a failed commit must be deleted"
        else:
            check_log(path)  # STATE_UNKNOWN: whatever landed is whole and its files are kept

    # The same call again, same txn: exactly once.
    again = command.run(spark, path, txn)
    if outcome is None:
        assert not again.committed, "the retry of a committed txn must be skipped"
    assert len(txn_commits(path, *txn)) == 1, f"txn {txn} committed in versions {txn_commits(path, *txn)}"
    if dv_reader is None:
        check_table(path, expected)
    else:
        check_log(path)  # the caller reads the rows with Spark + Delta
    return expected


# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
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
    assert filecommit.write_batch(_schema_df(session, rows0), table_path, batch_id=0, partition_by=["part"]).committed
    before = data_files(table_path)
    fault = faults.arm(table_path, point, times=1)
    try:
        outcome = filecommit.write_batch(_schema_df(session, rows1), table_path, batch_id=1, partition_by=["part"])
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
        again = filecommit.write_batch(_schema_df(session, rows1), table_path, batch_id=1, partition_by=["part"])
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
