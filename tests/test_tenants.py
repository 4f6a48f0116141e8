"""Two teams on one shared server: principals with tokens, grants, and the server's shared mode.

alice owns ``root/a`` and bob owns ``root/b`` (grants an admin made with SQL ``GRANT``). alice keeps
a partitioned table with the change data feed and deletion vectors, a pending staged commit and a
batch-id sink under her directory. bob then tries every attack a client of a shared server could
use against them: each door of the server (the Python client's commands, ``format("delta")``, SQL,
staged commits, the sink, raw file sources, code on the server, settings, grants) refuses him with
an error class, and afterwards alice's directory holds exactly the same files (names, sizes,
modification times), delta-rs and Spark + Delta read the same versions and rows, and alice
publishes her staged commit and her next sink batch as if nothing had happened. Requests without a
token, with a wrong one, or claiming another principal's user id are refused before they reach
Spark; every commit names its principal in ``commitInfo.userName``.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from helpers import error_class, file_tree, versioned_rows_delta_rs, versioned_rows_spark_delta
from pyspark.errors import PySparkException
from pyspark.errors.exceptions.connect import SparkConnectGrpcException
from tenants import Tenant, TenantServer

import filecommit
from filecommit import errors

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bool(os.environ.get("FILECOMMIT_REMOTE")), reason="starts a server of its own")]

DENIED = errors.FILECOMMIT_PERMISSION_DENIED


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """The server (shared mode), the principals' sessions and their directories."""
    root = str(tmp_path_factory.mktemp("tenants"))
    tenants = {"alice": Tenant(groups=["team-a"]), "bob": Tenant(groups=["team-b"]), "ops": Tenant(admin=True)}
    srv = TenantServer(os.path.join(root, "server"), tenants,
                       conf={"spark.filecommit.server.shared": "true", "spark.filecommit.staging.maxPending": "3"},
                       roots=[os.path.realpath(root)])
    srv.start()
    a_dir, b_dir = os.path.join(root, "a"), os.path.join(root, "b")
    os.makedirs(a_dir)
    os.makedirs(b_dir)
    ops = srv.session("ops")
    ops.sql(f"GRANT OWNER ON PATH '{a_dir}' TO `team-a`").collect()
    ops.sql(f"GRANT OWNER ON PATH '{b_dir}' TO bob").collect()
    try:
        yield srv, root, a_dir, b_dir
    finally:
        srv.stop()








def _refused(expected: str, call, *args, **kwargs) -> None:
    """``call`` fails with a pyspark error of class ``expected``."""
    with pytest.raises(PySparkException) as e:
        result = call(*args, **kwargs)
        if hasattr(result, "collect"):
            result.collect()
    assert error_class(e) == expected, f"{getattr(call, '__name__', call)}: expected {expected}, got {e.value}"


def test_requests_of_no_known_principal_are_refused(shared):
    srv, *_ = shared
    for session in (srv.session(None), srv.session("alice", token="0" * 32), srv.session("alice", user_id="ops"),
                    srv.session("bob", user_id="alice")):
        with pytest.raises(SparkConnectGrpcException) as e:
            session.range(1).collect()
        assert "UNAUTHENTICATED" in str(getattr(e.value, "_grpc_status_code", e.value)).upper(), e.value


def test_another_team_cannot_touch_a_teams_tables(shared, delta_spark):
    srv, root, a_dir, b_dir = shared
    alice, bob = srv.session("alice"), srv.session("bob")
    table, sink = os.path.join(a_dir, "orders"), os.path.join(a_dir, "events")

    # alice's tables: three versions with the change feed and a deletion vector, a staged commit, a sink.
    rows = [(i, i * 10, "ab"[i % 2]) for i in range(40)]
    filecommit.write(alice.createDataFrame(rows, "id long, v long, part string"), table, partition_by=["part"],
                     table_properties={"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true"})
    filecommit.delete(alice, table, "id % 7 = 0")
    filecommit.update(alice, table, set={"v": "v + 1"}, condition="id % 5 = 0")
    staged = filecommit.write(alice.createDataFrame([(100, 1000, "a")], "id long, v long, part string"), table,
                              stage=True)
    filecommit.write_batch(alice.createDataFrame([(1, "x")], "id long, s string"), sink, batch_id=0)
    before = file_tree(a_dir)
    rs_before, spark_before = versioned_rows_delta_rs(table), versioned_rows_spark_delta(delta_spark, table)
    assert rs_before == spark_before and rs_before[0] == 2

    small = bob.createDataFrame([(9, 9, "a")], "id long, v long, part string")
    # Settings that would pick the server's file system or its rules.
    for key, value in (("fs.file.impl", "does.not.Exist"), ("spark.filecommit.allowedRoots", "file:/"),
                       ("spark.filecommit.retention.minimum", "0")):
        bob.conf.set(key, value)
        try:
            _refused(errors.CANNOT_MODIFY_STATIC_CONFIG, filecommit.write, small, os.path.join(b_dir, "t"))
        finally:
            bob.conf.unset(key)
    _refused(errors.CANNOT_MODIFY_STATIC_CONFIG, filecommit.write, small, os.path.join(b_dir, "t"),
             options={"fs.file.impl": "does.not.Exist"})

    # Every command of the contract on alice's table, staged commit and sink.
    _refused(DENIED, filecommit.write, small, table)
    _refused(DENIED, filecommit.write, small, table, mode="overwrite")
    _refused(DENIED, filecommit.delete, bob, table, "true")
    _refused(DENIED, filecommit.update, bob, table, set={"v": "0"})
    _refused(DENIED, lambda: filecommit.merge(small, table, "target.id = source.id").when_matched_delete().execute())
    _refused(DENIED, filecommit.set_table_properties, bob, table, {"delta.appendOnly": "true"})
    _refused(DENIED, filecommit.vacuum, bob, table)
    _refused(DENIED, filecommit.optimize, bob, table)
    _refused(DENIED, filecommit.restore, bob, table, version=0)
    _refused(DENIED, filecommit.commit, bob, table, staged)
    _refused(DENIED, filecommit.abort, bob, table, staged)
    _refused(DENIED, filecommit.read_staged, bob, table, staged)
    data_file = next(p for p in before if p.startswith("orders/part=") and p.endswith(".parquet"))
    _refused(DENIED, filecommit.stage_files, bob, table, [os.path.relpath(data_file, "orders")])
    _refused(DENIED, filecommit.write_batch, bob.createDataFrame([(2, "y")], "id long, s string"), sink, batch_id=1)

    # Reads of every kind, by path and through SQL.
    _refused(DENIED, lambda: bob.read.format("delta").load(table))
    _refused(DENIED, lambda: bob.read.format("filecommit").option("readChangeFeed", "true")
             .option("startingVersion", 0).load(table))
    _refused(DENIED, lambda: bob.read.format("filecommit").option("history", "true").load(table))
    for statement in (f"SELECT * FROM delta.`{table}`", f"DELETE FROM delta.`{table}` WHERE true",
                      f"UPDATE delta.`{table}` SET v = 0", f"VACUUM delta.`{table}`",
                      f"OPTIMIZE delta.`{table}`", f"DESCRIBE HISTORY delta.`{table}`"):
        _refused(DENIED, lambda s=statement: bob.sql(s))

    # New tables and sinks above, inside and around alice's; a table over someone's Parquet files.
    for path in (root, a_dir, os.path.join(table, "nested"), os.path.join(sink, "t")):
        _refused(DENIED, filecommit.write, small, path)
    theirs = os.path.join(b_dir, "plain_parquet")
    os.makedirs(theirs)
    pq.write_table(pa.table({"id": [1]}), os.path.join(theirs, "part-00000-x.parquet"))
    _refused(errors.DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION, filecommit.write, small, theirs)
    # Raw file writes and reads of alice's directory, her _delta_log, code on the server (shared mode).
    _refused(DENIED, lambda: bob.range(1).write.mode("overwrite").parquet(table))
    _refused(DENIED, lambda: bob.read.parquet(table))
    _refused(errors.FILECOMMIT_SHARED_MODE_REFUSED,
             lambda: bob.read.format("binaryFile").load(os.path.join(table, "_delta_log", "_staged")))
    _refused(errors.FILECOMMIT_SHARED_MODE_REFUSED,
             lambda: bob.read.format("binaryFile").load(os.path.join(b_dir, "x", "_delta_log", "_staged")))
    _refused(errors.FILECOMMIT_SHARED_MODE_REFUSED,
             lambda: bob.sql("SELECT reflect('java.lang.System', 'getenv', 'PATH')"))
    from pyspark.sql.connect.functions import udf  # the Connect one: no classic SparkContext here

    _refused(errors.FILECOMMIT_SHARED_MODE_REFUSED, lambda: bob.range(1).select(udf(lambda x: x)("id")))
    # Outside the roots.
    _refused(errors.FILECOMMIT_PATH_NOT_ALLOWED, lambda: bob.read.format("delta").load("/etc"))
    # Grants are the admin's.
    _refused(DENIED, lambda: bob.sql(f"GRANT OWNER ON PATH '{a_dir}' TO bob"))

    # Exactly the same files, rows and versions for both independent readers.
    assert file_tree(a_dir) == before
    assert versioned_rows_delta_rs(table) == rs_before
    assert versioned_rows_spark_delta(delta_spark, table) == spark_before

    # alice goes on: her staged commit publishes, her sink takes the next batch; her commits carry her name.
    published = filecommit.commit(alice, table, staged)
    assert published.committed and published.version == 3
    assert filecommit.write_batch(alice.createDataFrame([(2, "y")], "id long, s string"), sink, batch_id=1).committed
    version, after = versioned_rows_spark_delta(delta_spark, table)
    assert version == 3 and after == sorted(spark_before[1] + [(100, 1000, "a")])
    assert versioned_rows_delta_rs(table) == (3, after)
    assert {h["version"]: h.get("userName") for h in DeltaTable(table).history()} == {v: "alice" for v in range(4)}


def test_a_principal_cannot_fill_a_table_with_staged_commits(shared):
    """Staged commits are bounded per table (``spark.filecommit.staging.maxPending``, 3 here): the
    fourth pending one is refused by class before anything is written, and publishing or aborting
    one makes room again."""
    srv, _, _, b_dir = shared
    bob = srv.session("bob")
    path = os.path.join(b_dir, "staging_bound")
    df = bob.createDataFrame([(1, "x")], "id long, s string")
    filecommit.write(df, path)
    staged = [filecommit.write(df, path, stage=True) for _ in range(3)]
    before = file_tree(path)
    with pytest.raises(PySparkException) as e:
        filecommit.write(df, path, stage=True)
    assert error_class(e) == "FILECOMMIT_TOO_MANY_STAGED_COMMITS"
    assert file_tree(path) == before  # the refused write left no file behind
    assert filecommit.abort(bob, path, staged[0]) == 1
    assert filecommit.commit(bob, path, staged[1]).version == 1
    more = [filecommit.write(df, path, stage=True) for _ in range(2)]
    with pytest.raises(PySparkException) as e:
        filecommit.write(df, path, stage=True)
    assert error_class(e) == "FILECOMMIT_TOO_MANY_STAGED_COMMITS"
    assert filecommit.commit(bob, path, [staged[2], *more]).version == 2
    assert sorted(r.id for r in bob.read.format("delta").load(path).collect()) == [1] * 5
