"""The server side's plumbing: where the plugin jars are and the class names a Spark Connect server
is started with.

For code that starts its own Spark Connect server (``spark-submit`` /
``start-connect-server.sh``, a test harness, a benchmark) rather than :func:`filecommit.local_session`:
the server needs the jar of :func:`find_plugin_jar` on its class path (plus
:func:`find_native_jars` for the native Parquet writer) and
``spark.connect.extensions.command.classes`` set to :data:`COMMAND_CLASSES` (:data:`PLUGIN_CLASS`
and :data:`DELTA_CONNECT_COMMAND_CLASS`) and ``spark.connect.extensions.relation.classes`` to
:data:`DELTA_CONNECT_RELATION_CLASS` (delta-spark's ``DeltaTable`` API), as Spark's
``SparkConnectPlugin`` / ``CommandPlugin`` extension points expect (Spark's "Spark Connect
Extensions"). These names were importable from ``filecommit`` itself before; that still works, with
a ``DeprecationWarning``.
"""

from __future__ import annotations

from filecommit.session import (
    CATALOG_CLASS,
    COMMAND_CLASSES,
    DELTA_CONNECT_COMMAND_CLASS,
    DELTA_CONNECT_RELATION_CLASS,
    EXTENSIONS_CLASS,
    NATIVE_JARS_ENV,
    PLUGIN_CLASS,
    find_native_jars,
    find_plugin_jar,
    metastore_conf,
)

__all__ = [
    "CATALOG_CLASS",
    "COMMAND_CLASSES",
    "DELTA_CONNECT_COMMAND_CLASS",
    "DELTA_CONNECT_RELATION_CLASS",
    "EXTENSIONS_CLASS",
    "NATIVE_JARS_ENV",
    "PLUGIN_CLASS",
    "find_native_jars",
    "find_plugin_jar",
    "metastore_conf",
]
