"""Bulk write of TPC-H lineitem, side by side: filecommit, plain Spark Parquet, delta-rs.

Prints measured numbers, asserts nothing about speed. One embedded Spark Connect server
(``filecommit.local_session()``, master ``--master``, default local[2]) writes TPC-H lineitem of
scale factor ``--scale`` (``tpchgen-cli`` Parquet, one file, generated and cached under ``--data``
as ``bench_rowlevel.py`` does; SF1: 6,001,215 rows, 16 columns, 232 MB; SF10: 59,986,052 rows,
2.5 GB, generated in 2-3 minutes) three ways, each into a fresh directory per run, in two cases:

unpartitioned   ``filecommit.write(spark.read.parquet(src), table)``; plain Spark
                ``spark.read.parquet(src).write.parquet(dir)`` on the same server (Spark's default
                commit protocol, no table log); delta-rs ``write_deltalake(table, reader)`` in this
                process, streaming the same file as Arrow batches of 131,072 rows (no Spark).
partitioned     the same, partitioned by ``l_shipmode`` (7 values): ``partition_by=["l_shipmode"]``,
                ``.partitionBy("l_shipmode")``, ``partition_by=["l_shipmode"]``.

A fourth writer, ``filecommit-native`` (``--writers filecommit,filecommit-native,spark-parquet,delta-rs``),
is ``filecommit.write`` with ``spark.filecommit.writer.native=auto`` set for the session around each
write (docs/operators.md, "Native Parquet writer"), so one server measures both of filecommit's
writers; a table of it whose files were written by parquet-mr (the native writer fell back) exits 1.
Each run's line names the library that wrote the table's first file (Parquet ``created_by``) and
the load average after it.

``--target s3`` writes every table to object storage instead: a MinIO (``make minio``) started by
this script on 127.0.0.1 with a bucket ``bench`` (``bench/bulk_write_targets.py``), the server's
S3A (``make s3a-jars``) pointed at it and the tables at ``s3a://bench/<case>-<writer>-<run>``;
delta-rs writes ``s3://bench/...`` on the same MinIO in the same run. Rows, bytes and ``created_by``
are then read from MinIO (pyarrow's S3 client, delta-rs). ``--cases unpartitioned`` (or
``partitioned``) runs one case only.

``--master standalone`` runs the server on a Spark standalone cluster instead: a master, ``--workers``
(default 2) workers of one core and ``--executor-memory`` (default 1g) each, and a Connect server
(``spark-submit``, the plugin and the native writer's jars in ``--jars``, so on the executors too),
all on 127.0.0.1, started by the test suite's ``tests/cluster.py`` (``StandaloneCluster``, as
``tests/test_cluster.py`` uses it) and stopped at the end; ``--conf`` goes to that server, its
``spark.driver.memory`` (default 1g) becomes ``--driver-memory``. Tasks then run in executor JVMs
of their own: each reads its splits of the source file and sends its task result (the written
files and their statistics) to the driver over the network, as on a real cluster; the client,
delta-rs and the cluster share this machine's cores.

Memory: Spark's writers stream at every scale (tasks of at most 128 MB of input each): at SF10 the
default 1 GiB driver heap of local[2] (the executors are its threads) sufficed, the server JVM's
RSS peaking at 2.4 GB; ``--conf spark.driver.memory=4g`` changes the heap. delta-rs is given a
``RecordBatchReader``, not a table, yet deltalake 1.6.6 holds much of the input while writing:
this process peaked at 1.3-1.6 GB RSS at SF1 and at 5.3 GB (unpartitioned) and 7.1 GB
(partitioned) at SF10, so SF10 wants about 10 GB of free memory for the bench. SF10 needs about
2.3 GB of disk per table written (each run's tables are removed after the run unless ``--out``;
``TMPDIR`` decides where the temporary directory is).

Usage: ``python bench/bench_bulk_write.py [--scale 1] [--runs 3] [--warmup 1] [--jfr DIR]
[--jfr-settings default] [--writers filecommit,spark-parquet,delta-rs] [--master local[2]|standalone]
[--workers 2] [--executor-memory 1g] [--target local|s3] [--cases unpartitioned,partitioned]
[--conf KEY=VALUE] [--option KEY=VALUE] [--out DIR] [--json FILE]``
(``--jfr`` only with a local master). ``--conf`` is server conf (e.g.
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
WRITERS = ("filecommit", "filecommit-native", "spark-parquet", "delta-rs")
DEFAULT_WRITERS = ("filecommit", "spark-parquet", "delta-rs")
NATIVE = "spark.filecommit.writer.native"


def load():
    """The 1-, 5- and 15-minute load averages as one string."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def write_once(spark, writer, src, target, name, partition_by, options=None):
    """One write of ``src`` to the table ``name`` of ``target`` (``bulk_write_targets``) by ``writer``
    (``options``: Parquet writer options of the two Spark writers); returns client wall seconds.
    ``filecommit-native`` is ``filecommit.write`` with the session setting
    ``spark.filecommit.writer.native=auto`` (unset again after the write, so ``filecommit`` writes
    with the server's value)."""
    import pyarrow.dataset as ds
    from deltalake import write_deltalake

    import filecommit

    if writer == "filecommit-native":
        spark.conf.set(NATIVE, "auto")
    dest = target.path(name)
    try:
        t0 = time.perf_counter()
        if writer in ("filecommit", "filecommit-native"):
            filecommit.write(spark.read.parquet(src), dest, mode="overwrite", partition_by=partition_by or None,
                             options=options or None)
        elif writer == "spark-parquet":
            w = spark.read.parquet(src).write.mode("overwrite").options(**(options or {}))
            if partition_by:
                w = w.partitionBy(*partition_by)
            w.parquet(dest)
        else:
            reader = ds.dataset(src).scanner(batch_size=131072).to_reader()
            write_deltalake(target.rs_path(name), reader, mode="overwrite", partition_by=partition_by or None,
                            storage_options=target.rs_options)
        return time.perf_counter() - t0
    finally:
        if writer == "filecommit-native":
            spark.conf.unset(NATIVE)


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


def profile(spark, src, target, jfr_dir, case, partition_by):
    """One filecommit write of ``case``, cut out of the server's running Flight Recording into
    ``jfr_dir/case.jfr`` (``jcmd <pid> JFR.dump begin=... end=...``) and its begin and end time into
    ``jfr_dir/case.jfr.window``; returns (seconds, path)."""
    from datetime import datetime, timezone

    def now():
        return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    pid = server_pid()
    out = os.path.join(os.path.abspath(jfr_dir), f"{case}.jfr")
    begin = now()
    seconds = write_once(spark, "filecommit", src, target, f"jfr-{case}", partition_by)
    end = now()
    subprocess.run(["jcmd", str(pid), "JFR.dump", "name=bulk", f"filename={out}", f"begin={begin}", f"end={end}"],
                   check=True, capture_output=True)
    with open(out + ".window", "w") as f:
        f.write(f"{begin} {end}\n")
    target.remove(f"jfr-{case}")
    return seconds, out


def start_cluster(work, conf, workers, executor_memory):
    """A started ``tests/cluster.py`` ``StandaloneCluster`` (master, ``workers`` workers of one core
    and ``executor_memory`` each, Connect server with the plugin and the native writer's jars, tables
    allowed under ``work``), and the temporary directory of its logs (remove it after ``__exit__``);
    ``conf`` is the server's extra conf, its ``spark.driver.memory`` (default 1g) the server's
    ``--driver-memory``."""
    sys.path.insert(0, str(REPO / "tests"))
    from cluster import StandaloneCluster

    import filecommit

    conf = dict(conf)
    driver_memory = conf.pop("spark.driver.memory", "1g")
    logs = tempfile.mkdtemp(prefix="bench_bulk_write_cluster_")
    cluster = StandaloneCluster(logs, filecommit.server.find_plugin_jar(), f"file:{os.path.realpath(work)}", workers=workers,
                                extra_jars=filecommit.server.find_native_jars(), worker_memory=executor_memory,
                                executor_memory=executor_memory, driver_memory=driver_memory, conf=conf,
                                name="bench_bulk_write")
    try:
        return cluster.__enter__(), logs
    except BaseException:
        shutil.rmtree(logs, ignore_errors=True)
        raise


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=1, help="TPC-H scale factor (1: 6,001,215 rows)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--data", default=str(REPO / "bench" / ".data" / "tpch"), help="tpchgen-cli output cache")
    ap.add_argument("--jfr", help="directory for one profiled filecommit write per case")
    ap.add_argument("--jfr-settings", default="default",
                    help="JFR settings: default (Java samples every 20 ms) or profile (every 10 ms, more events)")
    ap.add_argument("--writers", default=",".join(DEFAULT_WRITERS),
                    help="comma-separated subset of " + ",".join(WRITERS) + " (default: all but filecommit-native)")
    ap.add_argument("--master", default="local[2]",
                    help="local[N] (embedded server, default local[2]) or standalone (a Spark standalone "
                         "master, --workers workers of one core each and a Connect server on 127.0.0.1)")
    ap.add_argument("--workers", type=int, default=2, help="workers of --master standalone (default 2)")
    ap.add_argument("--executor-memory", default="1g",
                    help="spark.executor.memory (and each worker's memory) of --master standalone (default 1g)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="extra server conf, e.g. spark.sql.maxConcurrentOutputFileWriters=8 (repeatable)")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="Parquet writer option of filecommit and Spark, e.g. parquet.enable.dictionary=false")
    ap.add_argument("--target", choices=("local", "s3"), default="local",
                    help="local (tables on the local disk, default) or s3 (tables in a MinIO bucket started "
                         "here, s3a:// for the server, s3:// for delta-rs; make minio s3a-jars)")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ",".join(CASES))
    ap.add_argument("--out", help="keep the tables here (default: a temporary directory, removed)")
    ap.add_argument("--json", help="write all samples to this file")
    args = ap.parse_args(argv)
    writers = [w for w in WRITERS if w in args.writers.split(",")]
    standalone = args.master == "standalone"
    if standalone and args.jfr:
        ap.error("--jfr records the embedded server's JVM: not with --master standalone")
    if standalone and args.target == "s3":
        ap.error("--target s3 runs an embedded server: not with --master standalone")
    cases = {c: p for c, p in CASES.items() if c in args.cases.split(",")}

    import pyarrow.dataset as ds
    from bench_rowlevel import generate, machine
    from bulk_write_targets import LocalTarget, S3Target

    import filecommit

    src = generate(args.data, args.scale)
    rows = ds.dataset(src).count_rows()
    work = args.out or tempfile.mkdtemp(prefix="bench_bulk_write_")
    os.makedirs(work, exist_ok=True)
    target = S3Target() if args.target == "s3" else LocalTarget(work)
    conf = {**target.server_conf(), **dict(kv.split("=", 1) for kv in args.conf)}
    options = dict(kv.split("=", 1) for kv in args.option)
    if args.jfr:
        os.makedirs(args.jfr, exist_ok=True)
        conf["spark.driver.extraJavaOptions"] = ("-XX:FlightRecorderOptions=stackdepth=256 -XX:StartFlightRecording="
                                                 f"name=bulk,settings={args.jfr_settings},maxsize=2g")
    print(machine(), flush=True)
    if args.conf or options:
        print(f"server conf: {args.conf}; writer options: {options}", flush=True)
    if args.target == "s3":
        print(f"target: MinIO {target.minio.endpoint}, bucket {target.BUCKET}", flush=True)
    print(f"source: {src}, {rows:,} rows, {os.path.getsize(src) / 1e6:.1f} MB", flush=True)
    t0 = time.perf_counter()
    cluster = None
    if standalone:
        cluster, cluster_logs = start_cluster(work, conf, args.workers, args.executor_memory)
        spark = cluster.session()
        master = f"standalone, {args.workers} workers x 1 core, executors {args.executor_memory}"
    else:
        spark = filecommit.local_session(master=args.master, conf=conf)
        master = args.master
    master += ", tables in MinIO" if args.target == "s3" else ""
    print(f"server start ({master}) {time.perf_counter() - t0:.1f} s", flush=True)
    result = {"scale": args.scale, "rows": rows, "master": master, "load_start": load(), "samples": {}, "bytes": {}}
    bad = []
    try:
        for case, partition_by in cases.items():
            samples = {w: [] for w in writers}
            for i in range(args.warmup + args.runs):
                for w in writers:
                    name = f"{case}-{w}-{i}"
                    sec = write_once(spark, w, src, target, name, partition_by, options)
                    got = target.count_rows(w, name)
                    if got != rows:
                        bad.append(f"{case} {w} run {i}: {got:,} rows, expected {rows:,}")
                    made_by = target.created_by(name)
                    if w == "filecommit-native" and made_by.startswith("parquet-mr"):
                        bad.append(f"{case} {w} run {i}: written by Spark's writer ({made_by}), not the native one")
                    label = "warm-up" if i < args.warmup else f"run {i - args.warmup + 1}"
                    print(f"  {case:<13} {w:<17} {label:<8} {sec:7.2f} s  rows {got:,}  "
                          f"{target.bytes(name) / 1e6:7.1f} MB  load {load()}  ({made_by.split(' (')[0]})", flush=True)
                    if i >= args.warmup:
                        samples[w].append(sec)
                        result["bytes"][f"{case}/{w}"] = target.bytes(name)
                    if i < args.warmup + args.runs - 1 or not args.out:
                        target.remove(name)
            result["samples"][case] = samples
        if args.jfr:
            result["jfr"] = {}
            for case, partition_by in cases.items():
                sec, path = profile(spark, src, target, args.jfr, case, partition_by)
                result["jfr"][case] = {"seconds": sec, "file": path}
                print(f"  profiled {case}: {sec:.2f} s -> {path}", flush=True)
    except BaseException:
        if cluster is not None:
            print("\nstandalone cluster logs:\n" + cluster.logs(), file=sys.stderr)
        raise
    finally:
        spark.stop()
        if cluster is not None:
            cluster.__exit__(None, None, None)
            shutil.rmtree(cluster_logs, ignore_errors=True)
        target.close()
        if not args.out:
            shutil.rmtree(work, ignore_errors=True)
    result["load_end"] = load()

    print(f"\nTPC-H lineitem SF{args.scale} ({rows:,} rows) from one Parquet file, {master}, median of "
          f"{args.runs} after {args.warmup} warm-up (load {result['load_start']} -> {result['load_end']}):")
    print(f"  {'case':<13} {'writer':<17} {'median s':>9} {'min':>7} {'max':>7} {'rows/s':>11} {'MB':>7} "
          f"{'x fc':>6} {'x rs':>6}")
    for case, samples in result["samples"].items() if args.runs > 0 else ():
        fc = statistics.median(samples["filecommit"]) if "filecommit" in samples else float("nan")
        rs = statistics.median(samples["delta-rs"]) if "delta-rs" in samples else float("nan")
        for w in writers:
            med = statistics.median(samples[w])
            print(f"  {case:<13} {w:<17} {med:9.2f} {min(samples[w]):7.2f} {max(samples[w]):7.2f} "
                  f"{rows / med:11,.0f} {result['bytes'][f'{case}/{w}'] / 1e6:7.1f} {med / fc:6.2f} {med / rs:6.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    if bad:
        print("\nFAIL: " + "; ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
