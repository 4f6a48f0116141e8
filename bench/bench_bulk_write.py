"""Bulk write of TPC-H lineitem, side by side: filecommit, plain Spark Parquet, delta-rs.

Prints measured numbers, asserts nothing about speed. One embedded Spark Connect server
(``filecommit.local_session()``, master local[2]) writes TPC-H lineitem of scale factor
``--scale`` (``tpchgen-cli`` Parquet, one file, generated and cached under ``--data`` as
``bench_rowlevel.py`` does; SF1: 6,001,215 rows, 16 columns) three ways, each into a fresh
directory per run, in two cases:

unpartitioned   ``filecommit.write(spark.read.parquet(src), table)``; plain Spark
                ``spark.read.parquet(src).write.parquet(dir)`` on the same server (Spark's default
                commit protocol, no table log); delta-rs ``write_deltalake(table, reader)`` in this
                process, streaming the same file as Arrow batches of 131,072 rows (no Spark).
partitioned     the same, partitioned by ``l_shipmode`` (7 values): ``partition_by=["l_shipmode"]``,
                ``.partitionBy("l_shipmode")``, ``partition_by=["l_shipmode"]``.

The writers take turns run by run (filecommit, Spark, delta-rs, then again), after ``--warmup``
untimed rounds (default 1). Printed: the median of ``--runs`` (default 3) client wall seconds per
writer and case, the min and max, and the ratio to filecommit. Every table written is read back
with delta-rs (the Spark Parquet directories with pyarrow): a row count other than the source's
exits 1.

``--jfr DIR`` starts the server with a JDK Flight Recording running from launch
(``-XX:StartFlightRecording=name=bulk,settings=default``: Java samples every 20 ms; and
``-XX:FlightRecorderOptions=stackdepth=256`` so stacks are not cut at 64 frames; driver and executors
share that JVM in local[2]), then runs one more filecommit write per case and cuts its time window out
of the recording (``jcmd <pid> JFR.dump begin=... end=...``) into ``DIR/unpartitioned.jfr`` and
``DIR/partitioned.jfr``, with the write's exact window (two UTC ISO-8601 times) in ``FILE.jfr.window``
(the dump holds whole chunks, so it may hold earlier writes too); ``bench/jfr_buckets.py``
aggregates them. These runs are not in the medians. (Starting a recording with ``jcmd JFR.start``
in a warm JVM made the next write as slow as a cold one, 12-15 s instead of 6, so the recording
starts with the JVM.) Run the medians without ``--jfr``.

Usage: ``python bench/bench_bulk_write.py [--scale 1] [--runs 3] [--warmup 1] [--jfr DIR]
[--jfr-settings default] [--writers filecommit,spark-parquet,delta-rs] [--conf KEY=VALUE]
[--option KEY=VALUE] [--out DIR] [--json FILE]``. ``--conf`` is server conf (e.g.
``spark.driver.memory=4g``), ``--option`` a Parquet writer option of the two Spark writers (e.g.
``parquet.enable.dictionary=false``); ``--runs 0 --writers filecommit --jfr DIR`` does only the
warm-up and the profiled writes. ``--out`` keeps the last run's tables there; by default a
temporary directory is used and removed. Units: seconds (s) of client wall time; rows/s;
MB = 10^6 bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

CASES = {"unpartitioned": [], "partitioned": ["l_shipmode"]}
WRITERS = ("filecommit", "spark-parquet", "delta-rs")


def load():
    """The 1-, 5- and 15-minute load averages as one string."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def dir_bytes(path):
    """Total bytes of the ``.parquet`` files under ``path`` (the log and checksums excluded)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files if f.endswith(".parquet"))
    return total


def count_rows(writer, path):
    """Rows in a written table: delta-rs for the Delta tables, pyarrow for the Spark directory."""
    import pyarrow.dataset as ds
    from deltalake import DeltaTable

    if writer == "spark-parquet":
        return ds.dataset(path, format="parquet", partitioning="hive").count_rows()
    return DeltaTable(path).to_pyarrow_dataset().count_rows()


def write_once(spark, writer, src, dest, partition_by, options=None):
    """One write of ``src`` to ``dest`` by ``writer`` (``options``: Parquet writer options of the
    two Spark writers); returns client wall seconds."""
    import pyarrow.dataset as ds
    from deltalake import write_deltalake

    import filecommit

    t0 = time.perf_counter()
    if writer == "filecommit":
        filecommit.write(spark.read.parquet(src), dest, mode="overwrite", partition_by=partition_by or None,
                         options=options or None)
    elif writer == "spark-parquet":
        w = spark.read.parquet(src).write.mode("overwrite").options(**(options or {}))
        if partition_by:
            w = w.partitionBy(*partition_by)
        w.parquet(dest)
    else:
        reader = ds.dataset(src).scanner(batch_size=131072).to_reader()
        write_deltalake(dest, reader, mode="overwrite", partition_by=partition_by or None)
    return time.perf_counter() - t0


def server_pid():
    """Process id of the embedded server's JVM: the ``java`` process descended from this one."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as f:
                if f.read().strip() != "java":
                    continue
        except OSError:
            continue
        pid = int(entry)
        while pid > 1:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    pid = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                break
            if pid == me:
                return int(entry)
    raise SystemExit("no server JVM found among this process's descendants")


def profile(spark, src, work, jfr_dir, case, partition_by):
    """One filecommit write of ``case``, cut out of the server's running Flight Recording into
    ``jfr_dir/case.jfr`` (``jcmd <pid> JFR.dump begin=... end=...``) and its begin and end time into
    ``jfr_dir/case.jfr.window``; returns (seconds, path)."""
    from datetime import datetime, timezone

    def now():
        return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    pid = server_pid()
    out = os.path.join(os.path.abspath(jfr_dir), f"{case}.jfr")
    begin = now()
    seconds = write_once(spark, "filecommit", src, os.path.join(work, f"jfr-{case}"), partition_by)
    end = now()
    subprocess.run(["jcmd", str(pid), "JFR.dump", "name=bulk", f"filename={out}", f"begin={begin}", f"end={end}"],
                   check=True, capture_output=True)
    with open(out + ".window", "w") as f:
        f.write(f"{begin} {end}\n")
    shutil.rmtree(os.path.join(work, f"jfr-{case}"), ignore_errors=True)
    return seconds, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=1, help="TPC-H scale factor (1: 6,001,215 rows)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--data", default=str(REPO / "bench" / ".data" / "tpch"), help="tpchgen-cli output cache")
    ap.add_argument("--jfr", help="directory for one profiled filecommit write per case")
    ap.add_argument("--jfr-settings", default="default",
                    help="JFR settings: default (Java samples every 20 ms) or profile (every 10 ms, more events)")
    ap.add_argument("--writers", default=",".join(WRITERS), help="comma-separated subset of " + ",".join(WRITERS))
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="extra server conf, e.g. spark.sql.maxConcurrentOutputFileWriters=8 (repeatable)")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="Parquet writer option of filecommit and Spark, e.g. parquet.enable.dictionary=false")
    ap.add_argument("--out", help="keep the tables here (default: a temporary directory, removed)")
    ap.add_argument("--json", help="write all samples to this file")
    args = ap.parse_args(argv)
    writers = [w for w in WRITERS if w in args.writers.split(",")]

    import pyarrow.dataset as ds
    from bench_rowlevel import generate, machine

    import filecommit

    src = generate(args.data, args.scale)
    rows = ds.dataset(src).count_rows()
    work = args.out or tempfile.mkdtemp(prefix="bench_bulk_write_")
    os.makedirs(work, exist_ok=True)
    conf = dict(kv.split("=", 1) for kv in args.conf)
    options = dict(kv.split("=", 1) for kv in args.option)
    if args.jfr:
        os.makedirs(args.jfr, exist_ok=True)
        conf["spark.driver.extraJavaOptions"] = ("-XX:FlightRecorderOptions=stackdepth=256 -XX:StartFlightRecording="
                                                 f"name=bulk,settings={args.jfr_settings},maxsize=2g")
    print(machine(), flush=True)
    if conf or options:
        print(f"server conf: {conf}; writer options: {options}", flush=True)
    print(f"source: {src}, {rows:,} rows, {os.path.getsize(src) / 1e6:.1f} MB", flush=True)
    t0 = time.perf_counter()
    spark = filecommit.local_session(conf=conf)
    print(f"server start {time.perf_counter() - t0:.1f} s", flush=True)
    result = {"scale": args.scale, "rows": rows, "load_start": load(), "samples": {}, "bytes": {}}
    bad = []
    try:
        for case, partition_by in CASES.items():
            samples = {w: [] for w in writers}
            for i in range(args.warmup + args.runs):
                for w in writers:
                    dest = os.path.join(work, f"{case}-{w}-{i}")
                    sec = write_once(spark, w, src, dest, partition_by, options)
                    got = count_rows(w, dest)
                    if got != rows:
                        bad.append(f"{case} {w} run {i}: {got:,} rows, expected {rows:,}")
                    label = "warm-up" if i < args.warmup else f"run {i - args.warmup + 1}"
                    print(f"  {case:<13} {w:<14} {label:<8} {sec:7.2f} s  rows {got:,}  "
                          f"{dir_bytes(dest) / 1e6:7.1f} MB", flush=True)
                    if i >= args.warmup:
                        samples[w].append(sec)
                        result["bytes"][f"{case}/{w}"] = dir_bytes(dest)
                    if i < args.warmup + args.runs - 1 or not args.out:
                        shutil.rmtree(dest, ignore_errors=True)
            result["samples"][case] = samples
        if args.jfr:
            result["jfr"] = {}
            for case, partition_by in CASES.items():
                sec, path = profile(spark, src, work, args.jfr, case, partition_by)
                result["jfr"][case] = {"seconds": sec, "file": path}
                print(f"  profiled {case}: {sec:.2f} s -> {path}", flush=True)
    finally:
        spark.stop()
        if not args.out:
            shutil.rmtree(work, ignore_errors=True)
    result["load_end"] = load()

    print(f"\nTPC-H lineitem SF{args.scale} ({rows:,} rows) from one Parquet file, local[2], median of "
          f"{args.runs} after {args.warmup} warm-up (load {result['load_start']} -> {result['load_end']}):")
    print(f"  {'case':<13} {'writer':<14} {'median s':>9} {'min':>7} {'max':>7} {'rows/s':>11} {'MB':>7} {'x fc':>6}")
    for case, samples in result["samples"].items() if args.runs > 0 else ():
        fc = statistics.median(samples["filecommit"]) if "filecommit" in samples else float("nan")
        for w in writers:
            med = statistics.median(samples[w])
            print(f"  {case:<13} {w:<14} {med:9.2f} {min(samples[w]):7.2f} {max(samples[w]):7.2f} "
                  f"{rows / med:11,.0f} {result['bytes'][f'{case}/{w}'] / 1e6:7.1f} {med / fc:6.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    if bad:
        print("\nFAIL: " + "; ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
