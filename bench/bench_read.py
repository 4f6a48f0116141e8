#!/usr/bin/env python
"""Benchmark: selective scans of TPC-H SF1 lineitem, filecommit's reader vs Delta Lake on Spark.

What it does, in one run:

1. Generates TPC-H lineitem (``--scale`` 1: 6,001,215 rows) as Parquet with ``tpchgen-cli``
   (``bench_rowlevel.generate``, cached under ``--data``).
2. Makes ONE Delta table from it with Delta Lake on Spark (delta-spark 4.4.0 in ``.venv-delta``):
   ``CREATE TABLE ... PARTITIONED BY (l_shipmode) AS SELECT`` with input splits of
   ``--split-mb`` (16) MB, so each of the 7 partitions holds several files, each covering a
   narrow ``l_orderkey`` range (the source is ordered by it). Delta writes the per-file statistics.
3. Runs two queries on that same table, alternately: ``spark.read.format("filecommit")`` through an
   embedded Spark Connect server with the plugin, and ``spark.read.format("delta")`` in a classic
   Spark session in a ``.venv-delta`` subprocess (both ``local[2]``, same driver memory, adaptive
   execution off so the scan is the plan's leaf):

   * ``shipmode``: ``count(*)``, ``sum(l_extendedprice)`` where ``l_shipmode = 'AIR'``
     (partition pruning);
   * ``orderkey``: the same where ``l_orderkey BETWEEN 1000000 AND 1100000`` (data skipping by
     min/max statistics).

   ``--warmup`` untimed runs per query and side, then ``--runs`` timed.
4. Reports the files Spark's Parquet scan read (its ``number of files read`` metric, taken from
   each JVM's SQL status store after the query) against the files in the table, and checks that
   both sides return the same count and sum. Exit 1 when they differ.

Times are wall seconds of ``collect()`` as the caller sees it (for filecommit including the
Connect round trip and the snapshot read from the log). Goal: filecommit / Delta <= 1.0.

Usage: ``.venv/bin/python bench/bench_read.py [--runs 5] [--warmup 2] [--scale 1]``
(``make delta-reader`` first; ``make bench`` runs it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_rowlevel

ROOT = bench_rowlevel.ROOT
MARK = bench_rowlevel.MARK
QUERIES = {
    "shipmode": "l_shipmode = 'AIR'",
    "orderkey": "l_orderkey BETWEEN 1000000 AND 1100000",
}
SESSION_CONF = {"spark.driver.memory": bench_rowlevel.DRIVER_MEMORY, "spark.sql.adaptive.enabled": "false",
                "spark.sql.shuffle.partitions": bench_rowlevel.SHUFFLE_PARTITIONS}


def files_read(jsession) -> int:
    """Spark's ``number of files read`` of the newest SQL execution with a file scan (summed over
    its scans), from the session's shared SQL status store; -1 when none is recorded."""
    store = jsession.sharedState().statusStore()
    executions = store.executionsList()
    ids = sorted((executions.apply(i).executionId() for i in range(executions.size())), reverse=True)
    for eid in ids:
        graph = store.planGraph(eid)
        values = store.executionMetrics(eid)
        nodes = graph.allNodes()
        total, found = 0, False
        for i in range(nodes.size()):
            metrics = nodes.apply(i).metrics()
            for j in range(metrics.size()):
                m = metrics.apply(j)
                if m.name() == "number of files read":
                    v = values.get(m.accumulatorId())
                    if v.isDefined():
                        total += int(str(v.get()).replace(",", ""))
                        found = True
        if found:
            return total
    return -1


def _query(df, where):
    from pyspark.sql import functions as F

    return df.where(where).agg(F.count("*").alias("n"), F.sum("l_extendedprice").cast("string").alias("s"))


# ---------------------------------------------------------------------------------------------
# Delta side (.venv-delta)
# ---------------------------------------------------------------------------------------------

def _delta_answer(spark, req):
    op = req["op"]
    if op == "create":
        t0 = time.perf_counter()
        spark.conf.set("spark.sql.files.maxPartitionBytes", f"{req['split_mb']}m")
        spark.sql(f"CREATE TABLE delta.`{req['path']}` USING delta PARTITIONED BY (l_shipmode) "
                  f"AS SELECT * FROM parquet.`{req['source']}`")
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        detail = spark.sql(f"DESCRIBE DETAIL delta.`{req['path']}`").collect()[0]
        return {"seconds": time.perf_counter() - t0, "numFiles": detail["numFiles"], "bytes": detail["sizeInBytes"]}
    if op == "query":
        t0 = time.perf_counter()
        row = _query(spark.read.format("delta").load(req["path"]), req["where"]).collect()[0]
        seconds = time.perf_counter() - t0
        time.sleep(0.2)  # the status store is fed by the listener bus
        return {"seconds": seconds, "n": row["n"], "s": row["s"], "files": files_read(spark._jsparkSession)}
    raise ValueError(f"unknown op {op!r}")


def delta_worker():
    """The Delta side: bench_rowlevel's worker loop with this benchmark's session and requests."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import delta_spark_reader
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[2]").appName("bench-read-delta")
               .config("spark.jars", ",".join(delta_spark_reader.delta_jars()))
               .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
               .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1"))
    for k, v in SESSION_CONF.items():
        builder = builder.config(k, v)
    bench_rowlevel.delta_worker(builder.getOrCreate(), _delta_answer)


# ---------------------------------------------------------------------------------------------
# Driver (.venv with filecommit)
# ---------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per query and side (default 5)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed runs per query and side first (default 2)")
    ap.add_argument("--scale", type=int, default=1, help="TPC-H scale factor (default 1)")
    ap.add_argument("--split-mb", type=int, default=16, help="input split size of the CTAS, MB (default 16)")
    ap.add_argument("--data", default=os.path.join(ROOT, "bench", ".data", "tpch"), help="tpchgen-cli output cache")
    ap.add_argument("--out", help="keep the table here (default: a temp dir, removed)")
    ap.add_argument("--delta-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.delta_worker:
        delta_worker()
        return 0

    import pyspark

    import filecommit

    print(f"machine: {bench_rowlevel.machine()}", flush=True)
    source = bench_rowlevel.generate(args.data, args.scale)
    out = args.out or tempfile.mkdtemp(prefix="bench_read_")
    os.makedirs(out, exist_ok=True)
    python = os.path.join(ROOT, ".venv-delta", "bin", "python")
    if not os.path.exists(python):
        bench_rowlevel.fail(f"{python} missing: run `make delta-reader`")
    worker = bench_rowlevel.DeltaWorker(python, os.path.join(out, "delta-worker.log"), script=__file__)
    try:
        print(f"Delta side: Spark {worker.hello['spark']} + delta-spark 4.4.0 (.venv-delta)", flush=True)
        table = os.path.join(out, "lineitem")
        shutil.rmtree(table, ignore_errors=True)
        made = worker.ask(op="create", path=table, source=source, split_mb=args.split_mb)
        total_files = made["numFiles"]
        print(f"table by Delta (partitioned by l_shipmode): {total_files} files, {made['bytes'] / 1e6:.0f} MB, "
              f"{made['seconds']:.1f} s", flush=True)

        t0 = time.perf_counter()
        spark = filecommit.local_session(conf=SESSION_CONF)
        print(f"embedded Spark Connect server ready ({time.perf_counter() - t0:.1f} s)", flush=True)
        jsession = pyspark.SparkContext._active_spark_context._jvm.org.apache.spark.sql.SparkSession \
            .getDefaultSession().get()

        results, ok = {}, True
        for qname, where in QUERIES.items():
            samples = {"filecommit": [], "delta": []}
            seen = {}
            for i in range(args.warmup + args.runs):
                t = time.perf_counter()
                row = _query(spark.read.format("filecommit").load(table), where).collect()[0]
                seconds = time.perf_counter() - t
                time.sleep(0.2)
                ours = {"n": row["n"], "s": row["s"], "files": files_read(jsession)}
                theirs = worker.ask(op="query", path=table, where=where)
                if i >= args.warmup:
                    samples["filecommit"].append(seconds)
                    samples["delta"].append(theirs["seconds"])
                seen = {"filecommit": ours, "delta": theirs}
                if (ours["n"], ours["s"]) != (theirs["n"], theirs["s"]):
                    ok = False
                    print(f"  MISMATCH {qname}: filecommit {ours} vs delta {theirs}", flush=True)
            med = {k: statistics.median(v) for k, v in samples.items()}
            results[qname] = med
            print(f"\n{qname}: WHERE {where}  ->  {seen['delta']['n']:,} rows, sum {seen['delta']['s']}")
            for side in ("filecommit", "delta"):
                print(f"  {side:10s} median {med[side]:6.2f} s   files read {seen[side]['files']:>4} of {total_files}"
                      f"   samples {', '.join(f'{s:.2f}' for s in samples[side])}")
            ratio = med["filecommit"] / med["delta"]
            print(f"  filecommit / delta = {ratio:.2f}   (goal <= 1.0: {'met' if ratio <= 1.0 else 'NOT met'})",
                  flush=True)
        print(f"\nmachine at the end: load {os.getloadavg()[0]:.2f}")
        if not ok:
            bench_rowlevel.fail("filecommit and Delta returned different results")
    finally:
        worker.close()
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
