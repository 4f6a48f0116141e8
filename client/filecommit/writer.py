"""``filecommit.write``: a transactional Delta write of a Spark Connect DataFrame.

Follows the foundation contract (proto/filecommit/v1/commands.proto, ``WriteCommand``): the
DataFrame's plan, path, save mode, partition columns, writer options, table properties and an
optional transaction identifier (``txn``) go to the server plugin, which writes Parquet files
through Spark's writer with DelayedCommitProtocol and commits one Delta version; the committed file
actions stream back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pyspark.errors import PySparkValueError

from filecommit import _checks, _connect
from filecommit._checks import WriteTxn
from filecommit.actions import AddCDCFile, AddFile, CommitResult, RemoveFile, WriteMetrics
from filecommit.proto.v1 import commands_pb2 as pb

if TYPE_CHECKING:
    from google.protobuf import any_pb2
    from pyspark.sql.connect.dataframe import DataFrame
    from pyspark.sql.connect.session import SparkSession

SaveMode = Literal["append", "overwrite", "error", "errorifexists", "ignore"]
"""Spark's save modes (case-insensitive at run time): what a write does when the table exists."""

_MODES = {
    "append": pb.SAVE_MODE_APPEND,
    "overwrite": pb.SAVE_MODE_OVERWRITE,
    "error": pb.SAVE_MODE_ERROR_IF_EXISTS,
    "errorifexists": pb.SAVE_MODE_ERROR_IF_EXISTS,
    "ignore": pb.SAVE_MODE_IGNORE,
}


def _save_mode(mode: object) -> Any:
    if not isinstance(mode, str) or mode.lower() not in _MODES:
        raise PySparkValueError(
            errorClass="VALUE_NOT_ALLOWED",
            messageParameters={"arg_name": "mode", "allowed_values": str(list(_MODES))},
        )
    return _MODES[mode.lower()]


def _transaction(txn: object) -> Any:
    """The contract's ``Transaction`` for a validated ``txn`` pair, or None."""
    checked = _checks.txn(txn)
    if checked is None:
        return None
    return pb.Transaction(app_id=checked[0], version=checked[1])


def _unpacked(payloads: Iterable[any_pb2.Any], message_type: Any) -> Iterator[Any]:
    """Each extension payload (``google.protobuf.Any``) unpacked as ``message_type``.

    Raises:
        RuntimeError: a payload of another type (a server that speaks another contract version).
    """
    for payload in payloads:
        response = message_type()
        if not payload.Unpack(response):
            raise RuntimeError(f"unexpected response type from the server: {payload.type_url}")
        yield response


def build_write_command(
    df: DataFrame,
    path: str,
    *,
    mode: SaveMode = "append",
    partition_by: str | Iterable[str] | None = None,
    options: Mapping[str, object] | None = None,
    table_properties: Mapping[str, object] | None = None,
    change_data: bool = False,
    txn: WriteTxn | None = None,
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
    _checks.check_path(path)
    command = pb.WriteCommand(
        path=path,
        mode=_save_mode(mode),
        partition_by=_checks.partition_columns(partition_by),
        options=_checks.string_map("options", options),
        table_properties=_checks.string_map("table_properties", table_properties),
        change_data=_checks.flag("change_data", change_data),
    )
    transaction = _transaction(txn)
    if transaction is not None:
        command.txn.CopyFrom(transaction)
    command.input.CopyFrom(_connect.relation_of(df))
    return command


def write(
    df: DataFrame,
    path: str,
    *,
    mode: SaveMode = "append",
    partition_by: str | Iterable[str] | None = None,
    options: Mapping[str, object] | None = None,
    table_properties: Mapping[str, object] | None = None,
    change_data: bool = False,
    txn: WriteTxn | None = None,
) -> CommitResult:
    """Write a DataFrame into the Delta table at ``path`` as one new table version.

    Follows proto/filecommit/v1/commands.proto (``WriteCommand``) and the Delta protocol (commits,
    ``add`` / ``remove`` / ``cdc`` / ``txn`` actions; conflicts as in "Conflict detection").

    Args:
        df: a Spark Connect DataFrame (``pyspark.sql.connect.dataframe.DataFrame``); its plan runs
            on the server.
        path: table root as the server sees it (local path, ``file:``, ``hdfs:``, ...).
        mode: "append" | "overwrite" | "error" (alias "errorifexists") | "ignore", as in Spark
            (case-insensitive).
        partition_by: partition columns, in directory order (new tables; must match on append);
            one str is one column.
        options: writer options, e.g. ``{"maxRecordsPerFile": "100000", "compression": "zstd"}``,
            ``{"overwriteSchema": "true"}`` with mode "overwrite"; values str, int, float or bool.
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

    Returns:
        CommitResult with the committed version, AddFiles, AddCDCFiles, RemoveFiles and metrics
        (sizes in bytes, times in ms since the Unix epoch); ``committed`` is False when nothing was
        committed (mode "ignore" on an existing table, or ``txn`` already applied).

    Raises:
        pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments
            (a ``ValueError`` / ``TypeError`` with an error class, see :func:`build_write_command`),
            before anything is sent.
        pyspark.errors.exceptions.connect.IllegalArgumentException: bad input found by the
            server (non-table directory, schema or partition mismatch, invalid table property).
        pyspark.errors.exceptions.connect.SparkConnectGrpcException: table exists in mode
            "error", conflicting concurrent commit (``e.getCondition()``, e.g.
            ``DELTA_CONCURRENT_APPEND``, ``DELTA_CONCURRENT_TRANSACTION`` for a concurrent commit
            of the same txn app id: call again, the write is then skipped if that commit applied
            this version).
        Nothing is committed when an exception is raised.
    """
    command = build_write_command(
        df,
        path,
        mode=mode,
        partition_by=partition_by,
        options=options,
        table_properties=table_properties,
        change_data=change_data,
        txn=txn,
    )
    return _collect(_connect.execute_extension_command(df.sparkSession, command))


def _collect(payloads: Iterable[any_pb2.Any]) -> CommitResult:
    adds: list[AddFile] = []
    removes: list[RemoveFile] = []
    cdc: list[AddCDCFile] = []
    summary = None
    for response in _unpacked(payloads, pb.WriteResponse):
        if response.HasField("actions"):
            for action in response.actions.actions:
                kind = action.WhichOneof("action")
                if kind == "add":
                    adds.append(AddFile.from_proto(action.add))
                elif kind == "remove":
                    removes.append(RemoveFile.from_proto(action.remove))
                elif kind == "cdc":
                    cdc.append(AddCDCFile.from_proto(action.cdc))
        elif response.HasField("summary"):
            summary = response.summary
    if summary is None:
        raise RuntimeError("the server finished the write without a commit summary")
    return CommitResult(
        version=summary.version,
        committed=summary.committed,
        table_path=summary.table_path,
        add_files=adds,
        remove_files=removes,
        metrics=WriteMetrics(
            rows=summary.num_output_rows,
            files=summary.num_add_files,
            bytes=summary.num_output_bytes,
            removed_files=summary.num_remove_files,
            duration_ms=summary.duration_ms,
            attempts=summary.attempts,
            cdc_files=summary.num_cdc_files,
            num_deleted_rows=summary.num_deleted_rows,
            num_updated_rows=summary.num_updated_rows,
            num_inserted_rows=summary.num_inserted_rows,
            num_copied_rows=summary.num_copied_rows,
        ),
        cdc_files=cdc,
    )


def set_table_properties(
    spark: SparkSession,
    path: str,
    properties: Mapping[str, object],
    *,
    txn: WriteTxn | None = None,
) -> CommitResult:
    """Set table properties on an existing Delta table in a metadata-only commit.

    Follows proto/filecommit/v1/commands.proto (``SetTablePropertiesCommand``). E.g.
    ``set_table_properties(spark, path, {"delta.enableChangeDataFeed": "true"})`` enables the
    change data feed (and raises the table protocol to writer version 4).

    Args:
        spark: a Spark Connect session (``pyspark.sql.connect.session.SparkSession``) whose server
            has the plugin.
        path: table root as the server sees it.
        properties: str -> str properties to add or change (bools are written "true"/"false",
            numbers with ``str``); at least one.
        txn: ``(app_id, version)`` for an idempotent change, as in :func:`write`: when the
            table's latest txn version for ``app_id`` is ``>= version``, nothing is committed
            (``committed=False``, the table's current version); otherwise the commit carries the
            ``txn`` action.

    Returns:
        CommitResult of the new version (no file actions); ``committed`` is False when the
        properties were already set or ``txn`` was already applied.

    Raises:
        pyspark.errors.PySparkValueError: (a ``ValueError``) ``VALUE_NOT_NON_EMPTY_STR`` for an
            empty path or txn app id, ``CANNOT_BE_EMPTY`` for no properties, ``NEGATIVE_VALUE`` /
            ``VALUE_OUT_OF_BOUNDS`` for a txn version; before anything is sent.
        pyspark.errors.PySparkTypeError: (a ``TypeError``) ``NOT_EXPECTED_TYPE`` for properties
            that are not a str -> str map or a malformed txn; before anything is sent.
        pyspark.errors.exceptions.connect.IllegalArgumentException: no table at ``path``, or an
            unknown / invalid ``delta.*`` property.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException: conflicting concurrent
            commit (``e.getCondition()``, e.g. ``DELTA_METADATA_CHANGED``).
    """
    _checks.check_path(path)
    props = _checks.not_empty("table property in `properties`", _checks.string_map("properties", properties))
    command = pb.SetTablePropertiesCommand(path=path, properties=props)
    transaction = _transaction(txn)
    if transaction is not None:
        command.txn.CopyFrom(transaction)
    return _collect(_connect.execute_extension_command(spark, command))
