"""Object-storage benchmark: one-row appends to a table in a MinIO bucket, filecommit against delta-rs.

Starts its own MinIO (``make minio``; ``tests/s3.py``) on 127.0.0.1 and an embedded Spark Connect
server with the plugin and Hadoop S3A (``make s3a-jars``) pointed at it, then times ``--appends``
appends of ONE row (after ``--warmup`` untimed ones) to one unpartitioned table, by

  filecommit  ``filecommit.write(..., mode="append")`` on ``s3a://bucket/fc`` of a local row
              (``spark.createDataFrame``, as delta-rs is handed an Arrow table; ``--input range``:
              ``spark.range``, a plan the server runs as a Spark job); its requests are
              the command's ``metrics.object_store_requests`` (the S3A IOStatistics counters of
              the server's file system, grown during the command; the data file's PUT included,
              since the executors are local)
  delta-rs    ``deltalake.write_deltalake(..., mode="append")`` on ``s3://bucket/rs`` in this process,
              the same table shape (one ``id`` BIGINT column); its requests are not counted

Prints per writer the client wall time p50 / p95 (ms, nearest rank) and the median requests per
append: filecommit's by S3A counter name; delta-rs's by HTTP request type, counted on
``--count-appends`` further (untimed) appends sent through a counting proxy (``tests/s3_proxy.py``)
in front of the same MinIO. Asserts only that every row is there once (delta-rs reads both
tables). Short by default: a few seconds of appends.

With ``--lineitem-scale N`` (0: skipped) it then writes TPC-H lineitem of scale factor N
(``tpchgen-cli`` Parquet, generated and cached as ``bench_rowlevel.py`` does; SF1: 6,001,215 rows)
once to a new table in the same MinIO by each of: filecommit (``filecommit.write``, a Delta table
on ``s3a://``), plain Spark Parquet on the same server (``DataFrameWriter.parquet`` on ``s3a://``,
Spark's default commit protocol, no table log) and delta-rs (``write_deltalake`` streaming the
Parquet file's batches), and prints each one's wall time (s). filecommit's bulk write must run on
the native Parquet writer (DuckDB into a local file, then uploaded through S3A: the server gets the
native writer's jars); the footer's ``created_by`` tells, and the bench exits 1 when it is not DuckDB.

Usage: ``python bench/bench_s3.py [--appends 30] [--warmup 5] [--count-appends 5] [--input rows|range]
[--lineitem-scale 0] [--json FILE]``.
Units: milliseconds (ms), seconds (s), requests per append.
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
sys.path.insert(0, str(REPO / "bench"))


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--appends", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--count-appends", type=int, default=5)
    ap.add_argument("--input", choices=("rows", "range"), default="rows",
                    help="filecommit's row: a local row (createDataFrame, as delta-rs gets an Arrow table) "
                         "or spark.range")
    ap.add_argument("--lineitem-scale", type=int, default=0)
    ap.add_argument("--data", default=str(REPO / "bench" / ".data" / "tpch"), help="tpchgen-cli output cache")
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
        # The native writer's jars too: bulk writes to s3a:// go through it (DuckDB, then an upload).
        conf["spark.jars"] = ",".join([filecommit.server.find_plugin_jar(), *s3.s3a_jars(),
                                       *filecommit.server.find_native_jars()])
        spark = filecommit.local_session(conf=conf)
        ours = f"s3a://{bucket}/fc"
        rs = f"s3://{bucket}/rs"
        opts = minio.storage_options()

        times: dict[str, list[float]] = {"filecommit": [], "delta-rs": []}
        requests: list[dict[str, int]] = []
        n = 0
        for i in range(args.warmup + args.appends):
            t0 = time.perf_counter()
            row = (spark.createDataFrame([(n,)], "id long") if args.input == "rows"
                   else spark.range(n, n + 1, 1, 1))
            r = filecommit.write(row, ours, mode="append")
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

        rs_requests = delta_rs_requests(minio, rs, n, args.count_appends)
        for path, rows in ((ours.replace("s3a://", "s3://"), n), (rs, n + args.count_appends)):
            ids = DeltaTable(path, storage_options=opts).to_pyarrow_table().column("id").to_pylist()
            if sorted(ids) != list(range(rows)):
                print(f"FAIL: {path} holds {len(ids)} rows, {len(set(ids))} distinct; expected {rows}", file=sys.stderr)
                return 1

        names = sorted({k for r in requests for k in r})
        per_append = {k: statistics.median([r.get(k, 0) for r in requests]) for k in names}
        result = {
            "appends": args.appends,
            "input": args.input,
            "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "p50_ms": {w: round(percentile(v, 50), 1) for w, v in times.items()},
            "p95_ms": {w: round(percentile(v, 95), 1) for w, v in times.items()},
            "filecommit_requests_per_append_median": per_append,
            "delta_rs_requests_per_append_median": rs_requests,
        }
        print(f"one-row appends to MinIO, {args.appends} timed after {args.warmup} warm-up, filecommit input "
              f"{args.input} (load {result['load']})")
        for w in times:
            print(f"  {w:<11} p50 {result['p50_ms'][w]:8.1f} ms   p95 {result['p95_ms'][w]:8.1f} ms")
        print("  filecommit requests per append (median):")
        for k, v in per_append.items():
            print(f"    {k:<40} {v:g}")
        print(f"  delta-rs requests per append (median of {args.count_appends}, through the counting proxy):")
        for k, v in rs_requests.items():
            print(f"    {k:<40} {v:g}")
        if args.lineitem_scale > 0:
            result["lineitem"] = bulk(spark, minio, bucket, args.data, args.lineitem_scale)
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2))
        return 0
    finally:
        if spark is not None:
            spark.stop()
        minio.stop()


def delta_rs_requests(minio, table, first, appends):
    """Median requests per one-row delta-rs append to ``table`` by HTTP request type (GET of a
    listing counted as LIST), over ``appends`` appends through a counting proxy."""
    import pyarrow as pa
    import s3_proxy
    from deltalake import write_deltalake

    proxy = s3_proxy.FaultProxy(minio.endpoint).start()
    try:
        opts = dict(minio.storage_options(), AWS_ENDPOINT_URL=proxy.endpoint)
        per: list[dict[str, int]] = []
        for i in range(appends):
            proxy.seen.clear()
            write_deltalake(table, pa.table({"id": pa.array([first + i], pa.int64())}), mode="append",
                            storage_options=opts)
            counts: dict[str, int] = {}
            for method, path in list(proxy.seen):
                kind = "LIST" if method == "GET" and ("list-type=" in path or "?prefix=" in path) else method
                counts[kind] = counts.get(kind, 0) + 1
            per.append(counts)
    finally:
        proxy.stop()
    names = sorted({k for c in per for k in c})
    return {k: statistics.median([c.get(k, 0) for c in per]) for k in names}


def bulk(spark, minio, bucket, data_dir, scale):
    """TPC-H lineitem SF ``scale`` written once to MinIO by filecommit, plain Spark Parquet and
    delta-rs; returns wall seconds per writer and the row count each table holds."""
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq
    from bench_rowlevel import generate
    from deltalake import DeltaTable, write_deltalake

    import filecommit

    src = generate(data_dir, scale)
    rows = ds.dataset(src).count_rows()
    out: dict[str, object] = {"scale": scale, "rows": rows, "seconds": {}}
    opts = minio.storage_options()

    t0 = time.perf_counter()
    filecommit.write(spark.read.parquet(src), f"s3a://{bucket}/lineitem_fc", mode="overwrite")
    out["seconds"]["filecommit"] = round(time.perf_counter() - t0, 1)

    t0 = time.perf_counter()
    spark.read.parquet(src).write.mode("overwrite").parquet(f"s3a://{bucket}/lineitem_parquet")
    out["seconds"]["spark-parquet"] = round(time.perf_counter() - t0, 1)

    t0 = time.perf_counter()
    dataset = ds.dataset(src)
    write_deltalake(f"s3://{bucket}/lineitem_rs", dataset.scanner(batch_size=131072).to_reader(),
                    mode="overwrite", storage_options=opts)
    out["seconds"]["delta-rs"] = round(time.perf_counter() - t0, 1)

    got = {
        "filecommit": DeltaTable(f"s3://{bucket}/lineitem_fc", storage_options=opts).count(),
        "spark-parquet": spark.read.parquet(f"s3a://{bucket}/lineitem_parquet").count(),
        "delta-rs": DeltaTable(f"s3://{bucket}/lineitem_rs", storage_options=opts).count(),
    }
    out["rows_written"] = got
    # Which writer encoded filecommit's files: DuckDB's (the native writer) or parquet-mr (Spark's).
    s3fs = minio.filesystem()
    files = [i for i in s3fs.get_file_info(pafs.FileSelector(f"{bucket}/lineitem_fc", recursive=True))
             if i.path.endswith(".parquet") and "/_delta_log/" not in i.path]
    with s3fs.open_input_file(files[0].path) as f:
        out["filecommit_created_by"] = pq.ParquetFile(f).metadata.created_by or ""
    print(f"TPC-H lineitem SF{scale} ({rows:,} rows) to MinIO, one run each (load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}):")
    for w, sec in out["seconds"].items():
        print(f"  {w:<14} {sec:8.1f} s   rows {got[w]:,}")
    print(f"  filecommit's files written by: {out['filecommit_created_by']}; "
          f"{out['seconds']['filecommit'] / out['seconds']['delta-rs']:.2f} x delta-rs")
    if any(v != rows for v in got.values()):
        raise SystemExit(f"FAIL: row counts {got}, expected {rows}")
    if "duckdb" not in out["filecommit_created_by"].lower():
        raise SystemExit(f"FAIL: filecommit's files were not written by the native writer (DuckDB): "
                         f"{out['filecommit_created_by']!r}")
    return out


if __name__ == "__main__":
    sys.exit(main())
