"""Shared fixtures: one embedded Spark Connect server (with the filecommit plugin) per session."""

from __future__ import annotations

import json
import os
import uuid

import pytest
from foreign_tables import clone, foreign  # noqa: F401 - the fixtures of tables other writers made
from helpers import shared_mode


# The longest modules of `make test` (seconds in one process, 2026-11-29), collected first: pytest-xdist
# (--dist loadfile) hands modules to its workers in collection order, so the long ones start early
# and the run does not end with one worker still in a long module while the other has none left.
LONG_MODULES = ["test_deltatable_api", "test_deltatable_merge", "test_deltatable_maintenance", "test_deltatable_create",
                "test_faults", "test_cluster", "test_rowlevel", "test_read", "test_optimize",
                "test_auto_compact", "test_crash", "test_catalog", "test_rowlevel_skipping", "test_schema_evolution",
                "test_sidecar_checkpoints", "test_conflicts", "test_s3_faults", "test_foreign_constraints"]


def pytest_collection_modifyitems(session, config, items):
    """Modules of :data:`LONG_MODULES` first, in that order; every module keeps its tests' order and
    the others keep theirs."""
    rank = {name: i for i, name in enumerate(LONG_MODULES)}
    items.sort(key=lambda item: rank.get(getattr(getattr(item, "module", None), "__name__", ""), len(rank)))


def pytest_runtest_setup(item):
    """Skips a test marked ``refused_in_shared_mode(reason)`` against a shared-mode server, naming
    the reason: it does what such a server refuses by design (docs/sharing.md, "Shared mode")."""
    marker = item.get_closest_marker("refused_in_shared_mode")
    if marker is not None and shared_mode():
        pytest.skip("refused in shared mode: " + (marker.args[0] if marker.args else "see docs/sharing.md"))


@pytest.fixture(scope="session")
def minio(tmp_path_factory):
    """The session's MinIO S3 server (``tests/s3.py``; ``make minio``) on 127.0.0.1 with a fresh
    bucket (``minio.bucket``), stopped at the end. With ``FILECOMMIT_REMOTE`` set none is started:
    the remote server's MinIO when ``FILECOMMIT_MINIO_ENDPOINT`` and ``FILECOMMIT_MINIO_BUCKET`` name
    it (``s3.ExternalMinio``; the bucket is made here, the server has it among its allowed roots and
    S3A pointed at that endpoint: docker/test-containers.sh), else None."""
    import s3

    if os.environ.get("FILECOMMIT_REMOTE"):
        endpoint, bucket = os.environ.get("FILECOMMIT_MINIO_ENDPOINT"), os.environ.get("FILECOMMIT_MINIO_BUCKET")
        if not (endpoint and bucket):
            yield None
            return
        external = s3.ExternalMinio(endpoint, bucket)
        external.create_bucket(bucket)
        s3.ACTIVE = external
        yield external
        s3.ACTIVE = None
        return

    base = tmp_path_factory.mktemp("minio")
    server = s3.MinioServer(str(base / "data"), str(base / "minio.log"))
    server.start()
    server.bucket = f"filecommit-{uuid.uuid4().hex[:8]}"
    server.create_bucket(server.bucket)
    # A second bucket of which only "prefix" is an allowed root (tests/test_s3.py: allowed roots).
    server.roots_bucket = server.bucket + "-roots"
    server.create_bucket(server.roots_bucket)
    s3.ACTIVE = server
    yield server
    s3.ACTIVE = None
    server.stop()


@pytest.fixture(scope="session")
def postgres(tmp_path_factory):
    """The session's PostgreSQL server (``tests/postgres.py``; Debian's ``postgresql`` and
    ``make pg-jdbc-jar``), the Hive metastore the session's server shares with other servers
    (tests/test_shared_metastore.py). Yields a namespace: ``server`` (a started
    ``PostgresServer``, or None), ``jars`` (the JDBC driver), ``warehouse`` (the managed tables'
    directory every server of the metastore uses) and ``error`` (why there is no server: PostgreSQL
    or the driver is missing, with the make target to run). Without a server the session's server
    keeps its own Derby metastore; only the tests that need the shared one fail."""
    import types

    if os.environ.get("FILECOMMIT_REMOTE"):
        yield types.SimpleNamespace(server=None, jars=[], warehouse=None,
                                    error="FILECOMMIT_REMOTE is set: the remote server's metastore is not known here")
        return
    import subprocess

    import postgres as pg

    warehouse = str(tmp_path_factory.mktemp("shared_metastore"))
    try:
        jars = pg.jdbc_jars()
        server = pg.PostgresServer()
    except FileNotFoundError as e:
        yield types.SimpleNamespace(server=None, jars=[], warehouse=warehouse, error=str(e))
        return
    try:
        server.start()
    except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
        server.stop()
        yield types.SimpleNamespace(server=None, jars=[], warehouse=warehouse,
                                    error=f"PostgreSQL did not start ({e!r}): {pg.SETUP_HINT}")
        return
    try:
        yield types.SimpleNamespace(server=server, jars=jars, warehouse=warehouse, error=None)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def spark(tmp_path_factory, minio, postgres):
    """The pytest session's Spark Connect session.

    ``FILECOMMIT_REMOTE=sc://host:15002`` runs the suite against an existing server (started with
    the plugin, e.g. docker/); otherwise one embedded local server with the plugin is started, with
    master ``FILECOMMIT_TEST_MASTER`` (default ``local[2]``) and ``spark.filecommit.allowedRoots``
    set to the temp directory (and ``$FILECOMMIT_TEST_DIR``), where every test writes. Table paths
    must be visible to both the server and the tests (same machine or shared volume).

    The embedded server also loads the fault-injection jar (``tests/faults.py``): every local table
    of the suite is committed through ``FaultInjectingLogStore`` and every sink log through
    ``FaultInjectingCheckpointFileManager``, which are plain delegates until a test arms a fault, so
    the whole suite also checks that they are transparent.

    Its Hive metastore is the session's PostgreSQL database (:func:`postgres`) when one runs.

    It also has Hadoop S3A (``make s3a-jars``) pointed at the session's :func:`minio` server, and
    that server's bucket among the allowed roots, for the object-storage tests (``s3_table_path``).
    """
    import tempfile

    import faults

    import filecommit
    from filecommit import _connect

    remote = os.environ.get("FILECOMMIT_REMOTE")
    if remote:
        session = _connect.connect(remote)
    else:
        roots = [os.path.realpath(tempfile.gettempdir())]
        if os.environ.get("FILECOMMIT_TEST_DIR"):
            roots.append(os.environ["FILECOMMIT_TEST_DIR"])
        # The reader also answers to format("delta") (the server has no delta-spark): tests/test_read.py.
        conf = {"spark.filecommit.allowedRoots": ",".join(roots), "spark.filecommit.read.deltaFormat": "true"}
        conf.update(faults.server_conf(filecommit.server.find_plugin_jar(), str(tmp_path_factory.mktemp("faults"))))
        import s3

        conf.update(s3.server_conf(minio.endpoint))
        # The native Parquet writer's jars (make native-jars), as local_session adds them by default.
        conf["spark.jars"] = ",".join([conf["spark.jars"], *s3.s3a_jars(), *filecommit.server.find_native_jars()])
        conf["spark.filecommit.allowedRoots"] += f",s3a://{minio.bucket}/,s3a://{minio.roots_bucket}/prefix"
        # FILECOMMIT_TEST_WRITER_NATIVE=auto runs the suite with the native Parquet writer as the server's
        # default; FILECOMMIT_TEST_SERVER_CONF (a JSON object) adds server settings, e.g.
        # {"spark.filecommit.smallWrite.maxRows": "0"} to send every write through a Spark job.
        if os.environ.get("FILECOMMIT_TEST_WRITER_NATIVE"):
            conf["spark.filecommit.writer.native"] = os.environ["FILECOMMIT_TEST_WRITER_NATIVE"]
        conf.update(json.loads(os.environ.get("FILECOMMIT_TEST_SERVER_CONF") or "{}"))
        # FILECOMMIT_TEST_PRINCIPAL=name runs the suite as a verified principal that administers the
        # server (every privilege inside the roots): the server authenticates with a tokens file
        # (spark.filecommit.auth.mode=tokens, docs/sharing.md) holding the digest of the token
        # pyspark's embedded server uses, and the client claims that principal as its user id.
        if os.environ.get("FILECOMMIT_TEST_PRINCIPAL"):
            import hashlib
            import secrets

            principal = os.environ["FILECOMMIT_TEST_PRINCIPAL"]
            token = os.environ.setdefault("SPARK_CONNECT_AUTHENTICATE_TOKEN", secrets.token_hex(16))
            os.environ["USER"] = principal  # pyspark's default user id
            tokens = tmp_path_factory.mktemp("auth") / "tokens.json"
            tokens.write_text(json.dumps({"tokens": [{"sha256": hashlib.sha256(token.encode()).hexdigest(),
                                                      "principal": principal}]}))
            conf.update({"spark.filecommit.auth.mode": "tokens", "spark.filecommit.auth.tokensFile": str(tokens),
                         "spark.filecommit.auth.admins": principal,
                         "spark.connect.grpc.interceptor.classes": "io.filecommit.connect.AuthenticationInterceptor"})
        # Its table names live in the session's PostgreSQL metastore when there is one (shared with
        # the servers of tests/test_shared_metastore.py), else in a Derby metastore of its own.
        metastore = {} if postgres.server is None else {
            "metastore_dir": postgres.warehouse, "metastore_url": postgres.server.url, "metastore_jars": postgres.jars}
        session = filecommit.local_session(master=os.environ.get("FILECOMMIT_TEST_MASTER", "local[2]"), conf=conf,
                                           **metastore)
    yield session
    session.stop()


@pytest.fixture
def table_path(request, tmp_path):
    """A fresh, not yet existing table path under pytest's tmp dir (or ``$FILECOMMIT_TEST_DIR``).

    Parametrized indirectly with ``"s3"`` (``helpers.on_s3`` runs a test with ``"local"`` and
    ``"s3"``), it is an ``s3a://`` path in the session's MinIO bucket instead (:func:`s3_table_path`)."""
    if getattr(request, "param", "local") == "s3":
        return request.getfixturevalue("s3_table_path")
    base = os.environ.get("FILECOMMIT_TEST_DIR")
    root = os.path.join(base, uuid.uuid4().hex[:8]) if base else str(tmp_path)
    return os.path.join(root, f"t_{uuid.uuid4().hex[:8]}")


@pytest.fixture
def faults_available(spark):
    """Skips the test when the server under test was not started with the fault-injection jar
    (``tests/faults.py``; ``FILECOMMIT_REMOTE`` without ``FILECOMMIT_TEST_FAULTS_DIR``). Modules of
    fault-injection tests use it on every test: ``pytest.mark.usefixtures("faults_available")``."""
    import faults

    if faults.directory() is None:
        pytest.skip("the server under test was not started with the fault-injection jar "
                    "(FILECOMMIT_REMOTE without FILECOMMIT_TEST_FAULTS_DIR)")


@pytest.fixture
def s3_table_path(minio):
    """A fresh, not yet existing ``s3a://`` table path in the session's MinIO bucket."""
    if minio is None:
        pytest.skip("object-storage tests need a MinIO: the embedded server's, or FILECOMMIT_MINIO_ENDPOINT and "
                    "FILECOMMIT_MINIO_BUCKET with FILECOMMIT_REMOTE")
    return f"s3a://{minio.bucket}/{uuid.uuid4().hex[:8]}/t_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def delta_spark(tmp_path_factory, minio):
    """One Spark + Delta worker (``tests/delta_tables.py --serve`` in ``.venv-delta``) per session:
    makes fixture tables with real delta-spark and reads tables, independent of our code. Its S3A
    (the hadoop-aws of its own Hadoop, ``make delta-reader``) points at the session's :func:`minio`,
    so it reads ``s3a://`` tables too."""
    from delta_tables import DeltaSpark

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    python = os.environ.get("FILECOMMIT_DELTA_PYTHON", os.path.join(root, ".venv-delta", "bin", "python"))
    if not os.path.exists(python):
        pytest.fail(f"Spark + Delta venv missing at {python}: run `make delta-reader`")
    s3a_conf = None
    if minio is not None:
        import s3

        s3a_conf = s3.server_conf(minio.endpoint)
    worker = DeltaSpark(python, str(tmp_path_factory.mktemp("delta_spark_worker") / "stderr.log"), s3a_conf=s3a_conf)
    yield worker
    worker.close()


@pytest.fixture(scope="session")
def s3_peer(spark, minio, tmp_path_factory):
    """A second Spark Connect server with the plugin in its own JVM (``tests/crash_server.py``),
    another writer of the session's MinIO bucket: its S3A reaches MinIO through a fault proxy
    (``tests/s3_proxy.py``, forwarding everything until a test arms a rule) with short S3A retries,
    no retention floor (``spark.filecommit.retention.minimum=0``), the native Parquet writer's jars
    and S3A multipart uploads from 5 MB on, in 5 MB parts (the smallest S3 allows), so a test's
    native-written file of a few MB goes up as a multipart upload.
    Yields an object with ``spark`` (a Connect session on it), ``proxy`` and ``server``."""
    if minio is None or os.environ.get("FILECOMMIT_REMOTE"):
        pytest.skip("the S3 peer server needs the embedded server's MinIO (FILECOMMIT_REMOTE is set)")
    import types

    import s3
    import s3_proxy
    from crash_server import ConnectServer
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    import filecommit

    proxy = s3_proxy.FaultProxy(minio.endpoint).start()
    conf = s3.server_conf(proxy.endpoint)
    conf.update({
        "spark.filecommit.allowedRoots": f"s3a://{minio.bucket}/",
        # No retention floor: VACUUM of s3a:// tables, whose objects cannot be made to look old.
        "spark.filecommit.retention.minimum": "0",
        "spark.hadoop.fs.s3a.attempts.maximum": "2",
        "spark.hadoop.fs.s3a.retry.limit": "2",
        "spark.hadoop.fs.s3a.retry.interval": "100ms",
        "spark.hadoop.fs.s3a.retry.throttle.limit": "2",
        "spark.hadoop.fs.s3a.retry.throttle.interval": "100ms",
        "spark.hadoop.fs.s3a.connection.establish.timeout": "2s",
        "spark.hadoop.fs.s3a.connection.timeout": "10s",
        "spark.hadoop.fs.s3a.multipart.size": "5M",
        "spark.hadoop.fs.s3a.multipart.threshold": "5M",
    })
    jars = ",".join([filecommit.server.find_plugin_jar(), *s3.s3a_jars(), *filecommit.server.find_native_jars()])
    server = ConnectServer(jars, filecommit.server.PLUGIN_CLASS, str(tmp_path_factory.mktemp("s3_peer") / "server.log"),
                           conf=conf)
    server.start()
    session = RemoteSparkSession.builder.remote(server.url).create()
    try:
        yield types.SimpleNamespace(spark=session, proxy=proxy, server=server)
    finally:
        try:
            session.stop()
        finally:
            server.stop()
            proxy.stop()


@pytest.fixture
def peer(s3_peer, minio, delta_spark):
    """The second server (:func:`s3_peer`) with a clean proxy, for one test: ``spark``, ``proxy``,
    ``server`` and the Spark + Delta reader (``delta_spark``); every proxy rule cleared and MinIO
    running again after the test."""
    import types

    s3_peer.proxy.clear()
    yield types.SimpleNamespace(spark=s3_peer.spark, proxy=s3_peer.proxy, server=s3_peer.server,
                                delta_spark=delta_spark)
    s3_peer.proxy.clear()
    if minio.proc is None:
        minio.start()


@pytest.fixture(scope="module")
def made(delta_spark, tmp_path_factory, request):
    """The module's fixture tables (its ``FIXTURES`` dict: name -> the steps ``tests/delta_tables.py``
    runs), made by real Delta in one Spark + Delta request while the Connect server starts: name ->
    the answer (``path``, ``version``, ...) of ``helpers.make_fixture_tables``."""
    from helpers import make_fixture_tables

    return make_fixture_tables(delta_spark, tmp_path_factory, request, request.module.FIXTURES,
                               request.module.__name__.removeprefix("test_"))



@pytest.fixture
def twin(made, tmp_path, request):
    """``twin(name)``: two fresh copies of the module's fixture table ``name`` (``made``): (ours,
    Delta's, version), so that filecommit and Delta run the same change on the same files.
    Parametrized indirectly with ``"s3"`` (``pytest.mark.parametrize("twin", ["local", "s3"],
    indirect=True)``), ours is an ``s3a://`` copy in the session's MinIO bucket."""
    from helpers import twin_copier

    return twin_copier(made, tmp_path, getattr(request, "param", "local"))
