"""filecommit: transactional, partitioned Delta Lake writes over Spark Connect.

Public API::

    spark = filecommit.local_session()            # or SparkSession.builder.remote("sc://...")
    result = filecommit.write(df, "/data/t", partition_by=["day"], mode="append")
    result.version, result.add_files, result.remove_files, result.metrics
    filecommit.write(changes, "/data/t", change_data=True).cdc_files   # change data feed
    filecommit.write_batch(df, "/data/sink", batch_id=7)                # batch-id file sink
"""

from filecommit.actions import AddCDCFile, AddFile, CommitResult, RemoveFile, WriteMetrics
from filecommit.session import PLUGIN_CLASS, find_plugin_jar, local_session
from filecommit.writer import set_table_properties, write
from filecommit.sink import BatchResult, SinkFileStatus, write_batch

__all__ = [
    "AddCDCFile",
    "AddFile",
    "CommitResult",
    "PLUGIN_CLASS",
    "RemoveFile",
    "WriteMetrics",
    "find_plugin_jar",
    "local_session",
    "set_table_properties",
    "write",
    "BatchResult",
    "SinkFileStatus",
    "write_batch",
]
__version__ = "0.1.0"
