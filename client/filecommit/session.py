"""Spark Connect sessions with the filecommit server plugin.

``local_session()`` starts an embedded Spark Connect server (inside a local JVM started by pyspark)
with the plugin jar on its classpath and the command plugin registered (reference
spark-connect-plugins.md, "Embedded server"). Against an existing cluster, use
``SparkSession.builder.remote("sc://host:15002").getOrCreate()`` instead; that server must have
been started with the jar and ``spark.connect.extensions.command.classes`` set to
:data:`PLUGIN_CLASS`.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Mapping, Optional

PLUGIN_CLASS = "io.filecommit.plugin.FileCommitPlugin"
"""Fully qualified class name of the server-side command plugin."""

_JAR_GLOB = "filecommit-server-plugin-*.jar"


def find_plugin_jar() -> str:
    """Locate the server plugin jar.

    Looks, in order, at ``$FILECOMMIT_JAR``, the jar packaged with this client
    (``filecommit/jars/``), and the repository's Maven output ``server-plugin/target/``.

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
    candidates = sorted(glob.glob(str(here / "jars" / _JAR_GLOB)))
    candidates += sorted(
        p for p in glob.glob(str(here.parent.parent / "server-plugin" / "target" / _JAR_GLOB))
        if not os.path.basename(p).startswith("original-")
    )
    if not candidates:
        raise FileNotFoundError(
            "filecommit server plugin jar not found: set FILECOMMIT_JAR or run `make build` "
            f"(looked in {here / 'jars'} and server-plugin/target)"
        )
    return candidates[-1]


def local_session(master: str = "local[2]", conf: Optional[Mapping[str, str]] = None, port: int = 0):
    """Start (or reuse) an embedded Spark Connect server with the filecommit plugin.

    The server listens on 127.0.0.1 only. ``filecommit._connect.server_url(spark)`` gives its
    ``sc://`` URL for further client sessions.

    Args:
        master: Spark master for the embedded server, e.g. "local[2]" or "local-cluster[2,1,1024]".
        conf: extra Spark configuration for the server (str -> str).
        port: gRPC port; 0 (default) picks a free ephemeral port, so several servers can coexist.

    Returns:
        A Spark Connect ``SparkSession``.

    Raises:
        FileNotFoundError: if the plugin jar cannot be found.
    """
    from filecommit import _connect

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
    }
    server_conf.update(conf or {})
    url = _connect.start_local_server(master, server_conf)
    return _connect.connect(url)
