#!/usr/bin/env python
"""Benchmark: UPDATE of 1% of TPC-H SF1 lineitem, filecommit vs Delta Lake on Spark.

What it does, in one run:

1. Generates TPC-H lineitem at scale factor ``--scale`` (1: 6,001,215 rows) as Parquet with
   ``tpchgen-cli`` (cached under ``--data``).
2. Makes ONE Delta table from it, partitioned by ``l_shipmode``, with Delta Lake on Spark
   (delta-spark 4.4.0 in ``.venv-delta``, ``CREATE TABLE ... PARTITIONED BY (l_shipmode) AS SELECT``,
   deletion vectors off) and copies it: copy A for filecommit, copy B for Delta (and, with
   ``--with-dv``, copy C for Delta and copy D for filecommit, both with deletion vectors turned on
   by Delta's ``ALTER TABLE ... SET TBLPROPERTIES``). All start from the same files.
3. Runs ``UPDATE ... SET l_discount = l_discount + 0.01 WHERE l_orderkey % 100 = 0`` (0.99% of the
   rows, spread over every file) alternately: ``filecommit.update`` on A through an embedded Spark
   Connect server, ``DeltaTable.update`` on B in a classic Spark session in a ``.venv-delta``
   subprocess. Both JVMs run ``local[2]`` with the same driver memory and shuffle partitions;
   only one works at a time. ``--warmup`` untimed updates per side first, then ``--runs`` timed.
4. Checks: every update reports the same updated-row count on both sides, equal to the rows
   matching the condition; at the end Spark + Delta reads A and B with the same row count and
   the same ``sum(l_discount)`` (both saw the same number of updates). Exit 1 otherwise.

Times are wall seconds of the update call as the caller sees it: for filecommit the Python call
(plan sent, server's two passes and commit, file actions streamed back), for Delta the
``DeltaTable.update`` call in its own process. Prints each sample, the medians and the ratio
filecommit / Delta (goal: <= 0.8), and with ``--with-dv`` filecommit+dv / delta+dv (goal: <= 1.0).

Usage: ``.venv/bin/python bench/bench_rowlevel.py [--runs 3] [--warmup 1] [--scale 1] [--with-dv]``
(``make delta-reader`` first; ``make bench`` runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONDITION = "l_orderkey % 100 = 0"
ASSIGNMENTS = {"l_discount": "l_discount + 0.01"}
DRIVER_MEMORY = "4g"
SHUFFLE_PARTITIONS = "4"
MARK = "@@bench@@ "
TPCHGEN = "tpchgen-cli==4.0.0"  # installed into the running venv when missing


# ---------------------------------------------------------------------------------------------
# Delta side: runs in .venv-delta (pyspark 4.2.0 + delta-spark 4.4.0), one JSON request per line.
# ---------------------------------------------------------------------------------------------

def _delta_session():
    """A classic local[2] Spark session with Delta (jars from .venv-delta/jars, never Ivy)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import delta_spark_reader
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("bench-rowlevel-delta")
        .config("spark.jars", ",".join(delta_spark_reader.delta_jars()))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.driver.memory", DRIVER_MEMORY)
        .config("spark.sql.shuffle.partitions", SHUFFLE_PARTITIONS)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )


def _delta_answer(spark, req):
    """One request of the Delta worker; returns a JSON-able dict (times in seconds)."""
    from delta.tables import DeltaTable

    op = req["op"]
    table = "delta.`" + req.get("path", "") + "`"
    if op == "create":
        t0 = time.perf_counter()
        spark.sql(f"CREATE TABLE {table} USING delta PARTITIONED BY (l_shipmode) "
                  f"TBLPROPERTIES ('delta.enableDeletionVectors' = 'false') "
                  f"AS SELECT * FROM parquet.`{req['source']}`")
        detail = spark.sql(f"DESCRIBE DETAIL {table}").collect()[0]
        return {"seconds": time.perf_counter() - t0, "numFiles": detail["numFiles"], "bytes": detail["sizeInBytes"]}
    if op == "enable_dv":
        spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
        return {}
    if op == "update":
        t0 = time.perf_counter()
        DeltaTable.forPath(spark, req["path"]).update(CONDITION, ASSIGNMENTS)
        seconds = time.perf_counter() - t0
        last = DeltaTable.forPath(spark, req["path"]).history(1).collect()[0]
        return {"seconds": seconds, "version": last["version"],
                "metrics": {k: int(v) for k, v in (last["operationMetrics"] or {}).items()}}
    if op == "check":
        out = {}
        for p in req["paths"]:
            row = spark.sql(f"SELECT count(*) AS n, CAST(sum(l_discount) AS STRING) AS s, "
                            f"count_if({CONDITION}) AS m FROM delta.`{p}`").collect()[0]
            out[p] = {"rows": row["n"], "sum_discount": row["s"], "matching": row["m"]}
        return out
    raise ValueError(f"unknown op {op!r}")


def delta_worker(spark=None, answer=None):
    """Worker loop: one JSON request per stdin line, one ``MARK``-prefixed JSON answer per line.
    ``spark`` (default: this benchmark's Delta session) answers with ``answer(spark, request)``
    (default: this benchmark's requests); other benchmarks pass their own."""
    spark = spark or _delta_session()
    answer = answer or _delta_answer
    spark.sparkContext.setLogLevel("ERROR")
    import pyspark

    print(MARK + json.dumps({"ready": True, "spark": pyspark.__version__}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if req.get("op") == "stop":
            break
        try:
            print(MARK + json.dumps({"ok": True, **answer(spark, req)}), flush=True)
        except Exception as e:  # noqa: BLE001 - reported to the driver, which fails the run
            print(MARK + json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"[:2000]}), flush=True)
    spark.stop()


class DeltaWorker:
    """The Delta side as a subprocess of ``.venv-delta/bin/python`` (Spark's logs go to a file);
    ``script`` is the benchmark whose ``--delta-worker`` answers (default: this one)."""

    def __init__(self, python, log_path, script=None):
        self._log = open(log_path, "w")  # noqa: SIM115 - closed in close()
        self._proc = subprocess.Popen([python, os.path.abspath(script or __file__), "--delta-worker"],
                                      stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1)
        self.hello = self._next()

    def _next(self):
        for line in self._proc.stdout:
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
        raise RuntimeError(f"the Delta worker exited (rc {self._proc.wait()}); see {self._log.name}")

    def ask(self, **req):
        """Send one request, wait for its answer; raises RuntimeError when it failed."""
        self._proc.stdin.write(json.dumps(req) + "\n")
        self._proc.stdin.flush()
        answer = self._next()
        if not answer.get("ok", True):
            raise RuntimeError(f"Delta worker: {answer['error']}")
        return answer

    def close(self):
        try:
            self._proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
            self._proc.stdin.flush()
            self._proc.wait(timeout=60)
        except Exception:  # noqa: BLE001 - best effort at exit
            self._proc.kill()
        self._log.close()


# ---------------------------------------------------------------------------------------------
# Driver: .venv with filecommit
# ---------------------------------------------------------------------------------------------

def generate(data_dir, scale):
    """The lineitem Parquet file of scale factor ``scale`` under ``data_dir`` (tpchgen-cli; cached)."""
    out = os.path.join(data_dir, f"sf{scale}")
    path = os.path.join(out, "lineitem.parquet")
    if os.path.exists(path):
        return path
    exe = shutil.which("tpchgen-cli") or os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    if not os.path.exists(exe):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", TPCHGEN], check=True)
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    subprocess.run([exe, "parquet", "-s", str(scale), "--tables=lineitem", f"--output-dir={out}"], check=True)
    print(f"tpchgen-cli: lineitem SF{scale} in {time.perf_counter() - t0:.1f} s -> {path}", flush=True)
    return path


def machine():
    """One line about the machine: cores, load average, versions."""
    import pyspark

    load = os.getloadavg()
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    return (f"{os.cpu_count()} cores, load {load[0]:.2f}, Python {platform.python_version()}, pyspark {pyspark.__version__}, "
            f"{java[0] if java else 'java ?'}")


def fail(message):
    print(f"\nFAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="timed updates per side (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed updates per side first (default 1)")
    ap.add_argument("--scale", type=int, default=1, help="TPC-H scale factor (default 1)")
    ap.add_argument("--data", default=os.path.join(ROOT, "bench", ".data", "tpch"), help="tpchgen-cli output cache")
    ap.add_argument("--out", help="keep the tables here (default: a temp dir, removed)")
    ap.add_argument("--with-dv", action="store_true",
                    help="also time Delta (copy C) and filecommit (copy D) with deletion vectors on")
    ap.add_argument("--delta-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.delta_worker:
        delta_worker()
        return 0

    import filecommit

    print(f"machine: {machine()}", flush=True)
    source = generate(args.data, args.scale)
    out = args.out or tempfile.mkdtemp(prefix="bench_rowlevel_")
    os.makedirs(out, exist_ok=True)
    python = os.path.join(ROOT, ".venv-delta", "bin", "python")
    if not os.path.exists(python):
        fail(f"{python} missing: run `make delta-reader`")
    worker = DeltaWorker(python, os.path.join(out, "delta-worker.log"))
    try:
        print(f"Delta side: Spark {worker.hello['spark']} + delta-spark 4.4.0 (.venv-delta)", flush=True)
        base = os.path.join(out, "base")
        shutil.rmtree(base, ignore_errors=True)
        made = worker.ask(op="create", path=base, source=source)
        print(f"base table by Delta (partitioned by l_shipmode): {made['numFiles']} files, "
              f"{made['bytes'] / 1e6:.0f} MB, {made['seconds']:.1f} s", flush=True)
        sides = {"filecommit": os.path.join(out, "a_filecommit"), "delta": os.path.join(out, "b_delta")}
        if args.with_dv:
            sides["delta+dv"] = os.path.join(out, "c_delta_dv")
            sides["filecommit+dv"] = os.path.join(out, "d_filecommit_dv")
        for p in sides.values():
            shutil.rmtree(p, ignore_errors=True)
            shutil.copytree(base, p)
        if args.with_dv:
            worker.ask(op="enable_dv", path=sides["delta+dv"])
            worker.ask(op="enable_dv", path=sides["filecommit+dv"])

        t0 = time.perf_counter()
        spark = filecommit.local_session(conf={"spark.driver.memory": DRIVER_MEMORY,
                                               "spark.sql.shuffle.partitions": SHUFFLE_PARTITIONS})
        print(f"embedded Spark Connect server ready ({time.perf_counter() - t0:.1f} s)", flush=True)

        expected = worker.ask(op="check", paths=[base])[base]["matching"]
        samples = {name: [] for name in sides}
        counts = {name: [] for name in sides}
        for i in range(args.warmup + args.runs):
            label = "warm-up" if i < args.warmup else f"run {i - args.warmup + 1}"
            for name, path in sides.items():
                if name.startswith("filecommit"):
                    t = time.perf_counter()
                    r = filecommit.update(spark, path, set=ASSIGNMENTS, condition=CONDITION)
                    seconds = time.perf_counter() - t
                    n, detail = r.metrics.num_updated_rows, (f"{len(r.remove_files)} files removed, "
                                                             f"{r.metrics.num_copied_rows:,} rows copied, "
                                                             f"{sum(1 for a in r.add_files if a.deletion_vector)} "
                                                             "DVs written, "
                                                             f"server {r.metrics.duration_ms / 1000:.2f} s")
                else:
                    a = worker.ask(op="update", path=path)
                    seconds, m = a["seconds"], a["metrics"]
                    n, detail = m.get("numUpdatedRows", -1), (f"{m.get('numRemovedFiles', 0)} files removed, "
                                                              f"{m.get('numCopiedRows', 0):,} rows copied"
                                                              + (f", {m['numDeletionVectorsAdded']} DVs added"
                                                                 if m.get("numDeletionVectorsAdded") else ""))
                counts[name].append(n)
                if i >= args.warmup:
                    samples[name].append(seconds)
                print(f"  {label:8s} {name:10s} {seconds:7.2f} s  {n:,} rows updated; {detail}", flush=True)

        for name, ns in counts.items():
            if any(n != expected for n in ns):
                fail(f"{name} reported {ns} updated rows; {expected:,} rows match {CONDITION}")
        check = worker.ask(op="check", paths=list(sides.values()))
        sums = {name: check[p]["sum_discount"] for name, p in sides.items()}
        rows = {name: check[p]["rows"] for name, p in sides.items()}
        if len(set(sums.values())) != 1 or len(set(rows.values())) != 1:
            fail(f"the tables differ after the updates: rows {rows}, sum(l_discount) {sums}")
        print(f"\ncheck (Spark + Delta reads every copy): {next(iter(rows.values())):,} rows, "
              f"sum(l_discount) {next(iter(sums.values()))} in each; {expected:,} rows updated per run on each side")

        med = {name: statistics.median(s) for name, s in samples.items()}
        print(f"\nUPDATE of {expected:,} of {next(iter(rows.values())):,} lineitem rows (SF{args.scale}), "
              f"median of {args.runs}:")
        for name, m in med.items():
            print(f"  {name:10s} {m:7.2f} s   samples {', '.join(f'{s:.2f}' for s in samples[name])}")
        ratio = med["filecommit"] / med["delta"]
        print(f"  filecommit / delta = {ratio:.2f}   (goal <= 0.8: {'met' if ratio <= 0.8 else 'NOT met'})")
        if args.with_dv:
            print(f"  filecommit / delta+dv = {med['filecommit'] / med['delta+dv']:.2f}   "
                  "(Delta with deletion vectors writes no rewritten files; filecommit on copy A writes no DVs)")
            dv = med["filecommit+dv"] / med["delta+dv"]
            print(f"  filecommit+dv / delta+dv = {dv:.2f}   (goal <= 1.0: {'met' if dv <= 1.0 else 'NOT met'})")
        print(f"machine at the end: load {os.getloadavg()[0]:.2f}")
    finally:
        worker.close()
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
