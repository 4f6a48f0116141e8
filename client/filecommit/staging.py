"""Write, audit, publish: act on staged commits (contract proto/filecommit/v1/staging.proto).

A table command called with ``stage=True`` (``write``, ``delete``, ``update``, ``merge(...).execute``,
``set_table_properties``) or :func:`stage_files` writes its files under the table root and returns
a :class:`~filecommit.StagedCommit` instead of committing. Nothing reaches the Delta log until
:func:`commit` publishes one or several staged commits of a table as one version, after Delta's
conflict checks (PROTOCOL.md "Optimistic Concurrency Control") against every version since each
one read the table. :func:`read_staged` shows the staged rows (or the table as it would be) as a
DataFrame for an audit; :func:`abort` deletes the staged files. Staged commits are stored with the
table, so any client of any server that reaches it can publish them by id, also after a restart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from filecommit import _checks, _connect, _wire
from filecommit._typing import WriteTxn
from filecommit.proto.v1 import commands_pb2, staging_pb2
from filecommit.results import CommitResult, Stage, StagedCommit

if TYPE_CHECKING:
    from pyspark.sql.connect.dataframe import DataFrame

    from filecommit._typing import AnySparkSession as SparkSession

StagedRef = StagedCommit | str
"""A staged commit or its id."""


def _ids(staged: StagedRef | Sequence[StagedRef] | None) -> list[str]:
    """The ids of one or several staged commits (StagedCommit objects or id strings); ids of
    StagedCommits with nothing staged (``id`` None) are left out."""
    items = [staged] if isinstance(staged, (str, StagedCommit)) else staged
    if not isinstance(items, Sequence):
        _checks.type_error("staged", "a StagedCommit, an id str, or a sequence of them", staged)
    out: list[str] = []
    for item in items:
        if isinstance(item, StagedCommit):
            if item.id is not None:
                out.append(item.id)
        elif isinstance(item, str):
            out.append(_checks.non_empty_str("staged commit id", item))
        else:
            _checks.type_error("staged", "a StagedCommit, an id str, or a sequence of them", item)
    return out


def commit(
    spark: SparkSession,
    path: str | None = None,
    staged: StagedRef | Sequence[StagedRef] | None = None,
    *,
    txn: WriteTxn | None = None,
    table: str | None = None,
) -> CommitResult:
    """Publish staged commits of the table at ``path`` as ONE new table version.

    Follows staging.proto ``PublishStagedCommand``: the staged commits are one transaction, checked
    with Delta's conflict rules (``ConflictChecker``) against every version since the read version
    of each; their actions are committed exactly as staged. Idempotent: publishing the same
    staged commits again commits nothing (``committed`` False, ``version`` the one holding them).

    Args:
        spark: a Spark Connect session whose server has the plugin (any client, not only the one
            that staged).
        path: the table root the commits were staged for.
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (e.g. ``"db.t"``), resolved on the server to its location; give exactly one of ``path``
            and ``table`` (``CANNOT_SET_TOGETHER`` otherwise; ``DELTA_TABLE_NOT_FOUND`` from the server
            for an unknown name).
        staged: a :class:`~filecommit.StagedCommit`, an id, or a sequence of them (distinct).
        txn: ``(app_id, version)`` the commit carries, as in :func:`filecommit.write`.

    Returns:
        CommitResult of the new version with the staged actions; ``committed`` False when nothing
        was committed (already published, or ``txn`` already applied, or nothing was staged: then
        ``version`` is -1 and ``table_path`` the given path, or for ``table`` the table's location as
        ``DESCRIBE DETAIL`` reports it, ``TABLE_OR_VIEW_NOT_FOUND`` for an unknown name).

    Raises:
        pyspark.errors.PySparkTypeError, pyspark.errors.PySparkValueError: invalid arguments.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): the server's
            error class: ``FILECOMMIT_STAGED_COMMIT_NOT_FOUND``, ``FILECOMMIT_STAGED_COMMIT_EXPIRED``,
            ``FILECOMMIT_STAGED_COMMIT_ABORTED``, ``FILECOMMIT_STAGED_COMMIT_PUBLISHED`` (some were
            published with others), ``FILECOMMIT_STAGED_COMMITS_INCOMPATIBLE``, the conflict classes
            (``DELTA_CONCURRENT_APPEND``, ...). Nothing is committed then.
    """
    path, table = _checks.path_or_table(path, table)
    ids = _ids(staged)
    if not ids:
        # Nothing to publish; a table by name still answers with its root (Delta's DESCRIBE DETAIL location).
        root = path if table is None else str(spark.sql(f"DESCRIBE DETAIL {table}").collect()[0]["location"])
        return CommitResult(
            version=-1, committed=False, table_path=root, add_files=[], remove_files=[], metrics=_empty_metrics()
        )
    command = staging_pb2.PublishStagedCommand(path=path, table=table, staged_ids=ids)
    _wire.set_txn(command, txn)
    result = _wire.execute_commit(spark, command)
    assert isinstance(result, CommitResult)
    return result


def _empty_metrics() -> Any:
    from filecommit.results import WriteMetrics

    return WriteMetrics(rows=0, files=0, bytes=0, removed_files=0, duration_ms=0, attempts=0)


def abort(
    spark: SparkSession,
    path: str | None = None,
    staged: StagedRef | Sequence[StagedRef] | None = None,
    *,
    table: str | None = None,
) -> int:
    """Abort staged commits: the files the server wrote for them are deleted and they can no longer
    be published (staging.proto ``AbortStagedCommand``). Aborting one twice does nothing.

    ``path`` (the table root) or ``table`` (a table name of the server's catalog, resolved on the
    server to its location; exactly one, ``CANNOT_SET_TOGETHER`` otherwise) name the table, as in
    :func:`commit`.

    Returns:
        The number of files deleted.

    Raises:
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass):
            ``FILECOMMIT_STAGED_COMMIT_NOT_FOUND``, ``FILECOMMIT_STAGED_COMMIT_PUBLISHED`` (a version
            holds it), ``FILECOMMIT_STAGED_COMMIT_BUSY`` (a publish of it is running).
    """
    path, table = _checks.path_or_table(path, table)
    ids = _ids(staged)
    if not ids:
        return 0
    response = _one(spark, staging_pb2.AbortStagedCommand(path=path, table=table, staged_ids=ids))
    return int(response.aborted.num_deleted_files)


def get_staged(
    spark: SparkSession, path: str | None = None, staged_id: str | None = None, *, table: str | None = None
) -> StagedCommit:
    """Fetch a staged commit by id (staging.proto ``GetStagedCommand``), e.g. in another process.

    ``path`` (the table root) or ``table`` (a table name of the server's catalog, resolved on the
    server to its location; exactly one, ``CANNOT_SET_TOGETHER`` otherwise) name the table, as in
    :func:`commit`.

    Raises:
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass):
            ``FILECOMMIT_STAGED_COMMIT_NOT_FOUND``, ``FILECOMMIT_STAGED_COMMIT_ABORTED``.
    """
    path, table = _checks.path_or_table(path, table)
    staged_id = _checks.non_empty_str("staged_id", staged_id)
    command = staging_pb2.GetStagedCommand(path=path, table=table, staged_id=staged_id)
    result = _wire.execute_commit(spark, command)
    assert isinstance(result, StagedCommit)
    return result


def read_staged(
    spark: SparkSession,
    path: str | None = None,
    staged: StagedRef | Sequence[StagedRef] | None = None,
    *,
    table_after: bool = False,
    table: str | None = None,
) -> DataFrame:
    """The rows of staged commits as a DataFrame, for an audit before publishing
    (staging.proto ``ReadStagedCommand``; read on the server as Delta readers will read them).

    ``path`` (the table root) or ``table`` (a table name of the server's catalog, resolved on the
    server to its location; exactly one, ``CANNOT_SET_TOGETHER`` otherwise) name the table, as in
    :func:`commit`.

    Args:
        table_after: False: the rows of the data files the staged commits add that are not yet in
            the table (with their partition values). True: the whole table as it would be after
            publishing them on its latest version (removed files gone, deletion vectors applied).

    Returns:
        A Spark Connect DataFrame over a temporary view of the session.

    Raises:
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): as
            :func:`get_staged`.
    """
    path, table = _checks.path_or_table(path, table)
    ids = _checks.not_empty("staged commit", _ids(staged))
    command = staging_pb2.ReadStagedCommand(
        path=path, table=table, staged_ids=ids, table_after=_checks.flag("table_after", table_after)
    )
    return cast("DataFrame", spark.table(_one(spark, command).read.view_name))


def stage_files(
    spark: SparkSession,
    path: str | None = None,
    files: Sequence[str | tuple[str, Mapping[str, str | None]]] | None = None,
    *,
    txn: WriteTxn | None = None,
    stage: bool | Stage = True,
    table: str | None = None,
) -> StagedCommit:
    """Stage Parquet files that another process (pyarrow, delta-rs, a loader in any language)
    wrote under the table root, as a staged append (staging.proto ``StageFilesCommand``).

    The server checks every file before staging any: under the table root (outside ``_delta_log``
    and ``_change_data``), present, not already in the table, a Parquet footer whose columns are
    table data columns with the table's types, partition values for exactly the partition columns,
    and the table's constraints for its rows; it fills in size, modification time and statistics.
    Abort and expiry do not delete such files (the server did not write them).

    ``path`` (the table root) or ``table`` (a table name of the server's catalog, resolved on the
    server to its location; exactly one, ``CANNOT_SET_TOGETHER`` otherwise) name the table, as in
    :func:`commit`.

    Args:
        files: paths relative to the table root (or absolute under it), each optionally with its
            partition values ``{column: value or None}``; without them they are parsed from the
            path's ``column=value`` directories.
        txn: ``(app_id, version)`` the publish will carry.
        stage: True, or a :class:`~filecommit.Stage` with the expiry.

    Raises:
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass):
            ``FILECOMMIT_INVALID_STAGED_FILE``, ``PATH_NOT_FOUND``, ``DELTA_METADATA_MISMATCH``,
            ``DELTA_TABLE_NOT_FOUND``, ``FILECOMMIT_CANNOT_STAGE`` (a column-mapped table), the table's
            constraint classes. Nothing is staged then.
    """
    path, table = _checks.path_or_table(path, table)
    items = []
    if files is None:
        _checks.type_error("files", "a sequence of path str or (path, partition values) tuples", files)
    for f in _checks.not_empty("file", list(files)):
        if isinstance(f, str):
            items.append(staging_pb2.ExternalFile(path=_checks.non_empty_str("file path", f)))
        elif isinstance(f, tuple) and len(f) == 2 and isinstance(f[1], Mapping):
            values = [
                commands_pb2.PartitionValue(column=str(k))
                if v is None
                else commands_pb2.PartitionValue(column=str(k), value=str(v))
                for k, v in f[1].items()
            ]
            items.append(
                staging_pb2.ExternalFile(path=_checks.non_empty_str("file path", f[0]), partition_values=values)
            )
        else:
            _checks.type_error("files", "a sequence of path str or (path, partition values) tuples", f)
    command = staging_pb2.StageFilesCommand(path=path, table=table, files=items)
    _wire.set_txn(command, txn)
    _wire.set_stage(command, Stage() if stage is True else stage)
    result = _wire.execute_commit(spark, command)
    assert isinstance(result, StagedCommit)
    return result


def _one(spark: SparkSession, command: Any) -> Any:
    """Send a staging command answered with one ``StagingResponse``."""
    responses = list(_wire.unpacked(_connect.execute_extension_command(spark, command), staging_pb2.StagingResponse))
    if len(responses) != 1:
        raise RuntimeError(f"expected one StagingResponse from the server, got {len(responses)}")
    return responses[0]
