"""``filecommit.write_batch``: exactly-once batch writes into a Spark streaming file sink directory.

Follows the contract proto/filecommit/v1/sink.proto (``WriteBatchCommand``): the DataFrame's plan,
sink path, batch id, partition columns and writer options go to the server plugin, which writes
Parquet files with ``io.filecommit.sink.ManifestFileCommitProtocol`` and records them as batch
``batch_id`` in ``<path>/_spark_metadata``, the log of Spark's own streaming file sink (Spark's
``ManifestFileCommitProtocol`` and ``FileStreamSinkLog``). Spark's readers
(``spark.read.parquet(path)``) list only the files of that log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from filecommit import _checks, _wire
from filecommit._typing import PartitionBy, StrMap
from filecommit.proto.v1 import sink_pb2 as pb
from filecommit.results import BatchResult

if TYPE_CHECKING:
    from pyspark.sql.dataframe import DataFrame


def build_write_batch_command(
    df: DataFrame,
    path: str | None = None,
    *,
    batch_id: int,
    partition_by: PartitionBy = None,
    options: StrMap | None = None,
    table: str | None = None,
) -> pb.WriteBatchCommand:
    """Validate the arguments of :func:`write_batch` and build its ``WriteBatchCommand`` message.

    Follows proto/filecommit/v1/sink.proto (``WriteBatchCommand``); arguments as in
    :func:`write_batch`.

    Returns:
        The ``filecommit.v1.WriteBatchCommand`` message, with ``input`` set to ``df``'s plan.

    Raises:
        pyspark.errors.PySparkValueError: (a ``ValueError``) ``VALUE_NOT_NON_EMPTY_STR`` for an empty
            path or table name or a bad partition column name; ``CANNOT_SET_TOGETHER`` for both
            ``path`` and ``table``; ``NEGATIVE_VALUE`` for a negative batch id,
            ``VALUE_OUT_OF_BOUNDS`` for one above 2**63 - 1.
        pyspark.errors.PySparkTypeError: (a ``TypeError``) ``NOT_EXPECTED_TYPE`` for a non-int
            (or bool) batch id, a non-Connect DataFrame, options that are not a str -> str mapping.
    """
    path, table = _checks.path_or_table(path, table)
    command = pb.WriteBatchCommand(
        path=path,
        table=table,
        batch_id=_checks.int64_at_least_zero("batch_id", batch_id),
        partition_by=_checks.partition_columns(partition_by),
        options=_checks.string_map("options", options),
    )
    command.input.CopyFrom(_wire.relation(df))
    return command


def write_batch(
    df: DataFrame,
    path: str | None = None,
    *,
    batch_id: int,
    partition_by: PartitionBy = None,
    options: StrMap | None = None,
    table: str | None = None,
) -> BatchResult:
    """Write a DataFrame as batch ``batch_id`` of the file sink at ``path``, exactly once.

    The sink is a directory of Parquet files plus ``_spark_metadata/``, the log of Spark's streaming
    file sink: a batch's files become visible to Spark's readers (``spark.read.parquet(path)``)
    only once the batch is in the log, so a failed or retried write never shows partial data.

    - ``batch_id`` at or below the latest committed batch: nothing is written; the result has
      ``committed=False`` and that batch's committed files (a retried producer is idempotent).
    - ``batch_id`` = latest + 1 (0 for a new sink): the rows are written and committed.
    - any larger ``batch_id`` is refused (Spark's log readers need consecutive batch ids).

    The log is compacted every ``spark.sql.streaming.fileSink.log.compactInterval`` batches
    (session configuration, default 10: ``_spark_metadata/9.compact``, ``19.compact``, ...).

    Follows proto/filecommit/v1/sink.proto (``WriteBatchCommand``) and the log format of Spark's
    streaming file sink (``FileStreamSinkLog``, ``_spark_metadata/<batch id>``).

    Args:
        df: a Spark Connect DataFrame (``pyspark.sql.connect.dataframe.DataFrame``); its plan runs
            on the server.
        path: sink root as the server sees it (local path, ``file:``, ``hdfs:``, ...).
        table: instead of ``path``, the name of a Parquet table of the server's catalog whose
            location is the sink root (``CREATE TABLE events (...) USING parquet LOCATION
            '<root>'``; Spark's readers of that table list the sink's log); give exactly one of
            ``path`` and ``table`` (``CANNOT_SET_TOGETHER`` otherwise; ``DELTA_TABLE_NOT_FOUND``
            from the server for an unknown name or a table that is not a Parquet table).
        batch_id: the batch id, an int in [0, 2**63 - 1] (a bool is refused).
        partition_by: partition columns, in directory order (``col=value`` directories); one str
            is one column.
        options: Spark Parquet writer options (e.g. ``{"compression": "zstd"}``) and ``retention``,
            a Spark time string (``"7d"``): log entries of files older than that are dropped at the
            next compaction, as with the ``retention`` option of Spark's file sink.

    Returns:
        BatchResult with the batch id, whether it was committed, and its file statuses (sizes in
        bytes, times in ms since the Unix epoch).

    Raises:
        pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments (a
            ``ValueError`` / ``TypeError`` with an error class, see
            :func:`build_write_batch_command`), before anything is sent.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): bad input
            found by the server, before anything is written, ``e.getCondition()`` a class of
            :mod:`filecommit.errors`: ``FILECOMMIT_INVALID_BATCH_ID`` (a batch id that leaves a gap),
            ``FILECOMMIT_PATH_NOT_A_DIRECTORY`` (a path that is a file),
            ``DELTA_PARTITION_COLUMN_NOT_FOUND``, ``DELTA_ILLEGAL_OPTION`` (an invalid retention).
        pyspark.errors.exceptions.connect.SparkConnectGrpcException: ``Race while writing batch
            <id>: ...`` when another writer committed the same batch id first; this call's files
            were deleted and calling again returns ``committed=False``.
    """
    command = build_write_batch_command(df, path, batch_id=batch_id, partition_by=partition_by, options=options,
                                        table=table)
    return _wire.execute_batch(_wire.session_of(df), command)
