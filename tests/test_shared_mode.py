"""Shared mode (``spark.filecommit.server.shared=true``): what a shared server refuses, with which
error class, with proof that nothing of it ran; and what keeps working.

One standalone Spark Connect server for the module (``tests/crash_server.ConnectServer``) with the
plugin, the catalog, both interceptors, shared mode and one allowed root. Without principals
(``security.Principals.of`` empty) the allowed root is what confines paths; the victim's directory
lies outside it. Code-execution refusals apply regardless of principals.
"""

from __future__ import annotations

import os

import pytest
from crash_server import ConnectServer, fast_retry_policy
from helpers import error_class
from pyspark.errors import PySparkException

import filecommit

pytestmark = pytest.mark.slow

REFUSED = "FILECOMMIT_SHARED_MODE_REFUSED"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """(session, root, victim): a shared-mode server's client session, its allowed root, and a
    Parquet directory outside it (another team's data)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    base = tmp_path_factory.mktemp("shared")
    root = base / "data"
    root.mkdir()
    victim = base / "victim"
    victim.mkdir()
    pq.write_table(pa.table({"secret": [42]}), str(victim / "part-0.parquet"))
    conf = dict(filecommit.session.metastore_conf(str(base / "metastore")))
    conf.update({
        "spark.filecommit.server.shared": "true",
        "spark.filecommit.allowedRoots": f"file:{root}",
        "spark.connect.grpc.interceptor.classes": ",".join(
            [filecommit.session.STANDARD_WRITE_INTERCEPTOR_CLASS, filecommit.session.SHARED_MODE_INTERCEPTOR_CLASS]),
        "spark.driver.extraJavaOptions": f"-XX:TieredStopAtLevel=1 -Dderby.system.home={base / 'metastore'}",
    })
    server = ConnectServer(filecommit.server.find_plugin_jar(), filecommit.server.PLUGIN_CLASS, str(base / "server.log"), conf=conf)
    server.start()
    # pyspark's functions (udf, ...) build Connect plans only in Connect mode (as the suite's fixture)
    mode = os.environ.get("SPARK_CONNECT_MODE_ENABLED")
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    session = RemoteSparkSession.builder.remote(server.url).create()
    session.client.set_retry_policies([fast_retry_policy()])
    try:
        yield session, root, victim
    finally:
        try:
            session.stop()
        finally:
            server.stop()
            if mode is None:
                os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
            else:
                os.environ["SPARK_CONNECT_MODE_ENABLED"] = mode


def _tree(d) -> dict:
    """Every file below ``d`` with its size and modification time."""
    out = {}
    for dirpath, _, files in os.walk(d):
        for f in files:
            p = os.path.join(dirpath, f)
            st = os.stat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


def _fn_refused(fn, condition: str = REFUSED, what: str | None = None):
    with pytest.raises(PySparkException) as info:
        fn()
    e = info.value
    assert error_class(e) == condition, repr(e)
    if what is not None:
        assert e.getMessageParameters().get("what") == what, e.getMessageParameters()
    return e


@pytest.fixture
def table(shared):
    """A fresh Delta table inside the allowed root, with rows (1, 'a'), (2, 'b'), (3, 'c')."""
    spark, root, _ = shared
    import uuid

    path = f"file:{root}/t-{uuid.uuid4().hex[:8]}"
    filecommit.write(spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id long, v string"), path)
    return path


# -- client code --------------------------------------------------------------------------------

def test_python_udf_refused_and_never_ran(shared, tmp_path):
    spark, _, _ = shared
    from pyspark.sql.functions import udf

    marker = str(tmp_path / "udf-ran")

    @udf("long")
    def touch(x):
        open(marker, "w").close()
        return x

    _fn_refused(lambda: spark.range(3).select(touch("id")).collect(), what="USER_DEFINED_FUNCTION")
    assert not os.path.exists(marker)


def test_map_in_pandas_refused_and_never_ran(shared, tmp_path):
    spark, _, _ = shared
    marker = str(tmp_path / "map-ran")

    def f(batches):
        open(marker, "w").close()
        yield from batches

    _fn_refused(lambda: spark.range(3).mapInPandas(f, "id long").collect(), what="USER_DEFINED_FUNCTION")
    _fn_refused(lambda: spark.range(3).mapInArrow(f, "id long").collect(), what="USER_DEFINED_FUNCTION")
    _fn_refused(lambda: spark.range(3).groupBy("id").applyInPandas(f, "id long").collect(),
                what="USER_DEFINED_FUNCTION")
    assert not os.path.exists(marker)


def test_udf_registration_refused(shared):
    spark, _, _ = shared
    _fn_refused(lambda: spark.udf.register("plus1", lambda x: x + 1, "long"), what="USER_DEFINED_FUNCTION")


@pytest.mark.parametrize("sql", [
    "SELECT reflect('java.lang.System', 'getenv', 'PATH')",
    "SELECT java_method('java.lang.System', 'getenv', 'PATH')",
    "SELECT try_reflect('java.lang.System', 'getenv', 'PATH')",
    "SELECT id FROM range(3) WHERE id IN (SELECT length(reflect('java.lang.System', 'getenv', 'PATH')))",
])
def test_reflect_refused(shared, sql):
    spark, _, _ = shared
    e = _fn_refused(lambda: spark.sql(sql).collect(), what="REFLECT")
    assert os.environ.get("PATH", "/usr/bin") not in str(e)


def test_script_transform_refused_and_never_ran(shared, tmp_path):
    spark, _, _ = shared
    marker = tmp_path / "transform-ran"
    _fn_refused(lambda: spark.sql(f"SELECT TRANSFORM(id) USING 'touch {marker}; cat' AS (x) FROM range(1)").collect(),
                what="SCRIPT_TRANSFORM")
    assert not marker.exists()


@pytest.mark.parametrize("sql,what", [
    ("CREATE FUNCTION f AS 'org.example.F'", "CREATE_FUNCTION"),
    ("CREATE TEMPORARY FUNCTION f AS 'org.example.F'", "CREATE_FUNCTION"),
    ("ADD JAR /tmp/x.jar", "ADD_RESOURCE"),
    ("ADD FILE /etc/hostname", "ADD_RESOURCE"),
    ("ADD ARCHIVE /tmp/x.zip", "ADD_RESOURCE"),
    ("SET CATALOG 'other'", "CATALOG_SWITCH"),
    ("SET CATALOG 'spark_catalog'", "CATALOG_SWITCH"),
])
def test_sql_commands_refused(shared, sql, what):
    spark, _, _ = shared
    _fn_refused(lambda: spark.sql(sql).collect(), what=what)


def test_catalog_api_switch_refused(shared):
    spark, _, _ = shared
    _fn_refused(lambda: spark.catalog.setCurrentCatalog("other"), what="CATALOG_SWITCH")
    assert spark.catalog.currentCatalog() == "spark_catalog"


def test_add_artifacts_refused(shared, tmp_path):
    spark, _, _ = shared
    f = tmp_path / "payload.txt"
    f.write_text("x")
    _fn_refused(lambda: spark.addArtifacts(str(f), file=True), what="ADD_ARTIFACTS")


def test_streaming_foreach_batch_refused(shared, tmp_path):
    spark, _, _ = shared
    marker = tmp_path / "batch-ran"
    _fn_refused(lambda: spark.readStream.format("rate").load().writeStream
                .foreachBatch(lambda df, i: marker.write_text("x")).start(), what="STREAMING_FOREACH")
    assert not marker.exists()


# -- files outside the grants ----------------------------------------------------------------------

def test_raw_write_outside_roots_refused_victim_unchanged(shared):
    spark, _, victim = shared
    before = _tree(victim)
    _fn_refused(lambda: spark.range(1).write.mode("overwrite").parquet(str(victim)), "FILECOMMIT_PATH_NOT_ALLOWED")
    _fn_refused(lambda: spark.range(1).write.mode("overwrite").csv(f"file:{victim}"), "FILECOMMIT_PATH_NOT_ALLOWED")
    _fn_refused(lambda: spark.sql(f"INSERT OVERWRITE DIRECTORY '{victim}' USING parquet SELECT 1").collect(),
                "FILECOMMIT_PATH_NOT_ALLOWED")
    assert _tree(victim) == before


def test_raw_read_outside_roots_refused(shared):
    spark, _, victim = shared
    _fn_refused(lambda: spark.read.parquet(str(victim)).collect(), "FILECOMMIT_PATH_NOT_ALLOWED")
    _fn_refused(lambda: spark.read.format("binaryFile").load(str(victim)).collect(), "FILECOMMIT_PATH_NOT_ALLOWED")
    _fn_refused(lambda: spark.sql(f"SELECT * FROM parquet.`{victim}`").collect(), "FILECOMMIT_PATH_NOT_ALLOWED")
    # schema only (AnalyzePlan): Spark's planner would list and infer before any check rule
    _fn_refused(lambda: spark.read.parquet(str(victim)).columns, "FILECOMMIT_PATH_NOT_ALLOWED")


def test_delta_log_reads_refused(shared, table):
    spark, _, _ = shared
    staged = filecommit.write(spark.createDataFrame([(9, "z")], "id long, v string"), table, stage=True)
    assert staged is not None
    for load in (lambda: spark.read.format("binaryFile").load(f"{table}/_delta_log/_staged*").collect(),
                 lambda: spark.read.format("binaryFile").option("recursiveFileLookup", "true")
                 .load(f"{table}/_delta_log").collect(),
                 lambda: spark.read.json(f"{table}/_delta_log/00000000000000000000.json").collect(),
                 lambda: spark.sql(f"SELECT * FROM json.`{table}/_delta_log/`").collect()):
        _fn_refused(load, what="DELTA_LOG_READ")


def test_sources_and_options_refused(shared, table):
    spark, root, _ = shared
    _fn_refused(lambda: spark.read.format("jdbc").option("url", "jdbc:derby:memory:x").option("dbtable", "t").load()
                .collect(), what="DATA_SOURCE")
    _fn_refused(lambda: spark.read.format("org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog")
                .load().collect(), what="DATA_SOURCE")
    _fn_refused(lambda: spark.read.option("fs.s3a.endpoint", "http://evil").parquet(f"{root}").collect(),
                what="HADOOP_OPTION")
    _fn_refused(lambda: spark.read.format("delta").option("fs.file.impl", "org.example.Fs").load(table).collect(),
                what="HADOOP_OPTION")
    _fn_refused(lambda: spark.range(1).write.format("jdbc").option("url", "jdbc:derby:memory:x").save(),
                what="DATA_SOURCE")
    _fn_refused(lambda: spark.sql("SELECT * FROM jdbc.`x`").collect(), what="DATA_SOURCE")


def test_catalog_locations_and_tables_refused(shared):
    spark, _, victim = shared
    _fn_refused(lambda: spark.sql(f"CREATE DATABASE evil LOCATION '{victim}'").collect(), "FILECOMMIT_PATH_NOT_ALLOWED")
    _fn_refused(lambda: spark.sql("CREATE TABLE plain (a int) USING parquet").collect(), what="NON_DELTA_TABLE")
    _fn_refused(lambda: spark.range(1).write.format("parquet").saveAsTable("plain2"), what="NON_DELTA_TABLE")
    _fn_refused(lambda: spark.read.option("fs.s3a.endpoint", "http://evil").table("any_table").collect(),
                what="HADOOP_OPTION")
    _fn_refused(lambda: spark.sql(f"CREATE TEMPORARY VIEW v USING parquet OPTIONS (path '{victim}')").collect(),
                "FILECOMMIT_PATH_NOT_ALLOWED")


# -- what keeps working ----------------------------------------------------------------------------

def test_reads_queries_and_local_data_work(shared, table):
    spark, root, _ = shared
    assert spark.range(5).count() == 5
    assert sorted(r.id for r in spark.read.format("delta").load(table).collect()) == [1, 2, 3]
    assert spark.read.format("filecommit").load(table).count() == 3
    spark.read.format("delta").load(table).createOrReplaceTempView("t_shared")
    rows = spark.sql("""
        SELECT v, count(*) AS n, sum(id) OVER (ORDER BY v) AS running, upper(v) AS u
        FROM t_shared JOIN (SELECT id AS k FROM range(10)) r ON t_shared.id = r.k
        GROUP BY v, id ORDER BY v""").collect()
    assert [(r.v, r.n, r.running, r.u) for r in rows] == [("a", 1, 1, "A"), ("b", 1, 3, "B"), ("c", 1, 6, "C")]
    granted = f"{root}/plain-parquet"
    spark.createDataFrame([(7,)], "x long").write.mode("overwrite").parquet(granted)
    assert [r.x for r in spark.read.parquet(granted).collect()] == [7]
    assert [r.x for r in spark.sql(f"SELECT * FROM parquet.`{granted}`").collect()] == [7]


def test_filecommit_features_work(shared, table):
    spark, root, _ = shared
    from pyspark.sql.functions import col, lit

    filecommit.delete(spark, table, col("id") == 1)
    filecommit.update(spark, table, {"v": lit("B")}, col("id") == 2)
    src = spark.createDataFrame([(3, "C"), (4, "d")], "id long, v string")
    (filecommit.merge(src, table, "t.id = s.id", target_alias="t", source_alias="s")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    assert sorted((r.id, r.v) for r in spark.read.format("delta").load(table).collect()) == [
        (2, "B"), (3, "C"), (4, "d")]
    staged = filecommit.write(spark.createDataFrame([(5, "e")], "id long, v string"), table, stage=True)
    filecommit.commit(spark, table, staged)
    assert spark.read.format("delta").load(table).count() == 4
    assert len(filecommit.history(spark, table)) >= 5
    spark.sql(f"CREATE TABLE shared_t USING delta LOCATION '{root}/shared_t' AS SELECT 1 AS id")
    spark.sql("INSERT INTO shared_t VALUES (2)")
    spark.sql("DELETE FROM shared_t WHERE id = 1")
    assert [r.id for r in spark.table("shared_t").collect()] == [2]
    assert spark.sql("DESCRIBE HISTORY shared_t").count() >= 3
    spark.sql("DROP TABLE shared_t")
