"""delta-spark's ``DeltaTable`` API over Spark Connect vs filecommit's client: ``DELETE`` and ``MERGE``
through the same embedded Connect server, on copies of the same table, in the same run.

- delete: ``DeltaTable.forPath(spark, b).delete(cond)`` vs ``filecommit.delete(spark, a, cond)``,
  ``cond`` = ``id % 10 = 0`` (10% of the rows, in every file).
- merge: an upsert of ``--source-rows`` rows (half matching existing ids, half new) by
  ``DeltaTable.forPath(spark, b).alias("t").merge(source.alias("s"), "t.id = s.id")
  .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute()`` vs ``filecommit.merge(source, a,
  "target.id = source.id", source_alias="source").when_matched_update_all()
  .when_not_matched_insert_all().execute()``.

Every sample starts from a fresh copy of one base table (``--rows`` rows written by filecommit in
``--files`` files); the two paths alternate call by call (which goes first alternates too), so
both see the same machine load. Times are the caller's wall seconds (plan sent, server work,
commit, answer back); the medians and the ratio DeltaTable / filecommit are printed (goal: within
10%, ratio <= 1.10). After each pair, delta-rs reads both copies: the same row count and sum of
``v``, else exit 1 (a wrong result, not a slow one). Exits 0 otherwise: speed is reported, not
asserted.

Usage: ``python bench/bench_deltatable_api.py [--rows 2000000] [--files 16] [--source-rows 20000]
[--runs 5] [--warmup 1] [--ops delete,merge] [--json FILE]``. Units: seconds (s).
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

CONDITION = "id % 10 = 0"


def load() -> str:
    """The 1, 5 and 15 minute load averages, as text."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _check(a: str, b: str) -> None:
    """delta-rs reads both tables with the same row count and sum of ``v``; exits 1 otherwise."""
    import deltalake
    import pyarrow.compute as pc

    got = []
    for path in (a, b):
        t = deltalake.DeltaTable(path).to_pyarrow_table(columns=["v"])
        got.append((t.num_rows, pc.sum(t["v"]).as_py()))
    if got[0] != got[1]:
        print(f"FAIL: filecommit's table reads {got[0]}, DeltaTable's {got[1]} (rows, sum v)")
        sys.exit(1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=16)
    ap.add_argument("--source-rows", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--ops", default="delete,merge", help="comma-separated: delete, merge")
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    import filecommit

    base = tempfile.mkdtemp(prefix="bench-deltatable-api-")
    spark = filecommit.local_session(conf={"spark.filecommit.allowedRoots": os.path.realpath(base)})
    try:
        origin = os.path.join(base, "origin")
        df = spark.range(args.rows).repartition(args.files).select(
            "id", (F.col("id") * 7 % 1000).alias("v"), (F.col("id") % 97).cast("string").alias("tag"))
        filecommit.write(df, origin)
        half = args.source_rows // 2
        source = spark.range(args.rows - half, args.rows + half).select(
            "id", F.lit(1).cast("long").alias("v"), F.lit("new").alias("tag"))

        def delete_fc(path):
            filecommit.delete(spark, path, CONDITION)

        def delete_dt(path):
            DeltaTable.forPath(spark, path).delete(CONDITION)

        def merge_fc(path):
            (filecommit.merge(source, path, "target.id = source.id", source_alias="source")
             .when_matched_update_all().when_not_matched_insert_all().execute())

        def merge_dt(path):
            (DeltaTable.forPath(spark, path).alias("t").merge(source.alias("s"), "t.id = s.id")
             .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())

        results = {}
        n = 0
        ops = {"delete": (delete_fc, delete_dt), "merge": (merge_fc, merge_dt)}
        for op in args.ops.split(","):
            if op not in ops:
                ap.error(f"--ops: unknown operation {op!r} (delete, merge)")
            ours, theirs = ops[op]
            samples: dict[str, list[float]] = {"filecommit": [], "DeltaTable": []}
            for i in range(args.warmup + args.runs):
                copies = {}
                for side in ("filecommit", "DeltaTable"):
                    n += 1
                    copies[side] = os.path.join(base, f"t{n}")
                    shutil.copytree(origin, copies[side])
                order = [("filecommit", ours), ("DeltaTable", theirs)]
                if i % 2:
                    order.reverse()
                for side, call in order:
                    t0 = time.perf_counter()
                    call(copies[side])
                    took = time.perf_counter() - t0
                    if i >= args.warmup:
                        samples[side].append(took)
                _check(copies["filecommit"], copies["DeltaTable"])
                for p in copies.values():
                    shutil.rmtree(p)
            med = {k: statistics.median(v) for k, v in samples.items()}
            ratio = med["DeltaTable"] / med["filecommit"]
            results[op] = {"samples_s": samples, "median_s": med, "ratio": ratio}
            print(f"{op:6s} filecommit median {med['filecommit']:.3f} s  DeltaTable median {med['DeltaTable']:.3f} s"
                  f"  ratio DeltaTable/filecommit {ratio:.3f} (goal <= 1.10)  samples "
                  + json.dumps({k: [round(x, 3) for x in v] for k, v in samples.items()}))
        print(f"rows {args.rows}, files {args.files}, merge source {args.source_rows} rows, runs {args.runs}, "
              f"load {load()}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"args": vars(args), "results": results, "load": load()}, f, indent=2)
    finally:
        spark.stop()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
