"""A commit of 60,000 files (100,000 in ``make test-stress``) on a server with a 1 GiB heap, and
the V2 checkpoint with sidecars that follows it (protocol "V2 Spec", "Sidecar Files", "UUID-named checkpoint").

The table is made by Delta Lake on Spark (the ``delta_spark`` worker) with ``delta.checkpointPolicy
= v2``. That many one-row Parquet files (copies of a few pyarrow-written templates) are staged and
published as ONE commit through a second Connect server started with ``spark.driver.memory=1g``
(local mode: the executors share that heap), which must answer with every committed add action.
The next write (version 2, a multiple of ``delta.checkpointInterval = 2``) leaves a UUID-named
checkpoint whose file actions (one more than the files) are in ``_delta_log/_sidecars`` (at most 50,000 each).
Then the commits before it are deleted (as log retention does), so the files are known only from
the sidecars, and Spark + Delta (Delta's own checkpoint reader) and delta-rs read the table:
the file and row counts and a sample of rows picked by statistics.

``FILECOMMIT_SIDECAR_FILES`` changes the number of files (``helpers.stress_size``: 60,000 in ``make
test``, 100,000 in ``make test-stress``; above 50,000 the checkpoint has two sidecars).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta_tables import drop_commits_before
from helpers import shared_dir, stress_size

import filecommit

pytestmark = pytest.mark.slow

FILES = stress_size("FILECOMMIT_SIDECAR_FILES", 60_000, 100_000)
SAMPLE = 10  # files 1..SAMPLE hold id = 1..SAMPLE; every other file holds id = 0


def _make_files(path: str) -> list[str]:
    """``FILES`` one-row Parquet files in the table root, copied from ``SAMPLE + 1`` templates."""
    templates = os.path.join(os.path.dirname(path), "templates")
    os.makedirs(templates, exist_ok=True)
    for i in range(1, SAMPLE + 1):
        pq.write_table(pa.table({"id": pa.array([i], pa.int64())}), os.path.join(templates, f"{i}.parquet"))
    for c in range(FILES // 50_000 + 1):  # ext4 allows 65,000 links per file
        pq.write_table(pa.table({"id": pa.array([0], pa.int64())}), os.path.join(templates, f"zero{c}.parquet"))
    names = []
    for n in range(FILES):
        name = f"part-{n:06d}.parquet"
        # Hard links: a directory entry each, far cheaper than writing that many files.
        template = f"{n}.parquet" if 1 <= n <= SAMPLE else f"zero{n // 50_000}.parquet"
        os.link(os.path.join(templates, template), os.path.join(path, name))
        names.append(name)
    return names


def _wait_for_checkpoint(path: str, version: int, timeout: float = 120) -> list[str]:
    pattern = os.path.join(path, "_delta_log", f"{version:020d}.checkpoint.*.json")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = glob.glob(pattern)
        last = os.path.join(path, "_delta_log", "_last_checkpoint")
        if found and os.path.exists(last):
            with open(last) as fh:
                if json.load(fh).get("version") == version:
                    return found
        time.sleep(0.5)
    return glob.glob(pattern)


@pytest.fixture(scope="module")
def big_server(tmp_path_factory):
    """A second Connect server with the plugin and a 1 GiB driver heap (its own JVM)."""
    from crash_server import ConnectServer
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    root = os.path.realpath(str(tmp_path_factory.getbasetemp()))
    log = str(tmp_path_factory.mktemp("big_server") / "server.log")
    # An OutOfMemoryError ends the JVM at once (the test then sees it gone), whatever catches it.
    opts = "-XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError"
    server = ConnectServer(filecommit.server.find_plugin_jar(), filecommit.server.PLUGIN_CLASS, log,
                           conf={"spark.driver.memory": "1g", "spark.filecommit.allowedRoots": root,
                                 "spark.driver.extraJavaOptions": opts})
    server.start()
    session = RemoteSparkSession.builder.remote(server.url).create()
    try:
        yield session, server
    finally:
        try:
            session.stop()
        finally:
            server.stop()


@pytest.mark.stress
def test_one_commit_of_many_files_in_1g_heap_then_a_v2_checkpoint_with_sidecars(big_server, delta_spark, tmp_path_factory):
    spark, server = big_server
    path = os.path.join(shared_dir(tmp_path_factory.mktemp("sidecars")), "t")
    made = delta_spark.make([{"name": "t", "path": path, "steps": [{"sql": (
        "CREATE TABLE {table} (id BIGINT) USING delta TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', "
        "'delta.checkpointInterval' = '2')")}]}])()["t"]
    assert made["ok"], made
    assert "v2Checkpoint" in made["detail"]["tableFeatures"]

    t0 = time.monotonic()
    names = _make_files(path)
    t_files = time.monotonic() - t0
    staged = filecommit.stage_files(spark, path, names)
    t_staged = time.monotonic() - t0
    result = filecommit.commit(spark, path, staged)
    t_commit = time.monotonic() - t0
    print(f"\nfiles {t_files:.1f}s, staged {t_staged:.1f}s, committed {t_commit:.1f}s")
    assert result.committed and result.version == 1
    assert len(result.add_files) == FILES, "every committed add action comes back"
    assert {a.path for a in result.add_files} == set(names)

    # The JVM ran with the 1 GiB heap and is still alive (no OutOfMemoryError: it would have exited).
    with open(f"/proc/{server.proc.pid}/cmdline", "rb") as fh:
        args = fh.read().split(b"\0")
    assert b"-Xmx1g" in args, args
    assert server.proc.poll() is None

    # Version 2 (a multiple of the interval): the server writes the V2 checkpoint in the background.
    extra = filecommit.write(spark.createDataFrame([(-1,)], "id long"), path, mode="append")
    assert extra.version == 2
    found = _wait_for_checkpoint(path, 2)
    assert len(found) == 1, os.listdir(os.path.join(path, "_delta_log"))
    assert re.fullmatch(r"0{19}2\.checkpoint\.[0-9a-f-]{36}\.json", os.path.basename(found[0]))
    assert not os.path.exists(os.path.join(path, "_delta_log", f"{2:020d}.checkpoint.parquet"))
    with open(found[0]) as fh:
        top = [json.loads(line) for line in fh]
    assert top[0]["checkpointMetadata"]["version"] == 2
    sidecars = [a["sidecar"] for a in top if "sidecar" in a]
    assert not any("add" in a or "remove" in a for a in top)
    sidecar_rows = 0
    for s in sidecars:
        f = pq.ParquetFile(os.path.join(path, "_delta_log", "_sidecars", s["path"]))
        assert f.metadata.num_rows <= 50_000
        assert f.schema_arrow.names == ["add", "remove"]
        sidecar_rows += f.metadata.num_rows
    assert sidecar_rows == FILES + 1
    assert len(sidecars) == -(-(FILES + 1) // 50_000)
    t_checkpoint = time.monotonic() - t0
    print(f"checkpoint {t_checkpoint:.1f}s")

    # The files are now known only from the sidecars.
    drop_commits_before(path, 2)
    assert not os.path.exists(os.path.join(path, "_delta_log", f"{1:020d}.json"))
    r = delta_spark.read([
        {"path": path, "kind": "sql", "sql": "SELECT count(*) AS n FROM {table}"},
        {"path": path, "kind": "sql", "sql": f"SELECT id FROM {{table}} WHERE id BETWEEN 1 AND {SAMPLE} OR id = -1"},
        {"path": path, "kind": "detail"},
    ])
    assert all(x["ok"] for x in r), r
    assert r[0]["rows"] == [{"n": FILES + 1}]
    assert sorted(row["id"] for row in r[1]["rows"]) == [-1, *range(1, SAMPLE + 1)]
    assert r[2]["numFiles"] == FILES + 1 and r[2]["latest_version"] == 2

    from deltalake import DeltaTable, QueryBuilder

    dt = DeltaTable(path)
    assert dt.version() == 2
    adds = dt.get_add_actions(flatten=True)
    assert adds.num_rows == FILES + 1
    got = QueryBuilder().register("t", dt).execute(
        f"SELECT id FROM t WHERE id BETWEEN 1 AND {SAMPLE} OR id = -1").read_all()
    assert sorted(got.column("id").to_pylist()) == [-1, *range(1, SAMPLE + 1)]
    shutil.rmtree(path, ignore_errors=True)
