"""Liquid clustering (PROTOCOL.md "Clustered Table"): tables made by delta-spark 4.4 with ``CLUSTER BY``.

filecommit appends, updates, deletes, merges, optimizes and restores them; its OPTIMIZE lays the
files out along the Hilbert curve of the clustering columns and marks them ``clusteringProvider:
liquid``, as Delta's does (``OPTIMIZE ZORDER BY`` is refused there, as in Delta); Spark + Delta
reads the rows back, its ``DESCRIBE DETAIL`` still names the clustering columns, and Delta's own
writer co-writes afterwards.
"""

from __future__ import annotations

import itertools
import json
import os

import pytest
from helpers import error_class, log_actions, spark_delta_sql
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow


def _adds(path, version):
    return [a["add"] for a in log_actions(path)[version] if "add" in a]


def test_delta_clustered_table_takes_filecommit_commands(spark, delta_spark, table_path):
    spark_delta_sql(delta_spark, table_path,
                    "CREATE TABLE {table} (a BIGINT, b BIGINT, v STRING) USING delta CLUSTER BY (a, b)")
    spark_delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (1, 1, 'x'), (9, 9, 'y')")
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
    got = spark_delta_sql(delta_spark, table_path, "SELECT a, b, v FROM {table}")
    assert sorted((r["a"], r["b"], r["v"]) for r in got) == sorted(expected)

    assert filecommit.restore(spark, table_path, version=4).version == 7
    detail = spark_delta_sql(delta_spark, table_path, "DESCRIBE DETAIL {table}")[0]
    assert detail["clusteringColumns"] == ["a", "b"], detail
    # Delta's writer co-writes afterwards.
    spark_delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (30, 30, 'd')")
    n = spark_delta_sql(delta_spark, table_path, "SELECT count(*) AS n FROM {table}")[0]["n"]
    assert n == 64 + 1 + 1  # version 4's rows (a = 9 deleted) and Delta's row


def test_zorder_on_clustered_table_is_refused(spark, delta_spark, table_path):
    spark_delta_sql(delta_spark, table_path, "CREATE TABLE {table} (a BIGINT, v STRING) USING delta CLUSTER BY (a)")
    spark_delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (1, 'x')")
    with pytest.raises(PySparkException) as e:
        filecommit.optimize(spark, table_path, zorder_by=["a"])
    assert error_class(e.value) == "DELTA_CLUSTERING_WITH_ZORDER_BY", e.value


def _domain(path, version):
    """The ``delta.clustering`` domain metadata of a commit, or None."""
    for a in log_actions(path)[version]:
        if "domainMetadata" in a and a["domainMetadata"]["domain"] == "delta.clustering":
            return a["domainMetadata"]
    return None


def _sample_df(spark, n=16):
    return spark.createDataFrame([(i, f"s{(i * 7) % n:02d}", f"v{i}") for i in range(n)], "a long, b string, v string")


def test_cluster_by_creates_a_clustered_table_that_delta_reads_and_alter_changes(spark, delta_spark, table_path):
    """filecommit.write(cluster_by=...) on a new column-mapped table, then ALTER TABLE ... CLUSTER BY
    through the catalog, then OPTIMIZE by the new columns; Delta reads, co-writes and optimizes."""
    r = filecommit.write(_sample_df(spark).repartition(2), table_path, cluster_by=["a", "b"],
                         table_properties={"delta.columnMapping.mode": "name"})
    assert r.version == 0
    actions = log_actions(table_path)[0]
    protocol = next(a["protocol"] for a in actions if "protocol" in a)
    assert {"clustering", "domainMetadata", "columnMapping"} <= set(protocol["writerFeatures"]), protocol
    schema = json.loads(next(a["metaData"] for a in actions if "metaData" in a)["schemaString"])
    physical = {f["name"]: f["metadata"]["delta.columnMapping.physicalName"] for f in schema["fields"]}
    assert physical["a"] != "a"  # column mapping gave physical names: the domain must hold those
    domain = json.loads(_domain(table_path, 0)["configuration"])
    assert domain == {"clusteringColumns": [[physical["a"]], [physical["b"]]], "domainName": "delta.clustering"}, domain
    assert "clusteringColumns" not in next(a["metaData"] for a in actions if "metaData" in a)["configuration"]
    assert spark_delta_sql(delta_spark, table_path, "DESCRIBE DETAIL {table}")[0]["clusteringColumns"] == ["a", "b"]

    # Delta's writer co-writes and optimizes the table filecommit created.
    spark_delta_sql(delta_spark, table_path, "INSERT INTO {table} VALUES (100, 's99', 'd')")
    spark_delta_sql(delta_spark, table_path, "OPTIMIZE {table}")
    v = max(log_actions(table_path))

    # ALTER TABLE ... CLUSTER BY through filecommit's catalog: a commit of the domain only.
    spark.sql(f"ALTER TABLE delta.`{table_path}` CLUSTER BY (b)").collect()
    commit = log_actions(table_path)[v + 1]
    assert sorted(k for a in commit for k in a) == ["commitInfo", "domainMetadata"], commit
    assert spark_delta_sql(delta_spark, table_path, "DESCRIBE DETAIL {table}")[0]["clusteringColumns"] == ["b"]

    # filecommit's OPTIMIZE now lays the files out by b alone (one column: range order, so the
    # files' b ranges do not overlap).
    opt = filecommit.optimize(spark, table_path, target_file_size=900)
    assert opt.committed
    adds = _adds(table_path, opt.version)
    assert len(adds) > 1 and all(a["clusteringProvider"] == "liquid" for a in adds), adds
    stats = sorted((s["minValues"][physical["b"]], s["maxValues"][physical["b"]])
                   for s in (json.loads(a["stats"]) for a in adds))
    assert all(hi < lo for (_, hi), (lo, _) in itertools.pairwise(stats)), stats
    got = spark_delta_sql(delta_spark, table_path, "SELECT count(*) AS n FROM {table}")[0]["n"]
    assert got == 17

    spark.sql(f"ALTER TABLE delta.`{table_path}` CLUSTER BY NONE").collect()
    assert spark_delta_sql(delta_spark, table_path, "DESCRIBE DETAIL {table}")[0]["clusteringColumns"] == []


def test_sql_create_table_cluster_by(spark, delta_spark, tmp_path):
    """CREATE TABLE ... CLUSTER BY, CTAS with CLUSTER BY and writeTo().clusterBy().create() through
    filecommit's catalog, and df.write.clusterBy().save(), make clustered tables that Delta reads as such."""
    made = {}
    p1 = str(tmp_path / "ddl")
    spark.sql(f"CREATE TABLE delta.`{p1}` (a BIGINT, b STRING) USING delta CLUSTER BY (b, a)").collect()
    made[p1] = ["b", "a"]
    p2 = str(tmp_path / "ctas")
    spark.sql(f"CREATE TABLE delta.`{p2}` USING delta CLUSTER BY (id) AS "
              "SELECT * FROM VALUES (1L, 'x'), (2L, 'y') AS v(id, name)").collect()
    made[p2] = ["id"]
    p3 = str(tmp_path / "writeto")
    _sample_df(spark, 4).writeTo(f"delta.`{p3}`").using("delta").clusterBy("v").create()
    made[p3] = ["v"]
    p4 = str(tmp_path / "dfwriter")
    _sample_df(spark, 4).write.format("delta").clusterBy("b").save(p4)
    made[p4] = ["b"]
    for path, cols in made.items():
        assert spark_delta_sql(delta_spark, path, "DESCRIBE DETAIL {table}")[0]["clusteringColumns"] == cols, path
    assert spark_delta_sql(delta_spark, p2, "SELECT count(*) AS n FROM {table}")[0]["n"] == 2


@pytest.mark.parametrize("kwargs, cls", [
    ({"cluster_by": ["a"], "partition_by": ["b"]}, "DELTA_CLUSTER_BY_WITH_PARTITIONED_BY"),
    ({"cluster_by": ["nope"]}, "DELTA_COLUMN_NOT_FOUND_IN_SCHEMA"),
    ({"cluster_by": ["flag"]}, "DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED"),
    ({"cluster_by": ["b"], "table_properties": {"delta.dataSkippingNumIndexedCols": "1"}},
     "DELTA_CLUSTERING_COLUMN_MISSING_STATS"),
    ({"cluster_by": ["a", "b", "v", "a2", "b2"]}, "DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS"),
])
def test_invalid_cluster_by_is_refused_before_anything_is_written(spark, table_path, kwargs, cls):
    df = spark.createDataFrame([(1, "x", "y", 2, "z", True)],
                               "a long, b string, v string, a2 long, b2 string, flag boolean")
    with pytest.raises(PySparkException) as e:
        filecommit.write(df, table_path, **kwargs)
    assert error_class(e.value) == cls, e.value
    assert not os.path.exists(table_path)


def test_cluster_by_on_existing_tables(spark, table_path, tmp_path):
    """An append whose cluster_by differs from the existing table's is refused (Delta's append
    check); the same columns append; an overwrite sets new ones; ALTER TABLE CLUSTER BY on a
    partitioned table is refused."""
    filecommit.write(_sample_df(spark, 4), table_path, cluster_by=["a"])
    with pytest.raises(PySparkException) as e:
        filecommit.write(_sample_df(spark, 4), table_path, cluster_by=["b"])
    assert error_class(e.value) == "DELTA_CLUSTERING_COLUMNS_MISMATCH", e.value
    assert max(log_actions(table_path)) == 0
    assert filecommit.write(_sample_df(spark, 4), table_path, cluster_by=["A"]).version == 1
    # An overwrite replaces the table, its clustering columns with it (as Delta's overwrite).
    assert filecommit.write(_sample_df(spark, 4), table_path, mode="overwrite", cluster_by=["b"]).version == 2
    assert json.loads(_domain(table_path, 2)["configuration"]) == {"clusteringColumns": [["b"]], "domainName": "delta.clustering"}

    parted = str(tmp_path / "parted")
    filecommit.write(_sample_df(spark, 4), parted, partition_by=["b"])
    with pytest.raises(PySparkException) as e:
        spark.sql(f"ALTER TABLE delta.`{parted}` CLUSTER BY (a)").collect()
    assert error_class(e.value) == "DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED", e.value
    assert max(log_actions(parted)) == 0


def _delta_rs_rows(path):
    from deltalake import DeltaTable

    return sorted(DeltaTable(path).to_pyarrow_table().to_pylist(), key=lambda r: sorted(r.items()))


def test_restore_brings_back_the_clustering_columns_of_the_version(spark, delta_spark, table_path, tmp_path):
    """RESTORE commits the restored version's clustering columns (Delta's
    handleDomainMetadataForRestoreTable): those of a clustered version, none for a version that
    was not clustered; the protocol stays as it is."""
    filecommit.write(_sample_df(spark, 4), table_path, cluster_by=["a"])
    spark.sql(f"ALTER TABLE delta.`{table_path}` CLUSTER BY (b)").collect()
    assert filecommit.restore(spark, table_path, version=0).version == 2
    assert json.loads(_domain(table_path, 2)["configuration"]) == {"clusteringColumns": [["a"]], "domainName": "delta.clustering"}
    assert spark_delta_sql(delta_spark, table_path, "DESCRIBE DETAIL {table}")[0]["clusteringColumns"] == ["a"]

    plain = str(tmp_path / "plain")
    filecommit.write(_sample_df(spark, 4), plain)
    spark.sql(f"ALTER TABLE delta.`{plain}` CLUSTER BY (a)").collect()
    assert filecommit.restore(spark, plain, version=0).version == 2
    assert json.loads(_domain(plain, 2)["configuration"]) == {"clusteringColumns": [], "domainName": "delta.clustering"}
    assert spark_delta_sql(delta_spark, plain, "DESCRIBE DETAIL {table}")[0]["clusteringColumns"] == []
    protocol = next(a["protocol"] for a in log_actions(plain)[1] if "protocol" in a)
    assert "clustering" in protocol["writerFeatures"]
    assert len(_delta_rs_rows(plain)) == 4


def test_overwrite_without_cluster_by_clusters_by_none(spark, delta_spark, table_path, tmp_path):
    """A replacing write (mode overwrite, no replaceWhere) without cluster_by leaves a clustered
    table clustered by no column, as Delta's WriteIntoDelta does; after an overwriteSchema that
    drops the clustering column, OPTIMIZE still runs."""
    filecommit.write(_sample_df(spark, 4), table_path, cluster_by=["a"])
    assert filecommit.write(_sample_df(spark, 4), table_path, mode="overwrite").version == 1
    assert json.loads(_domain(table_path, 1)["configuration"]) == {"clusteringColumns": [], "domainName": "delta.clustering"}
    assert spark_delta_sql(delta_spark, table_path, "DESCRIBE DETAIL {table}")[0]["clusteringColumns"] == []

    other = str(tmp_path / "other")
    filecommit.write(_sample_df(spark, 4), other, cluster_by=["a"])
    df = spark.createDataFrame([(1, "x"), (2, "y")], "c long, d string")
    assert filecommit.write(df, other, mode="overwrite", options={"overwriteSchema": "true"}).version == 1
    assert json.loads(_domain(other, 1)["configuration"]) == {"clusteringColumns": [], "domainName": "delta.clustering"}
    filecommit.write(df, other)
    assert filecommit.optimize(spark, other).committed
    assert spark_delta_sql(delta_spark, other, "DESCRIBE DETAIL {table}")[0]["clusteringColumns"] == []
    assert _delta_rs_rows(other) == [{"c": 1, "d": "x"}, {"c": 1, "d": "x"}, {"c": 2, "d": "y"}, {"c": 2, "d": "y"}]


def test_clustered_table_replaced_by_a_partitioned_one(spark, delta_spark, table_path, tmp_path):
    """REPLACE TABLE of a clustered table by a partitioned one is refused before anything is
    written (Delta's CreateDeltaTableCommand: DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE);
    a path write with overwriteSchema and partition_by is not refused (Delta's WriteIntoDelta): the
    table becomes partitioned and clustered by no column, and OPTIMIZE runs."""
    filecommit.write(_sample_df(spark, 4), table_path, cluster_by=["a"])
    with pytest.raises(PySparkException) as e:
        spark.sql(f"CREATE OR REPLACE TABLE delta.`{table_path}` (a BIGINT, b STRING) USING delta "
                  "PARTITIONED BY (b)").collect()
    assert error_class(e.value) == "DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE", e.value
    assert max(log_actions(table_path)) == 0
    assert spark_delta_sql(delta_spark, table_path, "DESCRIBE DETAIL {table}")[0]["clusteringColumns"] == ["a"]

    other = str(tmp_path / "other")
    filecommit.write(_sample_df(spark, 4), other, cluster_by=["a"])
    r = filecommit.write(_sample_df(spark, 4), other, mode="overwrite", partition_by=["b"],
                         options={"overwriteSchema": "true"})
    assert r.version == 1
    assert json.loads(_domain(other, 1)["configuration"]) == {"clusteringColumns": [], "domainName": "delta.clustering"}
    detail = spark_delta_sql(delta_spark, other, "DESCRIBE DETAIL {table}")[0]
    assert detail["clusteringColumns"] == [] and detail["partitionColumns"] == ["b"], detail
    filecommit.write(_sample_df(spark, 4), other)
    assert filecommit.optimize(spark, other).committed
    assert len(_delta_rs_rows(other)) == 8
