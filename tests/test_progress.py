"""Spark Connect execution progress reaches the client during filecommit commands.

The server streams ``ExecutePlanResponse.execution_progress`` (stage and task counts of the Spark
jobs tagged with the operation, Spark's ``ConnectProgressExecutionListener``) while a command
runs; handlers registered with ``spark.registerProgressHandler`` must see them for filecommit
commands as they do for ``collect()``.
"""

from __future__ import annotations

import pytest
from helpers import delta_rows
from pyspark.sql import functions as F

import filecommit

pytestmark = pytest.mark.slow

INTERVAL = "spark.connect.progress.reportInterval"


class Recorder:
    """A progress handler that keeps every call: (stage snapshots, inflight tasks, done)."""

    def __init__(self):
        self.calls = []

    def __call__(self, stages, inflight_tasks, operation_id, done):
        self.calls.append(([(s.stage_id, s.num_tasks, s.num_completed_tasks, s.done) for s in stages or []],
                           inflight_tasks, operation_id, done))

    def stages(self):
        """stage id -> (num_tasks, most completed tasks seen, seen done)."""
        out = {}
        for stages, _, _, _ in self.calls:
            for sid, num, completed, done in stages:
                n, c, d = out.get(sid, (num, 0, False))
                out[sid] = (num, max(c, completed), d or done)
        return out


@pytest.fixture
def progress(spark):
    """A registered Recorder and a short report interval (100 ms) for this test only."""
    recorder = Recorder()
    old = spark.conf.get(INTERVAL)
    spark.conf.set(INTERVAL, "100ms")
    spark.registerProgressHandler(recorder)
    yield recorder
    spark.removeProgressHandler(recorder)
    spark.conf.set(INTERVAL, old)


def test_multi_stage_write_reports_stage_progress(spark, table_path, progress):
    # A shuffle before the write: at least two stages (map side and the writing stage).
    df = (spark.range(0, 300_000, numPartitions=4)
          .withColumn("part", (F.col("id") % 5).cast("int"))
          .withColumn("v", F.sha2(F.col("id").cast("string"), 256))
          .repartition(3, "part"))
    result = filecommit.write(df, table_path, partition_by=["part"])
    assert result.metrics.rows == 300_000

    stages = progress.stages()
    finished = {sid: num for sid, (num, completed, done) in stages.items() if done and completed == num > 0}
    # The map stage of the shuffle (4 tasks) ran to the end and was reported done while the command
    # ran; the writing stage (3 tasks) was reported. Whether the writing stage's own completion
    # reaches a report before the final one is a race inside Spark: the listener bus delivers
    # onStageCompleted asynchronously, possibly after the command has answered.
    assert 4 in finished.values(), progress.calls
    assert 3 in {num for num, _, _ in stages.values()}, progress.calls
    operation_ids = {op for _, _, op, _ in progress.calls}
    assert len(operation_ids) == 1 and None not in operation_ids
    assert progress.calls[-1][3] is True  # the final call says done
    assert len(delta_rows(table_path, ["id"])) == 300_000


def test_delete_reports_progress(spark, table_path, progress):
    filecommit.write(spark.range(0, 50_000, numPartitions=2), table_path)
    progress.calls.clear()
    result = filecommit.delete(spark, table_path, "id % 7 = 0")
    assert result.metrics.num_deleted_rows == len(range(0, 50_000, 7))
    assert progress.stages(), progress.calls


def test_update_and_merge_report_progress(spark, table_path, progress):
    filecommit.write(spark.range(0, 50_000, numPartitions=2).withColumn("v", F.col("id")), table_path)
    progress.calls.clear()
    u = filecommit.update(spark, table_path, {"v": "v + 1"}, "id % 5 = 0")
    assert u.metrics.num_updated_rows == 10_000
    assert progress.stages(), progress.calls
    progress.calls.clear()
    source = spark.range(49_990, 50_010).withColumn("v", F.lit(-1).cast("long"))
    m = (filecommit.merge(source, table_path, "target.id = source.id")
         .when_matched_update({"v": "source.v"}).when_not_matched_insert_all().execute())
    assert (m.metrics.num_updated_rows, m.metrics.num_inserted_rows) == (10, 10)
    assert progress.stages(), progress.calls
