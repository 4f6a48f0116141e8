#!/usr/bin/env python
"""Benchmark: OPTIMIZE (bin-packing) of 2,000 small files of TPC-H lineitem, filecommit vs Delta Lake
on Spark.

What it does, in one run:

1. Generates TPC-H lineitem at scale factor ``--scale`` (default 0.1: 600,572 rows) as Parquet with
   ``tpchgen-cli`` (cached under ``--data``), as ``bench_rowlevel.py`` does.
2. Makes ONE unpartitioned Delta table of ``--files`` (default 2,000) small files with Delta Lake on
   Spark (delta-spark 4.4.0 in ``.venv-delta``: ``repartition(n).write.format("delta")``).
3. For each of ``--runs`` rounds: copies it twice (A for filecommit, B for Delta, the same files),
   then runs ``filecommit.optimize`` on A through an embedded Spark Connect server and ``OPTIMIZE``
   on B in a classic Spark session in a ``.venv-delta`` subprocess (``local[2]`` both, the same
   driver memory and shuffle partitions; one works at a time). OPTIMIZE is not repeatable on one
   table (the second finds nothing to compact), hence fresh copies per round.
4. Checks: both sides removed every file and added the same number of files; Spark + Delta reads
   A and B with the same row count and ``sum(l_quantity)`` as the source. Exit 1 otherwise.

Times are wall seconds of the OPTIMIZE call as the caller sees it (filecommit: the Python call with
its answer; Delta: the ``spark.sql("OPTIMIZE ...")`` call in its process). Prints each sample, the
medians, the ratio filecommit / Delta (goal: <= 0.8) and the load average before and after (the
machine may be shared).

Usage: ``.venv/bin/python bench/bench_optimize.py [--runs 3] [--files 2000] [--scale 0.1]``
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_rowlevel as common  # noqa: E402 - the shared Delta worker, data generator and machine line

ROOT = common.ROOT


def _delta_answer(spark, req):
    """One request of the Delta worker (times in seconds)."""
    op = req["op"]
    table = "delta.`" + req.get("path", "") + "`"
    if op == "create":
        t0 = time.perf_counter()
        spark.read.parquet(req["source"]).repartition(int(req["files"])).write.format("delta").save(req["path"])
        detail = spark.sql(f"DESCRIBE DETAIL {table}").collect()[0]
        return {"seconds": time.perf_counter() - t0, "numFiles": detail["numFiles"], "bytes": detail["sizeInBytes"]}
    if op == "optimize":
        t0 = time.perf_counter()
        spark.sql(f"OPTIMIZE {table}").collect()
        seconds = time.perf_counter() - t0
        from delta.tables import DeltaTable

        last = DeltaTable.forPath(spark, req["path"]).history(1).collect()[0]
        return {"seconds": seconds, "operation": last["operation"],
                "metrics": {k: int(v) for k, v in (last["operationMetrics"] or {}).items()}}
    if op == "check":
        out = {}
        for p in req["paths"]:
            row = spark.sql(f"SELECT count(*) AS n, CAST(sum(l_quantity) AS STRING) AS s FROM delta.`{p}`").collect()[0]
            files = spark.sql(f"DESCRIBE DETAIL delta.`{p}`").collect()[0]["numFiles"]
            out[p] = {"rows": row["n"], "sum_quantity": row["s"], "files": files}
        return out
    raise ValueError(f"unknown op {op!r}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="timed rounds (fresh copies each) (default 3)")
    ap.add_argument("--files", type=int, default=2000, help="small files in the table (default 2000)")
    ap.add_argument("--scale", default="0.1", help="TPC-H scale factor (default 0.1)")
    ap.add_argument("--data", default=os.path.join(ROOT, "bench", ".data", "tpch"), help="tpchgen-cli output cache")
    ap.add_argument("--out", help="keep the tables here, and reuse the base table found there (default: a temp "
                    "dir, removed)")
    ap.add_argument("--delta-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.delta_worker:
        common.delta_worker(answer=_delta_answer)
        return 0

    import filecommit

    print(f"machine: {common.machine()}", flush=True)
    source = common.generate(args.data, args.scale)
    out = args.out or tempfile.mkdtemp(prefix="bench_optimize_")
    os.makedirs(out, exist_ok=True)
    python = os.path.join(ROOT, ".venv-delta", "bin", "python")
    if not os.path.exists(python):
        common.fail(f"{python} missing: run `make delta-reader`")
    worker = common.DeltaWorker(python, os.path.join(out, "delta-worker.log"), script=__file__)
    try:
        print(f"Delta side: Spark {worker.hello['spark']} + delta-spark 4.4.0 (.venv-delta)", flush=True)
        base = os.path.join(out, f"base_{args.files}")
        if args.out and os.path.isdir(os.path.join(base, "_delta_log")):  # kept from an earlier run
            made = {"numFiles": worker.ask(op="check", paths=[base])[base]["files"]}
            print(f"base table by Delta (kept in {base}): {made['numFiles']} files", flush=True)
        else:
            shutil.rmtree(base, ignore_errors=True)
            made = worker.ask(op="create", path=base, source=source, files=args.files)
            print(f"base table by Delta: {made['numFiles']} files, {made['bytes'] / 1e6:.1f} MB, "
                  f"{made['seconds']:.1f} s", flush=True)
        if made["numFiles"] != args.files:
            common.fail(f"Delta wrote {made['numFiles']} files, not {args.files}")
        expected = worker.ask(op="check", paths=[base])[base]

        t0 = time.perf_counter()
        spark = filecommit.local_session(conf={"spark.driver.memory": common.DRIVER_MEMORY,
                                               "spark.sql.shuffle.partitions": common.SHUFFLE_PARTITIONS})
        print(f"embedded Spark Connect server ready ({time.perf_counter() - t0:.1f} s)", flush=True)

        samples = {"filecommit": [], "delta": []}
        load_before = os.getloadavg()[0]
        checked = []
        for i in range(args.runs):
            paths = {"filecommit": os.path.join(out, f"a_filecommit_{i}"), "delta": os.path.join(out, f"b_delta_{i}")}
            for p in paths.values():
                shutil.rmtree(p, ignore_errors=True)
                shutil.copytree(base, p)
            t = time.perf_counter()
            r = filecommit.optimize(spark, paths["filecommit"])
            ours = time.perf_counter() - t
            a = worker.ask(op="optimize", path=paths["delta"])
            samples["filecommit"].append(ours)
            samples["delta"].append(a["seconds"])
            m = r.operation_metrics
            print(f"  run {i + 1}: filecommit {ours:6.2f} s ({m.get('numRemovedFiles')} files -> "
                  f"{m.get('numAddedFiles')}, server {r.metrics.duration_ms / 1000:.2f} s); "
                  f"delta {a['seconds']:6.2f} s ({a['metrics'].get('numRemovedFiles')} files -> "
                  f"{a['metrics'].get('numAddedFiles')}); load {os.getloadavg()[0]:.2f}", flush=True)
            if int(m.get("numRemovedFiles", 0)) != args.files or a["metrics"].get("numRemovedFiles") != args.files:
                common.fail("a side did not compact every file")
            if int(m["numAddedFiles"]) != a["metrics"]["numAddedFiles"]:
                common.fail(f"added files differ: filecommit {m['numAddedFiles']}, "
                            f"delta {a['metrics']['numAddedFiles']}")
            checked.extend(paths.values())
        check = worker.ask(op="check", paths=checked)
        for p in checked:
            if (check[p]["rows"], check[p]["sum_quantity"]) != (expected["rows"], expected["sum_quantity"]):
                common.fail(f"{p} differs from the source after OPTIMIZE: {check[p]} vs {expected}")
        print(f"\ncheck (Spark + Delta reads every copy): {expected['rows']:,} rows, sum(l_quantity) "
              f"{expected['sum_quantity']}, {check[checked[0]]['files']} file(s) after OPTIMIZE on each side")
        med = {name: statistics.median(s) for name, s in samples.items()}
        print(f"\nOPTIMIZE of {args.files:,} small files ({expected['rows']:,} lineitem rows, SF{args.scale}), "
              f"median of {args.runs}:")
        for name, mv in med.items():
            print(f"  {name:10s} {mv:7.2f} s   samples {', '.join(f'{s:.2f}' for s in samples[name])}")
        ratio = med["filecommit"] / med["delta"]
        print(f"  filecommit / delta = {ratio:.2f}   (goal <= 0.8: {'met' if ratio <= 0.8 else 'NOT met'})")
        print(f"machine load: {load_before:.2f} before the runs, {os.getloadavg()[0]:.2f} at the end")
    finally:
        worker.close()
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
