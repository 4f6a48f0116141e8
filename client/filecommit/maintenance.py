"""Table maintenance: ``vacuum`` (contract proto/filecommit/v1/commands.proto ``VacuumCommand``).

Follows Delta's ``VACUUM`` (``VacuumCommand``): files under the table root that no version inside
the retention window references are deleted; the log is not changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from filecommit import _checks, _connect, _wire
from filecommit.proto.v1 import commands_pb2 as pb
from filecommit.results import VacuumResult

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession


def vacuum(
    spark: SparkSession, path: str, *, retention_hours: float | None = None, dry_run: bool = False
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
        retention_hours: hours (>= 0); None: the table's ``delta.deletedFileRetentionDuration``
            (default 7 days). Less than that is refused unless the server sets
            ``spark.filecommit.vacuum.retentionCheck.enabled=false``.
        dry_run: only list the files.

    Returns:
        VacuumResult with the files (absolute URIs) and their bytes.

    Raises:
        pyspark.errors.PySparkTypeError, pyspark.errors.PySparkValueError: invalid arguments.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass):
            ``FILECOMMIT_VACUUM_RETENTION_TOO_SHORT``, ``DELTA_MISSING_DELTA_TABLE``,
            ``FILECOMMIT_INVALID_ARGUMENT`` (negative retention), ``DELTA_UNSUPPORTED_FEATURES_FOR_WRITE``.
    """
    _checks.check_path(path)
    command = pb.VacuumCommand(path=path, dry_run=_checks.flag("dry_run", dry_run))
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
        files=files, dry_run=summary.dry_run, num_bytes=summary.num_bytes, table_path=summary.table_path
    )
