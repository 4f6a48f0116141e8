"""The only module that touches private pyspark Spark Connect client internals.

``SparkConnectClient.execute_command`` cannot read ``ExecutePlanResponse.extension`` answers (it
raises UNKNOWN_RESPONSE after the server already ran the command), so commands are sent through
the iterator path, which keeps reattach, session hooks and server-error conversion (pyspark's
``SparkConnectClient`` in ``pyspark/sql/connect/client/core.py``). tests/test_connect_internals.py
covers these names.

Private names may differ between pyspark releases, so the client supports the pyspark release
series in :data:`SUPPORTED_PYSPARK_SERIES` (pyproject.toml's range), where the names it uses are
the same: importing ``filecommit`` with any other pyspark raises ``ImportError``
(:func:`check_pyspark_version`). A difference between supported releases belongs in this module.
"""

from __future__ import annotations

import atexit
import inspect
import os
import weakref
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from google.protobuf import any_pb2
from google.protobuf.message import Message

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

    from filecommit._typing import AnySparkSession

SUPPORTED_PYSPARK_SERIES = ("4.1", "4.2", "4.3")
"""pyspark release series (``major.minor``) whose Spark Connect client this module drives: the
private names it uses are the same in each (tests/test_connect_internals.py checks them on the
installed pyspark; tests/test_client_versions.py runs the oldest, ``pyspark-client`` 4.1.3, against
the server). pyproject.toml's ``pyspark[connect]>=4.1,<4.4`` says the same."""

SUPPORTED_PYSPARK_RANGE = ">=4.1,<4.4"
"""The supported pyspark releases as a pip version specifier (:data:`SUPPORTED_PYSPARK_SERIES`)."""


def check_pyspark_version(version: str | None = None) -> None:
    """Refuse a pyspark release this client was not made for.

    Accepts any release of :data:`SUPPORTED_PYSPARK_SERIES`, from the full ``pyspark`` package or the
    Connect-only ``pyspark-client`` package (both install the ``pyspark`` module with its
    ``pyspark.version``).

    Args:
        version: a pyspark version string (e.g. ``"4.1.3"``, ``"4.3.0.dev1"``); default: the
            installed ``pyspark.version.__version__``.

    Raises:
        ImportError: pyspark is missing, or its ``major.minor`` is not in
            :data:`SUPPORTED_PYSPARK_SERIES`; the message names the supported range.
    """
    wanted = f"pyspark[connect]{SUPPORTED_PYSPARK_RANGE} (or pyspark-client{SUPPORTED_PYSPARK_RANGE})"
    if version is None:
        try:
            from pyspark.version import __version__ as installed
        except ImportError as e:
            raise ImportError(f"filecommit needs {wanted}; pyspark is not installed") from e
        version = installed
    series = ".".join(version.split(".")[:2])
    if series not in SUPPORTED_PYSPARK_SERIES:
        raise ImportError(
            f"filecommit supports pyspark {SUPPORTED_PYSPARK_RANGE} (the {', '.join(SUPPORTED_PYSPARK_SERIES)} "
            f"releases, whose Spark Connect client internals it uses), but pyspark {version} is installed: "
            f"install {wanted}"
        )


check_pyspark_version()


def relation_of(df: object) -> Message | None:
    """The ``spark.connect.Relation`` plan of a Spark Connect DataFrame (``df._plan.plan(client)``),
    or None when ``df`` is anything else (e.g. a classic pyspark or a pandas DataFrame).

    ``filecommit._wire.relation`` turns None into the caller's ``NOT_EXPECTED_TYPE`` error.
    """
    plan = getattr(df, "_plan", None)
    session = getattr(df, "sparkSession", None)
    client = getattr(session, "client", None)
    if plan is None or client is None:
        return None
    relation: Message = plan.plan(client)
    return relation


#: Largest Arrow payload (bytes) of a shipped local relation that :func:`ships_small_rows` accepts.
SMALL_LOCAL_RELATION_BYTES = 1 << 20


def ships_small_rows(relation: Any) -> bool:
    """Whether ``relation`` (a ``spark.connect.Relation``) is a ``LocalRelation`` whose rows travel
    in the plan, at most :data:`SMALL_LOCAL_RELATION_BYTES` of Arrow data: the server writes such an
    input on the driver in milliseconds, so its command needs no reattachable execution."""
    return (relation.WhichOneof("rel_type") == "local_relation"
            and len(relation.local_relation.data) <= SMALL_LOCAL_RELATION_BYTES)


def execute_extension_command(spark: AnySparkSession, message: Message, *,
                              reattachable: bool = True) -> Iterator[any_pb2.Any]:
    """Send ``message`` packed in ``Command.extension`` and yield each ``extension`` response.

    The ``execution_progress`` responses that the server streams while the command's Spark jobs
    run (every ``spark.connect.progress.reportInterval``, Spark's ``ExecuteGrpcResponseSender``)
    go to the session's progress handlers (``spark.registerProgressHandler``) and to pyspark's
    console progress bar when it is enabled, through a ``pyspark.sql.connect.shell.progress.
    Progress`` as pyspark's own ``SparkConnectClient.to_table`` uses: without one,
    ``_execute_and_fetch_as_iterator`` drops them.

    With ``reattachable`` False the command runs as ONE ``ExecutePlan`` stream, as pyspark's
    client does with its reattachable execution disabled, but without automatic retries: no
    ``ReattachExecute`` / ``ReleaseExecute`` calls, no server-side result buffer (Spark's
    ``ExecuteResponseObserver``) and no client release thread. That saves about 2 ms of client CPU
    and a few of server CPU per command, which is most of a small write's cost. The price: when the
    stream breaks, the outcome is unknown (the error is raised, nothing is resent) instead of being
    fetched again; a write with a ``txn`` identifier can then be resent safely.

    Args:
        spark: a Spark Connect ``SparkSession``.
        message: the command message (e.g. ``filecommit.v1.WriteCommand``).
        reattachable: run through pyspark's reattachable execution (default) or as one stream.

    Yields:
        ``google.protobuf.any_pb2.Any`` payloads in server order.

    Raises:
        pyspark.errors.exceptions.connect.SparkConnectException (and subclasses): server errors,
        carrying the server's message.
    """
    from pyspark.sql.connect import proto as spark_pb
    from pyspark.sql.connect.shell.progress import Progress

    client = cast("SparkSession", spark).client  # a Connect session at run time (typed either way)
    command = spark_pb.Command()
    command.extension.Pack(message)
    request = client._execute_plan_request_with_metadata()
    client._set_command_in_plan(request.plan, command)
    with Progress(handlers=client._progress_handlers, operation_id=request.operation_id) as progress:
        if not reattachable:
            yield from _execute_once(client, request, progress)
            return
        for item in client._execute_and_fetch_as_iterator(request, {}, progress=progress):
            if isinstance(item, any_pb2.Any):
                yield item


def _execute_once(client: Any, request: Any, progress: Any) -> Iterator[any_pb2.Any]:
    """One ``ExecutePlan`` stream, handled as pyspark's ``_execute_and_fetch_as_iterator`` handles
    a non-reattachable one (session hooks, response integrity, progress, error conversion), minus
    its retries: a write must not be sent twice behind the caller's back."""
    from pyspark.sql.connect.shell.progress import from_proto

    operation_id = request.operation_id
    for hook in client._session_hooks:
        request = hook.on_execute_plan(request)
        request.operation_id = operation_id
    try:
        for response in client._stub.ExecutePlan(request, metadata=client._builder.metadata()):
            client._verify_response_integrity(response)
            if response.HasField("extension"):
                yield response.extension
            if response.HasField("execution_progress"):
                progress.update_ticks(*from_proto(response.execution_progress), operation_id=response.operation_id)
    except Exception as error:  # noqa: BLE001 - converted as pyspark converts every RPC error
        handle_error(client, error, operation_id)


def handle_error(client: Any, error: Exception, operation_id: str) -> None:
    """Raise ``error`` converted as pyspark's ``SparkConnectClient._handle_error`` converts an RPC
    error (a ``SparkConnectGrpcException`` subclass carrying the server's error class).

    The one private name whose shape differs between the supported releases: pyspark 4.3 takes the
    operation id too (and sets it on the raised exception), 4.1 and 4.2 take the error alone.

    Raises:
        Exception: always; the converted error, or ``error`` itself when it is no RPC error.
    """
    if "operation_id" in inspect.signature(client._handle_error).parameters:
        client._handle_error(error, operation_id)
    else:
        client._handle_error(error)


def server_url(spark: SparkSession) -> str:
    """The ``sc://host:port`` URL of the server ``spark`` is connected to.

    Lets a caller open an independent second session (``SparkSession.builder.remote(url).create()``)
    on the same server, e.g. the embedded one started by ``local_session()``.
    """
    builder: Any = spark.client._builder  # a DefaultChannelBuilder for sc:// URLs
    return f"sc://{builder.endpoint}"


_local_url: str | None = None
_sessions: weakref.WeakSet[SparkSession] = weakref.WeakSet()


def connect(url: str) -> SparkSession:
    """A Spark Connect session to ``url``, also when this process hosts the embedded server.

    ``pyspark.sql.SparkSession.builder.remote(url)`` refuses to connect while a classic session
    (the embedded server's) lives in this process; the Connect session class itself does not.

    Like ``pyspark.sql.SparkSession.builder.remote(...)``, this marks the process as a Spark
    Connect client (environment variable ``SPARK_CONNECT_MODE_ENABLED=1``, read by
    ``pyspark.sql.utils.is_remote()``), so that ``pyspark.sql.functions`` (``udf``,
    ``pandas_udf``, ...) build Connect columns and not classic ones, also while the embedded
    server's classic session lives in this process.
    """
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
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


def require_jvm_pyspark() -> None:
    """Refuse to start an embedded server with the Connect-only ``pyspark-client`` package.

    An embedded Spark Connect server runs in a JVM that the full ``pyspark`` package launches
    (``pyspark.core``, its ``jars/``); ``pyspark-client`` ships neither, and connects to a server
    only (``SparkSession.builder.remote("sc://host:port")``).

    Raises:
        ImportError: ``pyspark.core`` is missing; the message names both ways out.
    """
    import importlib.util

    if importlib.util.find_spec("pyspark.core") is None:
        raise ImportError(
            "filecommit.local_session() starts a Spark Connect server in a JVM, which the installed pyspark "
            "(the Connect-only pyspark-client package) cannot: install pyspark[connect]==4.3.0 for an embedded "
            "server, or connect to a running one with SparkSession.builder.remote('sc://host:15002')"
        )


def start_local_server(master: str, conf: Mapping[str, str], python_exec: str | None = None) -> str:
    """Start an embedded Spark Connect server in this process's JVM, or reuse the running one.

    The server gets ``conf`` as its start-up configuration. pyspark's own ``remote("local")``
    always connects to port 15002, which collides with any other server on the machine; here
    the server may bind an ephemeral port (``spark.connect.grpc.binding.port=0``) and the real
    port is read back from ``SparkConnectService.localPort()``.

    The server runs the Python workers of Python UDFs with the interpreter named by its JVM's
    ``PYSPARK_PYTHON`` environment variable (Spark's ``SparkConnectPlanner.pythonExec``, which
    reads neither ``spark.pyspark.python`` nor the client's interpreter; default ``python3``).
    With ``python_exec`` given, ``PYSPARK_PYTHON`` is set to it while the JVM is launched and
    restored afterwards, so this process's environment is left as it was. Likewise
    ``SPARK_LOCAL_IP``, unless set already, is the conf's ``spark.driver.bindAddress`` during the
    launch (Spark's ``Utils.findLocalInetAddress`` otherwise warns that the host name resolves to
    a loopback address and picks another interface for executors).

    Args:
        master: Spark master, e.g. "local[2]".
        conf: server configuration (str -> str).
        python_exec: interpreter for the server's Python workers, e.g. ``sys.executable``; None
            leaves ``PYSPARK_PYTHON`` as it is. Ignored when the server is already running.

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
    launch_env = {}
    if python_exec is not None:
        launch_env["PYSPARK_PYTHON"] = python_exec
    if "SPARK_LOCAL_IP" not in os.environ and conf.get("spark.driver.bindAddress"):
        launch_env["SPARK_LOCAL_IP"] = conf["spark.driver.bindAddress"]
    saved = {name: os.environ.get(name) for name in launch_env}
    os.environ.update(launch_env)
    try:
        RemoteSparkSession._start_connect_server(master, dict(conf))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    session = ClassicSparkSession._instantiatedSession
    if session is None:
        raise RuntimeError("pyspark did not start the embedded Spark Connect server")
    jvm: Any = session._jvm
    service = getattr(getattr(jvm, "org.apache.spark.sql.connect.service.SparkConnectService$"), "MODULE$")
    _local_url = f"sc://localhost:{service.localPort()}"
    atexit.register(_shutdown)
    return _local_url
