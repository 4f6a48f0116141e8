"""filecommit: transactional, partitioned Delta Lake writes over Spark Connect.

Public API::

    t = filecommit.table(spark, "/data/t")         # a table handle (or "db.t": a catalog name)
    t.write(df, partition_by=["day"]).version, t.delete("day < '2024-01-01'"), t.to_df(version=3)
    spark = filecommit.local_session()            # or SparkSession.builder.remote("sc://...")
    result = filecommit.write(df, "/data/t", partition_by=["day"], mode="append")
    result.version, result.add_files, result.remove_files, result.metrics
    filecommit.write(changes, "/data/t", change_data=True).cdc_files   # change data feed
    filecommit.write(df, "/data/t", txn=("nightly-load", 42))            # idempotent write
    filecommit.write_batch(df, "/data/sink", batch_id=7)                # batch-id file sink
    filecommit.delete(spark, "/data/t", "day < '2024-01-01'")            # row-level changes
    filecommit.update(spark, "/data/t", set={"v": "v + 1"}, condition="id = 7")
    filecommit.merge(updates, "/data/t", "target.id = source.id") \
        .when_matched_update_all().when_not_matched_insert_all().execute()
    spark.read.format("filecommit").option("versionAsOf", 3).load("/data/t")   # reads on the server
    filecommit.history(spark, "/data/t")[0].operation                      # typed commits
    staged = filecommit.write(df, "/data/t", stage=True)                 # write, audit, publish
    filecommit.read_staged(spark, "/data/t", staged).count()
    filecommit.commit(spark, "/data/t", staged)                         # or filecommit.abort(...)
    filecommit.vacuum(spark, "/data/t", dry_run=True).files              # maintenance
    filecommit.optimize(spark, "/data/t", zorder_by=["id"]).operation_metrics
    filecommit.restore(spark, "/data/t", version=3)
    e.getCondition() == filecommit.errors.DELTA_CONCURRENT_APPEND         # error classes of failures

Importing the package checks the installed pyspark, from ``pyspark[connect]`` or the Connect-only
``pyspark-client`` (``_connect.SUPPORTED_PYSPARK_SERIES``: 4.1, 4.2, 4.3) and raises ImportError
for another release.
"""

# _connect first: it refuses an unsupported pyspark before anything else imports pyspark modules.
from filecommit import (  # noqa: F401
    _connect,
    conflicts,
    errors,
    server,
)
from filecommit._typing import SaveMode
from filecommit.actions import AddCDCFile, AddFile, DeletionVector, RemoveFile
from filecommit.history import Commit, history
from filecommit.maintenance import optimize, restore, vacuum
from filecommit.results import (
    BatchResult,
    CommitResult,
    SinkFileStatus,
    Stage,
    StagedCommit,
    VacuumResult,
    WriteMetrics,
)
from filecommit.rowlevel import MergeBuilder, delete, merge, update
from filecommit.session import local_session
from filecommit.sink import write_batch
from filecommit.staging import abort, commit, get_staged, read_staged, stage_files
from filecommit.table import Table, table
from filecommit.writer import set_table_properties, write

__all__ = [
    "AddCDCFile",
    "AddFile",
    "BatchResult",
    "Commit",
    "CommitResult",
    "DeletionVector",
    "MergeBuilder",
    "RemoveFile",
    "SaveMode",
    "SinkFileStatus",
    "Stage",
    "StagedCommit",
    "Table",
    "VacuumResult",
    "WriteMetrics",
    "abort",
    "commit",
    "conflicts",
    "delete",
    "errors",
    "get_staged",
    "history",
    "local_session",
    "merge",
    "optimize",
    "read_staged",
    "restore",
    "server",
    "set_table_properties",
    "stage_files",
    "table",
    "update",
    "vacuum",
    "write",
    "write_batch",
]
__version__ = "0.1.0"

# Plumbing that moved to filecommit.server: the old top-level names still resolve, with a warning.
_MOVED_TO_SERVER = frozenset({"PLUGIN_CLASS", "find_plugin_jar", "find_native_jars"})


def __getattr__(name: str) -> object:
    """Resolve the deprecated top-level names of :mod:`filecommit.server` (PEP 562).

    ``filecommit.PLUGIN_CLASS``, ``filecommit.find_plugin_jar`` and ``filecommit.find_native_jars``
    return the objects of :mod:`filecommit.server` and emit a ``DeprecationWarning``.

    Raises:
        AttributeError: for any other unknown name, as for a module without ``__getattr__``.
    """
    if name in _MOVED_TO_SERVER:
        import warnings

        from filecommit import server

        warnings.warn(
            f"filecommit.{name} is deprecated: use filecommit.server.{name}", DeprecationWarning, stacklevel=2
        )
        return getattr(server, name)
    raise AttributeError(f"module 'filecommit' has no attribute {name!r}")
