"""GRANT / REVOKE / SHOW GRANTS through the session's SQL (the suite's server authenticates no one,
so any client may change grants and every check passes: the statements, the objects and the store
are what is tested here; tests/test_grants.py checks them with principals). The suite's server has a
PostgreSQL metastore, so the grants live in its ``filecommit_grants`` table, read here with ``psql``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid

import pytest
from helpers import error_class
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

pytestmark = pytest.mark.skipif(bool(os.environ.get("FILECOMMIT_REMOTE")),
                                reason="the remote server's grants and roots are its own")



def _who():
    return f"user_{uuid.uuid4().hex[:8]}"


def _stored(postgres, grantee):
    """The rows of ``filecommit_grants`` for a grantee, read from PostgreSQL itself."""
    if postgres.server is None:
        pytest.fail(f"the grants store test needs the session's PostgreSQL: {postgres.error}")
    import postgres as pg

    srv = postgres.server
    out = subprocess.run([os.path.join(srv.bin, "psql"), "-h", "127.0.0.1", "-p", str(srv.port), "-U", "postgres",
                          "-d", pg.DATABASE, "-At", "-F", "|", "-c",
                          f"SELECT grantee, privilege, object_type, object_name FROM filecommit_grants "
                          f"WHERE grantee = '{grantee}' ORDER BY privilege"],
                         check=True, capture_output=True, text=True)
    return [tuple(line.split("|")) for line in out.stdout.splitlines() if line]


def _uri(path):
    return "file:" + os.path.realpath(path)


def test_grant_show_revoke_on_a_path(spark, postgres, tmp_path):
    who = _who()
    prefix = tmp_path / "team"
    assert spark.sql(f"GRANT WRITE ON PATH '{prefix}/' TO `{who}`").collect() == []
    spark.sql(f"GRANT SELECT ON PATH '{prefix}' TO {who}").collect()  # Unity Catalog's name of READ
    rows = [tuple(r) for r in spark.sql(f"SHOW GRANTS TO `{who}`").collect()]
    assert rows == [(who, "READ", "PATH", _uri(prefix)), (who, "WRITE", "PATH", _uri(prefix))]
    assert spark.sql("SHOW GRANTS").columns == ["grantee", "privilege", "object_type", "object"]
    assert _stored(postgres, who) == [(who, "READ", "PATH", _uri(prefix)), (who, "WRITE", "PATH", _uri(prefix))]
    # ON PATH lists the grants that cover the path: on it or on a path above it.
    below = [tuple(r) for r in spark.sql(f"SHOW GRANTS ON PATH '{prefix}/t1' TO `{who}`").collect()]
    assert below == rows
    assert spark.sql(f"SHOW GRANTS ON PATH '{tmp_path}/other' TO `{who}`").collect() == []
    spark.sql(f"REVOKE WRITE ON PATH '{prefix}' FROM `{who}`").collect()
    spark.sql(f"REVOKE WRITE ON PATH '{prefix}' FROM `{who}`").collect()  # nothing left: no error
    assert [tuple(r) for r in spark.sql(f"SHOW GRANTS `{who}`").collect()] == [(who, "READ", "PATH", _uri(prefix))]
    assert _stored(postgres, who) == [(who, "READ", "PATH", _uri(prefix))]
    spark.sql(f"REVOKE READ ON PATH '{prefix}' FROM `{who}`").collect()
    assert _stored(postgres, who) == []


def test_grant_on_a_table_by_name(spark, table_path):
    who, name = _who(), f"granted_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta LOCATION '{table_path}'").collect()
    try:
        spark.sql(f"GRANT MODIFY, MAINTAIN ON TABLE {name} TO `{who}`").collect()
        spark.sql(f"GRANT READ ON PATH '{os.path.dirname(table_path)}' TO `{who}`").collect()
        on_table = sorted(tuple(r) for r in spark.sql(f"SHOW GRANTS ON TABLE {name} TO `{who}`").collect())
        qualified = f"spark_catalog.default.{name}"
        assert on_table == sorted([(who, "WRITE", "TABLE", qualified), (who, "MAINTAIN", "TABLE", qualified),
                                   (who, "READ", "PATH", _uri(os.path.dirname(table_path)))])
        spark.sql(f"REVOKE ALL PRIVILEGES ON TABLE {name} FROM `{who}`").collect()  # OWNER: not granted, nothing
        spark.sql(f"REVOKE MODIFY, MAINTAIN ON TABLE {name} FROM `{who}`").collect()
        spark.sql(f"REVOKE READ ON PATH '{os.path.dirname(table_path)}' FROM `{who}`").collect()
        assert spark.sql(f"SHOW GRANTS TO `{who}`").collect() == []
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}").collect()


def test_grant_objects_are_checked(spark, tmp_path):
    who = _who()
    outside = tempfile.mkdtemp(prefix="filecommit-outside-", dir="/var/tmp")
    try:
        with pytest.raises(SparkConnectGrpcException) as e:
            spark.sql(f"GRANT WRITE ON PATH '{outside}' TO `{who}`").collect()
        assert error_class(e) == "FILECOMMIT_PATH_NOT_ALLOWED"
    finally:
        os.rmdir(outside)
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.sql(f"GRANT WRITE ON TABLE no_such_table_{uuid.uuid4().hex[:8]} TO `{who}`").collect()
    assert error_class(e) == "TABLE_OR_VIEW_NOT_FOUND"
    with pytest.raises(SparkConnectGrpcException) as e:
        spark.sql(f"GRANT SUPERUSER ON PATH '{tmp_path}' TO `{who}`").collect()
    assert error_class(e) == "INVALID_STATEMENT_OR_CLAUSE"  # Spark's parser: not a statement it runs
    assert spark.sql(f"SHOW GRANTS TO `{who}`").collect() == []
