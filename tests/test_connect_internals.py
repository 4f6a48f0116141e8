"""Covers the private pyspark names that filecommit._connect relies on (reference: execute_command
cannot read extension responses, so the iterator path is used)."""

from __future__ import annotations

import inspect

import pytest
from google.protobuf import wrappers_pb2

from filecommit import _connect


def test_private_client_methods_exist_with_expected_parameters():
    from pyspark.sql.connect.client.core import SparkConnectClient

    assert list(inspect.signature(SparkConnectClient._execute_plan_request_with_metadata).parameters)[:1] == ["self"]
    assert list(inspect.signature(SparkConnectClient._set_command_in_plan).parameters) == ["self", "plan", "command"]
    params = list(inspect.signature(SparkConnectClient._execute_and_fetch_as_iterator).parameters)
    assert params[:4] == ["self", "req", "observations", "progress"]


def test_private_progress_names_exist():
    from pyspark.sql.connect.client.core import SparkConnectClient
    from pyspark.sql.connect.shell.progress import Progress

    assert {"handlers", "operation_id"} <= set(inspect.signature(Progress).parameters)
    assert "_progress_handlers" in inspect.getsource(SparkConnectClient.__init__)


@pytest.mark.slow
def test_unknown_extension_error_arrives_as_exception(spark):
    # A message no plugin handles: the server's error must come back as a Python exception.
    with pytest.raises(Exception, match="No handler found for extension"):
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
