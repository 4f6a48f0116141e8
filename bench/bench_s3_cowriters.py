"""Co-writers of one S3 table at the acceptance size: two Connect servers (separate JVMs, the
plugin and Hadoop S3A) and one delta-rs writer (conditional puts) append to one MinIO table at the
same time, ``--appends`` times each (1 row per append), ``--rounds`` rounds of a fresh table each;
odd rounds with ``txn`` on the servers' appends. After each round the table is checked
(``tests/s3_cowriters.py``: every row exactly once by delta-rs, versions contiguous in the raw log,
each ``txn`` once) and the numbers printed.

``--logstore conditional`` runs the servers with ``spark.filecommit.s3.conditionalWrites=true``
(filecommit's conditional-write LogStore); ``--logstore single`` with ``false``
(``S3SingleDriverLogStore``, Delta's default for S3), to show what it loses with co-writers.

Usage (repository root; ``make build minio s3a-jars``)::

    .venv/bin/python bench/bench_s3_cowriters.py --logstore conditional --rounds 10 --appends 100
    .venv/bin/python bench/bench_s3_cowriters.py --logstore single --rounds 2 --appends 100
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

import s3
import s3_cowriters as cw
from crash_server import ConnectServer

import filecommit


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logstore", choices=["conditional", "single"], default="conditional")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--appends", type=int, default=100)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "s3log", "bench"))
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.dir)
    minio = s3.MinioServer(os.path.join(work, "data"), os.path.join(work, "minio.log"))
    minio.start()
    bucket = f"cowriters-{uuid.uuid4().hex[:6]}"
    minio.create_bucket(bucket)
    conf = s3.server_conf(minio.endpoint)
    conf["spark.filecommit.allowedRoots"] = f"s3a://{bucket}/"
    conf["spark.filecommit.s3.conditionalWrites"] = "true" if args.logstore == "conditional" else "false"
    jars = ",".join([filecommit.server.find_plugin_jar(), *s3.s3a_jars()])
    servers = [ConnectServer(jars, filecommit.server.PLUGIN_CLASS, os.path.join(work, f"server{i}.log"), conf=conf)
               for i in (1, 2)]
    sessions = []
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    failures = 0
    try:
        for s in servers:
            s.start()
            sessions.append(RemoteSparkSession.builder.remote(s.url).create())
        print(f"logstore={args.logstore} rounds={args.rounds} writers=3 appends={args.appends} (MinIO {work})")
        for r in range(args.rounds):
            path = f"s3a://{bucket}/round{r}/t"
            txn = r % 2 == 1
            writers = [cw.Writer(f"server1-{r}", 1, "server", sessions[0], txn=txn),
                       cw.Writer(f"server2-{r}", 2, "server", sessions[1], txn=txn),
                       cw.Writer(f"delta-rs-{r}", 3, "delta-rs", storage_options=cw.delta_rs_options(minio))]
            cw.create_table(sessions[0], path)
            seconds = cw.run_concurrently(writers, path, args.appends)
            errors = {w.name: len(w.errors) for w in writers if w.errors}
            try:
                summary = cw.check(minio, path, writers, every_version=False)
                verdict = f"ok: {summary['rows']} rows, {summary['versions']} versions, {summary['txns']} txns"
            except AssertionError as e:
                failures += 1
                verdict = f"BROKEN: {str(e).splitlines()[0]}"
            acked = sum(len(w.done) for w in writers)
            print(f"round {r} txn={txn}: {seconds:.1f} s, {acked} appends acknowledged "
                  f"({acked / seconds:.1f}/s), errors {errors or 0}; {verdict}", flush=True)
    finally:
        for s in sessions:
            try:
                s.stop()
            except Exception:  # noqa: BLE001 - teardown
                pass
        for s in servers:
            s.stop()
        minio.stop()
    print(f"{failures} of {args.rounds} rounds broken")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
