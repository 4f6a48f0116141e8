"""Spark's standard writer API vs the client's: ``df.write.format("delta").mode("append").save(path)``
and ``filecommit.write(df, path)`` through the same embedded Connect server, in the same run.

Prints measured numbers side by side; asserts nothing about speed (it exits 1 only when a result is
wrong: delta-rs does not read back exactly the rows written).

1. small   ``--appends`` appends of ``--rows`` rows (a DataFrame built on the client, shipped in the
           plan) to one table per path, each timed on the client (wall ms, nearest-rank p50 / p95),
           after ``--warmup`` untimed ones; the two paths alternate append by append, so both see
           the same machine load.
2. bulk    one write of ``--bulk-rows`` rows (``spark.range`` with two derived columns, generated on
           the server) to a new table by each path, wall seconds; best of ``--bulk-repeats`` (the
           two paths alternate which goes first).

The machine's load average is printed with the numbers (other processes share the cores).

Usage: ``python bench/bench_standard_api.py [--appends 50] [--warmup 10] [--rows 10] [--bulk-rows 1000000]
[--bulk-repeats 1] [--json FILE]``. Units: milliseconds (ms), seconds (s).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def load():
    """The 1, 5 and 15 minute load averages, as text."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--appends", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--bulk-rows", type=int, default=1_000_000)
    ap.add_argument("--bulk-repeats", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    import deltalake
    from pyspark.sql import functions as F

    import filecommit

    base = tempfile.mkdtemp(prefix="bench-standard-api-")
    spark = filecommit.local_session(conf={"spark.filecommit.allowedRoots": os.path.realpath(base)})
    writers = {
        "standard": lambda df, path: df.write.format("delta").mode("append").save(path),
        "filecommit": lambda df, path: filecommit.write(df, path, mode="append"),
    }
    out = {"load_before": load(), "rows_per_append": args.rows, "appends": args.appends}
    ok = True
    try:
        paths = {k: os.path.join(base, f"small_{k}") for k in writers}
        times = {k: [] for k in writers}
        expected = {k: [] for k in writers}
        for n in range(args.warmup + args.appends):
            for kind, write in writers.items():
                ids = [n * 1000 + r for r in range(args.rows)]
                df = spark.createDataFrame([(i, f"v{i}") for i in ids], "id long, v string")
                t0 = time.perf_counter()
                write(df, paths[kind])
                elapsed = (time.perf_counter() - t0) * 1000
                expected[kind] += ids
                if n >= args.warmup:
                    times[kind].append(elapsed)
        for kind in writers:
            got = sorted(deltalake.DeltaTable(paths[kind]).to_pyarrow_table().column("id").to_pylist())
            if got != sorted(expected[kind]):
                print(f"WRONG: {kind} small appends: {len(got)} rows read, {len(expected[kind])} written")
                ok = False
            out[f"small_{kind}_p50_ms"] = round(percentile(times[kind], 50), 1)
            out[f"small_{kind}_p95_ms"] = round(percentile(times[kind], 95), 1)

        best = {k: math.inf for k in writers}
        for rep in range(args.bulk_repeats):
            # Alternating which path goes first, so neither always pays for the other's warm-up.
            for kind in (list(writers) if rep % 2 == 0 else list(reversed(writers))):
                path = os.path.join(base, f"bulk_{kind}_{rep}")
                df = (spark.range(args.bulk_rows).withColumn("v", F.concat(F.lit("v"), F.col("id").cast("string")))
                      .withColumn("x", F.col("id") * 2))
                t0 = time.perf_counter()
                writers[kind](df, path)
                elapsed = time.perf_counter() - t0
                best[kind] = min(best[kind], elapsed)
                out.setdefault(f"bulk_{kind}_runs_s", []).append(round(elapsed, 2))
                n_rows = deltalake.DeltaTable(path).to_pyarrow_table(columns=["id"]).num_rows
                if n_rows != args.bulk_rows:
                    print(f"WRONG: {kind} bulk: {n_rows} rows read, {args.bulk_rows} written")
                    ok = False
                shutil.rmtree(path, ignore_errors=True)
        for kind in writers:
            out[f"bulk_{kind}_s"] = round(best[kind], 2)
        out["load_after"] = load()
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print(f"load average before: {out['load_before']}, after: {out.get('load_after')}")
    print("bulk runs, s: " + ", ".join(f"{k} {out.get(f'bulk_{k}_runs_s')}" for k in writers))
    print(f"{'':12} {'small p50 ms':>13} {'small p95 ms':>13} {'bulk s':>8}")
    for kind in writers:
        print(f"{kind:12} {out.get(f'small_{kind}_p50_ms', '-'):>13} {out.get(f'small_{kind}_p95_ms', '-'):>13} "
              f"{out.get(f'bulk_{kind}_s', '-'):>8}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
