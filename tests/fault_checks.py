"""The commands of the fault tests and the independent checks that judge a table after a fault
(``tests/test_faults.py``, ``tests/test_faults_log_and_sink.py``).

The checks never use the code under test: the raw log replayed with the ``json`` module (commit
versions contiguous, every line a whole JSON action, every data and deletion vector file any version
references on disk: PROTOCOL.md "Add File and Remove File", "Deletion Vector Descriptor"), delta-rs,
and Spark + Delta. The commands (create, overwrite, replace_where, delete, update, merge, append,
set_properties) each carry the rows they mean, computed here in Python.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import faults
from delta_tables import commit_versions
from helpers import data_files, error_class, log_actions, log_state

import filecommit
from filecommit import errors

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


def schema_df(spark, rows):
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
    return (filecommit.merge(schema_df(spark, MERGE_SOURCE), path, "target.id = source.id")
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
    Command("create", lambda s, p, txn: filecommit.write(schema_df(s, INITIAL), p, partition_by=["part"],
                                                         table_properties={"delta.checkpointInterval": "2"}, txn=txn),
            lambda rows: set(INITIAL), new_table=True),
    Command("append", lambda s, p, txn: filecommit.write(schema_df(s, [(20, "a", 200), (21, "b", 210)]), p, txn=txn),
            lambda rows: rows | {(20, "a", 200), (21, "b", 210)}),
    Command("overwrite", lambda s, p, txn: filecommit.write(schema_df(s, OVERWRITE), p, mode="overwrite", txn=txn),
            lambda rows: set(OVERWRITE)),
    Command("replace_where", lambda s, p, txn: filecommit.write(schema_df(s, [(40, "a", 400)]), p, mode="overwrite",
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
    filecommit.write(schema_df(spark, INITIAL), path, partition_by=["part"],
                     table_properties={"delta.checkpointInterval": "2"})
    filecommit.write(schema_df(spark, SECOND), path)
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
