"""Table maintenance: ``vacuum``, ``optimize`` and ``restore`` (contract
proto/filecommit/v1/commands.proto ``VacuumCommand``, ``OptimizeCommand``, ``RestoreCommand``).

Follows Delta's ``VACUUM`` (``VacuumCommand``: files under the table root that no version inside
the retention window references are deleted; the log is not changed), ``OPTIMIZE``
(``OptimizeTableCommand``: small files compacted, or Z-ordered, with ``dataChange=false``) and
``RESTORE`` (``RestoreTableCommand``: one commit back to an earlier version).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import TYPE_CHECKING

from filecommit import _checks, _connect, _wire
from filecommit.proto.v1 import commands_pb2 as pb
from filecommit.results import CommitResult, VacuumResult

if TYPE_CHECKING:
    from filecommit._typing import AnySparkSession as SparkSession


def vacuum(
    spark: SparkSession,
    path: str | None = None,
    *,
    table: str | None = None,
    retention_hours: float | None = None,
    dry_run: bool = False,
) -> VacuumResult:
    """Delete the files of the Delta table at ``path`` that no version inside the retention window
    references (Delta's ``VACUUM ... RETAIN n HOURS [DRY RUN]``).

    Kept: active files and their deletion vector files, files removed less than the retention ago
    (time travel inside the window keeps working), files of staged commits not aborted, everything
    in ``_delta_log`` and in hidden (``_`` / ``.``) paths other than ``_change_data``, and files
    modified less than the retention ago (writes in flight).

    Args:
        spark: a Spark Connect session whose server has the plugin.
        path: table root as the server sees it.
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (e.g. ``"db.t"``), resolved on the server to its location; give exactly one of ``path``
            and ``table`` (``CANNOT_SET_TOGETHER`` otherwise; ``DELTA_TABLE_NOT_FOUND`` from the server
            for an unknown name).
        retention_hours: hours (>= 0); None: the table's ``delta.deletedFileRetentionDuration``
            (default 7 days), or the server's retention floor
            (``spark.filecommit.retention.minimum``, default 168 hours) when that is longer. Less
            than the floor is always refused; less than the table's property is refused unless
            the server sets ``spark.filecommit.vacuum.retentionCheck.enabled=false``. Files of
            writes in flight on the server are kept whatever their age.
        dry_run: only list the files.

    Returns:
        VacuumResult with the files (absolute URIs) and their bytes.

    Raises:
        pyspark.errors.PySparkTypeError, pyspark.errors.PySparkValueError: invalid arguments.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass):
            ``DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT``, ``DELTA_MISSING_DELTA_TABLE``,
            ``DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE`` (negative retention),
            ``DELTA_UNSUPPORTED_FEATURES_FOR_WRITE``.
    """
    path, table = _checks.path_or_table(path, table)
    command = pb.VacuumCommand(path=path, table=table, dry_run=_checks.flag("dry_run", dry_run))
    if retention_hours is not None:
        if isinstance(retention_hours, bool) or not isinstance(retention_hours, (int, float)):
            _checks.type_error("retention_hours", "a number of hours", retention_hours)
        command.retention_hours = float(retention_hours)
    files: list[str] = []
    summary = None
    for response in _wire.unpacked(_connect.execute_extension_command(spark, command), pb.VacuumResponse):
        if response.HasField("files"):
            files.extend(response.files.files)
        elif response.HasField("summary"):
            summary = response.summary
    if summary is None:
        raise RuntimeError("the server finished VACUUM without a summary")
    return VacuumResult(
        files=files, dry_run=summary.dry_run, num_bytes=summary.num_bytes, table_path=summary.table_path,
        object_store_requests=dict(summary.object_store_requests),
    )


def _names(arg_name: str, value: object) -> list[str]:
    """One str, or an iterable of non-empty str, as a list; None is empty."""
    if value is None:
        return []
    if isinstance(value, str):
        return [_checks.non_empty_str(arg_name, value)]
    if not isinstance(value, Iterable):
        _checks.type_error(arg_name, "str or an iterable of str", value)
    return [_checks.non_empty_str(arg_name, v) for v in value]


def _committed(result: object) -> CommitResult:
    if not isinstance(result, CommitResult):
        raise RuntimeError("the server answered a maintenance command with a staged commit")
    return result


def optimize(
    spark: SparkSession,
    path: str | None = None,
    where: str | Iterable[str] | None = None,
    target_file_size: int | None = None,
    zorder_by: str | Iterable[str] | None = None,
    *,
    table: str | None = None,
) -> CommitResult:
    """Compact the small files of the Delta table at ``path`` (Delta's ``OPTIMIZE ... [WHERE]
    [ZORDER BY]``), as one commit of ``remove`` + ``add`` actions with ``dataChange=false``
    (commitInfo operation ``OPTIMIZE``; no change data is written).

    Bin-packing (Delta's ``OptimizeExecutor``): per partition, the files smaller than the server's
    ``spark.filecommit.optimize.minFileSize`` (default 1 GiB), and the files whose deletion vector
    deletes more than ``spark.filecommit.optimize.maxDeletedRowsRatio`` (default 0.05) of their
    rows, are sorted by size and packed into bins of up to the target size; each bin of two or
    more files becomes one file (rows deleted by deletion vectors are dropped). With
    ``zorder_by``, every file of the selected partitions is rewritten into about
    ``partition bytes / target size`` files, clustered along a Z-order curve of the columns.

    Concurrent appends do not conflict with it; a concurrent delete of a file it read fails it
    with ``DELTA_CONCURRENT_DELETE_READ`` (nothing committed).

    Args:
        spark: a Spark Connect session whose server has the plugin.
        path: table root as the server sees it.
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (e.g. ``"db.t"``), resolved on the server to its location; give exactly one of ``path``
            and ``table`` (``CANNOT_SET_TOGETHER`` otherwise; ``DELTA_TABLE_NOT_FOUND`` from the server
            for an unknown name).
        where: SQL predicate(s) on partition columns (all must hold); None: the whole table.
        target_file_size: target file size in bytes (> 0); None: the table property
            ``delta.targetFileSize``, else the server's ``spark.filecommit.optimize.maxFileSize``
            (default 1 GiB).
        zorder_by: column name(s) to Z-order by (data columns with statistics); None: bin-packing.

    Returns:
        CommitResult: the added and removed files; ``operation_metrics`` holds Delta's OPTIMIZE
        metrics (``numAddedFiles``, ``numRemovedFiles``, ``numAddedBytes``, ``numRemovedBytes``,
        ``minFileSize``, ``p25FileSize``, ``p50FileSize``, ``p75FileSize``, ``maxFileSize``,
        ``numDeletionVectorsRemoved``). ``committed`` is False when no file needed rewriting.

    Raises:
        pyspark.errors.PySparkTypeError, pyspark.errors.PySparkValueError: invalid arguments
            (``NOT_EXPECTED_TYPE``, ``VALUE_NOT_NON_EMPTY_STR``, ``NEGATIVE_VALUE``,
            ``VALUE_OUT_OF_BOUNDS`` for a size < 1).
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass):
            ``DELTA_NON_PARTITION_COLUMN_REFERENCE``, ``DELTA_ZORDERING_ON_PARTITION_COLUMN``,
            ``DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST``, ``DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS``,
            ``DELTA_MISSING_DELTA_TABLE``, ``DELTA_FAILED_RECOGNIZE_PREDICATE`` (a predicate that does
            not parse or resolve), ``FILECOMMIT_TOO_MANY_ZORDER_COLUMNS``,
            ``DELTA_UNSUPPORTED_FEATURES_FOR_WRITE``, ``DELTA_CONCURRENT_DELETE_READ``.
    """
    path, table = _checks.path_or_table(path, table)
    command = pb.OptimizeCommand(
        path=path, table=table, where=_names("where", where), zorder_by=_names("zorder_by", zorder_by)
    )
    if target_file_size is not None:
        command.target_file_size = _checks.int_in_range("target_file_size", target_file_size, 1, _checks.INT64_MAX)
    return _committed(_wire.execute_commit(spark, command))


def restore(
    spark: SparkSession,
    path: str | None = None,
    version: int | None = None,
    timestamp: str | datetime.datetime | datetime.date | None = None,
    *,
    table: str | None = None,
) -> CommitResult:
    """Bring the Delta table at ``path`` back to an earlier version (Delta's ``RESTORE TABLE ... TO
    VERSION AS OF`` / ``TO TIMESTAMP AS OF``) in one commit (commitInfo operation ``RESTORE``).

    The commit adds (``dataChange=true``, with their deletion vectors) the files of that version
    that the latest one lacks and removes the latest files that version lacks; that version's
    metadata is restored, the protocol is never downgraded. Every file to add must still exist.

    Args:
        spark: a Spark Connect session whose server has the plugin.
        path: table root as the server sees it.
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (e.g. ``"db.t"``), resolved on the server to its location; give exactly one of ``path``
            and ``table`` (``CANNOT_SET_TOGETHER`` otherwise; ``DELTA_TABLE_NOT_FOUND`` from the server
            for an unknown name).
        version: a version before the latest (exactly one of ``version`` and ``timestamp``).
        timestamp: a timestamp or date (str in the server session's time zone, or
            ``datetime``): the latest version committed at or before it.

    Returns:
        CommitResult: the restored (added) and removed files; ``operation_metrics`` holds Delta's
        RESTORE metrics (``numRestoredFiles``, ``restoredFilesSize``, ``numRemovedFiles``,
        ``removedFilesSize``, ``numOfFilesAfterRestore``, ``tableSizeAfterRestore``; bytes).

    Raises:
        pyspark.errors.PySparkTypeError, pyspark.errors.PySparkValueError: invalid arguments;
            ``VALUE_NOT_ALLOWED`` unless exactly one of ``version`` and ``timestamp`` is given.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass):
            ``DELTA_CANNOT_RESTORE_TABLE_VERSION``, ``DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER``,
            ``DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER``, ``DELTA_TIMESTAMP_INVALID``,
            ``FILECOMMIT_RESTORE_MISSING_FILES`` (files vacuumed),
            ``DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION`` (a version older
            than the table's ``delta.deletedFileRetentionDuration``), ``DELTA_MISSING_DELTA_TABLE``,
            conflict classes (a concurrent commit).
    """
    path, table = _checks.path_or_table(path, table)
    if (version is None) == (timestamp is None):
        _checks.not_allowed("version/timestamp", "exactly one of version and timestamp")
    command = pb.RestoreCommand(path=path, table=table)
    if version is not None:
        command.version = _checks.int64_at_least_zero("version", version)
    elif isinstance(timestamp, (datetime.datetime, datetime.date)):
        command.timestamp = str(timestamp)
    else:
        command.timestamp = _checks.non_empty_str("timestamp", timestamp)
    return _committed(_wire.execute_commit(spark, command))
