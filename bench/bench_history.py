"""Append latency vs. table history: prints measured numbers, asserts nothing about speed.

Does the cost of a 1-row append grow with the length of the Delta log? Through ONE embedded Spark
Connect server (``filecommit.local_session()``, master local[2]) or a running one (``--remote``),
the script measures three writers, each ``--appends`` (30) times, with the same 1-row DataFrame
(``id long, v string``, built once on the client):

A. short     ``filecommit.write(df, A, mode="append")`` into table A, which filecommit created
             and appended to until version ``--short-version`` (10) first (those writes are the
             untimed warm-up of the filecommit path).
B. long      the same append into table B, whose log was built by another writer up to version
             ``--history`` (3,000) before the server touches it (``--history-writer``):
             json              (default) this script writes the commit files itself: 000..0.json
                               with commitInfo, protocol (1, 2) and metaData, then one file per
                               version with commitInfo + one ``add`` (with stats) of a 1-row
                               Parquet file written once with pyarrow and hard-linked under a
                               distinct name per version. NO checkpoint: the first reader of B
                               has to replay 3,001 JSON commits -- the hard case. Takes ~1-3 s.
             json+checkpoint   the same, then delta-rs ``DeltaTable.create_checkpoint()`` at the
                               last version (a history whose writer left a checkpoint).
             deltalake         ``deltalake.write_deltalake(..., mode="append")`` in a loop, with
                               delta-rs defaults: delta-rs 1.x writes a checkpoint every 100
                               commits (``delta.checkpointInterval`` default 100; files at
                               versions 99, 199, ..., 2999). 20-50 ms a commit: 1-2.5 min for
                               3,000 on 2 cores, hence not the default.
             filecommit's own checkpoints play no part in building B.
             delta-rs must read B (version, one row per commit) before anything is timed.
P. plain     ``df.write.mode("append").parquet(P)`` through the same Connect session: Spark's own
             file write (no transaction log), after ``--warmup`` (3) untimed writes.

The timed writes are interleaved in rounds (round r writes A, B and P once each, the order rotated
by r), so load changes on a shared machine hit the three alike. Every append of B is timed,
including the first one after the history was built (printed on its own as well). Per writer:
client wall ms per append (p50, p95 nearest-rank, min, max, first) and for filecommit the server's
``result.metrics.duration_ms``. The summary gives the two acceptance ratios, on client wall p50:

    p50(B) / p50(A)          goal <= 1.2   (append cost independent of history length)
    p50(A) / p50(plain)      goal <= 1.0   (a 1-row filecommit append no slower than plain Spark)

After the timing, delta-rs checks A (version short+N, rows) and B (version history+N, rows), and
pyarrow the row count of P; any mismatch exits 1. The checkpoints found in B's log afterwards are
listed (the writer's own ones, if it writes any). All samples go to ``--json``
(default out/bench_history.json).

Usage: ``python bench/bench_history.py [--appends 30] [--history 3000] [--short-version 10]
[--history-writer json|json+checkpoint|deltalake] [--warmup 3] [--out DIR] [--json FILE]
[--remote URL]`` (``make bench`` runs the defaults after bench_write.py). Units: milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench_write import _load, fail, machine_info, open_session, percentile

REPO = Path(__file__).resolve().parent.parent

SCHEMA_DDL = "id long, v string"
SCHEMA_STRING = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}},
    {"name": "v", "type": "string", "nullable": True, "metadata": {}},
]}, separators=(",", ":"))


def _one_row_table():
    import pyarrow as pa

    return pa.table({"id": pa.array([0], pa.int64()), "v": pa.array(["x"], pa.string())})


def _checkpoints(table):
    log = Path(table, "_delta_log")
    return sorted(p.name for p in log.iterdir()
                  if not p.name.startswith(".") and (".checkpoint." in p.name or p.name == "_last_checkpoint"))


def _last_checkpoint(table):
    """Version in _delta_log/_last_checkpoint, or None."""
    try:
        with open(Path(table, "_delta_log", "_last_checkpoint")) as f:
            return int(json.load(f)["version"])
    except (OSError, ValueError, KeyError):
        return None


def jar_info():
    """Path, size, modification time and sha256 of the plugin jar the embedded server loads."""
    import hashlib

    from filecommit.server import find_plugin_jar

    try:
        jar = find_plugin_jar()
    except FileNotFoundError as e:
        return {"path": None, "error": str(e)}
    with open(jar, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    st = os.stat(jar)
    return {"path": jar, "bytes": st.st_size, "mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.st_mtime)),
            "sha256": digest}


def _names(names):
    """A short rendering of a list of checkpoint file names."""
    if not names:
        return "none"
    if len(names) <= 5:
        return ", ".join(names)
    return f"{len(names)} files: {names[0]}, {names[1]}, ..., {names[-2]}, {names[-1]}"


def build_history_json(table, last_version):
    """Write a valid Delta log 0..last_version by hand: protocol + metaData at 0, one add per version.

    Every version adds one 1-row Parquet file (written once with pyarrow, hard-linked -- copied if
    links fail -- under a distinct name per version), with stats, as Spark or delta-rs would.
    No checkpoint is written.
    """
    import pyarrow.parquet as pq

    log = Path(table, "_delta_log")
    log.mkdir(parents=True)
    seed = Path(table, "_seed.parquet.tmp")
    pq.write_table(_one_row_table(), seed, compression="snappy")
    size = seed.stat().st_size
    stats = json.dumps({"numRecords": 1, "minValues": {"id": 0, "v": "x"}, "maxValues": {"id": 0, "v": "x"},
                        "nullCount": {"id": 0, "v": 0}}, separators=(",", ":"))
    now = int(time.time() * 1000) - last_version - 1
    link = os.link
    for version in range(last_version + 1):
        name = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
        try:
            link(seed, Path(table, name))
        except OSError:
            link = shutil.copyfile
            link(seed, Path(table, name))
        ts = now + version
        actions = [{"commitInfo": {"timestamp": ts, "operation": "WRITE" if version else "CREATE TABLE",
                                   "operationParameters": {"mode": "Append"}, "isBlindAppend": True,
                                   "engineInfo": "bench_history.py"}}]
        if version == 0:
            actions.append({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
            actions.append({"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                                         "schemaString": SCHEMA_STRING, "partitionColumns": [],
                                         "configuration": {}, "createdTime": ts}})
        actions.append({"add": {"path": name, "partitionValues": {}, "size": size, "modificationTime": ts,
                                "dataChange": True, "stats": stats}})
        with open(log / f"{version:020d}.json", "w") as f:
            f.write("\n".join(json.dumps(a, separators=(",", ":")) for a in actions) + "\n")
    seed.unlink()


def build_history_deltalake(table, last_version):
    """deltalake.write_deltalake append of one row per version, delta-rs defaults (checkpoints included)."""
    from deltalake import write_deltalake

    data = _one_row_table()
    for _ in range(last_version + 1):
        write_deltalake(table, data, mode="append")


def build_history(table, last_version, writer):
    """Table B with versions 0..last_version (one row each) built by ``writer``; checked with delta-rs."""
    from deltalake import DeltaTable

    t0 = time.perf_counter()
    if writer == "deltalake":
        build_history_deltalake(table, last_version)
    else:
        build_history_json(table, last_version)
    build_s = time.perf_counter() - t0
    checkpoint_s = None
    if writer == "json+checkpoint":
        t1 = time.perf_counter()
        DeltaTable(table).create_checkpoint()
        checkpoint_s = time.perf_counter() - t1
    t1 = time.perf_counter()
    dt = DeltaTable(table)
    version, rows = dt.version(), dt.to_pyarrow_dataset().count_rows()
    read_s = time.perf_counter() - t1
    if (version, rows) != (last_version, last_version + 1):
        fail(f"history ({writer}): delta-rs reads version {version}, {rows} rows; "
             f"expected {last_version}, {last_version + 1}")
    return {"writer": writer, "version": version, "rows": rows, "build_s": build_s,
            "checkpoint_s": checkpoint_s, "deltars_read_s": read_s, "checkpoints": _checkpoints(table)}


def stats_of(samples):
    if not samples:
        return {}
    return {"p50": statistics.median(samples), "p95": percentile(samples, 95), "min": min(samples),
            "max": max(samples), "first": samples[0], "n": len(samples)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=30, help="timed 1-row appends per writer (default 30)")
    parser.add_argument("--history", type=int, default=3000,
                        help="table B's version before the timed appends (default 3000)")
    parser.add_argument("--short-version", type=int, default=10,
                        help="table A's version before the timed appends (default 10)")
    parser.add_argument("--history-writer", choices=("json", "json+checkpoint", "deltalake"), default="json",
                        help="how table B's history is built (default json: hand-written commits, no checkpoint)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed plain Spark appends first (default 3)")
    parser.add_argument("--out", default=None, help="directory for the tables (kept); default: a temp dir, removed")
    parser.add_argument("--json", default=str(REPO / "out" / "bench_history.json"),
                        help="write all samples here (default out/bench_history.json; '' to skip)")
    parser.add_argument("--remote", default=None,
                        help="sc://host:port of a running server with the plugin; default: embedded local server")
    args = parser.parse_args(argv)
    for name in ("appends", "history", "short_version"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.warmup < 0:
        parser.error("--warmup must be >= 0")

    import pyarrow.dataset as pads
    from deltalake import DeltaTable

    import filecommit

    started = time.perf_counter()
    info = machine_info()
    print(f"filecommit append latency vs. history length  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"machine: nproc {info['nproc']}, memory {info['memory']}, {info['platform']}")
    print(f"python {info['python']}, pyspark {info['pyspark']}, deltalake {info['deltalake']}, "
          f"pyarrow {info['pyarrow']}, {info['java']}")
    if not args.remote:
        info["jar"] = jar_info()
        j = info["jar"]
        print(f"plugin jar: {j['path']}, {j.get('bytes', 0):,} bytes, modified {j.get('mtime')}, "
              f"sha256 {j.get('sha256', '?')[:16]}")
    print(f"args: appends {args.appends}, A at version {args.short_version}, B at version {args.history} "
          f"(history writer {args.history_writer}), plain warm-up {args.warmup}; load average {_load()}\n",
          flush=True)

    out = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="filecommit-bench-history-")
    os.makedirs(out, exist_ok=True)
    table_a, table_b, plain = (os.path.join(out, n) for n in ("short_A", "long_B", "plain_P"))
    for p in (table_a, table_b, plain):
        if os.path.exists(p):
            fail(f"{p} exists; use an empty --out directory")
    n = args.appends
    try:
        print(f"building table B: {args.history + 1:,} commits (versions 0..{args.history}) "
              f"with {args.history_writer} ...", flush=True)
        history = build_history(table_b, args.history, args.history_writer)
        print(f"  built in {history['build_s']:.1f} s"
              + (f", delta-rs checkpoint {history['checkpoint_s']:.1f} s" if history["checkpoint_s"] else "")
              + f"; delta-rs reads version {history['version']}, {history['rows']:,} rows in "
              f"{history['deltars_read_s']:.2f} s; checkpoints: {_names(history['checkpoints'])}",
              flush=True)

        spark = open_session(args.remote)

        df = spark.createDataFrame([(1, "y")], SCHEMA_DDL)

        t0 = time.perf_counter()
        for v in range(args.short_version + 1):
            r = filecommit.write(df, table_a, mode="append")
            if r.version != v:
                fail(f"table A: write {v} committed version {r.version}")
        print(f"table A: created and appended to version {args.short_version} with filecommit "
              f"({time.perf_counter() - t0:.1f} s, untimed warm-up)", flush=True)
        t0 = time.perf_counter()
        for _ in range(args.warmup):
            df.write.mode("append").parquet(plain)
        print(f"plain: {args.warmup} untimed warm-up appends ({time.perf_counter() - t0:.1f} s)\n", flush=True)

        samples = {k: {"client_ms": [], "server_ms": [], "versions": [], "checkpoint_before": []}
                   for k in ("A", "B", "P")}

        def append(key):
            if key != "P":  # the table's last checkpoint before this append (not timed)
                samples[key]["checkpoint_before"].append(_last_checkpoint(table_a if key == "A" else table_b))
            t = time.perf_counter()
            if key == "P":
                df.write.mode("append").parquet(plain)
                samples[key]["client_ms"].append((time.perf_counter() - t) * 1000)
                return
            r = filecommit.write(df, table_a if key == "A" else table_b, mode="append")
            samples[key]["client_ms"].append((time.perf_counter() - t) * 1000)
            samples[key]["server_ms"].append(r.metrics.duration_ms)
            samples[key]["versions"].append(r.version)

        order = ["A", "B", "P"]
        for rnd in range(n):
            for key in order[rnd % 3:] + order[: rnd % 3]:
                append(key)
            if rnd == 0 or (rnd + 1) % 10 == 0 or rnd == n - 1:
                a, b, p = (samples[k]["client_ms"][-1] for k in ("A", "B", "P"))
                print(f"  round {rnd + 1:>3}/{n}: A {a:7.0f} ms (v{samples['A']['versions'][-1]}), "
                      f"B {b:7.0f} ms (v{samples['B']['versions'][-1]}), plain {p:7.0f} ms", flush=True)

        # Checks: every append landed where expected, readers see all rows.
        for key, base in (("A", args.short_version), ("B", args.history)):
            if samples[key]["versions"] != list(range(base + 1, base + n + 1)):
                fail(f"table {key}: committed versions {samples[key]['versions']}, expected {base + 1}..{base + n}")
        da, db = DeltaTable(table_a), DeltaTable(table_b)
        checks = {
            "A": (da.version(), da.to_pyarrow_dataset().count_rows()),
            "B": (db.version(), db.to_pyarrow_dataset().count_rows()),
            "P": pads.dataset(plain, format="parquet").count_rows(),
        }
        if checks["A"] != (args.short_version + n, args.short_version + 1 + n):
            fail(f"table A: delta-rs reads {checks['A']}, expected ({args.short_version + n}, "
                 f"{args.short_version + 1 + n})")
        if checks["B"] != (args.history + n, args.history + 1 + n):
            fail(f"table B: delta-rs reads {checks['B']}, expected ({args.history + n}, {args.history + 1 + n})")
        if checks["P"] != args.warmup + n:
            fail(f"plain: {checks['P']} rows, expected {args.warmup + n}")
        b_checkpoints_after = [c for c in _checkpoints(table_b) if c not in history["checkpoints"]]
        a_checkpoints = _checkpoints(table_a)
        if not args.remote:
            spark.stop()
    finally:
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)

    st = {k: {"client_ms": stats_of(v["client_ms"]), "server_ms": stats_of(v["server_ms"])}
          for k, v in samples.items()}
    b = samples["B"]
    for part, keep in (("B_no_checkpoint", lambda cp: cp is None), ("B_checkpoint", lambda cp: cp is not None)):
        st[part] = {k: stats_of([x for x, cp in zip(b[k], b["checkpoint_before"], strict=True) if keep(cp)])
                    for k in ("client_ms", "server_ms")}
    ratio_history = st["B"]["client_ms"]["p50"] / st["A"]["client_ms"]["p50"]
    ratio_history_server = st["B"]["server_ms"]["p50"] / st["A"]["server_ms"]["p50"]
    ratio_plain = st["A"]["client_ms"]["p50"] / st["P"]["client_ms"]["p50"]
    total_s = time.perf_counter() - started

    print(f"\n== 1-row appends, {n} per writer, interleaved (ms per append; p95 nearest-rank) ==")
    print(f"{'writer':<44}{'p50':>8}{'p95':>8}{'min':>8}{'max':>8}{'first':>8}")
    rows = (
        (f"A filecommit, table at v{args.short_version}  client", st["A"]["client_ms"]),
        ("                               server", st["A"]["server_ms"]),
        (f"B filecommit, table at v{args.history}  client", st["B"]["client_ms"]),
        ("                               server", st["B"]["server_ms"]),
        ("P plain Spark df.write.parquet  client", st["P"]["client_ms"]),
        (f"  B, no checkpoint in log ({st['B_no_checkpoint']['client_ms'].get('n', 0)})  client",
         st["B_no_checkpoint"]["client_ms"]),
        ("                               server", st["B_no_checkpoint"]["server_ms"]),
        (f"  B, checkpoint in log ({st['B_checkpoint']['client_ms'].get('n', 0)})  client",
         st["B_checkpoint"]["client_ms"]),
        ("                               server", st["B_checkpoint"]["server_ms"]),
    )
    for label, s in rows:
        if not s:
            continue
        print(f"{label:<44}{s['p50']:>8.0f}{s['p95']:>8.0f}{s['min']:>8.0f}{s['max']:>8.0f}{s['first']:>8.0f}")
    print(f"B's history: {history['rows']:,} commits written by {history['writer']}, "
          f"checkpoints before the appends: {_names(history['checkpoints'])}; "
          f"built in {history['build_s']:.1f} s")
    print(f"checkpoints written during the timed appends: B {_names(b_checkpoints_after)}; "
          f"A (whole table) {_names(a_checkpoints)}")

    def verdict(x, goal):
        return "MET" if x <= goal else "NOT MET"

    print("\n== summary ==")
    print(f"history ratio  p50(B v{args.history}) / p50(A v{args.short_version}) = "
          f"{st['B']['client_ms']['p50']:.0f} / {st['A']['client_ms']['p50']:.0f} ms = {ratio_history:.2f}  "
          f"(goal <= 1.2: {verdict(ratio_history, 1.2)}; server duration_ms ratio {ratio_history_server:.2f})")
    print(f"plain ratio    p50(A filecommit) / p50(plain parquet) = "
          f"{st['A']['client_ms']['p50']:.0f} / {st['P']['client_ms']['p50']:.0f} ms = {ratio_plain:.2f}  "
          f"(goal <= 1.0: {verdict(ratio_plain, 1.0)})")
    print(f"first append to B after the history was built: {st['B']['client_ms']['first']:.0f} ms client, "
          f"{st['B']['server_ms']['first']:.0f} ms server")
    print(f"verified: A v{checks['A'][0]} {checks['A'][1]:,} rows, B v{checks['B'][0]} {checks['B'][1]:,} rows "
          f"(delta-rs); plain {checks['P']:,} rows (pyarrow)")
    print(f"load average at the end: {_load()}; total {total_s:.0f} s")

    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"machine": info, "args": vars(args), "history": history,
                       "checkpoints_written": {"A": a_checkpoints, "B": b_checkpoints_after},
                       "stats": st, "samples": samples,
                       "ratios": {"history_p50_B_over_A": ratio_history,
                                  "history_p50_B_over_A_server": ratio_history_server,
                                  "plain_p50_A_over_P": ratio_plain},
                       "goals": {"history_p50_B_over_A": 1.2, "plain_p50_A_over_P": 1.0},
                       "total_s": total_s}, f, indent=1)
        print(f"samples written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
