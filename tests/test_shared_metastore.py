"""Two Connect servers (separate JVMs) on one Hive metastore in PostgreSQL: the session's server
and a peer (``tests/crash_server.py``'s ``ConnectServer``), both started with
``filecommit.session.metastore_conf(url=...)``. A table created by name on one is written and read
by name on the other; a DROP on one is seen by the other. The tables are checked at their
locations by delta-rs and Spark + Delta, and the names in PostgreSQL itself with ``psql``.

Needs Debian's ``postgresql`` and ``make pg-jdbc-jar``: without them these tests fail, naming both.
"""

from __future__ import annotations

import os
import tempfile
import uuid

import pandas as pd
import pytest
from helpers import canonical, delta_rows, error_class, result_frame, rows_frame
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

import filecommit
from filecommit.session import metastore_conf

pytestmark = pytest.mark.slow

COLUMNS = ["id", "v"]


@pytest.fixture(scope="module")
def peer(spark, postgres, tmp_path_factory):
    """A second server in its own JVM on the session's PostgreSQL metastore; yields its session."""
    if os.environ.get("FILECOMMIT_REMOTE"):
        pytest.skip("the shared metastore tests start their own servers (FILECOMMIT_REMOTE is set)")
    if postgres.server is None:
        pytest.fail(f"the shared metastore tests need PostgreSQL and its JDBC driver: {postgres.error}")
    from crash_server import ConnectServer
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    conf = metastore_conf(postgres.warehouse, postgres.server.url, postgres.jars)
    conf["spark.filecommit.allowedRoots"] = os.path.realpath(tempfile.gettempdir())
    server = ConnectServer(filecommit.server.find_plugin_jar(), filecommit.server.PLUGIN_CLASS,
                           str(tmp_path_factory.mktemp("catalog_peer") / "server.log"), conf=conf)
    server.start()
    session = RemoteSparkSession.builder.remote(server.url).create()
    try:
        yield session
    finally:
        try:
            session.stop()
        finally:
            server.stop()


def _by_name(session, name):
    return canonical(session.table(name).toArrow(), COLUMNS)


def _by_path(delta_spark, path, want):
    """delta-rs and Spark + Delta read ``want`` at the table's location."""
    pd.testing.assert_frame_equal(delta_rows(path, COLUMNS), want)
    out = delta_spark.read([{"kind": "table", "path": path}])[0]
    assert out.get("ok", True), out
    pd.testing.assert_frame_equal(result_frame(out, COLUMNS), want)




def test_table_created_on_one_server_is_written_read_and_dropped_on_the_other(spark, peer, postgres, delta_spark):
    made_by_sql, made_by_df = f"shared_{uuid.uuid4().hex[:8]}", f"shared_{uuid.uuid4().hex[:8]}"
    # Created by name on the session's server (CREATE TABLE) and on the peer (saveAsTable).
    spark.sql(f"CREATE TABLE {made_by_sql} (id BIGINT, v STRING) USING delta").collect()
    peer.createDataFrame([(10, "x")], "id long, v string").write.format("delta").saveAsTable(made_by_df)
    assert {made_by_sql, made_by_df} <= set(postgres.server.tables())

    # Written by name on the other server: INSERT INTO and filecommit.write(table=...).
    peer.sql(f"INSERT INTO {made_by_sql} VALUES (1, 'a')").collect()
    r1 = filecommit.write(peer.createDataFrame([(2, "b")], "id long, v string"), table=made_by_sql)
    spark.sql(f"INSERT INTO {made_by_df} VALUES (11, 'y')").collect()
    r2 = filecommit.write(spark.createDataFrame([(12, "z")], "id long, v string"), table=f"default.{made_by_df}")
    assert (r1.version, r2.version) == (2, 2)
    sql_path, df_path = r1.table_path.removeprefix("file:"), r2.table_path.removeprefix("file:")
    assert sql_path.startswith(os.path.realpath(postgres.warehouse)) and sql_path != df_path

    # Read by name on both, and by path with Spark + Delta and delta-rs.
    for session in (spark, peer):
        pd.testing.assert_frame_equal(_by_name(session, made_by_sql), rows_frame([(1, "a"), (2, "b")], COLUMNS))
        pd.testing.assert_frame_equal(_by_name(session, made_by_df),
                                      rows_frame([(10, "x"), (11, "y"), (12, "z")], COLUMNS))
    _by_path(delta_spark, sql_path, rows_frame([(1, "a"), (2, "b")], COLUMNS))
    _by_path(delta_spark, df_path, rows_frame([(10, "x"), (11, "y"), (12, "z")], COLUMNS))

    # DROP on one server is seen by the other, and by the database.
    peer.sql(f"DROP TABLE {made_by_sql}").collect()
    spark.sql(f"DROP TABLE {made_by_df}").collect()
    assert not {made_by_sql, made_by_df} & set(postgres.server.tables())
    for session, name in ((spark, made_by_sql), (peer, made_by_df)):
        assert not session.catalog.tableExists(name)
        with pytest.raises(SparkConnectGrpcException) as e:
            session.table(name).collect()
        assert error_class(e) == "TABLE_OR_VIEW_NOT_FOUND"
        with pytest.raises(SparkConnectGrpcException) as e:
            filecommit.write(session.createDataFrame([(3, "c")], "id long, v string"), table=name)
        assert error_class(e) == "DELTA_TABLE_NOT_FOUND"
