"""Co-writers of one S3 table: Connect servers (separate JVMs) and a delta-rs writer appending
concurrently, and the checks of what they left, by readers independent of the writers.

Used by ``tests/test_s3_cowriters.py`` (small) and ``bench/s3_cowriters.py`` (the acceptance size).
Every append writes rows ``(id, writer)`` with ids unique per writer and append, so a lost or
doubled commit shows as a missing or doubled id. Filecommit writers may carry ``txn`` (app id =
writer name, version = append number), delta-rs writes without.
"""

from __future__ import annotations

import json
import re
import threading
import time

import deltalake
import pyarrow as pa

import filecommit

SCHEMA = pa.schema([("id", pa.int64()), ("writer", pa.string())])
COMMIT = re.compile(r"^(\d{20})\.json$")


def delta_rs_options(minio) -> dict:
    """delta-rs storage options for a co-writer of MinIO: commits with S3 conditional writes
    (``conditional_put=etag``: ``If-None-Match: *``, as object_store's ``S3ConditionalPut::ETagMatch``),
    not with the unsafe rename of the suite's readers."""
    opts = {k: v for k, v in minio.storage_options().items() if k != "AWS_S3_ALLOW_UNSAFE_RENAME"}
    opts["conditional_put"] = "etag"
    return opts


def s3_uri(path: str) -> str:
    return "s3://" + path.removeprefix("s3a://")


def ids(writer: int, append: int, rows: int) -> list[int]:
    """The ids of one append: writer * 1_000_000 + append * 1_000 + row."""
    return [writer * 1_000_000 + append * 1_000 + r for r in range(rows)]


class Writer:
    """One writer: ``kind`` "server" (a Connect session) or "delta-rs"; ``txn`` for server writers."""

    def __init__(self, name: str, index: int, kind: str, session=None, txn: bool = False, storage_options=None):
        self.name = name
        self.index = index
        self.kind = kind
        self.session = session
        self.txn = txn
        self.storage_options = storage_options
        self.errors: list[BaseException] = []
        self.done: list[int] = []
        self.versions: list[int] = []
        self.seconds = 0.0

    def append(self, path: str, n: int, rows: int) -> None:
        try:
            if self.kind == "delta-rs":
                table = pa.table({"id": ids(self.index, n, rows), "writer": [self.name] * rows}, schema=SCHEMA)
                deltalake.write_deltalake(s3_uri(path), table, mode="append", storage_options=self.storage_options)
            else:
                df = self.session.createDataFrame([(i, self.name) for i in ids(self.index, n, rows)],
                                                  "id long, writer string")
                result = filecommit.write(df, path, mode="append", txn=(self.name, n) if self.txn else None)
                assert result.committed, result
                self.versions.append(result.version)
            self.done.append(n)
        except BaseException as e:  # noqa: BLE001 - reported by the caller
            self.errors.append(e)

    def run(self, path: str, appends: int, rows: int) -> None:
        t0 = time.monotonic()
        for n in range(appends):
            self.append(path, n, rows)
        self.seconds = time.monotonic() - t0


def create_table(session, path: str) -> None:
    """Version 0: one row ``(-1, 'init')``."""
    filecommit.write(session.createDataFrame([(-1, "init")], "id long, writer string"), path, mode="error")


def run_concurrently(writers: list[Writer], path: str, appends: int, rows: int = 1) -> float:
    """Every writer appends ``appends`` times at once (one thread each); returns seconds."""
    threads = [threading.Thread(target=w.run, args=(path, appends, rows), name=w.name) for w in writers]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - t0


def append_for(writers: int, seconds: float, append, warmup=None, on_start=None) -> dict:
    """``writers`` threads append for ``seconds`` s from a common start: each runs ``warmup(w)``
    (untimed; None: none); once every warm-up is done ``on_start()`` runs (None: nothing) and the
    clock starts; then each calls ``append(w, n)`` for n = 0, 1, ... while fewer than ``seconds``
    have passed since the start (the last call may end after). Returns ``results``
    (writer -> list of (n, what ``append`` returned) for the calls that returned), ``errors`` (what
    the calls raised, warm-ups included) and ``wall_s`` (start until the last writer's last call
    returned)."""
    results: dict[int, list] = {w: [] for w in range(writers)}
    errors: list[BaseException] = []
    start = threading.Barrier(writers + 1)
    go = threading.Event()
    deadline = [float("inf")]

    def run(w):
        try:
            if warmup is not None:
                warmup(w)
        except BaseException as e:  # noqa: BLE001 - the caller judges it
            errors.append(e)
        start.wait()
        go.wait()
        n = 0
        while time.monotonic() < deadline[0]:
            try:
                results[w].append((n, append(w, n)))
            except BaseException as e:  # noqa: BLE001 - the caller judges it
                errors.append(e)
            n += 1

    threads = [threading.Thread(target=run, args=(w,), name=f"writer-{w}", daemon=True) for w in range(writers)]
    for t in threads:
        t.start()
    start.wait()
    if on_start is not None:
        on_start()
    t0 = time.monotonic()
    deadline[0] = t0 + seconds
    go.set()
    for t in threads:
        t.join()
    return {"results": results, "errors": errors, "wall_s": time.monotonic() - t0}


def expected_ids(writers: list[Writer], rows: int = 1) -> list[int]:
    out = [-1]
    for w in writers:
        for n in w.done:
            out += ids(w.index, n, rows)
    return sorted(out)


def log_commits(fs, path: str) -> dict[int, list[dict]]:
    """Every commit file of the table, parsed line by line with ``json`` (pyarrow's S3 client)."""
    from pyarrow import fs as pafs

    base = path.removeprefix("s3a://") + "/_delta_log"
    out = {}
    for info in fs.get_file_info(pafs.FileSelector(base)):
        m = COMMIT.match(info.base_name)
        if m:
            with fs.open_input_stream(info.path) as f:
                out[int(m.group(1))] = [json.loads(line) for line in f.read().decode().splitlines() if line.strip()]
    return out


def log_names(fs, path: str) -> list[str]:
    from pyarrow import fs as pafs

    base = path.removeprefix("s3a://") + "/_delta_log"
    return sorted(i.base_name for i in fs.get_file_info(pafs.FileSelector(base)))


def check(minio, path: str, writers: list[Writer], rows: int = 1, every_version: bool = True) -> dict:
    """What every co-writer's readers must see; returns a summary. Raises AssertionError naming
    the first broken promise: ids lost or doubled (delta-rs's read of the latest version), a gap
    in the versions, a version delta-rs cannot read or that drops rows of the one before, a
    ``txn`` (app id, version) committed twice or not at all."""
    fs = minio.filesystem()
    commits = log_commits(fs, path)
    versions = sorted(commits)
    assert versions == list(range(len(versions))), f"versions not contiguous: {versions}"
    stray = [n for n in log_names(fs, path) if n.startswith(".") or n.endswith(".tmp")]
    assert not stray, f"temporary or probe objects left in the log: {stray}"
    table = deltalake.DeltaTable(s3_uri(path), storage_options=minio.storage_options())
    assert table.version() == versions[-1]
    got = sorted(table.to_pyarrow_table().column("id").to_pylist())
    want = expected_ids(writers, rows)
    lost = sorted(set(want) - set(got))
    doubled = sorted({i for i in got if got.count(i) > 1}) if len(got) != len(set(got)) else []
    assert not lost and not doubled and got == want, \
        f"{len(lost)} ids lost {lost[:10]}, {len(doubled)} doubled {doubled[:10]}, {len(got)} rows, " \
        f"{len(want)} expected"
    if every_version:
        before: set = set()
        for v in versions:
            now = set(deltalake.DeltaTable(s3_uri(path), version=v, storage_options=minio.storage_options())
                      .to_pyarrow_table().column("id").to_pylist())
            assert before <= now, f"version {v} drops rows of version {v - 1}"
            before = now
    txns: dict = {}
    for v, actions in commits.items():
        for a in actions:
            if "txn" in a:
                txns.setdefault((a["txn"]["appId"], a["txn"]["version"]), []).append(v)
    for w in writers:
        if w.kind == "server" and w.txn:
            for n in w.done:
                assert len(txns.get((w.name, n), [])) == 1, f"txn ({w.name}, {n}) in versions {txns.get((w.name, n))}"
    return {"versions": len(versions), "rows": len(got), "txns": len(txns),
            "grouped": sum(1 for acts in commits.values() if sum(1 for a in acts if "add" in a) > rows)}
