"""The only module that touches private pyspark Spark Connect client internals.

``SparkConnectClient.execute_command`` cannot read ``ExecutePlanResponse.extension`` answers (it
raises UNKNOWN_RESPONSE after the server already ran the command), so commands are sent through
the iterator path, which keeps reattach, session hooks and server-error conversion (reference
spark-connect-plugins.md, "The Python side"). tests/test_connect_internals.py covers these names.
"""

from __future__ import annotations

from typing import Iterator

from google.protobuf import any_pb2
from google.protobuf.message import Message


def relation_of(df) -> "Message":
    """The ``spark.connect.Relation`` plan of a Spark Connect DataFrame.

    Raises:
        TypeError: if ``df`` is not a Spark Connect DataFrame.
    """
    plan = getattr(df, "_plan", None)
    session = getattr(df, "sparkSession", None)
    client = getattr(session, "client", None)
    if plan is None or client is None:
        raise TypeError(
            f"expected a Spark Connect DataFrame (from SparkSession.builder.remote(...)), got {type(df).__name__}"
        )
    return plan.plan(client)


def execute_extension_command(spark, message: Message) -> Iterator[any_pb2.Any]:
    """Send ``message`` packed in ``Command.extension`` and yield each ``extension`` response.

    Args:
        spark: a Spark Connect ``SparkSession``.
        message: the command message (e.g. ``filecommit.v1.WriteCommand``).

    Yields:
        ``google.protobuf.any_pb2.Any`` payloads in server order.

    Raises:
        pyspark.errors.exceptions.connect.SparkConnectException (and subclasses): server errors,
        carrying the server's message.
    """
    from pyspark.sql.connect import proto as spark_pb

    client = spark.client
    command = spark_pb.Command()
    command.extension.Pack(message)
    request = client._execute_plan_request_with_metadata()
    client._set_command_in_plan(request.plan, command)
    for item in client._execute_and_fetch_as_iterator(request, {}):
        if isinstance(item, any_pb2.Any):
            yield item
