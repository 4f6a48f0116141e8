"""The only module that touches private pyspark Spark Connect client internals.

``SparkConnectClient.execute_command`` cannot read ``ExecutePlanResponse.extension`` answers (it
raises UNKNOWN_RESPONSE after the server already ran the command), so commands are sent through
the iterator path, which keeps reattach, session hooks and server-error conversion (reference
spark-connect-plugins.md, "The Python side"). tests/test_connect_internals.py covers these names.
"""

from __future__ import annotations

import atexit
import weakref
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


def server_url(spark) -> str:
    """The ``sc://host:port`` URL of the server ``spark`` is connected to.

    Lets a caller open an independent second session (``SparkSession.builder.remote(url).create()``)
    on the same server, e.g. the embedded one started by ``local_session()``.
    """
    return f"sc://{spark.client._builder.endpoint}"


_local_url = None
_sessions: "weakref.WeakSet" = weakref.WeakSet()


def connect(url: str):
    """A Spark Connect session to ``url``, also when this process hosts the embedded server.

    ``pyspark.sql.SparkSession.builder.remote(url)`` refuses to connect while a classic session
    (the embedded server's) lives in this process; the Connect session class itself does not.
    """
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    session = RemoteSparkSession.builder.remote(url).getOrCreate()
    _sessions.add(session)
    return session


def _shutdown() -> None:
    """At exit: stop our Connect sessions, then the embedded server.

    Left to garbage collection at interpreter exit, a session's gRPC channel close can block
    forever once the embedded JVM is going away; stopping in this order exits cleanly.
    """
    from pyspark.sql.session import SparkSession as ClassicSparkSession

    for session in list(_sessions):
        try:
            session.stop()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
    if ClassicSparkSession._instantiatedSession is not None:
        ClassicSparkSession._instantiatedSession.stop()


def start_local_server(master: str, conf: dict) -> str:
    """Start an embedded Spark Connect server in this process's JVM, or reuse the running one.

    The server gets ``conf`` as its start-up configuration. pyspark's own ``remote("local")``
    always connects to port 15002, which collides with any other server on the machine; here
    the server may bind an ephemeral port (``spark.connect.grpc.binding.port=0``) and the real
    port is read back from ``SparkConnectService.localPort()``.

    Args:
        master: Spark master, e.g. "local[2]".
        conf: server configuration (str -> str).

    Returns:
        The server's URL, ``sc://localhost:<port>`` (pyspark uses local channel credentials
        with the server's auth token only for host ``localhost``).
    """
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession
    from pyspark.sql.session import SparkSession as ClassicSparkSession

    global _local_url
    if _local_url is not None and ClassicSparkSession._instantiatedSession is not None:
        return _local_url
    # Not setting SPARK_LOCAL_REMOTE (as remote("local") does): pyspark would then connect to
    # sc://localhost:15002 whatever the real port. The server lives as long as this process.
    RemoteSparkSession._start_connect_server(master, dict(conf))
    jvm = ClassicSparkSession._instantiatedSession._jvm
    service = getattr(getattr(jvm, "org.apache.spark.sql.connect.service.SparkConnectService$"), "MODULE$")
    _local_url = f"sc://localhost:{service.localPort()}"
    atexit.register(_shutdown)
    return _local_url
