"""Spark Connect sessions with the filecommit server plugin.

``local_session()`` starts an embedded Spark Connect server in a local JVM, as pyspark's
``SparkSession.builder.remote("local")`` does, with the plugin jar on its classpath and
``spark.connect.extensions.command.classes`` set to :data:`PLUGIN_CLASS`; its Python workers
(Python UDFs in a written DataFrame) run with this process's interpreter. Against an existing
cluster, use ``SparkSession.builder.remote("sc://host:15002").getOrCreate()`` instead; that server
must have been started with the jar and ``spark.connect.extensions.command.classes`` set to
:data:`PLUGIN_CLASS`.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from filecommit import _checks

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

PLUGIN_CLASS = "io.filecommit.connect.FileCommitPlugin"
"""Fully qualified class name of the server-side command plugin."""

CATALOG_CLASS = "io.filecommit.catalog.FileCommitCatalog"
"""The ``spark_catalog`` plugin of Delta tables by name (``spark.sql.catalog.spark_catalog``)."""

EXTENSIONS_CLASS = "io.filecommit.catalog.FileCommitExtensions"
"""The session extension of SQL on Delta tables (``spark.sql.extensions``)."""


def metastore_conf(directory: str) -> dict[str, str]:
    """Server settings of tables by name with Spark's Hive metastore on embedded Derby.

    The metastore database (``<directory>/metastore_db``), Derby's log (``derby.log``) and the
    warehouse of managed tables (``<directory>/warehouse``) all live in ``directory``, so a server
    keeps its table names across restarts when given the same directory, and several servers with
    different directories do not share names (embedded Derby allows one JVM per database; servers
    that share names use a metastore on a database server, docs/operators.md).

    Args:
        directory: an absolute directory, created if missing.

    Returns:
        Spark settings (str -> str): the catalog plugin, the session extension, the Hive catalog,
        the Derby connection URL and the warehouse directory.
    """
    directory = os.path.abspath(directory)
    os.makedirs(directory, exist_ok=True)
    return {
        "spark.sql.catalog.spark_catalog": CATALOG_CLASS,
        "spark.sql.extensions": EXTENSIONS_CLASS,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": os.path.join(directory, "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={os.path.join(directory, 'metastore_db')};create=true",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.hadoop.hive.metastore.schema.verification": "false",
    }


START_CHECK_CLASS = "io.filecommit.connect.ServerStartCheck"
"""The server's start-time configuration check (a ``spark.plugins`` entry): a server where both
filecommit and delta-spark would answer ``format("delta")`` fails to start, naming the setting
``spark.filecommit.read.deltaFormat``."""

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
    settings in ``conf`` (docs/operators.md, "Object storage (S3)"): the jars of ``make s3a-jars``
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

    Returns:
        A Spark Connect ``SparkSession`` (``pyspark.sql.connect.session.SparkSession``).

    Raises:
        FileNotFoundError: if the plugin jar cannot be found.
        pyspark.errors.PySparkValueError: (a ``ValueError``) ``VALUE_NOT_NON_EMPTY_STR`` for an
            empty master; ``NEGATIVE_VALUE`` / ``VALUE_OUT_OF_BOUNDS`` for a port outside
            [0, 65535].
        pyspark.errors.PySparkTypeError: (a ``TypeError``) ``NOT_EXPECTED_TYPE`` for a conf that is
            not a str -> str mapping, a non-int port or a non-bool verbose_logs.
    """
    from filecommit import _connect

    _checks.non_empty_str("master", master)
    extra = _checks.string_map("conf", conf)
    _checks.int_in_range("port", port, 0, 65535)
    _checks.flag("verbose_logs", verbose_logs)
    if metastore_dir is not None:
        _checks.non_empty_str("metastore_dir", metastore_dir)
    python_exec = extra.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON") or sys.executable
    server_conf = {
        "spark.master": master,
        "spark.jars": find_plugin_jar(),
        "spark.connect.extensions.command.classes": PLUGIN_CLASS,
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
        server_conf.update(metastore_conf(directory))
        derby_home = f"-Dderby.system.home={os.path.abspath(directory)}"
        options = extra.get("spark.driver.extraJavaOptions", "")
        extra = {**extra, "spark.driver.extraJavaOptions": f"{options} {derby_home}".strip()}
    server_conf.update(extra)
    # The start-time check of the server's configuration (format("delta") vs delta-spark), next to
    # any spark.plugins of the caller's.
    plugins = [p for p in extra.get("spark.plugins", "").split(",") if p.strip()]
    server_conf["spark.plugins"] = ",".join([*plugins, START_CHECK_CLASS])
    server_conf = _with_log_config(server_conf, verbose_logs)
    url = _connect.start_local_server(master, server_conf, python_exec=python_exec)
    return _connect.connect(url)

