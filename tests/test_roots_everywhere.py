"""The allowed roots at the doors that did not check them: reads by path (``format("delta")`` /
``format("filecommit")``, the change feed, history), tables whose catalog location lies outside the
roots (a name registered by Spark's V1 commands, or by another server on a shared metastore), and
database locations (CREATE / ALTER / DROP DATABASE). Each is refused with
``FILECOMMIT_PATH_NOT_ALLOWED`` before anything is read or written.

The outside table is written by delta-rs in ``/var/tmp`` (the suite's server allows only the temp
directory and MinIO's buckets); names and databases registered elsewhere are made by changing the
session's PostgreSQL metastore with ``psql``, as another server on the same metastore would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid

import pandas as pd
import pytest
from deltalake import DeltaTable, write_deltalake
from helpers import error_class
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

import filecommit

pytestmark = pytest.mark.skipif(bool(os.environ.get("FILECOMMIT_REMOTE")),
                                reason="the remote server's allowedRoots are its own")



@pytest.fixture
def outside():
    """A Delta table (delta-rs, with the change data feed) in a directory outside the allowed roots."""
    base = tempfile.mkdtemp(prefix="filecommit-outside-", dir="/var/tmp")
    path = os.path.join(base, "t")
    write_deltalake(path, pd.DataFrame({"id": [1, 2, 3]}),
                    configuration={"delta.enableChangeDataFeed": "true"})
    try:
        yield path
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _name():
    return f"roots_{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("fmt", ["delta", "filecommit"])
def test_reads_by_path_outside_the_roots_are_refused(spark, outside, fmt):
    reads = {
        "snapshot": spark.read.format(fmt),
        "time travel": spark.read.format(fmt).option("versionAsOf", 0),
        "change feed": spark.read.format(fmt).option("readChangeFeed", "true").option("startingVersion", 0),
        "history": spark.read.format(fmt).option("history", "true"),
    }
    for what, reader in reads.items():
        with pytest.raises(SparkConnectGrpcException) as e:
            reader.load(outside).collect()
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED", what
    # The same reads by a relative path that climbs out of the first root.
    depth = len(os.path.realpath(tempfile.gettempdir()).strip("/").split("/"))
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.read.format(fmt).load("../" * depth + outside.lstrip("/")).collect()
    assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"


def test_the_reader_class_named_directly_is_refused(spark, outside, table_path):
    """``format(<class name>)`` reaches a data source class without its registered name: the base
    reader class (which the checked sources extend) refuses every read, inside the roots too."""
    from helpers import shared_mode

    # A shared server refuses a data source named by its class before the plan runs.
    refused = "FILECOMMIT_SHARED_MODE_REFUSED" if shared_mode() else None
    filecommit.write(spark.createDataFrame([(1,)], "id long"), table_path)
    for path in [outside, table_path]:
        with pytest.raises(SparkConnectGrpcException) as e:
            spark.read.format("io.filecommit.read.FileCommitDataSource").load(path).collect()
        assert error_class(e) == (refused or "FILECOMMIT_UNSUPPORTED_OPERATION")
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.read.format("io.filecommit.connect.FileCommitSource").load(outside).collect()
    assert error_class(e) == (refused or "FILECOMMIT_PATH_NOT_ALLOWED")


def test_reads_inside_the_roots_still_work(spark, table_path):
    filecommit.write(spark.createDataFrame([(1,), (2,)], "id long"), table_path)
    assert sorted(r.id for r in spark.read.format("delta").load(table_path).collect()) == [1, 2]
    assert spark.read.format("filecommit").option("history", "true").load(table_path).count() == 1
    # A relative path resolves against the first root, as for writes.
    rel = os.path.relpath(table_path, os.path.realpath(tempfile.gettempdir()))
    assert spark.read.format("delta").load(rel).count() == 2


def _metastore(postgres, statement):
    """Runs SQL in the shared PostgreSQL metastore with ``psql``, as another server (one without
    allowed roots, or another Spark) registering names there would change it; returns the output."""
    if postgres.server is None:
        pytest.fail(f"these tests need the session's PostgreSQL metastore: {postgres.error}")
    import postgres as pg

    srv = postgres.server
    out = subprocess.run([os.path.join(srv.bin, "psql"), "-h", "127.0.0.1", "-p", str(srv.port), "-U", "postgres",
                          "-d", pg.DATABASE, "-At", "-v", "ON_ERROR_STOP=1", "-c", statement],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def _relocate_table(postgres, name, location):
    """Points a Spark data source table's registration at ``location`` (its storage descriptor and
    the ``path`` storage property Spark reads the location from)."""
    sd = f'(SELECT "SD_ID" FROM "TBLS" WHERE "TBL_NAME" = \'{name}\')'
    _metastore(postgres, f'UPDATE "SDS" SET "LOCATION" = \'file:{location}\' WHERE "SD_ID" = {sd}')
    _metastore(postgres, f'UPDATE "SERDE_PARAMS" SET "PARAM_VALUE" = \'file:{location}\' WHERE "PARAM_KEY" = \'path\' '
                         f'AND "SERDE_ID" = (SELECT "SERDE_ID" FROM "SDS" WHERE "SD_ID" = {sd})')


def test_a_catalog_name_whose_location_is_outside_the_roots_is_refused(spark, postgres, table_path, outside):
    """A name another server registered on the shared metastore (here: its location changed in the
    metastore database itself) at a location outside this server's roots: every use of the name is
    refused, and the table there is neither read nor changed."""
    src, name = _name(), _name()
    spark.sql(f"CREATE TABLE {src} (id BIGINT) USING delta LOCATION '{table_path}'").collect()
    spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta LOCATION '{table_path}_2'").collect()
    try:
        _relocate_table(postgres, name, outside)
        before = DeltaTable(outside).version()
        for sql in [f"SELECT * FROM {name}", f"DELETE FROM {name} WHERE id = 1",
                    f"UPDATE {name} SET id = 0", f"INSERT INTO {name} VALUES (9)",
                    f"MERGE INTO {name} t USING {src} s ON t.id = s.id WHEN MATCHED THEN DELETE",
                    f"VACUUM {name} RETAIN 0 HOURS", f"OPTIMIZE {name}", f"DESCRIBE HISTORY {name}",
                    f"DESCRIBE DETAIL {name}", f"RESTORE TABLE {name} TO VERSION AS OF 0",
                    f"ALTER TABLE {name} SET TBLPROPERTIES ('delta.appendOnly' = 'true')",
                    f"ALTER TABLE {name} ADD CONSTRAINT pos CHECK (id > 0)",
                    f"SELECT * FROM table_changes('{name}', 0)"]:
            with pytest.raises(SparkConnectGrpcException) as e:
                spark.sql(sql).collect()
            assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED", sql
        with pytest.raises(SparkConnectGrpcException) as e:
            spark.read.table(name).collect()
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
        with pytest.raises(SparkConnectGrpcException) as e:
            spark.read.format("delta").option("table", name).load().collect()
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
        for call in [lambda: filecommit.delete(spark, table=name), lambda: filecommit.vacuum(spark, table=name)]:
            with pytest.raises(SparkConnectGrpcException) as e:
                call()
            assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
        assert DeltaTable(outside).version() == before
        assert sorted(DeltaTable(outside).to_pandas()["id"]) == [1, 2, 3]
    finally:
        _relocate_table(postgres, name, f"{table_path}_2")
        spark.sql(f"DROP TABLE IF EXISTS {name}").collect()
        spark.sql(f"DROP TABLE IF EXISTS {src}").collect()


def test_database_locations_outside_the_roots_are_refused(spark, postgres, tmp_path):
    base = tempfile.mkdtemp(prefix="filecommit-outside-", dir="/var/tmp")
    try:
        db = _name()
        where = os.path.join(base, "db")
        with pytest.raises(SparkConnectGrpcException) as e:
            spark.sql(f"CREATE DATABASE {db} LOCATION '{where}'").collect()
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
        assert not os.path.exists(where)
        assert db not in [r[0] for r in spark.sql("SHOW DATABASES").collect()]
        # Inside the roots it is created, and its location cannot be moved outside them.
        spark.sql(f"CREATE DATABASE {db} LOCATION '{tmp_path / 'db'}'").collect()
        try:
            with pytest.raises(SparkConnectGrpcException) as e:
                spark.sql(f"ALTER DATABASE {db} SET LOCATION '{where}'").collect()
            assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
            # A location another server put outside the roots: DROP (which deletes it with CASCADE) is refused.
            os.makedirs(where)
            open(os.path.join(where, "keep.txt"), "w").close()
            _metastore(postgres, f'UPDATE "DBS" SET "DB_LOCATION_URI" = \'file:{where}\' WHERE "NAME" = \'{db}\'')
            with pytest.raises(SparkConnectGrpcException) as e:
                spark.sql(f"DROP DATABASE {db} CASCADE").collect()
            assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
            assert os.path.exists(os.path.join(where, "keep.txt"))
            assert db in [r[0] for r in spark.sql("SHOW DATABASES").collect()]
        finally:
            inside = tmp_path / "db"
            _metastore(postgres, f'UPDATE "DBS" SET "DB_LOCATION_URI" = \'file:{inside}\' WHERE "NAME" = \'{db}\'')
            spark.sql(f"DROP DATABASE {db}").collect()
        assert db not in [r[0] for r in spark.sql("SHOW DATABASES").collect()]
    finally:
        shutil.rmtree(base, ignore_errors=True)
