"""Staging benchmarks (write, audit, publish): prints measured numbers, asserts nothing about speed.

Starts ONE embedded Spark Connect server (``filecommit.local_session()``, master local[2]) and
prints two measurements:

1. publish   a staged append of ``--files`` files (default 10,000: ``--files`` rows written with
             ``maxRecordsPerFile=1``, staged with ``stage=True``), then the client wall time of
             ``filecommit.commit`` for it (reading the staged record, the conflict check, writing
             the one commit) and the server's ``duration_ms``. Checked: the version holds exactly
             ``--files`` add actions and delta-rs reads ``--files`` rows; exit 1 otherwise.
2. overhead  a bulk write of ``--rows`` rows (default 4,000,000; 4 columns; 8 files) into a fresh
             table, committed vs staged (the staged one is aborted afterwards): ``--runs`` pairs
             (default 3) run alternately after one untimed warm-up of each; medians and the
             staged/committed ratio.

Usage: ``python bench/bench_staging.py [--files 10000] [--rows 4000000] [--runs 3] [--json FILE]``.
Units: seconds (s), milliseconds (ms).
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


def _bulk(spark, rows: int):
    return spark.range(rows).selectExpr("id", "id % 1000 AS k", "cast(id * 7 AS string) AS s",
                                        "rand(7) AS x").repartition(8)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    import filecommit
    from deltalake import DeltaTable

    out = {"files": args.files, "rows": args.rows}
    root = tempfile.mkdtemp(prefix="filecommit-bench-staging-")
    spark = filecommit.local_session()
    try:
        print(f"cores {os.cpu_count()}, pyspark {spark.version}")
        # 1. Publish of a staged commit with many files.
        path = os.path.join(root, "many")
        filecommit.write(spark.range(1).selectExpr("id"), path)
        t0 = time.perf_counter()
        staged = filecommit.write(spark.range(args.files).selectExpr("id").repartition(2), path,
                                  options={"maxRecordsPerFile": "1"}, stage=True)
        stage_s = time.perf_counter() - t0
        assert len(staged.add_files) == args.files, len(staged.add_files)
        t0 = time.perf_counter()
        result = filecommit.commit(spark, path, staged)
        publish_s = time.perf_counter() - t0
        with open(os.path.join(path, "_delta_log", f"{result.version:020d}.json")) as f:
            adds = sum(1 for line in f if line.startswith('{"add"'))
        rows = len(DeltaTable(path).to_pandas())
        ok = adds == args.files and rows == args.files + 1
        out["publish"] = {"stage_s": stage_s, "publish_s": publish_s, "server_ms": result.metrics.duration_ms,
                          "adds_in_version": adds, "rows": rows}
        print(f"1. staged append of {args.files:,} files: stage {stage_s:.1f} s; publish {publish_s * 1000:.0f} ms "
              f"client, {result.metrics.duration_ms} ms server; version {result.version} holds {adds:,} adds, "
              f"delta-rs reads {rows:,} rows")
        if not ok:
            print("FAILED: the published version does not hold the staged files")
            return 1

        # 2. Staging overhead on a bulk write.
        def one(staged_write: bool, i: int) -> float:
            p = os.path.join(root, f"bulk-{'s' if staged_write else 'c'}-{i}")
            t = time.perf_counter()
            r = filecommit.write(_bulk(spark, args.rows), p, stage=staged_write)
            took = time.perf_counter() - t
            if staged_write:
                filecommit.abort(spark, p, r)
            shutil.rmtree(p, ignore_errors=True)
            return took

        one(False, -1)
        one(True, -1)
        committed, staged_times = [], []
        for i in range(args.runs):
            committed.append(one(False, i))
            staged_times.append(one(True, i))
        mc, ms = statistics.median(committed), statistics.median(staged_times)
        out["overhead"] = {"committed_s": committed, "staged_s": staged_times, "ratio": ms / mc}
        print(f"2. bulk write of {args.rows:,} rows: committed median {mc:.2f} s {['%.2f' % t for t in committed]}, "
              f"staged median {ms:.2f} s {['%.2f' % t for t in staged_times]}: staged/committed = {ms / mc:.3f}")
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
