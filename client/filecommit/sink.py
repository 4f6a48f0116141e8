"""``filecommit.write_batch``: exactly-once batch writes into a Spark streaming file sink directory.

Follows issue 4 and the contract proto/filecommit/v1/sink.proto (``WriteBatchCommand``): the
DataFrame's plan, sink path, batch id, partition columns and writer options go to the server
plugin, which writes Parquet files with ``io.filecommit.sink.ManifestFileCommitProtocol`` and
records them as batch ``batch_id`` in ``<path>/_spark_metadata`` -- the log of Spark's own
streaming file sink (seed ManifestFileCommitProtocol.txt; reference table-formats.md "Streaming
file sink"). Spark's readers (``spark.read.parquet(path)``) list only the files of that log.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from filecommit import _checks, _connect
from filecommit.proto.v1 import sink_pb2 as pb
from filecommit.writer import _unpacked

if TYPE_CHECKING:
    from google.protobuf import any_pb2
    from pyspark.sql.connect.dataframe import DataFrame


@dataclasses.dataclass(frozen=True)
class SinkFileStatus:
    """One entry of the sink log (Spark's ``SinkFileStatus``, a line of ``_spark_metadata/<batch>``).

    Attributes:
        path: fully qualified, URI-encoded file path as in the log (e.g. ``file:/data/sink/part-...``).
        size: file size in bytes.
        is_dir: whether the entry is a directory (always False for files written by the sink).
        modification_time: last modification time, ms since the Unix epoch.
        block_replication: the file system's block replication (1 on a local file system).
        block_size: block size in bytes.
        action: log action, ``"add"``.
    """

    path: str
    size: int
    is_dir: bool
    modification_time: int
    block_replication: int
    block_size: int
    action: str

    @classmethod
    def from_proto(cls, message: pb.SinkFileStatus) -> SinkFileStatus:
        """Build from the contract message ``filecommit.v1.SinkFileStatus``."""
        return cls(
            path=message.path,
            size=message.size,
            is_dir=message.is_dir,
            modification_time=message.modification_time,
            block_replication=message.block_replication,
            block_size=message.block_size,
            action=message.action,
        )


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """Outcome of :func:`write_batch`.

    Attributes:
        batch_id: the requested batch id.
        committed: True when this call committed the batch; False when the sink already had a batch
            at or above ``batch_id`` and the write was skipped.
        files: the batch's files: those this call committed, or for a skipped batch the files that
            batch committed earlier (empty if its own log file was already cleaned up after a
            compaction, see docs/sink.md).
        path: fully qualified sink root.
        latest_batch_id: the latest batch id in the sink log after the call.
        num_output_bytes: sum of ``files`` sizes, bytes.
        duration_ms: server wall time of the call, ms.
    """

    batch_id: int
    committed: bool
    files: list[SinkFileStatus]
    path: str
    latest_batch_id: int
    num_output_bytes: int
    duration_ms: int


def build_write_batch_command(
    df: DataFrame,
    path: str,
    *,
    batch_id: int,
    partition_by: str | Iterable[str] | None = None,
    options: Mapping[str, object] | None = None,
) -> pb.WriteBatchCommand:
    """Validate the arguments of :func:`write_batch` and build its ``WriteBatchCommand`` message.

    Follows proto/filecommit/v1/sink.proto (``WriteBatchCommand``); arguments as in
    :func:`write_batch`.

    Returns:
        The ``filecommit.v1.WriteBatchCommand`` message, with ``input`` set to ``df``'s plan.

    Raises:
        pyspark.errors.PySparkValueError: (a ``ValueError``) ``VALUE_NOT_NON_EMPTY_STR`` for an empty
            path or a bad partition column name; ``NEGATIVE_VALUE`` for a negative batch id,
            ``VALUE_OUT_OF_BOUNDS`` for one above 2**63 - 1.
        pyspark.errors.PySparkTypeError: (a ``TypeError``) ``NOT_EXPECTED_TYPE`` for a non-int
            (or bool) batch id, a non-Connect DataFrame, options that are not a str -> str mapping.
    """
    _checks.check_path(path)
    command = pb.WriteBatchCommand(
        path=path,
        batch_id=_checks.int64_at_least_zero("batch_id", batch_id),
        partition_by=_checks.partition_columns(partition_by),
        options=_checks.string_map("options", options),
    )
    command.input.CopyFrom(_connect.relation_of(df))
    return command


def write_batch(
    df: DataFrame,
    path: str,
    *,
    batch_id: int,
    partition_by: str | Iterable[str] | None = None,
    options: Mapping[str, object] | None = None,
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
        pyspark.errors.exceptions.connect.IllegalArgumentException: bad input found by the server
            (a batch id that leaves a gap, an unknown partition column, a path that is a file, an
            invalid retention), before anything is written.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException: ``Race while writing batch
            <id>: ...`` when another writer committed the same batch id first; this call's files
            were deleted and calling again returns ``committed=False``.
    """
    command = build_write_batch_command(df, path, batch_id=batch_id, partition_by=partition_by, options=options)
    return _collect(_connect.execute_extension_command(df.sparkSession, command))


def _collect(payloads: Iterable[any_pb2.Any]) -> BatchResult:
    files: list[SinkFileStatus] = []
    summary = None
    for response in _unpacked(payloads, pb.WriteBatchResponse):
        if response.HasField("files"):
            files.extend(SinkFileStatus.from_proto(f) for f in response.files.files)
        elif response.HasField("summary"):
            summary = response.summary
    if summary is None:
        raise RuntimeError("the server finished the batch write without a summary")
    if summary.num_files != len(files):
        raise RuntimeError(f"the server announced {summary.num_files} files but streamed {len(files)}")
    return BatchResult(
        batch_id=summary.batch_id,
        committed=summary.committed,
        files=files,
        path=summary.path,
        latest_batch_id=summary.latest_batch_id,
        num_output_bytes=summary.num_output_bytes,
        duration_ms=summary.duration_ms,
    )
