"""Checks of ``tests/test_crash.py``: the tables after every crash and at the end, read with
independent readers only (the ``json`` module, pyarrow, delta-rs); the writers' journals and the
rows they allow are in ``tests/crash_journals.py``.

* :func:`check_log` checks the raw ``_delta_log``: every JSON commit parses line by line, versions
  are contiguous, checkpoints and ``_last_checkpoint`` are readable, no data file is added by two
  commits, no ``txn`` (appId, version) is committed twice.
* :func:`check_files` checks the active files (our own JSON replay, ``helpers.log_state``, and
  delta-rs ``file_uris()``) exist and agree; :func:`delta_rs_rows` reads the rows with delta-rs.
* :func:`check_table` runs them all on one table.
"""

from __future__ import annotations

import collections
import json
import os
import re
from urllib.parse import unquote, urlparse

from crash_journals import KEY_COLUMNS

# ---------------------------------------------------------------------------------------------
# Raw log and files
# ---------------------------------------------------------------------------------------------

COMMIT_RE = re.compile(r"(\d{20})\.json")
CHECKPOINT_RE = re.compile(r"(\d{20})\.checkpoint(?:\.\d+\.\d+)?\.parquet")
ACTION_KEYS = {"commitInfo", "protocol", "metaData", "add", "remove", "cdc", "txn", "domainMetadata",
               "checkpointMetadata", "sidecar"}


def commit_versions(path: str) -> list[int]:
    log = os.path.join(path, "_delta_log")
    if not os.path.isdir(log):
        return []
    return sorted(int(m.group(1)) for n in os.listdir(log) if (m := COMMIT_RE.fullmatch(n)))


def check_log(path: str) -> tuple[list, dict]:
    """The raw log, parsed with the json module and pyarrow. Returns (errors, info)."""
    import pyarrow.parquet as pq

    errors: list = []
    log = os.path.join(path, "_delta_log")
    # _last_checkpoint is read BEFORE the listing: a live server writes checkpoints in the
    # background, always the checkpoint file first and the pointer after it, so a pointer read
    # first must name a file the later listing sees; read after, it may name one written since.
    last = os.path.join(log, "_last_checkpoint")
    last_text = None
    if os.path.exists(last):
        with open(last) as fh:
            last_text = fh.read()
    names = sorted(os.listdir(log))
    versions = commit_versions(path)
    info = {"versions": versions, "tmp_files": [n for n in names if n.startswith(".") and n.endswith(".tmp")]}
    if not versions:
        return errors, info
    missing = sorted(set(range(versions[0], versions[-1] + 1)) - set(versions))
    if missing:
        errors.append(f"{path}: commit versions not contiguous from {versions[0]}: missing {missing[:20]}")
    adds: dict = collections.defaultdict(list)
    txns: dict = collections.defaultdict(list)
    for v in versions:
        f = os.path.join(log, f"{v:020d}.json")
        with open(f, "rb") as fh:
            data = fh.read()
        if not data.strip():
            errors.append(f"{path}: commit {v} is empty")
            continue
        for i, line in enumerate(data.split(b"\n")):
            if not line.strip():
                continue
            try:
                action = json.loads(line)
            except ValueError as e:
                errors.append(f"{path}: commit {v} line {i + 1} does not parse ({e}): {line[:120]!r}")
                continue
            if not isinstance(action, dict) or len(action) != 1 or next(iter(action)) not in ACTION_KEYS:
                errors.append(f"{path}: commit {v} line {i + 1} is not one action: {line[:120]!r}")
                continue
            if "add" in action and action["add"].get("dataChange", True):
                dv = action["add"].get("deletionVector")
                adds[(action["add"]["path"], json.dumps(dv, sort_keys=True) if dv else None)].append(v)
            if "txn" in action:
                txns[(action["txn"]["appId"], action["txn"]["version"])].append(v)
    for (p, _dv), vs in adds.items():
        if len(vs) > 1:
            errors.append(f"{path}: data file {p} added by {len(vs)} commits {vs} (the same files committed twice)")
    for (app, ver), vs in txns.items():
        if len(vs) > 1:
            errors.append(f"{path}: txn ({app!r}, {ver}) committed {len(vs)} times, in versions {vs}")
    info["txns"] = dict(txns)
    cps = []
    for n in names:
        m = CHECKPOINT_RE.fullmatch(n)
        if not m:
            continue
        cps.append(int(m.group(1)))
        try:
            pq.read_table(os.path.join(log, n))
        except Exception as e:  # noqa: BLE001 - any unreadable checkpoint is the finding
            errors.append(f"{path}: checkpoint {n} is not readable Parquet: {_short(e)}")
    info["checkpoints"] = sorted(set(cps))
    if last_text is not None:
        try:
            lc = json.loads(last_text)
            if int(lc["version"]) not in cps:
                errors.append(f"{path}: _last_checkpoint names version {lc['version']} without its checkpoint")
        except Exception as e:  # noqa: BLE001
            errors.append(f"{path}: _last_checkpoint unreadable: {_short(e)}")
    return errors, info


def _local(table: str, p: str) -> str:
    if "://" in p or p.startswith("file:"):
        return os.path.realpath(unquote(urlparse(p).path))
    return os.path.realpath(os.path.join(table, unquote(p)))


def check_files(path: str, dt) -> tuple[list, int]:
    """Active files of our JSON replay (``helpers.log_state``) and of delta-rs exist and agree."""
    from helpers import log_state

    errors = []
    replayed = {_local(path, p) for (p, _dv) in log_state(path)["active"]}
    by_delta_rs = {_local(path, u) for u in dt.file_uris()}
    for what, files in (("JSON replay", replayed), ("delta-rs", by_delta_rs)):
        gone = sorted(f for f in files if not os.path.exists(f))
        if gone:
            errors.append(f"{path}: {len(gone)} active files ({what}) missing on disk, e.g. "
                          f"{[os.path.relpath(g, path) for g in gone[:3]]}")
    if replayed != by_delta_rs:
        errors.append(f"{path}: active files differ between JSON replay and delta-rs: only replay "
                      f"{sorted(replayed - by_delta_rs)[:3]}, only delta-rs {sorted(by_delta_rs - replayed)[:3]}")
    return errors, len(replayed)


def delta_rs_rows(dt) -> list[tuple]:
    t = dt.to_pyarrow_table(columns=KEY_COLUMNS)
    cols = [t.column(c).to_pylist() for c in KEY_COLUMNS]
    return [tuple(r) for r in zip(*cols, strict=True)]


# ---------------------------------------------------------------------------------------------
# One table, all checks
# ---------------------------------------------------------------------------------------------

def _short(e: BaseException) -> str:
    """An exception's type and first line (delta-rs appends long backtraces)."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"


def check_table(path: str, label: str) -> tuple[list, dict, list | None, object]:
    """Log, files and delta-rs read of one table. Returns (errors, info, rows or None, DeltaTable)."""
    from deltalake import DeltaTable

    if not commit_versions(path):
        return [], {"versions": []}, None, None
    errors, info = check_log(path)
    errors = [f"[{label}] {e}" for e in errors]
    try:
        dt = DeltaTable(path)
    except Exception as e:  # noqa: BLE001
        return [*errors, f"[{label}] delta-rs cannot open the table: {_short(e)}"], info, None, None
    if dt.version() != info["versions"][-1]:
        errors.append(f"[{label}] delta-rs reads version {dt.version()}, the log ends at {info['versions'][-1]}")
    try:
        errs, info["active_files"] = check_files(path, dt)
        errors += [f"[{label}] {e}" for e in errs]
    except Exception as e:  # noqa: BLE001
        errors.append(f"[{label}] active files: {_short(e)}")
    try:
        rows = delta_rs_rows(dt)
    except Exception as e:  # noqa: BLE001
        return [*errors, f"[{label}] delta-rs cannot read the rows: {_short(e)}"], info, None, dt
    return errors, info, rows, dt
