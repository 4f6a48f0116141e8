"""filecommit: transactional, partitioned Delta Lake writes over Spark Connect.

Public API::

    spark = filecommit.local_session()            # or SparkSession.builder.remote("sc://...")
    result = filecommit.write(df, "/data/t", partition_by=["day"], mode="append")
    result.version, result.add_files, result.remove_files, result.metrics
"""

from filecommit.actions import AddFile, CommitResult, RemoveFile, WriteMetrics
from filecommit.session import PLUGIN_CLASS, find_plugin_jar, local_session
from filecommit.writer import write
from filecommit.sink import BatchResult, SinkFileStatus, write_batch

__all__ = [
    "AddFile",
    "CommitResult",
    "PLUGIN_CLASS",
    "RemoveFile",
    "WriteMetrics",
    "find_plugin_jar",
    "local_session",
    "write",
    "BatchResult",
    "SinkFileStatus",
    "write_batch",
]
__version__ = "0.1.0"
