"""Spark Connect sessions with the filecommit server plugin.

``local_session()`` starts an embedded Spark Connect server in a local JVM, as pyspark's
``SparkSession.builder.remote("local")`` does, with the plugin jar on its classpath and
``spark.connect.extensions.command.classes`` set to :data:`COMMAND_CLASSES` (:data:`PLUGIN_CLASS`
and Delta Connect's :data:`DELTA_CONNECT_COMMAND_CLASS`) and
``spark.connect.extensions.relation.classes`` to :data:`DELTA_CONNECT_RELATION_CLASS`; its Python
workers (Python UDFs in a written DataFrame) run with this process's interpreter. Against an
existing cluster, use ``SparkSession.builder.remote("sc://host:15002").getOrCreate()`` instead; that
server must have been started with the jar and the same two settings.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from filecommit import _checks

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

PLUGIN_CLASS = "io.filecommit.connect.FileCommitPlugin"
"""Fully qualified class name of the server-side command plugin."""

DELTA_CONNECT_COMMAND_CLASS = "io.filecommit.connect.DeltaConnectCommands"
"""The command plugin of Delta Connect's ``DeltaCommand`` (delta-spark's ``DeltaTable`` API over Spark
Connect), registered next to :data:`PLUGIN_CLASS` in ``spark.connect.extensions.command.classes``."""

DELTA_CONNECT_RELATION_CLASS = "io.filecommit.connect.DeltaConnectRelations"
"""The relation plugin of Delta Connect's ``DeltaRelation`` (``DeltaTable.forPath(...).toDF()``,
``delete``, ``update``, ``history``, ...), in ``spark.connect.extensions.relation.classes``."""

COMMAND_CLASSES = f"{PLUGIN_CLASS},{DELTA_CONNECT_COMMAND_CLASS}"
"""The value of ``spark.connect.extensions.command.classes`` of a filecommit server."""

CATALOG_CLASS = "io.filecommit.catalog.FileCommitCatalog"
"""The ``spark_catalog`` plugin of Delta tables by name (``spark.sql.catalog.spark_catalog``)."""

EXTENSIONS_CLASS = "io.filecommit.catalog.FileCommitExtensions"
"""The session extension of SQL on Delta tables (``spark.sql.extensions``)."""


JDBC_DRIVERS = {
    "jdbc:postgresql:": "org.postgresql.Driver",
    "jdbc:mysql:": "com.mysql.cj.jdbc.Driver",
    "jdbc:mariadb:": "org.mariadb.jdbc.Driver",
    "jdbc:derby:": "org.apache.derby.jdbc.EmbeddedDriver",
}
"""JDBC driver class by URL prefix, for :func:`metastore_conf` (Hive's
``javax.jdo.option.ConnectionDriverName``)."""


def metastore_conf(
    directory: str, url: str | None = None, jdbc_jars: Sequence[str] = (), driver: str | None = None
) -> dict[str, str]:
    """Server settings of tables by name with Spark's Hive metastore, on embedded Derby or on a
    database server.

    Without ``url``, the metastore database (``<directory>/metastore_db``), Derby's log
    (``derby.log``) and the warehouse of managed tables (``<directory>/warehouse``) all live in
    ``directory``, so a server keeps its table names across restarts when given the same directory,
    and several servers with different directories do not share names (embedded Derby allows one
    JVM per database).

    With ``url`` (a JDBC URL such as ``jdbc:postgresql://host:5432/metastore?user=hive&password=...``;
    Hive's ``javax.jdo.option.ConnectionURL``), the metastore lives in that database: every server
    given the same URL shares the same table names (docs/operators.md, "Shared metastore"). Its
    tables are created on first use (``datanucleus.schema.autoCreateAll``; Hive's schema version is
    not checked); managed tables still go to ``<directory>/warehouse``, which servers that share
    names should share too. A user and password outside the URL go into
    ``spark.hadoop.javax.jdo.option.ConnectionUserName`` / ``ConnectionPassword`` of the conf.

    Args:
        directory: an absolute directory, created if missing.
        url: JDBC URL of the metastore database; None: embedded Derby in ``directory``.
        jdbc_jars: the JDBC driver's jar files, put on the server driver's class path
            (``spark.driver.extraClassPath``, where Hive's DataNucleus finds the driver).
        driver: JDBC driver class; None: from the URL's prefix (:data:`JDBC_DRIVERS`).

    Returns:
        Spark settings (str -> str): the catalog plugin, the session extension, the Hive catalog,
        the connection URL (and driver) and the warehouse directory.

    Raises:
        pyspark.errors.PySparkValueError: (a ``ValueError``) ``VALUE_NOT_ALLOWED`` for a URL that is
            not ``jdbc:...`` or whose driver is not known (give ``driver``).
    """
    directory = os.path.abspath(directory)
    os.makedirs(directory, exist_ok=True)
    conf = {
        "spark.sql.catalog.spark_catalog": CATALOG_CLASS,
        "spark.sql.extensions": EXTENSIONS_CLASS,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": os.path.join(directory, "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={os.path.join(directory, 'metastore_db')};create=true",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.hadoop.hive.metastore.schema.verification": "false",
    }
    if url is not None:
        _checks.non_empty_str("metastore_url", url)
        if driver is None:
            driver = next((d for prefix, d in JDBC_DRIVERS.items() if url.startswith(prefix)), None)
        if not url.startswith("jdbc:") or driver is None:
            _checks.not_allowed("metastore_url", "a jdbc: URL of " + ", ".join(JDBC_DRIVERS) + " (or give the driver)")
        conf["spark.hadoop.javax.jdo.option.ConnectionURL"] = url
        conf["spark.hadoop.javax.jdo.option.ConnectionDriverName"] = _checks.non_empty_str("driver", driver)
        classes = _hive_model_classes()
        if classes:
            # Every metastore table is created when the server first opens the metastore: created
            # lazily (DataNucleus's default), the DDL of a table runs on a second connection while
            # the first holds locks in its transaction, and PostgreSQL makes the two wait forever.
            conf["spark.hadoop.datanucleus.autoStartMechanism"] = "Classes"
            conf["spark.hadoop.datanucleus.autoStartClassNames"] = ",".join(classes)
    jars = [os.path.abspath(_checks.non_empty_str("JDBC jar", j)) for j in jdbc_jars]
    if jars:
        conf["spark.driver.extraClassPath"] = os.pathsep.join(jars)
    return conf


def _hive_model_classes() -> list[str]:
    """The persistent classes of the Hive metastore that pyspark ships (``package.jdo`` of its
    ``hive-metastore`` jar), for DataNucleus's ``Classes`` start-up; [] when it is not found."""
    import re
    import zipfile

    try:
        import pyspark
    except ImportError:
        return []
    jars = sorted(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "hive-metastore-*.jar")))
    if not jars:
        return []
    with zipfile.ZipFile(jars[-1]) as z:
        if "package.jdo" not in z.namelist():
            return []
        jdo = z.read("package.jdo").decode("utf-8", "replace")
    out = []
    for package, body in re.findall(r'<package name="([^"]+)">(.*?)</package>', jdo, re.S):
        out += [f"{package}.{name}" for name in re.findall(r'<class name="([A-Za-z0-9_]+)"', body)]
    return out


START_CHECK_CLASS = "io.filecommit.connect.ServerStartCheck"
"""The server's start-time configuration check (a ``spark.plugins`` entry): a server where both
filecommit and delta-spark would answer ``format("delta")`` fails to start, naming the setting
``spark.filecommit.read.deltaFormat``."""

STANDARD_WRITE_INTERCEPTOR_CLASS = "io.filecommit.connect.StandardWriteInterceptor"
"""The server's gRPC interceptor (a ``spark.connect.grpc.interceptor.classes`` entry) that runs
``df.write.format("delta")`` / ``format("filecommit")`` ``.save(path)`` as directly as
``filecommit.write``, without Spark's command planning around the same write."""

SHARED_MODE_INTERCEPTOR_CLASS = "io.filecommit.connect.SharedModeInterceptor"
"""The server's gRPC interceptor of shared mode (a ``spark.connect.grpc.interceptor.classes``
entry): with ``spark.filecommit.server.shared=true`` it refuses ``AddArtifacts`` and proto plans
that carry client code or reach files outside the caller's grants; otherwise it does nothing."""

_JAR_GLOB = "filecommit-server-plugin-*.jar"


def _is_plugin_jar(path: str) -> bool:
    """Not Maven's pre-shading copy (``original-...``) nor the test jar (``...-tests.jar``)."""
    name = os.path.basename(path)
    return not name.startswith("original-") and not name.endswith("-tests.jar")


def find_plugin_jar() -> str:
    """Locate the server plugin jar.

    Looks, in order, at ``$FILECOMMIT_JAR``, the jar packaged with this client
    (``filecommit/jars/``, where the Makefile's ``build`` target copies it), and the repository's
    Maven output ``server-plugin/target/``; of the jars found in the last two places, the last in
    that order (names sorted in each place) is taken, so a repository build wins over the copy.

    Returns:
        Absolute path of the jar.

    Raises:
        FileNotFoundError: if no jar is found (run ``make build``).
    """
    env = os.environ.get("FILECOMMIT_JAR")
    if env:
        if not os.path.isfile(env):
            raise FileNotFoundError(f"FILECOMMIT_JAR points to a missing file: {env}")
        return os.path.abspath(env)
    here = Path(__file__).resolve().parent
    candidates = sorted(p for p in glob.glob(str(here / "jars" / _JAR_GLOB)) if _is_plugin_jar(p))
    candidates += sorted(
        p for p in glob.glob(str(here.parent.parent / "server-plugin" / "target" / _JAR_GLOB))
        if _is_plugin_jar(p)
    )
    if not candidates:
        raise FileNotFoundError(
            "filecommit server plugin jar not found: set FILECOMMIT_JAR or run `make build` "
            f"(looked in {here / 'jars'} and server-plugin/target)"
        )
    return candidates[-1]


NATIVE_JARS_ENV = "FILECOMMIT_NATIVE_JARS"
"""Environment variable: a directory of the jars of the server's native Parquet writer
(``duckdb_jdbc``, ``arrow-c-data``, ``arrow-dataset``); default the repository's ``.build/native-jars``."""


def find_native_jars() -> list[str]:
    """Locate the jars of the server's native Parquet writer (DuckDB's JDBC driver, Arrow's C data and dataset modules).

    Looks in ``$FILECOMMIT_NATIVE_JARS``, else in the repository's ``.build/native-jars`` (where
    the Makefile's ``native-jars`` target, part of ``build``, fetches them with Maven).

    Returns:
        Absolute paths of the ``*.jar`` files found, sorted; empty when there are none (the server
        then writes Parquet with Spark's writer only; docs/operators.md, "Native Parquet writer").
    """
    directory = os.environ.get(NATIVE_JARS_ENV) or str(
        Path(__file__).resolve().parent.parent.parent / ".build" / "native-jars"
    )
    return sorted(os.path.abspath(p) for p in glob.glob(os.path.join(directory, "*.jar")))


QUIET_LOG_CONFIG = str(Path(__file__).resolve().parent / "log4j2-quiet.properties")
"""Log4j 2 configuration of the embedded server by default: warnings and errors only, without the
warnings that Delta Kernel and Hadoop log for normal events (a table without checkpoint, no native
Hadoop library)."""

VERBOSE_LOGS_ENV = "FILECOMMIT_VERBOSE_LOGS"
"""Environment variable: ``1`` gives the embedded server Spark's default logging, as
``local_session(verbose_logs=True)`` does."""


def _with_log_config(conf: dict[str, str], verbose_logs: bool) -> dict[str, str]:
    """``conf`` with ``-Dlog4j2.configurationFile=QUIET_LOG_CONFIG`` appended to the driver's
    JVM options, unless logs are verbose or the options already name a log4j2 configuration."""
    if verbose_logs or os.environ.get(VERBOSE_LOGS_ENV) == "1":
        return conf
    options = conf.get("spark.driver.extraJavaOptions", "")
    if "log4j2.configurationFile" in options:
        return conf
    flag = f"-Dlog4j2.configurationFile=file:{QUIET_LOG_CONFIG}"
    return {**conf, "spark.driver.extraJavaOptions": f"{options} {flag}".strip()}


def local_session(
    master: str = "local[2]",
    conf: Mapping[str, str] | None = None,
    port: int = 0,
    verbose_logs: bool = False,
    metastore_dir: str | None = None,
    metastore_url: str | None = None,
    metastore_jars: Sequence[str] = (),
    reattachable_execute: bool = False,
) -> SparkSession:
    """Start (or reuse) an embedded Spark Connect server with the filecommit plugin.

    Follows pyspark's ``SparkSession.builder.remote("local")`` (``_start_connect_server``), with
    the plugin registered, an ephemeral port and the server bound to 127.0.0.1 only.
    ``filecommit._connect.server_url(spark)`` gives its ``sc://`` URL for further client sessions.

    The server's Python workers (which run Python UDFs and pandas UDFs of written DataFrames) use
    this client's interpreter, ``sys.executable``, so they see the same Python version and
    packages: the server is started with ``PYSPARK_PYTHON`` (which Spark Connect's planner reads
    from the server's environment) and ``spark.pyspark.python`` set to it, without changing this
    process's environment. A ``spark.pyspark.python`` in ``conf``, else a ``PYSPARK_PYTHON``
    environment variable, takes precedence. As with pyspark's ``builder.remote("local")``, the
    process is marked as a Spark Connect client (``SPARK_CONNECT_MODE_ENABLED=1``), so
    ``pyspark.sql.functions.udf`` / ``pandas_udf`` build Connect columns. Only the first call
    starts a server; later calls reuse it and ignore ``master``, ``conf``, ``port`` and
    ``verbose_logs``.

    The server logs quietly by default: warnings and errors on stderr, without the warnings that
    Delta Kernel and Hadoop log for normal events (:data:`QUIET_LOG_CONFIG`, given to the driver JVM
    as ``-Dlog4j2.configurationFile``). ``verbose_logs=True`` or the environment variable
    ``FILECOMMIT_VERBOSE_LOGS=1`` keep Spark's default logging; a log4j2 file of your own, given as
    ``-Dlog4j2.configurationFile=...`` in ``conf["spark.driver.extraJavaOptions"]``, is used as is.

    Tables on S3 (``s3a://bucket/prefix/table``) need Hadoop's S3A connector on the server and its
    settings in ``conf`` (docs/storage.md, "Object storage (S3)"): the jars of ``make s3a-jars``
    after the plugin jar in ``spark.jars`` (``",".join([find_plugin_jar(), *glob(".build/s3a-jars/*.jar")])``),
    ``spark.hadoop.fs.s3a.endpoint`` (e.g. ``http://127.0.0.1:9000``; leave out on AWS),
    ``spark.hadoop.fs.s3a.path.style.access`` (``"true"`` for MinIO and most non-AWS stores) and
    ``spark.hadoop.fs.s3a.aws.credentials.provider`` (e.g.
    ``software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider``, or
    ``org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider`` with ``spark.hadoop.fs.s3a.access.key``
    and ``spark.hadoop.fs.s3a.secret.key``).

    Args:
        master: Spark master for the embedded server, e.g. "local[2]" or "local-cluster[2,1,1024]".
        conf: extra Spark configuration for the server (str -> str).
        port: gRPC port; 0 (default) picks a free ephemeral port, so several servers can coexist.
        verbose_logs: keep Spark's default server logging instead of the quiet configuration.
        metastore_dir: directory of the server's table names (:func:`metastore_conf`: Hive
            metastore on embedded Derby, warehouse of managed tables); None (default) makes a
            fresh temporary directory (deleted when this process exits). Ignored when ``conf`` sets
            ``spark.sql.catalogImplementation`` (the caller configures the catalog itself).
        metastore_url: JDBC URL of a metastore database shared by several servers (e.g.
            ``jdbc:postgresql://db:5432/metastore?user=hive``; :func:`metastore_conf`); None: embedded
            Derby in ``metastore_dir``. ``metastore_dir`` then holds the warehouse only.
        metastore_jars: the JDBC driver's jar files for ``metastore_url`` (e.g. the PostgreSQL
            driver of ``make pg-jdbc-jar``, in ``.build/jdbc-jars``).
        reattachable_execute: keep pyspark's reattachable execution for the returned session.
            Default False (pyspark's ``SparkConnectClient.disable_reattachable_execute``): every
            operation runs as one ``ExecutePlan`` stream, without the ``ReleaseExecute`` call and
            server-side response buffer that reattachable execution adds to each (a few ms per small
            write or query). The trade-off: a broken stream is not resumed but fails (pyspark then
            retries the whole ``ExecutePlan`` for errors it deems retryable), which matters for a
            server across a network, not for this in-process one on the loopback interface.

    Returns:
        A Spark Connect ``SparkSession`` (``pyspark.sql.connect.session.SparkSession``).

    Raises:
        ImportError: pyspark is the Connect-only ``pyspark-client`` package (no JVM to run a server).
        FileNotFoundError: if the plugin jar cannot be found.
        pyspark.errors.PySparkValueError: (a ``ValueError``) ``VALUE_NOT_NON_EMPTY_STR`` for an
            empty master; ``NEGATIVE_VALUE`` / ``VALUE_OUT_OF_BOUNDS`` for a port outside
            [0, 65535].
        pyspark.errors.PySparkTypeError: (a ``TypeError``) ``NOT_EXPECTED_TYPE`` for a conf that is
            not a str -> str mapping, a non-int port or a non-bool verbose_logs or reattachable_execute.
    """
    from filecommit import _connect

    _checks.non_empty_str("master", master)
    extra = _checks.string_map("conf", conf)
    _checks.int_in_range("port", port, 0, 65535)
    _checks.flag("verbose_logs", verbose_logs)
    _checks.flag("reattachable_execute", reattachable_execute)
    if metastore_dir is not None:
        _checks.non_empty_str("metastore_dir", metastore_dir)
    _connect.require_jvm_pyspark()
    python_exec = extra.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON") or sys.executable
    server_conf = {
        "spark.master": master,
        "spark.jars": ",".join([find_plugin_jar(), *find_native_jars()]),
        "spark.connect.extensions.command.classes": COMMAND_CLASSES,
        "spark.connect.extensions.relation.classes": DELTA_CONNECT_RELATION_CLASS,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "localhost",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.pyspark.python": python_exec,
    }
    if "spark.sql.catalogImplementation" not in extra:
        directory = metastore_dir
        if directory is None:
            # A fresh directory per server, removed when this process exits (after the server).
            directory = tempfile.mkdtemp(prefix="filecommit-metastore-")
            atexit.register(shutil.rmtree, directory, True)
        server_conf.update(metastore_conf(directory, metastore_url, metastore_jars))
        derby_home = f"-Dderby.system.home={os.path.abspath(directory)}"
        options = extra.get("spark.driver.extraJavaOptions", "")
        extra = {**extra, "spark.driver.extraJavaOptions": f"{options} {derby_home}".strip()}
        if "spark.driver.extraClassPath" in extra and "spark.driver.extraClassPath" in server_conf:
            extra["spark.driver.extraClassPath"] += os.pathsep + server_conf["spark.driver.extraClassPath"]
    server_conf.update(extra)
    # The start-time check of the server's configuration (format("delta") vs delta-spark), next to
    # any spark.plugins of the caller's.
    plugins = [p for p in extra.get("spark.plugins", "").split(",") if p.strip()]
    server_conf["spark.plugins"] = ",".join([*plugins, START_CHECK_CLASS])
    interceptors = [c for c in extra.get("spark.connect.grpc.interceptor.classes", "").split(",") if c.strip()]
    # gRPC runs the interceptors last to first: the caller's (e.g. authentication) before ours.
    server_conf["spark.connect.grpc.interceptor.classes"] = ",".join(
        [STANDARD_WRITE_INTERCEPTOR_CLASS, SHARED_MODE_INTERCEPTOR_CLASS, *interceptors])
    server_conf = _with_log_config(server_conf, verbose_logs)
    url = _connect.start_local_server(master, server_conf, python_exec=python_exec)
    session = _connect.connect(url)
    if not reattachable_execute:
        session.client.disable_reattachable_execute()
    return session

