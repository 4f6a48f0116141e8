"""The smoke script of tests/test_client_versions.py: run with ANOTHER client venv's Python (``make
client-venvs``: the Connect-only ``pyspark-client`` of the oldest supported release, the filecommit
client installed ``--no-deps`` and delta-spark's pure-Python Delta Connect client), never imported
by the suite.

``python client_versions_smoke.py URL TABLE_DIR OUTSIDE_PATH REPORT`` connects to the server at
``URL`` (``sc://host:port/;token=...``), then under ``TABLE_DIR``, through the filecommit client:
writes a partitioned table from local rows (one ``ExecutePlan`` stream), appends rows of a
server-side ``range`` (reattachable execution), DELETEs, MERGEs, reads the history and the rows
back; through delta-spark's ``DeltaTable``: ``forPath(...).delete(...)``, ``history()``,
``toDF()``; through the filecommit client again: publishes a staged DELETE that conflicts with a
direct one (then aborts it), writes once to ``OUTSIDE_PATH`` (outside the server's allowed roots)
for the refusal and, on ``pyspark-client``, calls ``filecommit.local_session()``, which needs a
JVM. It writes a JSON report of every answer (and the seconds each step took) to ``REPORT`` for
the test to check against delta-rs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time

START = time.monotonic()


def _add_file_dicts(result) -> list[dict]:
    return [{"path": a.path, "size": a.size, "partition_values": a.partition_values, "data_change": a.data_change}
            for a in result.add_files]


def _commit(result) -> dict:
    return {"version": result.version, "committed": result.committed, "adds": _add_file_dicts(result),
            "removes": sorted(r.path for r in result.remove_files),
            "metrics": {"rows": result.metrics.rows, "deleted": result.metrics.num_deleted_rows,
                        "updated": result.metrics.num_updated_rows, "inserted": result.metrics.num_inserted_rows}}


def _step(report: dict, name: str) -> None:
    """Record the seconds since the previous step under ``report["step_seconds"][name]``."""
    now = time.monotonic()
    report.setdefault("step_seconds", {})[name] = round(now - report.pop("_at", START), 2)
    report["_at"] = now


def main(url: str, table_dir: str, outside: str, report_path: str) -> None:
    from importlib.metadata import version

    import pyspark
    from delta.tables import DeltaTable
    from pyspark.errors import PySparkException
    from pyspark.sql import SparkSession

    import filecommit

    spark = SparkSession.builder.remote(url).getOrCreate()
    report_imports = round(time.monotonic() - START, 1)
    path = os.path.join(table_dir, "events")
    report: dict = {"pyspark": pyspark.__version__, "delta_spark": version("delta-spark"), "path": path,
                    "import_seconds": report_imports, "_at": time.monotonic()}
    rows = [(1, "a", 10), (2, "b", 20), (3, "a", 30), (4, "b", 40)]
    report["write"] = _commit(filecommit.write(spark.createDataFrame(rows, "id long, kind string, v long"), path,
                                               partition_by=["kind"]))
    _step(report, "write")
    big = spark.range(5, 8).selectExpr("id", "'c' AS kind", "id * 10 AS v")
    report["append"] = _commit(filecommit.write(big, path, mode="append"))
    _step(report, "append")
    report["delete"] = _commit(filecommit.delete(spark, path, "id = 2"))
    _step(report, "delete")
    updates = spark.createDataFrame([(1, "a", 11), (9, "d", 90)], "id long, kind string, v long")
    report["merge"] = _commit(filecommit.merge(updates, path, "target.id = source.id")
                              .when_matched_update_all().when_not_matched_insert_all().execute())
    _step(report, "merge")
    report["history"] = [[c.version, c.operation] for c in filecommit.history(spark, path)]
    _step(report, "history")
    read = spark.read.format("filecommit").load(path).orderBy("id").collect()
    report["rows"] = [[r.id, r.kind, r.v] for r in read]
    _step(report, "read")

    events = DeltaTable.forPath(spark, path)
    report["delta_is_delta_table"] = bool(DeltaTable.isDeltaTable(spark, path))
    deleted = events.delete("id = 3")
    # delta-spark's Connect client answers delete() with a DataFrame of num_affected_rows.
    report["delta_delete"] = [r.asDict() for r in deleted.collect()] if deleted is not None else None
    _step(report, "delta_delete")
    report["delta_history"] = [[r.version, r.operation] for r in events.history().orderBy("version").collect()]
    report["delta_rows"] = [[r.id, r.kind, r.v] for r in events.toDF().orderBy("id").collect()]
    _step(report, "delta_history_rows")

    # A conflict: a staged DELETE published after a direct DELETE of the same row, raised as the
    # Delta-named type that filecommit.conflicts registers in pyspark's error conversion.
    staged = filecommit.delete(spark, path, "id = 4", stage=True)
    report["delete_again"] = _commit(filecommit.delete(spark, path, "id = 4"))
    try:
        filecommit.commit(spark, path, staged)
        report["conflict"] = None
    except PySparkException as e:
        report["conflict"] = [type(e).__name__, e.getCondition(), isinstance(e, filecommit.conflicts.CommitConflict)]
    filecommit.abort(spark, path, staged)
    _step(report, "conflict")

    try:
        filecommit.write(spark.createDataFrame([(1,)], "id long"), outside)
        report["outside"] = None
    except PySparkException as e:
        report["outside"] = e.getCondition()
    spark.stop()
    _step(report, "outside")
    if importlib.util.find_spec("pyspark.core") is None:  # pyspark-client: no JVM for an embedded server
        try:
            filecommit.local_session()
            report["local_session"] = "started"
        except ImportError:
            report["local_session"] = "ImportError"
    report.pop("_at", None)
    report["seconds"] = round(time.monotonic() - START, 1)
    with open(report_path, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(*sys.argv[1:5])
