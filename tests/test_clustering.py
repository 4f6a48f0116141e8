"""Liquid clustering (PROTOCOL.md "Clustered Table"): tables made by delta-spark 4.4 with ``CLUSTER BY``.

filecommit appends, updates, deletes, merges, optimizes and restores them; its OPTIMIZE lays the
files out along the Hilbert curve of the clustering columns and marks them ``clusteringProvider:
liquid``, as Delta's does (``OPTIMIZE ZORDER BY`` is refused there, as in Delta); Spark + Delta
reads the rows back, its ``DESCRIBE DETAIL`` still names the clustering columns, and Delta's own
writer co-writes afterwards.
"""

from __future__ import annotations

import json

import pytest
from helpers import log_actions
from test_faults import condition

import filecommit

pytestmark = pytest.mark.slow


def _sql(delta_spark, path, stmt):
    r = delta_spark.read_one({"kind": "sql", "path": path, "sql": stmt})
    assert r["ok"], r
    return r["rows"]


def _adds(path, version):
    return [a["add"] for a in log_actions(path)[version] if "add" in a]


def test_delta_clustered_table_takes_filecommit_commands(spark, delta_spark, table_path):
    _sql(delta_spark, table_path, "CREATE TABLE {table} (a BIGINT, b BIGINT, v STRING) USING delta CLUSTER BY (a, b)")
    _sql(delta_spark, table_path, "INSERT INTO {table} VALUES (1, 1, 'x'), (9, 9, 'y')")
    rows = [(a, b, f"r{a}{b}") for a in range(8) for b in range(8)]
    df = spark.createDataFrame(rows, "a long, b long, v string").repartition(4)
    assert filecommit.write(df, table_path).version == 2
    assert filecommit.update(spark, table_path, set={"v": "'u'"}, condition="a = 1 AND b = 1").version == 3
    assert filecommit.delete(spark, table_path, "a = 9").version == 4
    src = spark.createDataFrame([(0, 0, "m"), (20, 20, "n")], "a long, b long, v string")
    assert (filecommit.merge(src, table_path, "target.a = source.a AND target.b = source.b")
            .when_matched_update({"v": "source.v"}).when_not_matched_insert_all().execute()).version == 5

    opt = filecommit.optimize(spark, table_path)
    assert opt.committed and opt.version == 6
    adds = _adds(table_path, 6)
    assert adds and all(a["clusteringProvider"] == "liquid" and not a["dataChange"] for a in adds), adds
    # Stats on the clustering columns of every file written.
    assert all({"a", "b"} <= set(json.loads(a["stats"])["minValues"]) for a in adds)

    expected = [(a, b, {(1, 1): "u", (0, 0): "m"}.get((a, b), f"r{a}{b}")) for a in range(8) for b in range(8)]
    expected += [(1, 1, "u"), (20, 20, "n")]
    got = _sql(delta_spark, table_path, "SELECT a, b, v FROM {table}")
    assert sorted((r["a"], r["b"], r["v"]) for r in got) == sorted(expected)

    assert filecommit.restore(spark, table_path, version=4).version == 7
    detail = _sql(delta_spark, table_path, "DESCRIBE DETAIL {table}")[0]
    assert detail["clusteringColumns"] == ["a", "b"], detail
    # Delta's writer co-writes afterwards.
    _sql(delta_spark, table_path, "INSERT INTO {table} VALUES (30, 30, 'd')")
    n = _sql(delta_spark, table_path, "SELECT count(*) AS n FROM {table}")[0]["n"]
    assert n == 64 + 1 + 1  # version 4's rows (a = 9 deleted) and Delta's row


def test_zorder_on_clustered_table_is_refused(spark, delta_spark, table_path):
    _sql(delta_spark, table_path, "CREATE TABLE {table} (a BIGINT, v STRING) USING delta CLUSTER BY (a)")
    _sql(delta_spark, table_path, "INSERT INTO {table} VALUES (1, 'x')")
    with pytest.raises(Exception) as e:
        filecommit.optimize(spark, table_path, zorder_by=["a"])
    assert condition(e.value) == "DELTA_CLUSTERING_WITH_ZORDER_BY", e.value
