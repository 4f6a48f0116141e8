"""Every S3 request of staging, publishing, aborting and VACUUM of a small ``s3a://`` table.

Starts its own MinIO (``make minio``; ``tests/s3.py``), the recording proxy in front of it
(``tests/s3_proxy.py``) and an embedded Spark Connect server with the plugin and Hadoop S3A
(``make s3a-jars``) whose S3A endpoint is the proxy, as ``bench/profile_s3_append.py`` does. On
one unpartitioned table (``id`` BIGINT, two one-row appends first) it runs, each ``--rounds``
times: a staged one-row append (``filecommit.write(..., stage=True)``), its publish
(``filecommit.commit``), a second staged append and its abort (``filecommit.abort``), then one
VACUUM (``retention_hours=168``) and the history of a second table (one one-row append to it
first, so its snapshot is cached as after a write; ``filecommit.history`` loads it and reads its
commits).

Prints, per command, the requests the proxy saw between the call and its answer: method (``LIST``
for a listing GET), key (table prefix, versions and uuids abstracted), the S3A audit operation
from the ``Referer`` header (e.g. ``op_open``, ``op_create``, ``op_list_status``), and the S3A
counters the command reported (``metrics.object_store_requests``). Requests of background work
that overlaps a command (checkpoints, checksum files) are counted in it, as S3A's counters count
them; ``--settle`` seconds of sleep after each command keep them out of the next one.

With ``--jfr`` the server runs under a JDK Flight Recording, and the script prints, for every
``HEAD`` S3A sent to learn a file's status before opening it, the innermost Delta Kernel /
filecommit frames that opened the file (none when S3A opened it on its own thread pool), and keeps
the recording and the request log (``requests.json``) in its temporary directory.

Usage: ``python bench/profile_s3_publish.py [--rounds 1] [--settle 0.5] [--conf KEY=VALUE ...] [--jfr]``.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

import json  # noqa: E402
import subprocess  # noqa: E402

from profile_s3_append import _dump, _frames, _jfc, _kind, _op, _Seen, _shape  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--settle", type=float, default=0.5, help="seconds to wait after each command")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--jfr", action="store_true",
                    help="record the server with JFR and print, per S3A open that asked for the file's status "
                         "(a HEAD before the GET), the Delta Kernel / filecommit frames that opened it")
    args = ap.parse_args(argv)

    import s3
    import s3_proxy

    import filecommit

    base = tempfile.mkdtemp(prefix="filecommit-prof-publish-")
    minio = s3.MinioServer(os.path.join(base, "data"), os.path.join(base, "minio.log"))
    minio.start()
    proxy = s3_proxy.FaultProxy(minio.endpoint)
    proxy.seen = seen = _Seen()
    proxy.start()
    spark = None
    try:
        bucket = "prof"
        minio.create_bucket(bucket)
        conf = s3.server_conf(proxy.endpoint)
        conf["spark.jars"] = ",".join([filecommit.server.find_plugin_jar(), *s3.s3a_jars()])
        conf.update(kv.split("=", 1) for kv in args.conf)
        jfr_file = os.path.join(base, "server.jfr")
        if args.jfr:
            conf["spark.driver.extraJavaOptions"] = (
                "-XX:FlightRecorderOptions=stackdepth=256 "
                f"-XX:StartFlightRecording=filename={jfr_file},settings={_jfc(os.path.join(base, 's.jfc'))},"
                "dumponexit=true")
        spark = filecommit.local_session(conf=conf)
        table = f"s3a://{bucket}/staged_table"
        filecommit.write(spark.range(0, 1, 1, 1), table)
        filecommit.write(spark.range(1, 2, 1, 1), table)
        time.sleep(args.settle)

        def run(label, fn, metrics=lambda r: r.metrics.object_store_requests):
            i0 = len(seen.log)
            r = fn()
            reqs = list(seen.log[i0:])
            print(f"\n{label}: {len(reqs)} requests; S3A counters {dict(metrics(r)) if metrics else '-'}")
            for e in reqs:
                shape = _shape(e["path"], f"/{bucket}/staged_table")
                print(f"  {_kind(e['method'], e['path']):<5} {shape}  ({_op(e['referer'])})")
            time.sleep(args.settle)
            late = seen.log[i0 + len(reqs):]
            if late:
                print(f"  after the answer: {collections.Counter(_kind(e['method'], e['path']) for e in late)}")
            return r

        n = 10
        for _ in range(args.rounds):
            staged = run("staged one-row append",
                         lambda n=n: filecommit.write(spark.range(n, n + 1, 1, 1), table, stage=True))
            run("publish", lambda s=staged: filecommit.commit(spark, table, s))
            staged = run("staged one-row append (to abort)",
                         lambda n=n: filecommit.write(spark.range(n + 1, n + 2, 1, 1), table, stage=True))
            run("abort", lambda s=staged: filecommit.abort(spark, table, s), metrics=None)
            n += 2
        run("VACUUM", lambda: filecommit.vacuum(spark, table, retention_hours=168),
            metrics=lambda r: r.object_store_requests)
        cold = f"s3a://{bucket}/cold"
        filecommit.write(spark.range(0, 1, 1, 1), cold)
        time.sleep(args.settle)
        run("history of another table (its snapshot cached by its write)",
            lambda: filecommit.history(spark, cold), metrics=None)
        if args.jfr:
            _dump(jfr_file)
    finally:
        if spark is not None:
            spark.stop()
        proxy.stop()
        minio.stop()
    if args.jfr:
        _heads(jfr_file)
        Path(base, "requests.json").write_text(json.dumps(seen.log, default=str))
        print(f"recording {jfr_file}, requests {base}/requests.json")
    return 0


def _heads(jfr_file: str) -> None:
    """Prints who opened files through S3A's status-fetching open (a HEAD before the GET)."""
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "256", "--events", "jdk.SocketWrite", jfr_file],
                         capture_output=True, text=True, check=True).stdout
    callers = collections.Counter()
    for ev in json.loads(out)["recording"]["events"]:
        frames = _frames(ev)
        if not any("extractOrFetchSimpleFileStatus" in f or "S3AFileSystem.getFileStatus" in f for f in frames):
            continue
        ours = [f for f in frames if f.startswith(("io.filecommit", "io.delta"))][:4]
        callers[" <- ".join(ours)] += 1
    print("\nHEAD requests by the opener (socket writes of S3A status probes):")
    for k, n in callers.most_common():
        print(f"  {n:4d}  {k}")


if __name__ == "__main__":
    sys.exit(main())
