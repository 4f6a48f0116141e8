"""Covers the private pyspark names that filecommit._connect relies on (reference: execute_command
cannot read extension responses, so the iterator path is used)."""

from __future__ import annotations

import inspect

import pytest
from google.protobuf import wrappers_pb2
from pyspark.errors import PySparkException

from filecommit import _connect


def test_private_client_methods_exist_with_expected_parameters():
    from pyspark.sql.connect.client.core import SparkConnectClient

    assert list(inspect.signature(SparkConnectClient._execute_plan_request_with_metadata).parameters)[:1] == ["self"]
    assert list(inspect.signature(SparkConnectClient._set_command_in_plan).parameters) == ["self", "plan", "command"]
    params = list(inspect.signature(SparkConnectClient._execute_and_fetch_as_iterator).parameters)
    assert params[:4] == ["self", "req", "observations", "progress"]


def test_handle_error_takes_the_operation_id_on_4_3_only():
    # The one private signature that differs between the supported releases (_connect.handle_error):
    # 4.1 and 4.2 take (self, error), 4.3 (self, error, operation_id=None).
    import pyspark
    from pyspark.sql.connect.client.core import SparkConnectClient

    params = list(inspect.signature(SparkConnectClient._handle_error).parameters)
    expected = ["self", "error", "operation_id"] if pyspark.__version__.startswith("4.3.") else ["self", "error"]
    assert params == expected


def test_handle_error_passes_the_operation_id_only_where_accepted():
    seen = []

    class Old:
        def _handle_error(self, error):
            seen.append(("old", error))
            raise error

    class New:
        def _handle_error(self, error, operation_id=None):
            seen.append(("new", error, operation_id))
            raise error

    error = ValueError("x")
    for client in (Old(), New()):
        with pytest.raises(ValueError):
            _connect.handle_error(client, error, "op-1")
    assert seen == [("old", error), ("new", error, "op-1")]


def test_private_progress_names_exist():
    from pyspark.sql.connect.client.core import SparkConnectClient
    from pyspark.sql.connect.shell.progress import Progress

    assert {"handlers", "operation_id"} <= set(inspect.signature(Progress).parameters)
    assert "_progress_handlers" in inspect.getsource(SparkConnectClient.__init__)


@pytest.mark.slow
def test_unknown_extension_error_arrives_as_exception(spark):
    # A message no plugin handles: the server's error must come back as a Python exception.
    with pytest.raises(PySparkException, match="No handler found for extension"):
        list(_connect.execute_extension_command(spark, wrappers_pb2.StringValue(value="x")))


@pytest.mark.slow
def test_server_url_opens_a_second_session(spark):
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    other = RemoteSparkSession.builder.remote(_connect.server_url(spark)).create()
    try:
        assert other.client._session_id != spark.client._session_id
        assert other.range(3).count() == 3
    finally:
        other.stop()


class _RecordingStub:
    """Wraps a pyspark client's gRPC stub, recording (method, request) of every call."""

    def __init__(self, stub):
        self._stub, self.calls = stub, []

    def __getattr__(self, name):
        method = getattr(self._stub, name)

        def call(request, *args, **kwargs):
            self.calls.append((name, request))
            return method(request, *args, **kwargs)

        return call


def executions(stub) -> list[str]:
    return [name for name, _r in stub.calls if name in ("ExecutePlan", "ReattachExecute", "ReleaseExecute")]


def _reattachable(request) -> bool:
    return any(o.HasField("reattach_options") and o.reattach_options.reattachable for o in request.request_options)


@pytest.mark.slow
def test_small_local_write_runs_as_one_execute_plan_stream(spark, tmp_path):
    # A write whose rows travel in the plan takes one ExecutePlan stream (no reattach options, so
    # no ReattachExecute / ReleaseExecute); a write whose input Spark reads keeps reattachable
    # execution. Both land, as delta-rs reads them; a refusal on the one-stream path still arrives
    # as the server's error class.
    from deltalake import DeltaTable
    from helpers import second_session

    import filecommit

    s = second_session(spark)
    try:
        small = s.createDataFrame([(1, "a"), (2, "b")], "id long, name string")
        big = s.range(10, 13).selectExpr("id", "cast(id as string) as name")
        bad = s.createDataFrame([(3, "c")], "id long, name string")
        stub = _RecordingStub(s.client._stub)
        s.client._stub = stub
        path = str(tmp_path / "t")
        filecommit.write(small, path)
        assert executions(stub) == ["ExecutePlan"]  # (pyspark's Config call for plan compression aside)
        assert not _reattachable(stub.calls[-1][1])
        stub.calls.clear()
        filecommit.write(big, path)
        plans = [r for name, r in stub.calls if name == "ExecutePlan"]
        assert len(plans) == 1 and _reattachable(plans[0])
        stub.calls.clear()
        with pytest.raises(PySparkException) as e:
            filecommit.write(bad, str(tmp_path / "u"), partition_by=["nope"])
        assert e.value.getCondition() == "DELTA_PARTITION_COLUMN_NOT_FOUND", e.value
        plans = [r for name, r in stub.calls if name == "ExecutePlan"]  # (the big write's release may still land)
        assert len(plans) == 1 and not _reattachable(plans[0])
        got = DeltaTable(path).to_pandas().sort_values("id")
        assert got["id"].tolist() == [1, 2, 10, 11, 12]
        assert got["name"].tolist() == ["a", "b", "10", "11", "12"]
    finally:
        s.stop()


def test_only_small_local_relations_ship_rows():
    from pyspark.sql.connect.proto import relations_pb2

    local = relations_pb2.Relation()
    local.local_relation.data = b"x" * 100
    assert _connect.ships_small_rows(local)
    local.local_relation.data = b"x" * (_connect.SMALL_LOCAL_RELATION_BYTES + 1)
    assert not _connect.ships_small_rows(local)
    ranged = relations_pb2.Relation()
    ranged.range.end = 10
    assert not _connect.ships_small_rows(ranged)


@pytest.mark.slow
def test_local_session_standard_write_is_one_stream(spark, tmp_path):
    # local_session's session runs without reattachable execution (no ReleaseExecute after each
    # operation), so df.write.format("delta").save(path) takes exactly one ExecutePlan stream, as a
    # small filecommit.write does; the write lands, as delta-rs reads it.
    import os

    from deltalake import DeltaTable

    if os.environ.get("FILECOMMIT_REMOTE"):
        pytest.skip("the suite's session is not local_session's")
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string")
    path = str(tmp_path / "t")
    saved = spark.client._stub
    stub = _RecordingStub(saved)
    spark.client._stub = stub
    try:
        df.write.format("delta").mode("append").save(path)
    finally:
        spark.client._stub = saved
    assert executions(stub) == ["ExecutePlan"]
    assert not _reattachable([r for name, r in stub.calls if name == "ExecutePlan"][0])
    assert sorted(DeltaTable(path).to_pandas()["id"].tolist()) == [1, 2]
