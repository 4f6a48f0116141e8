"""Group commit on an object store whose conditional PUT is slow: 16 writers (one Spark Connect
session and thread each) append one row at a time to one ``s3a://`` table on the second server
(``s3_peer``), whose S3A reaches MinIO through the proxy (``tests/s3_proxy.py``) with every
conditional commit PUT delayed 60 ms (one S3 key prefix takes ~15 such PUTs per second).

One PUT per append would cap the table near 16 appends per second; group commit publishes the
appends that queue while a PUT is in flight as one version. Counted, not timed: at least twice as
many appends as versions (so the 60 ms PUTs, at most ~16 versions per second, do not cap the
appends at one per PUT: the rate the server then reaches depends on its CPU, and is a figure of
``bench/bench_s3_group.py``, printed here), exactly one conditional PUT per version (a group goes
after the version the previous one landed at, so it loses no race to it), every row exactly once,
read back by Spark + Delta (``delta_spark``) and the raw log (each answered version's JSON commit
holds that append's file).
"""

from __future__ import annotations

import collections
import os

import pytest
import s3_cowriters as cw
import s3_proxy
from pyspark.sql.connect.session import SparkSession as RemoteSparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

import filecommit

pytestmark = pytest.mark.slow

WRITERS = 16
SECONDS = 10
DELAY_S = 0.06
# A StructType, not a DDL string: Spark Connect parses a DDL string with a request to the server.
SCHEMA = StructType([StructField("id", LongType()), StructField("writer", StringType())])


def test_sixteen_writers_share_the_slow_conditional_puts_of_one_table(peer, minio, s3_table_path):
    path = s3_table_path
    cw.create_table(peer.spark, path)  # version 0: id -1
    sessions = [RemoteSparkSession.builder.remote(peer.server.url).create() for _ in range(WRITERS)]
    slow = peer.proxy.arm("PUT", s3_proxy.COMMIT_PUT, "delay", seconds=DELAY_S)

    def append(w, n):
        df = sessions[w].createDataFrame([(cw.ids(w, n, 1)[0], f"w{w}")], SCHEMA)
        return filecommit.write(df, path, mode="append")

    warm = {}
    load = os.getloadavg()[0]
    try:
        out = cw.append_for(WRITERS, SECONDS, append, warmup=lambda w: warm.setdefault(w, append(w, 999)))
    finally:
        for s in sessions:
            s.stop()
    peer.proxy.clear()
    assert not out["errors"], out["errors"][:3]
    timed = [(w, n, r) for w, rs in out["results"].items() for n, r in rs]
    answers = [*((w, 999, r) for w, r in warm.items()), *timed]
    rate = len(timed) / out["wall_s"]

    commits = cw.log_commits(minio.filesystem(), path)
    versions = sorted(commits)
    assert versions == list(range(len(versions))), "versions contiguous"
    for w, n, r in answers:
        assert r.committed and {a.path for a in r.add_files} <= \
            {a["add"]["path"] for a in commits[r.version] if "add" in a}, f"writer {w} append {n}: {r.version}"
    sizes = collections.Counter(r.version for _w, _n, r in answers)
    summary = (f"{len(timed)} appends in {out['wall_s']:.1f} s = {rate:.1f}/s; {len(answers)} appends in "
               f"{versions[-1]} versions, {slow.fired} conditional PUTs; group sizes {sorted(sizes.values())}; "
               f"load average {load:.1f}")
    print(summary)

    read = peer.delta_spark.read_one({"path": path, "kind": "table"})
    assert read["ok"], read.get("error")
    assert read["version"] == versions[-1]
    got = sorted(row["id"] for row in read["rows"])
    want = sorted([-1, *(cw.ids(w, n, 1)[0] for w, n, _r in answers)])
    assert got == want, f"{len(got)} rows, {len(set(got))} distinct, {len(want)} expected"

    assert len(answers) >= 2 * versions[-1], f"groups of 2 or more on average: {summary}"
    assert slow.fired == versions[-1], f"one conditional PUT per version: {summary}"
