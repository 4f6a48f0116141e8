"""Resource limits honoured: DELETE with deletion vectors of half of TPC-H SF1 lineitem in a server
container with a 1 GiB heap and a 2 GiB memory limit.

The server image of ``docker/Dockerfile`` runs with ``--memory=2g --memory-swap=2g`` (no swap) and
``FILECOMMIT_SERVER_OPTS=--driver-memory 1g`` (local mode: the executors share the driver's heap).
The table is lineitem at scale factor ``FILECOMMIT_CONTAINER_TPCH_SCALE`` (default 1: 6,001,215
rows, generated with ``tpchgen-cli`` as ``bench/bench_dv_delete.py`` does, cached under
``bench/.data/tpch``), made by Delta Lake on Spark (delta-spark, partitioned by ``l_shipmode``,
``delta.enableDeletionVectors = true``) on the volume the container mounts. Then
``filecommit.delete(spark, path, "l_orderkey % 2 = 0")`` through the container must succeed, the
container must still run and not have been OOM-killed, the JVM must have run with ``-Xmx1g``, and
both independent readers (delta-rs through its DataFusion query engine, which applies deletion
vectors, and Spark + Delta) count exactly the rows that do not match.

Runs only when ``FILECOMMIT_CONTAINER_IMAGE`` names the server image
(``docker/test-containers.sh memory``, ``make test-containers-memory``); several minutes.
"""

from __future__ import annotations

import os
import sys

import pytest
from crash_container import ContainerServer

import filecommit
from filecommit import _connect

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGE = os.environ.get("FILECOMMIT_CONTAINER_IMAGE")
SCALE = int(os.environ.get("FILECOMMIT_CONTAINER_TPCH_SCALE", "1"))
CONDITION = "l_orderkey % 2 = 0"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not IMAGE, reason="no server image: docker/test-containers.sh memory runs this"),
]


def _chown_tree(path: str, uid: int) -> None:
    for d, _dirs, files in os.walk(path):
        os.chown(d, uid, uid)
        for f in files:
            os.chown(os.path.join(d, f), uid, uid)


def test_dv_delete_of_half_of_lineitem_in_a_2g_container_with_1g_heap(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import bench_dv_delete
    from bench_rowlevel import generate

    shared = os.environ["FILECOMMIT_TEST_DIR"]
    source = generate(os.path.join(ROOT, "bench", ".data", "tpch"), SCALE)
    path = os.path.join(shared, "lineitem")
    delta = bench_dv_delete.Worker([os.path.join(ROOT, ".venv-delta", "bin", "python"),
                                    bench_dv_delete.__file__, "--delta-worker"], str(tmp_path / "delta.log"))
    server = ContainerServer(os.environ.get("FILECOMMIT_PODMAN", "podman"),
                             os.environ.get("FILECOMMIT_PODMAN_RUN_OPTS", "--network=host"),
                             IMAGE, f"filecommit-memory-{os.getpid()}", shared, str(tmp_path / "server.log"),
                             server_opts="--driver-memory 1g", memory="2g")
    try:
        made = delta.ask(op="create", path=path, source=source, sql=(
            f"SELECT count(*) AS n, count_if({CONDITION}) AS m FROM delta.`{path}`"))
        assert made["ok"], made
        total, matching = made["rows"][0]["n"], made["rows"][0]["m"]
        assert 0.45 < matching / total < 0.55
        _chown_tree(path, 185)  # the container's user (uid 185) writes the deletion vectors and the log
        server.start()
        assert server.inspect("{{.HostConfig.Memory}}") == str(2 * 1024**3)
        assert "-Xmx1g" in server.exec("ps", "-o", "args=", "-C", "java")
        spark = _connect.connect(server.url)
        try:
            r = filecommit.delete(spark, path, CONDITION)
        finally:
            spark.stop()
        assert r.metrics.num_deleted_rows == matching
        assert server.alive(), server.log_tail()
        assert server.inspect("{{.State.OOMKilled}}") == "false"
        assert bench_dv_delete.delta_rs_count(path) == total - matching
        counted = delta.ask(op="count", sql=f"SELECT count(*) AS n FROM delta.`{path}`")
        assert counted["ok"] and counted["rows"][0]["n"] == total - matching, counted
        print(f"\ncontainer memory test: lineitem SF{SCALE} {total:,} rows, DELETE WHERE {CONDITION} removed "
              f"{matching:,} with deletion vectors in a 2 GiB container, 1 GiB heap; both readers count "
              f"{total - matching:,}", flush=True)
    finally:
        server.stop()
        delta.close()
