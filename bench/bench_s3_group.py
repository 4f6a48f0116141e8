"""Many writers on one S3 table: group commit on MinIO, filecommit against delta-rs.

Starts its own MinIO (``make minio``; ``tests/s3.py``) on 127.0.0.1, the recording proxy
(``tests/s3_proxy.py``) in front of it in a child process (so its Python threads do not share the
clients' interpreter lock), and an embedded Spark Connect server with the plugin and Hadoop S3A
(``make s3a-jars``) pointed at the proxy. Then, for each ``--delay-ms`` value (the proxy sleeps
that long before forwarding every conditional commit PUT, ``PUT .../_delta_log/<20 digits>.json``:
a store as slow per commit as one key prefix of S3, ~60 ms):

  filecommit  ``--writers`` client sessions (one thread and one Spark Connect session each) append
              ONE row each (``spark.createDataFrame`` of one row, ``filecommit.write(...,
              mode="append")``) to one table ``s3a://bench/fc_<delay>`` for ``--seconds`` s, after
              one untimed warm-up append per session
  delta-rs    ``--writers`` threads of this process append ONE row each with
              ``deltalake.write_deltalake(..., mode="append")`` to its own table
              ``s3://bench/rs_<delay>`` through the same proxy (conditional PUT commits:
              ``conditional_put=etag``), for ``--seconds`` s; skipped with ``--no-delta-rs``

and prints, per writer: appends acknowledged per second (over the wall time from the start until
the last writer's last append returned; no append starts after ``--seconds``), conditional commit
PUTs per second (every such PUT the proxy received for the table, refused ones included),
versions per second (table versions made in the window), the group sizes (appends per version:
mean, median, max) and the appends that failed (delta-rs: commit conflicts past its retries).
Checks that delta-rs reads every acknowledged row of each table exactly once (else exit 1).

Usage: ``python bench/bench_s3_group.py [--writers 16] [--seconds 60] [--delay-ms 0,60]
[--no-delta-rs] [--conf KEY=VALUE ...] [--json FILE]``.
Units: appends per second, requests per second, milliseconds (ms).
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

import s3_cowriters as cw  # noqa: E402 - tests/ is on the path from here on
import s3_proxy  # noqa: E402


def proxy_main(target: str, conn) -> None:
    """Child process: a recording ``FaultProxy`` in front of ``target``, steered over ``conn``:
    ``("delay", seconds)`` arms (0: clears) the commit-PUT delay; ``("count", regex)`` answers the
    number of PUTs received whose path matches and clears the record; ``("stop",)`` ends."""
    proxy = s3_proxy.FaultProxy(target).start()
    conn.send(proxy.endpoint)
    while True:
        msg = conn.recv()
        if msg[0] == "delay":
            proxy.clear()
            if msg[1] > 0:
                proxy.arm("PUT", s3_proxy.COMMIT_PUT, "delay", seconds=msg[1])
            conn.send(True)
        elif msg[0] == "count":
            pattern = re.compile(msg[1])
            with proxy.lock:
                seen, proxy.seen = proxy.seen, []
            conn.send(sum(1 for method, path in seen if method == "PUT" and pattern.search(path)))
        else:
            proxy.stop()
            conn.send(True)
            return


class ProxyProcess:
    """The recording proxy in a child process (see :func:`proxy_main`)."""

    def __init__(self, target: str):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=proxy_main, args=(target, child), daemon=True)
        self.proc.start()
        self.endpoint = self.conn.recv()

    def call(self, *msg):
        self.conn.send(msg)
        return self.conn.recv()

    def stop(self) -> None:
        try:
            self.call("stop")
        finally:
            self.proc.join(10)


def commit_puts_of(bucket: str, table: str) -> str:
    return "^/" + re.escape(f"{bucket}/{table}") + s3_proxy.COMMIT_PUT


def row_id(w: int, n: int) -> int:
    return w * 1_000_000 + n


def check_rows(uri: str, opts: dict, want: list[int]) -> None:
    from deltalake import DeltaTable

    got = sorted(DeltaTable(uri, storage_options=opts).to_pyarrow_table().column("id").to_pylist())
    if got != sorted(want):
        lost, extra = set(want) - set(got), len(got) - len(set(got))
        raise SystemExit(f"FAIL: {uri} holds {len(got)} rows, expected {len(want)}: {len(lost)} lost, {extra} doubled")


def summary(appends: int, versions: int, puts: int, wall: float, sizes: list[int], failed: int) -> dict:
    return {"appends": appends, "wall_s": round(wall, 2), "appends_per_s": round(appends / wall, 1),
            "versions": versions, "versions_per_s": round(versions / wall, 1),
            "commit_puts": puts, "commit_puts_per_s": round(puts / wall, 1),
            "group_mean": round(appends / versions, 2) if versions else 0.0,
            "group_median": statistics.median(sizes) if sizes else 0, "group_max": max(sizes, default=0),
            "failed": failed}


def run_filecommit(spark, proxy, bucket: str, table: str, writers: int, seconds: float, opts: dict) -> dict:
    """``writers`` Connect sessions append one row each for ``seconds`` s to ``s3a://bucket/table``."""
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    import filecommit
    from filecommit import _connect

    schema = StructType([StructField("id", LongType()), StructField("writer", StringType())])
    path = f"s3a://{bucket}/{table}"
    filecommit.write(spark.createDataFrame([(-1, "init")], "id long, writer string"), path, mode="error")
    sessions = [RemoteSparkSession.builder.remote(_connect.server_url(spark)).create() for _ in range(writers)]
    warm: list = []

    def write(w, i):
        df = sessions[w].createDataFrame([(i, f"w{w}")], schema)  # no DDL string: no parse request
        return filecommit.write(df, path, mode="append")

    try:
        out = cw.append_for(writers, seconds, lambda w, n: write(w, row_id(w, n)),
                            lambda w: warm.append(write(w, row_id(w, 999_999))),
                            lambda: proxy.call("count", "^$"))  # the count starts now
    finally:
        for s in sessions:
            s.stop()
    puts = proxy.call("count", commit_puts_of(bucket, table))
    if out["errors"]:
        raise SystemExit(f"FAIL: {len(out['errors'])} filecommit appends failed, first: {out['errors'][0]!r}")
    start = max(r.version for r in warm)
    done = [(w, n, r) for w, rs in out["results"].items() for n, r in rs]
    per_version = collections.Counter(r.version for _w, _n, r in done)
    check_rows(f"s3://{bucket}/{table}", opts,
               [-1, *(row_id(w, 999_999) for w in range(writers)), *(row_id(w, n) for w, n, _r in done)])
    end = max(per_version)
    return summary(len(done), end - start, puts, out["wall_s"], list(per_version.values()), 0)


def run_delta_rs(proxy, minio, bucket: str, table: str, writers: int, seconds: float) -> dict:
    """``writers`` threads append one row each with delta-rs for ``seconds`` s to ``s3://bucket/table``."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    uri = f"s3://{bucket}/{table}"
    opts = dict(cw.delta_rs_options(minio), AWS_ENDPOINT_URL=proxy.endpoint)
    schema = pa.schema([("id", pa.int64()), ("writer", pa.string())])

    def write(w, i):
        write_deltalake(uri, pa.table({"id": [i], "writer": [f"w{w}"]}, schema=schema), mode="append",
                        storage_options=opts)

    write(0, -1)
    ok: list[int] = []

    def warmup(w):
        write(w, row_id(w, 999_999))
        ok.append(row_id(w, 999_999))

    out = cw.append_for(writers, seconds, lambda w, n: write(w, row_id(w, n)), warmup,
                        lambda: proxy.call("count", "^$"))  # the count starts now
    puts = proxy.call("count", commit_puts_of(bucket, table))
    done = [(w, n) for w, rs in out["results"].items() for n, _r in rs]
    check_rows(uri, minio.storage_options(), [-1, *ok, *(row_id(w, n) for w, n in done)])
    # version 0: the first append, then one version per warm-up append; the rest were timed
    versions = DeltaTable(uri, storage_options=minio.storage_options()).version() - len(ok)
    result = summary(len(done), versions, puts, out["wall_s"], [1] * versions, len(out["errors"]))
    result["failed_by"] = dict(collections.Counter(type(e).__name__ for e in out["errors"]))
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--delay-ms", default="0,60", help="comma-separated delays of each conditional commit PUT")
    ap.add_argument("--no-delta-rs", action="store_true")
    ap.add_argument("--conf", action="append", default=[], help="server setting KEY=VALUE (repeatable)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    import s3

    import filecommit

    base = tempfile.mkdtemp(prefix="filecommit-bench-s3-group-")
    minio = s3.MinioServer(os.path.join(base, "data"), os.path.join(base, "minio.log"))
    minio.start()
    proxy = spark = None
    try:
        bucket = "bench"
        minio.create_bucket(bucket)
        proxy = ProxyProcess(minio.endpoint)
        conf = s3.server_conf(proxy.endpoint)
        conf["spark.jars"] = ",".join([filecommit.server.find_plugin_jar(), *s3.s3a_jars()])
        conf.update(kv.split("=", 1) for kv in args.conf)
        spark = filecommit.local_session(conf=conf)
        result: dict = {"writers": args.writers, "seconds": args.seconds, "conf": args.conf, "runs": []}
        for delay in [int(d) for d in args.delay_ms.split(",")]:
            proxy.call("delay", delay / 1000)
            run = {"delay_ms": delay, "load_before": os.getloadavg()[0]}
            run["filecommit"] = run_filecommit(spark, proxy, bucket, f"fc_{delay}", args.writers, args.seconds,
                                               minio.storage_options())
            print_run("filecommit", delay, run["filecommit"])
            if not args.no_delta_rs:
                run["delta-rs"] = run_delta_rs(proxy, minio, bucket, f"rs_{delay}", args.writers, args.seconds)
                print_run("delta-rs", delay, run["delta-rs"])
            run["load_after"] = os.getloadavg()[0]
            result["runs"].append(run)
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2))
        return 0
    finally:
        if spark is not None:
            spark.stop()
        if proxy is not None:
            proxy.stop()
        minio.stop()


def print_run(writer: str, delay: int, r: dict) -> None:
    print(f"{writer:<10} delay {delay:3d} ms: {r['appends']} appends in {r['wall_s']} s = {r['appends_per_s']} "
          f"appends/s; {r['commit_puts_per_s']} commit PUTs/s ({r['commit_puts']}); {r['versions_per_s']} "
          f"versions/s ({r['versions']}); group mean {r['group_mean']} median {r['group_median']} max "
          f"{r['group_max']}; failed {r['failed']} {r.get('failed_by', '')} (load {os.getloadavg()[0]:.1f})",
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
