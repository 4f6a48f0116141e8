"""``filecommit.write`` and ``filecommit.set_table_properties``: one Delta table version each.

Follows the contract proto/filecommit/v1/commands.proto (``WriteCommand``,
``SetTablePropertiesCommand``): the DataFrame's plan, path, save mode, partition columns, writer
options, table properties and an optional transaction identifier (``txn``) go to the server
plugin, which writes Parquet files through Spark's writer with a delayed commit protocol and
commits one Delta version (PROTOCOL.md "Delta Log Entries"); the committed file actions stream
back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

from filecommit import _checks, _wire
from filecommit._typing import PartitionBy, SaveMode, StrMap, WriteTxn
from filecommit.proto.v1 import commands_pb2 as pb
from filecommit.results import CommitResult, Stage, StagedCommit

if TYPE_CHECKING:
    from pyspark.sql.dataframe import DataFrame

    from filecommit._typing import AnySparkSession as SparkSession

_MODES = {
    "append": pb.SAVE_MODE_APPEND,
    "overwrite": pb.SAVE_MODE_OVERWRITE,
    "error": pb.SAVE_MODE_ERROR_IF_EXISTS,
    "errorifexists": pb.SAVE_MODE_ERROR_IF_EXISTS,
    "ignore": pb.SAVE_MODE_IGNORE,
}


def _save_mode(mode: object) -> Any:
    """The contract's ``SaveMode`` of a Spark save mode name (case-insensitive)."""
    if not isinstance(mode, str) or mode.lower() not in _MODES:
        _checks.not_allowed("mode", str(list(_MODES)))
    return _MODES[mode.lower()]


def build_write_command(
    df: DataFrame,
    path: str | None = None,
    *,
    table: str | None = None,
    mode: SaveMode = "append",
    partition_by: PartitionBy = None,
    options: StrMap | None = None,
    table_properties: StrMap | None = None,
    change_data: bool = False,
    txn: WriteTxn | None = None,
    cluster_by: PartitionBy = None,
) -> pb.WriteCommand:
    """Validate the arguments of :func:`write` and build its ``WriteCommand`` message.

    Follows proto/filecommit/v1/commands.proto (``WriteCommand``); arguments as in :func:`write`.

    Returns:
        The ``filecommit.v1.WriteCommand`` message, with ``input`` set to ``df``'s plan.

    Raises:
        pyspark.errors.PySparkValueError: (a ``ValueError``) ``VALUE_NOT_NON_EMPTY_STR`` for an empty
            path, a bad partition column name or txn app id; ``VALUE_NOT_ALLOWED`` for an unknown
            mode; ``NEGATIVE_VALUE`` / ``VALUE_OUT_OF_BOUNDS`` for a txn version outside
            [0, 2**63 - 1].
        pyspark.errors.PySparkTypeError: (a ``TypeError``) ``NOT_EXPECTED_TYPE`` for a non-Connect
            DataFrame, options / properties that are not str -> str maps, a non-bool change_data,
            a txn that is not an (app_id, version) pair or a non-int version.
    """
    path, table = _checks.path_or_table(path, table)
    command = pb.WriteCommand(
        path=path,
        table=table,
        mode=_save_mode(mode),
        partition_by=_checks.partition_columns(partition_by),
        options=_checks.string_map("options", options),
        table_properties=_checks.string_map("table_properties", table_properties),
        change_data=_checks.flag("change_data", change_data),
        cluster_by=_checks.partition_columns(cluster_by, "cluster_by"),
    )
    _wire.set_txn(command, txn)
    command.input.CopyFrom(_wire.relation(df))
    return command


@overload
def write(
    df: DataFrame,
    path: str | None = ...,
    *,
    table: str | None = ...,
    mode: SaveMode = ...,
    partition_by: PartitionBy = ...,
    options: StrMap | None = ...,
    table_properties: StrMap | None = ...,
    change_data: bool = ...,
    txn: WriteTxn | None = ...,
    stage: Literal[False] = ...,
    cluster_by: PartitionBy = ...,
) -> CommitResult: ...
@overload
def write(
    df: DataFrame,
    path: str | None = ...,
    *,
    table: str | None = ...,
    mode: SaveMode = ...,
    partition_by: PartitionBy = ...,
    options: StrMap | None = ...,
    table_properties: StrMap | None = ...,
    change_data: bool = ...,
    txn: WriteTxn | None = ...,
    stage: Literal[True] | Stage,
    cluster_by: PartitionBy = ...,
) -> StagedCommit: ...
@overload
def write(
    df: DataFrame,
    path: str | None = ...,
    *,
    table: str | None = ...,
    mode: SaveMode = ...,
    partition_by: PartitionBy = ...,
    options: StrMap | None = ...,
    table_properties: StrMap | None = ...,
    change_data: bool = ...,
    txn: WriteTxn | None = ...,
    stage: bool | Stage = ...,
    cluster_by: PartitionBy = ...,
) -> CommitResult | StagedCommit: ...
def write(
    df: DataFrame,
    path: str | None = None,
    *,
    table: str | None = None,
    mode: SaveMode = "append",
    partition_by: PartitionBy = None,
    options: StrMap | None = None,
    table_properties: StrMap | None = None,
    change_data: bool = False,
    txn: WriteTxn | None = None,
    stage: bool | Stage = False,
    cluster_by: PartitionBy = None,
) -> CommitResult | StagedCommit:
    """Write a DataFrame into the Delta table at ``path`` as one new table version.

    Follows proto/filecommit/v1/commands.proto (``WriteCommand``) and the Delta protocol (commits,
    ``add`` / ``remove`` / ``cdc`` / ``txn`` actions; conflicts as in "Conflict detection").

    Args:
        df: a Spark Connect DataFrame (``pyspark.sql.connect.dataframe.DataFrame``); its plan runs
            on the server.
        path: table root as the server sees it (local path, ``file:``, ``hdfs:``, ...).
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (``"db.t"``; ``CREATE TABLE ... USING delta`` or ``saveAsTable`` made it): the write
            goes to its location. ``DELTA_TABLE_NOT_FOUND`` from the server for an unknown name;
            ``CANNOT_SET_TOGETHER`` (a ``ValueError``) when both are given.
        mode: "append" | "overwrite" | "error" (alias "errorifexists") | "ignore", as in Spark
            (case-insensitive).
        partition_by: partition columns, in directory order (new tables; must match on append);
            one str is one column.
        options: writer options, e.g. ``{"maxRecordsPerFile": "100000", "compression": "zstd"}``,
            ``{"overwriteSchema": "true"}`` with mode "overwrite", ``{"mergeSchema": "true"}`` to add
            the data's new columns and nested fields to the table schema (and widen types where the
            table sets ``delta.enableTypeWidening``), as Delta's ``mergeSchema``; values str, int,
            float or bool.
        table_properties: table properties for a new table (e.g. ``delta.randomizeFilePrefixes``,
            ``delta.enableChangeDataFeed``) or to add to an existing one.
        change_data: the input has a ``_change_type`` column: rows where it is set (insert,
            update_preimage, update_postimage, delete) are change records, written under
            ``_change_data/`` and returned as ``cdc_files``; the other rows are table data
            (stored without ``_change_type``). Needs ``delta.enableChangeDataFeed=true``.
        txn: ``(app_id, version)`` for an idempotent write (Delta's ``txnAppId`` /
            ``txnVersion``, protocol "Transaction Identifiers"): ``app_id`` a non-empty str naming
            the writing application, ``version`` an int in [0, 2**63 - 1] that the application
            increases with every write. When the table's latest txn version for ``app_id`` is
            ``>= version``, nothing is written and the result has ``committed=False`` and the
            table's current version; otherwise the commit carries the ``txn`` action
            ``{appId, version, lastUpdated}``, so a retried write is committed exactly once.
        stage: True (or a :class:`~filecommit.Stage` with an expiry) writes the files but commits
            nothing: the result is then a :class:`~filecommit.StagedCommit` to audit
            (:func:`filecommit.read_staged`) and publish (:func:`filecommit.commit`) or abort
            (:func:`filecommit.abort`) later, from any client.
        cluster_by: clustering columns of a new table (liquid clustering, PROTOCOL.md "Clustered
            Table"; one str is one column): at most 4 top-level columns of a type with statistics
            (numeric, date, timestamp, string) among the first ``delta.dataSkippingNumIndexedCols``
            columns, not together with ``partition_by``. The table gets the ``clustering`` and
            ``domainMetadata`` writer features and the ``delta.clustering`` domain, as Delta's
            ``CLUSTER BY``; :func:`filecommit.optimize` then clusters its files. Mode "overwrite"
            (without ``replaceWhere``) sets them on an existing table; an append must give the
            table's clustering columns (change them with ``ALTER TABLE ... CLUSTER BY``). Not with
            ``stage``.

    Returns:
        CommitResult with the committed version, AddFiles, AddCDCFiles, RemoveFiles and metrics
        (sizes in bytes, times in ms since the Unix epoch); ``committed`` is False when nothing was
        committed (mode "ignore" on an existing table, or ``txn`` already applied). With ``stage``:
        the StagedCommit (``id`` None when there was nothing to stage).

    Raises:
        pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments
            (a ``ValueError`` / ``TypeError`` with an error class, see :func:`build_write_command`),
            before anything is sent.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): the
            server's error, ``e.getCondition()`` a class of :mod:`filecommit.errors`, e.g.
            ``DELTA_TABLE_ALREADY_EXISTS`` (mode "error"), ``DELTA_METADATA_MISMATCH``,
            ``DELTA_CLUSTER_BY_WITH_PARTITIONED_BY``, ``DELTA_COLUMN_NOT_FOUND_IN_SCHEMA``,
            ``DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED``, ``DELTA_CLUSTERING_COLUMN_MISSING_STATS``,
            ``DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS``, ``DELTA_CLUSTERING_COLUMNS_MISMATCH`` (``cluster_by``),
            ``DELTA_INVALID_PARTITION_COLUMN``, ``DELTA_UNKNOWN_CONFIGURATION``, a table rule
            (``errors.TABLE_RULES``) or a lost race (``errors.CONCURRENCY``;
            ``DELTA_CONCURRENT_TRANSACTION`` for a concurrent commit of the same txn app id: call
            again, the write is then skipped if that commit applied this version).
            Nothing is committed when an exception is raised, except with
            ``FILECOMMIT_COMMIT_STATE_UNKNOWN``: call again with the same ``txn``.
    """
    command = build_write_command(
        df,
        path,
        table=table,
        mode=mode,
        partition_by=partition_by,
        options=options,
        table_properties=table_properties,
        change_data=change_data,
        txn=txn,
        cluster_by=cluster_by,
    )
    _wire.set_stage(command, stage)
    return _wire.execute_commit(_wire.session_of(df), command)


@overload
def set_table_properties(
    spark: SparkSession,
    path: str | None = ...,
    properties: StrMap | None = ...,
    *,
    table: str | None = ...,
    txn: WriteTxn | None = ...,
    stage: Literal[False] = ...,
) -> CommitResult: ...
@overload
def set_table_properties(
    spark: SparkSession,
    path: str | None = ...,
    properties: StrMap | None = ...,
    *,
    table: str | None = ...,
    txn: WriteTxn | None = ...,
    stage: Literal[True] | Stage,
) -> StagedCommit: ...
@overload
def set_table_properties(
    spark: SparkSession,
    path: str | None = ...,
    properties: StrMap | None = ...,
    *,
    table: str | None = ...,
    txn: WriteTxn | None = ...,
    stage: bool | Stage = ...,
) -> CommitResult | StagedCommit: ...
def set_table_properties(
    spark: SparkSession,
    path: str | None = None,
    properties: StrMap | None = None,
    *,
    table: str | None = None,
    txn: WriteTxn | None = None,
    stage: bool | Stage = False,
) -> CommitResult | StagedCommit:
    """Set table properties on an existing Delta table in a metadata-only commit.

    Follows proto/filecommit/v1/commands.proto (``SetTablePropertiesCommand``). E.g.
    ``set_table_properties(spark, path, {"delta.enableChangeDataFeed": "true"})`` enables the
    change data feed (and raises the table protocol to writer version 4). A CHECK constraint
    (``{"delta.constraints.positive": "id > 0"}``) is first checked against every row of the table
    in the same transaction, as ``ALTER TABLE ADD CONSTRAINT`` does (Delta's
    ``AlterTableAddConstraintDeltaCommand``); an append landing meanwhile makes the change fail with
    ``DELTA_CONCURRENT_APPEND``.

    Args:
        spark: a Spark Connect session (``pyspark.sql.connect.session.SparkSession``) whose server
            has the plugin.
        path: table root as the server sees it.
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (e.g. ``"db.t"``), resolved on the server to its location; give exactly one of ``path``
            and ``table`` (``CANNOT_SET_TOGETHER`` otherwise; ``DELTA_TABLE_NOT_FOUND`` from the server
            for an unknown name).
        properties: str -> str properties to add or change (bools are written "true"/"false",
            numbers with ``str``); at least one.
        txn: ``(app_id, version)`` for an idempotent change, as in :func:`write`: when the
            table's latest txn version for ``app_id`` is ``>= version``, nothing is committed
            (``committed=False``, the table's current version); otherwise the commit carries the
            ``txn`` action.
        stage: stage the change instead of committing it, as in :func:`write`.

    Returns:
        CommitResult of the new version (no file actions); ``committed`` is False when the
        properties were already set or ``txn`` was already applied. With ``stage``: the
        StagedCommit.

    Raises:
        pyspark.errors.PySparkValueError: (a ``ValueError``) ``VALUE_NOT_NON_EMPTY_STR`` for an
            empty path or txn app id, ``CANNOT_BE_EMPTY`` for no properties, ``NEGATIVE_VALUE`` /
            ``VALUE_OUT_OF_BOUNDS`` for a txn version; before anything is sent.
        pyspark.errors.PySparkTypeError: (a ``TypeError``) ``NOT_EXPECTED_TYPE`` for properties
            that are not a str -> str map or a malformed txn; before anything is sent.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): the
            server's error, ``e.getCondition()`` a class of :mod:`filecommit.errors`, e.g.
            ``DELTA_TABLE_NOT_FOUND`` (no table at ``path``), ``DELTA_UNKNOWN_CONFIGURATION``,
            ``DELTA_ILLEGAL_OPTION`` (an invalid ``delta.*`` value), ``DELTA_METADATA_CHANGED``
            (a concurrent metadata change), ``DELTA_NEW_CHECK_CONSTRAINT_VIOLATION`` (rows violate a
            CHECK constraint given; parameter ``numRows``), ``DELTA_NON_BOOLEAN_CHECK_CONSTRAINT``
            and the other CHECK expression classes.
    """
    path, table = _checks.path_or_table(path, table)
    props = _checks.not_empty("table property in `properties`", _checks.string_map("properties", properties))
    command = pb.SetTablePropertiesCommand(path=path, table=table, properties=props)
    _wire.set_txn(command, txn)
    _wire.set_stage(command, stage)
    return _wire.execute_commit(spark, command)
