"""Object-storage benchmark: one-row appends to a table in a MinIO bucket, filecommit against delta-rs.

Starts its own MinIO (``make minio``; ``tests/s3.py``) on 127.0.0.1 and an embedded Spark Connect
server with the plugin and Hadoop S3A (``make s3a-jars``) pointed at it, then times ``--appends``
appends of ONE row (after ``--warmup`` untimed ones) to one unpartitioned table, by

  filecommit  ``filecommit.write(..., mode="append")`` on ``s3a://bucket/fc``; its requests are
              the command's ``metrics.object_store_requests`` (the S3A IOStatistics counters of
              the server's file system, grown during the command; the data file's PUT included,
              since the executors are local)
  delta-rs    ``deltalake.write_deltalake(..., mode="append")`` on ``s3://bucket/rs`` in this process,
              the same table shape (one ``id`` BIGINT column); its requests are not counted

Prints per writer the client wall time p50 / p95 (ms, nearest rank) and, for filecommit, the
median requests per append by counter name. Asserts only that every row is there once (delta-rs
reads both tables). Short by default: a few seconds of appends.

Usage: ``python bench/bench_s3.py [--appends 30] [--warmup 5] [--json FILE]``.
Units: milliseconds (ms), requests per append.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--appends", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    import pyarrow as pa
    import s3
    from deltalake import DeltaTable, write_deltalake

    import filecommit

    base = tempfile.mkdtemp(prefix="filecommit-bench-s3-")
    minio = s3.MinioServer(os.path.join(base, "data"), os.path.join(base, "minio.log"))
    minio.start()
    spark = None
    try:
        bucket = "bench"
        minio.create_bucket(bucket)
        conf = s3.server_conf(minio.endpoint)
        conf["spark.jars"] = ",".join([filecommit.find_plugin_jar(), *s3.s3a_jars()])
        spark = filecommit.local_session(conf=conf)
        ours = f"s3a://{bucket}/fc"
        rs = f"s3://{bucket}/rs"
        opts = minio.storage_options()

        times: dict[str, list[float]] = {"filecommit": [], "delta-rs": []}
        requests: list[dict[str, int]] = []
        n = 0
        for i in range(args.warmup + args.appends):
            t0 = time.perf_counter()
            r = filecommit.write(spark.range(n, n + 1, 1, 1), ours, mode="append")
            dt = (time.perf_counter() - t0) * 1000
            if i >= args.warmup:
                times["filecommit"].append(dt)
                requests.append(dict(r.metrics.object_store_requests))
            t0 = time.perf_counter()
            write_deltalake(rs, pa.table({"id": pa.array([n], pa.int64())}), mode="append", storage_options=opts)
            dt = (time.perf_counter() - t0) * 1000
            if i >= args.warmup:
                times["delta-rs"].append(dt)
            n += 1

        for path in (ours.replace("s3a://", "s3://"), rs):
            ids = DeltaTable(path, storage_options=opts).to_pyarrow_table().column("id").to_pylist()
            if sorted(ids) != list(range(n)):
                print(f"FAIL: {path} holds {len(ids)} rows, {len(set(ids))} distinct; expected {n}", file=sys.stderr)
                return 1

        names = sorted({k for r in requests for k in r})
        per_append = {k: statistics.median([r.get(k, 0) for r in requests]) for k in names}
        result = {
            "appends": args.appends,
            "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "p50_ms": {w: round(percentile(v, 50), 1) for w, v in times.items()},
            "p95_ms": {w: round(percentile(v, 95), 1) for w, v in times.items()},
            "filecommit_requests_per_append_median": per_append,
        }
        print(f"one-row appends to MinIO, {args.appends} timed after {args.warmup} warm-up (load {result['load']})")
        for w in times:
            print(f"  {w:<11} p50 {result['p50_ms'][w]:8.1f} ms   p95 {result['p95_ms'][w]:8.1f} ms")
        print("  filecommit requests per append (median):")
        for k, v in per_append.items():
            print(f"    {k:<40} {v:g}")
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2))
        return 0
    finally:
        if spark is not None:
            spark.stop()
        minio.stop()


if __name__ == "__main__":
    sys.exit(main())
