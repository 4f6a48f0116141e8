"""filecommit on a Spark standalone cluster: tasks on executors in other JVMs than the driver.

One cluster for the module (``tests/cluster.py``): a master, two workers (one executor each) and
a Connect server with the plugin attached to that master, with authentication on (a client
without the token is refused). Every table is checked with an independent reader (delta-rs; Spark
+ Delta for deletion vectors). The last two tests take executors away: a task that fails on one
executor is retried on the other, and a worker JVM killed during a write leaves either the whole
commit or none. The fixture stops every process of the cluster, also when a test fails, prints
the logs of a failed module, and fails if a process outlived it.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from urllib.parse import unquote

import pyarrow as pa
import pytest
from helpers import adds_in_log, delta_rows, log_actions
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

import filecommit

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(request, tmp_path_factory):
    from cluster import StandaloneCluster

    root = os.path.realpath(str(tmp_path_factory.mktemp("cluster_tables")))
    work = str(tmp_path_factory.mktemp("cluster_work"))
    failed_before = request.session.testsfailed
    started = time.time()
    c = StandaloneCluster(work, filecommit.server.find_plugin_jar(), f"file:{root}")
    with c:
        c.tables = root
        print(f"\nstandalone cluster up in {time.time() - started:.0f} s")
        yield c
        if request.session.testsfailed > failed_before:
            # Straight to the terminal: a module fixture's captured output is not reported.
            reporter = request.config.pluginmanager.get_plugin("terminalreporter")
            reporter.write_line("\nstandalone cluster logs (a test of tests/test_cluster.py failed):\n" + c.logs())
    left = c.pids()
    assert not left, f"cluster processes left behind: {left}"


@pytest.fixture(scope="module")
def spark(cluster):
    """The module's Connect session on the cluster (shadows the suite's embedded session)."""
    return cluster.session()


@pytest.fixture
def path(cluster, request):
    return os.path.join(cluster.tables, request.node.name.replace("[", "_").replace("]", ""))


def test_a_client_without_the_token_is_refused(cluster):
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    anonymous = RemoteSparkSession.builder.remote(f"sc://localhost:{cluster.connect_port}/;token=wrong").create()
    try:
        with pytest.raises(PySparkException) as e:
            anonymous.range(1).collect()
        assert "UNAUTHENTICATED" in str(e.value).upper()
    finally:
        try:
            anonymous.stop()
        except Exception:  # noqa: BLE001 - refused sessions may fail to release
            pass


def test_partitioned_append_and_overwrite_across_executors(spark, path):
    df = spark.range(0, 2000, numPartitions=4).select("id", (F.col("id") % 5).cast("int").alias("part"))
    r0 = filecommit.write(df, path, partition_by=["part"])
    r1 = filecommit.write(df.where("id < 500"), path, partition_by=["part"], mode="append")
    assert (r0.version, r1.version) == (0, 1)
    assert delta_rows(path, ["id"])["id"].tolist() == sorted(list(range(2000)) + list(range(500)))
    # The files come from tasks on both executors: each task of the write names its split.
    assert {a["path"] for a in adds_in_log(path, 0)} == {a.path for a in r0.add_files}
    r2 = filecommit.write(df.where("part = 1"), path, mode="overwrite", options={"replaceWhere": "part = 1"})
    assert r2.version == 2 and r2.remove_files
    rows = delta_rows(path, ["id", "part"])
    expected = sorted([i for i in range(2000) if i % 5 != 1] + [i for i in range(500) if i % 5 != 1]
                      + [i for i in range(2000) if i % 5 == 1])
    assert rows["id"].tolist() == list(expected)


def test_change_data_and_txn(spark, path):
    from deltalake import DeltaTable

    schema = "id long, name string, part string, _change_type string"
    filecommit.write(spark.createDataFrame([(1, "a", "x"), (2, "b", "y")], "id long, name string, part string"),
                     path, partition_by=["part"], table_properties={"delta.enableChangeDataFeed": "true"})
    batch = [(1, "a", "x", "update_preimage"), (1, "A", "x", "update_postimage"), (1, "A", "x", None),
             (3, "c", "y", "insert"), (3, "c", "y", None)]
    first = filecommit.write(spark.createDataFrame(batch, schema).repartition(2), path, change_data=True,
                             txn=("cluster-cdc", 1))
    again = filecommit.write(spark.createDataFrame(batch, schema), path, change_data=True, txn=("cluster-cdc", 1))
    assert first.committed and first.cdc_files and not again.committed and again.version == first.version
    feed = pa.table(DeltaTable(path).load_cdf(starting_version=1, ending_version=1)).to_pandas()
    assert sorted(zip(feed["id"], feed["name"], feed["_change_type"])) == [
        (1, "A", "update_postimage"), (1, "a", "update_preimage"), (3, "c", "insert")]
    assert DeltaTable(path).transaction_version("cluster-cdc") == 1
    assert delta_rows(path, ["id"])["id"].tolist() == [1, 1, 2, 3]


def test_delete_update_merge_with_deletion_vectors(spark, path, delta_spark):
    from deltalake import DeltaTable, QueryBuilder

    df = spark.range(0, 3000, numPartitions=3).select("id", (F.col("id") * 10).alias("v"),
                                                      (F.col("id") % 3).cast("string").alias("part"))
    # The table is created by Delta Lake (Spark + Delta) with deletion vectors enabled.
    made = delta_spark.read_one({"kind": "sql", "path": path, "sql": (
        "CREATE TABLE {table} (id BIGINT, v BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")})
    assert made["ok"], made
    filecommit.write(df, path)
    d = filecommit.delete(spark, path, "id % 10 = 0")
    u = filecommit.update(spark, path, {"v": "v + 1"}, "id % 10 = 1")
    source = spark.range(2990, 3010).select("id", F.lit(-1).cast("long").alias("v"),
                                             (F.col("id") % 3).cast("string").alias("part"))
    m = (filecommit.merge(source, path, "target.id = source.id")
         .when_matched_update({"v": "source.v"}).when_not_matched_insert_all().execute())
    assert (d.metrics.num_deleted_rows, u.metrics.num_updated_rows) == (300, 300)
    # 2991..2999 matched (2990 was deleted), 2990 and 3000..3009 inserted.
    assert (m.metrics.num_updated_rows, m.metrics.num_inserted_rows) == (9, 11)
    assert any(a.get("deletionVector") for a in adds_in_log(path, d.version))

    expected = {}
    for i in range(3000):
        if i % 10 != 0:
            expected[i] = i * 10 + (1 if i % 10 == 1 else 0)
    for i in range(2990, 3010):
        expected[i] = -1
    got = pa.table(QueryBuilder().register("t", DeltaTable(path)).execute("SELECT id, v FROM t").read_all())
    assert dict(zip(got["id"].to_pylist(), got["v"].to_pylist())) == expected
    answer = delta_spark.read([{"path": path, "kind": "table"}])[0]
    assert answer["ok"], answer
    assert {r["id"]: r["v"] for r in answer["rows"]} == expected


def test_batch_sink(spark, path):
    events = spark.range(0, 600, numPartitions=3).select("id", (F.col("id") % 2).cast("string").alias("day"))
    r0 = filecommit.write_batch(events.where("id < 300"), path, batch_id=0, partition_by=["day"])
    r1 = filecommit.write_batch(events.where("id >= 300"), path, batch_id=1, partition_by=["day"])
    again = filecommit.write_batch(events.where("id >= 300"), path, batch_id=1, partition_by=["day"])
    assert r0.committed and r1.committed and not again.committed
    # Spark's file-sink reader (through the log) sees every row once.
    assert sorted(r["id"] for r in spark.read.parquet(path).collect()) == list(range(600))
    with open(os.path.join(path, "_spark_metadata", "1"), encoding="utf-8") as f:
        logged = [json.loads(line)["path"] for line in f.read().split("\n")[1:]]
    assert len(logged) == len(r1.files)


def _recording_udf(marker_dir: str, fail_first_attempt_of_partition: int | None, sleep_s: float = 0.0):
    """A Python UDF (identity on ``id``) that records, per task attempt, the executor JVM running it
    in ``marker_dir/<partition>-<attempt>`` (``ok``/``fail`` and the JVM's pid), optionally raises
    in the first attempt of one partition, and optionally sleeps on each task's first row. Built
    here, so that cloudpickle ships it by value to the executors."""
    from pyspark.sql.functions import udf

    def executor_pid() -> int:
        pid = os.getpid()
        while pid > 1:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"CoarseGrainedExecutorBackend" in f.read():
                    return pid
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        raise RuntimeError("not under a Spark executor JVM")

    def mark(i):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        name = os.path.join(marker_dir, f"{ctx.partitionId()}-{ctx.attemptNumber()}")
        if not os.path.exists(name):
            fail = ctx.partitionId() == fail_first_attempt_of_partition and ctx.attemptNumber() == 0
            with open(name, "w") as f:
                f.write(f"{'fail' if fail else 'ok'} {executor_pid()}")
            if fail:
                raise RuntimeError("planned failure of this task attempt")
            if sleep_s:
                time.sleep(sleep_s)
        return i

    return udf(mark, "long")


def _markers(marker_dir: str) -> dict:
    out = {}
    for name in os.listdir(marker_dir):
        with open(os.path.join(marker_dir, name)) as f:
            status, pid = f.read().split()
        part, attempt = map(int, name.split("-"))
        out[(part, attempt)] = (status, int(pid))
    return out


def test_a_failed_task_is_retried_on_the_other_executor(spark, path, tmp_path):
    markers = str(tmp_path)
    mark = _recording_udf(markers, fail_first_attempt_of_partition=0)
    df = spark.range(0, 400, numPartitions=4).select(mark("id").alias("id"), (F.col("id") % 2).alias("part"))
    r = filecommit.write(df, path, partition_by=["part"])
    seen = _markers(markers)
    failed_on = seen[(0, 0)]
    retried = [v for (p, a), v in seen.items() if p == 0 and a > 0]
    assert failed_on[0] == "fail" and retried and retried[-1][0] == "ok"
    assert retried[-1][1] != failed_on[1], seen  # another executor JVM ran the retry
    assert len({pid for _, pid in seen.values()}) == 2
    # Exactly the rows, once; the failed attempt's files were aborted, none is in the table.
    assert delta_rows(path, ["id"])["id"].tolist() == list(range(400))
    assert r.version == 0 and len(r.add_files) == len(adds_in_log(path, 0))


def test_a_worker_killed_during_a_write_leaves_all_or_nothing(cluster, spark, path, tmp_path):
    # Last in the module: the cluster keeps one worker afterwards.
    markers = str(tmp_path)
    mark = _recording_udf(markers, fail_first_attempt_of_partition=None, sleep_s=2.0)
    df = spark.range(0, 8000, numPartitions=8).select(mark("id").alias("id"), (F.col("id") % 4).alias("part"))
    outcome = {}

    def run():
        try:
            outcome["result"] = filecommit.write(df, path, partition_by=["part"])
        except Exception as e:  # noqa: BLE001 - either outcome is allowed, checked below
            outcome["error"] = e

    writer = threading.Thread(target=run)
    writer.start()
    deadline = time.time() + 180
    while not os.listdir(markers):
        assert time.time() < deadline and writer.is_alive(), "the write never started a task"
        time.sleep(0.2)
    time.sleep(0.5)
    # The worker whose executor runs a task now: the executor JVM's nearest ancestor among the
    # cluster's worker processes.
    workers = {p.pid: n for n, p in cluster.procs.items() if n.startswith("worker")}
    pid = next(iter(_markers(markers).values()))[1]
    while pid not in workers:
        with open(f"/proc/{pid}/stat") as f:
            pid = int(f.read().rsplit(")", 1)[1].split()[1])
        assert pid > 1, "the executor is not a worker's descendant"
    worker = workers[pid]
    cluster.kill(worker, signal.SIGKILL)
    writer.join(timeout=600)
    assert not writer.is_alive()

    log = log_actions(path) if os.path.isdir(os.path.join(path, "_delta_log")) else {}
    if "result" in outcome:
        assert outcome["result"].version == 0 and list(log) == [0]
        assert delta_rows(path, ["id"])["id"].tolist() == list(range(8000))
        # Every file the commit names exists (no file of the dead executor's attempts in the log).
        for add in adds_in_log(path, 0):
            assert os.path.isfile(os.path.join(path, unquote(add["path"])))
        assert {(p, a) for p, a in _markers(markers)} >= {(p, 0) for p in range(8)}
    else:
        assert log == {}, f"failed write {outcome['error']!r} left commits {list(log)}"
    print(f"\nworker {worker} killed; the write {'completed' if 'result' in outcome else 'failed cleanly'}")
