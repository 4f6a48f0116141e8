#!/usr/bin/env python
"""Benchmark: DELETE of 50% of TPC-H SF1 lineitem on a table with deletion vectors, 1 GiB server heap.

What it does, in one run:

1. Generates TPC-H lineitem at scale factor ``--scale`` (1: 6,001,215 rows) as Parquet with
   ``tpchgen-cli`` (cached under ``--data``; ``bench_rowlevel.generate``).
2. Makes ONE Delta table from it with Delta Lake on Spark (delta-spark 4.4.0 in ``.venv-delta``,
   ``CREATE TABLE ... PARTITIONED BY (l_shipmode) TBLPROPERTIES ('delta.enableDeletionVectors' =
   'true') AS SELECT``) and copies it once per measured build of the server plugin.
3. Per build, in a fresh process with its own embedded Spark Connect server (``local[2]``,
   ``spark.driver.memory=--heap``, default ``1g``; in local mode the executors share that JVM, so
   it is the whole server's heap), runs
   step 1: ``filecommit.delete(spark, path, "l_orderkey % 2 = 0")`` (50.0% of the rows), then
   step 2: ``filecommit.delete(spark, path, "l_orderkey % 3 = 0")``, which reads every file through
   the deletion vectors step 1 wrote.
   The heap flag is checked on the running JVM (``-Xmx`` in its input arguments and
   ``Runtime.maxMemory()``, read through py4j); the heap is measured two ways while a step runs:
   ``jstat -gc <pid> 100`` (used = S0U + S1U + EU + OU every 100 ms: live data plus garbage not yet
   collected) and the JVM's GC log (``-Xlog:gc``: heap after each collection, i.e. what survived);
   before each step a full collection (``System.gc()``) gives what the idle server holds.
4. Checks, independent of filecommit: Spark + Delta counts the rows of each table version
   (``VERSION AS OF``) and delta-rs (its DataFusion ``QueryBuilder``, which applies deletion
   vectors) counts the final version; the rows gone in each step must equal the rows the step's
   condition matches in the base table, and the reported ``num_deleted_rows`` too. Exit 1 otherwise.

``--old-jar JAR`` also measures another build of the plugin (e.g. the one before deletion vectors
were built on the executors) on its own copy, in the same way; a build that fails (e.g. the JVM runs
out of heap) is reported as failed with its error, and the run goes on.

Usage: ``.venv/bin/python bench/bench_dv_delete.py [--scale 1] [--heap 1g] [--old-jar JAR]``
(``make delta-reader`` first; ``make bench`` runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_rowlevel import generate, machine  # noqa: E402

STEPS = ["l_orderkey % 2 = 0", "l_orderkey % 3 = 0"]
MARK = "@@bench_dv@@ "


# ---------------------------------------------------------------------------------------------
# Delta side (.venv-delta): makes the table, counts rows; one JSON request per stdin line.
# ---------------------------------------------------------------------------------------------

def delta_worker():
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import delta_spark_reader
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("bench-dv-delta")
             .config("spark.jars", ",".join(delta_spark_reader.delta_jars()))
             .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
             .config("spark.driver.memory", "4g").config("spark.ui.enabled", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print(MARK + json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "stop":
            break
        try:
            t0 = time.perf_counter()
            if req["op"] == "create":
                spark.sql(f"CREATE TABLE delta.`{req['path']}` USING delta PARTITIONED BY (l_shipmode) "
                          "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true') "
                          f"AS SELECT * FROM parquet.`{req['source']}`")
            rows = [r.asDict() for r in spark.sql(req["sql"]).collect()] if req.get("sql") else []
            print(MARK + json.dumps({"ok": True, "rows": rows, "seconds": time.perf_counter() - t0}), flush=True)
        except Exception as e:  # noqa: BLE001 - reported to the driver, which fails the run
            print(MARK + json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"[:2000]}), flush=True)
    spark.stop()


class Worker:
    """A subprocess that answers MARK-prefixed JSON lines (the Delta side, or one measured build)."""

    def __init__(self, argv, log_path, env=None):
        self._log = open(log_path, "w")  # closed in close()
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                      text=True, bufsize=1, env=env)
        self.hello = self.next()

    def next(self):
        for line in self._proc.stdout:
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
        return {"ok": False, "error": f"the process exited (rc {self._proc.wait()}); see {self._log.name}"}

    def ask(self, **req):
        self._proc.stdin.write(json.dumps(req) + "\n")
        self._proc.stdin.flush()
        return self.next()

    def close(self):
        try:
            self._proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
            self._proc.stdin.flush()
            self._proc.wait(timeout=120)
        except Exception:  # noqa: BLE001 - best effort at exit
            self._proc.kill()
        self._log.close()


# ---------------------------------------------------------------------------------------------
# One measured build (.venv with filecommit): its own embedded server, heap watched from outside.
# ---------------------------------------------------------------------------------------------

class HeapWatch:
    """``jstat -gc <pid> 100`` in the background: (seconds since start, heap used in bytes) samples."""

    def __init__(self, pid):
        self.samples = []
        self._t0 = time.monotonic()
        self._proc = subprocess.Popen(["jstat", "-gc", str(pid), "100"], stdout=subprocess.PIPE, text=True)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        header = None
        for line in self._proc.stdout:
            cols = line.split()
            if cols and cols[0] == "S0C":
                header = cols
                continue
            if header and len(cols) == len(header):
                v = dict(zip(header, cols, strict=True))
                used_kb = sum(float(v[k]) for k in ("S0U", "S1U", "EU", "OU"))
                self.samples.append((time.monotonic() - self._t0, used_kb * 1024))

    def now(self):
        return time.monotonic() - self._t0

    def peak(self, start, end):
        inside = [u for t, u in self.samples if start <= t <= end]
        return max(inside) if inside else None

    def stop(self):
        self._proc.terminate()


def gc_after(gc_log, start_ms, end_ms):
    """Largest heap after a collection (MB) between two JVM uptimes, from ``-Xlog:gc`` lines."""
    best = None
    with open(gc_log) as fh:
        for line in fh:
            m = re.match(r"\[(\d+\.\d+)s\].*?(\d+)M->(\d+)M\((\d+)M\)", line)
            if m and start_ms / 1000 <= float(m.group(1)) <= end_ms / 1000 + 0.05:
                best = max(best or 0, int(m.group(3)))
    return best


def run_side():
    """Child process: one build's embedded server; answers {"op": "delete", "path", "condition"}."""
    from pyspark.sql import SparkSession as ClassicSparkSession

    import filecommit

    heap, gc_log = os.environ["BENCH_HEAP"], os.environ["BENCH_GC_LOG"]
    spark = filecommit.local_session(conf={"spark.driver.memory": heap, "spark.sql.shuffle.partitions": "4",
                                           "spark.driver.extraJavaOptions": f"-Xlog:gc:file={gc_log}"})
    jvm = ClassicSparkSession._instantiatedSession._jvm
    pid = jvm.java.lang.ProcessHandle.current().pid()
    mx = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    xmx = [a for a in mx.getInputArguments() if a.startswith("-Xmx")]
    watch = HeapWatch(pid)
    print(MARK + json.dumps({"ready": True, "pid": pid, "xmx": xmx, "max_memory": jvm.java.lang.Runtime.getRuntime()
                             .maxMemory(), "jar": filecommit.server.find_plugin_jar()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "stop":
            break
        jvm.java.lang.System.gc()  # what the server holds before the step: heap after a full collection
        time.sleep(0.5)
        idle = jvm.java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed()
        t0, up0 = watch.now(), mx.getUptime()
        w0 = time.perf_counter()
        try:
            r = filecommit.delete(spark, req["path"], req["condition"])
            answer = {"ok": True, "version": r.version, "deleted": r.metrics.num_deleted_rows,
                      "removed": len(r.remove_files), "added": len(r.add_files), "cdc": len(r.cdc_files)}
        except Exception as e:  # noqa: BLE001 - reported, the parent decides
            text = " ".join(str(e).split())
            oom = re.search(r"java\.lang\.OutOfMemoryError[^\"]{0,80}", text)
            answer = {"ok": False, "error": f"{type(e).__name__}: {oom.group(0) if oom else text[:300]}"}
        seconds = time.perf_counter() - w0
        time.sleep(0.3)  # one more jstat sample after the call
        try:
            up1 = mx.getUptime()
        except Exception:  # noqa: BLE001 - the JVM may be gone (out of memory)
            up1 = None
        answer.update(seconds=seconds, idle=idle, peak_used=watch.peak(t0, watch.now()),
                      peak_after_gc_mb=gc_after(gc_log, up0, up1) if up1 else None)
        print(MARK + json.dumps(answer), flush=True)
    watch.stop()


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------

def fail(message):
    print(f"\nFAIL: {message}", file=sys.stderr)
    sys.exit(1)


def _mib(b):
    return "n/a" if b is None else f"{b / 2**20:,.0f} MiB"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1, help="TPC-H scale factor (default 1)")
    ap.add_argument("--heap", default="1g", help="spark.driver.memory of the embedded server (default 1g)")
    ap.add_argument("--data", default=os.path.join(ROOT, "bench", ".data", "tpch"), help="tpchgen-cli output cache")
    ap.add_argument("--out", help="keep the tables here (default: a temp dir, removed)")
    ap.add_argument("--old-jar", help="also measure this build of the plugin jar (e.g. before this change)")
    ap.add_argument("--delta-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--side", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.delta_worker:
        delta_worker()
        return 0
    if args.side:
        run_side()
        return 0

    print(f"machine: {machine()}", flush=True)
    source = generate(args.data, args.scale)
    out = args.out or tempfile.mkdtemp(prefix="bench_dv_delete_")
    os.makedirs(out, exist_ok=True)
    python = os.path.join(ROOT, ".venv-delta", "bin", "python")
    if not os.path.exists(python):
        fail(f"{python} missing: run `make delta-reader`")
    delta = Worker([python, os.path.abspath(__file__), "--delta-worker"], os.path.join(out, "delta-worker.log"))
    from filecommit.server import find_plugin_jar

    builds = {"this build": find_plugin_jar()}
    if args.old_jar:
        builds["old build"] = os.path.abspath(args.old_jar)
    failed = []
    try:
        base = os.path.join(out, "base")
        shutil.rmtree(base, ignore_errors=True)
        made = delta.ask(op="create", path=base, source=source, sql=(
            f"SELECT count(*) AS n, count_if({STEPS[0]}) AS m1, count_if(NOT ({STEPS[0]}) AND {STEPS[1]}) AS m2 "
            f"FROM delta.`{base}`"))
        if not made["ok"]:
            fail(f"Delta could not make the table: {made['error']}")
        total, expected = made["rows"][0]["n"], [made["rows"][0]["m1"], made["rows"][0]["m2"]]
        files = len([f for _, _, fs in os.walk(base) for f in fs if f.endswith(".parquet")])
        print(f"base table by Delta (DVs on, partitioned by l_shipmode): {total:,} rows, {files} files, "
              f"{made['seconds']:.1f} s; step 1 matches {expected[0]:,} rows ({expected[0] / total:.1%}), "
              f"step 2 {expected[1]:,} more", flush=True)

        for name, jar in builds.items():
            path = os.path.join(out, re.sub(r"\W+", "_", name))
            shutil.rmtree(path, ignore_errors=True)
            shutil.copytree(base, path)
            gc_log = os.path.join(out, f"gc_{os.path.basename(path)}.log")
            env = dict(os.environ, FILECOMMIT_JAR=jar, BENCH_HEAP=args.heap, BENCH_GC_LOG=gc_log)
            side = Worker([sys.executable, os.path.abspath(__file__), "--side"],
                          os.path.join(out, f"server_{os.path.basename(path)}.log"), env=env)
            hello = side.hello
            if not hello.get("ready"):
                fail(f"{name}: the server did not start: {hello}")
            print(f"\n== {name}: {hello['jar']}\nserver JVM pid {hello['pid']}, {' '.join(hello['xmx'])}, "
                  f"Runtime.maxMemory {_mib(hello['max_memory'])}", flush=True)
            if f"-Xmx{args.heap}" not in hello["xmx"]:
                fail(f"{name}: the server JVM does not run with -Xmx{args.heap}: {hello['xmx']}")
            for i, condition in enumerate(STEPS):
                a = side.ask(op="delete", path=path, condition=condition)
                status = (f"{a['deleted']:,} rows deleted, {a['removed']} files removed, {a['added']} added back "
                          f"with a DV" if a["ok"] else f"FAILED: {a['error']}")
                print(f"  step {i + 1} DELETE WHERE {condition}: {a['seconds']:7.2f} s; {status}; "
                      f"heap before (after a full GC) {_mib(a['idle'])}, peak used (jstat) {_mib(a['peak_used'])}, "
                      f"peak after a GC {a['peak_after_gc_mb'] or 'n/a'} MiB", flush=True)
                if not a["ok"]:
                    failed.append(name)
                    break
                if a["deleted"] != expected[i]:
                    fail(f"{name} step {i + 1} reported {a['deleted']:,} deleted rows; {expected[i]:,} match")
            side.close()
            if name in failed:
                continue
            versions = delta.ask(op="count", sql=" UNION ALL ".join(
                f"SELECT {v} AS v, count(*) AS n FROM delta.`{path}` VERSION AS OF {v}"
                for v in (made_version(path) - 1, made_version(path))))
            counts = {r["v"]: r["n"] for r in versions["rows"]}
            v = made_version(path)
            if counts != {v - 1: total - expected[0], v: total - expected[0] - expected[1]}:
                fail(f"{name}: Spark + Delta counts {counts}, expected {total - expected[0]:,} after step 1 and "
                     f"{total - expected[0] - expected[1]:,} after step 2")
            rs = delta_rs_count(path)
            if rs != total - expected[0] - expected[1]:
                fail(f"{name}: delta-rs counts {rs:,} rows after step 2")
            print(f"  check: Spark + Delta counts {counts[v - 1]:,} rows after step 1 and {counts[v]:,} after step 2; "
                  f"delta-rs {rs:,}", flush=True)
        print(f"\nmachine at the end: load {os.getloadavg()[0]:.2f}")
    finally:
        delta.close()
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)
    if "this build" in failed:
        fail("this build did not complete")
    return 0


def made_version(path):
    """The latest version of the table at ``path`` from its log directory (file names only)."""
    return max(int(f.split(".")[0]) for f in os.listdir(os.path.join(path, "_delta_log")) if f.endswith(".json"))


def delta_rs_count(path):
    from deltalake import DeltaTable, QueryBuilder

    got = QueryBuilder().register("t", DeltaTable(path)).execute("SELECT count(*) AS n FROM t").read_all()
    import pyarrow as pa

    return pa.table(got).column("n")[0].as_py()


if __name__ == "__main__":
    sys.exit(main())
