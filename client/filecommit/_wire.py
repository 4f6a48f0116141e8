"""What every command shares on the wire (contract proto/filecommit/v1): the DataFrame plan and
``txn`` that go out, and the response stream that comes back.

A command's answer is a stream of ``google.protobuf.Any`` payloads: file actions (or sink file
statuses) in batches, then one summary. Table commands answer with ``WriteResponse`` and become a
:class:`~filecommit.results.CommitResult`; ``write_batch`` answers with ``WriteBatchResponse`` and
becomes a :class:`~filecommit.results.BatchResult`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from filecommit import _checks, _connect
from filecommit.actions import AddCDCFile, AddFile, RemoveFile
from filecommit.proto.v1 import commands_pb2, sink_pb2
from filecommit.results import BatchResult, CommitResult, SinkFileStatus, Stage, StagedCommit, WriteMetrics

if TYPE_CHECKING:
    from google.protobuf import any_pb2
    from google.protobuf.message import Message
    from pyspark.sql.dataframe import DataFrame

    from filecommit._typing import AnySparkSession as SparkSession


def relation(df: DataFrame) -> Message:
    """The ``spark.connect.Relation`` plan of a Spark Connect DataFrame, to embed in a command.

    Raises:
        pyspark.errors.PySparkTypeError: ``NOT_EXPECTED_TYPE`` (arg_name ``df``) for anything else,
            e.g. a classic pyspark or a pandas DataFrame.
    """
    plan = _connect.relation_of(df)
    if plan is None:
        _checks.type_error("df", "a Spark Connect DataFrame (from SparkSession.builder.remote(...))", df)
    return plan


def session_of(df: DataFrame) -> SparkSession:
    """The Spark Connect session of a DataFrame :func:`relation` accepted (typed as pyspark's
    ``DataFrame``, whose ``sparkSession`` is a Connect ``SparkSession`` at run time)."""
    return cast("SparkSession", df.sparkSession)


def set_txn(command: Any, txn: object) -> None:
    """Check ``txn`` (see :func:`filecommit._checks.txn`) and, unless None, set ``command.txn`` to
    its ``filecommit.v1.Transaction`` (Delta's ``txn`` action, PROTOCOL.md "Transaction
    Identifiers").

    Raises:
        pyspark.errors.PySparkTypeError, pyspark.errors.PySparkValueError: a malformed ``txn``.
    """
    checked = _checks.txn(txn)
    if checked is not None:
        command.txn.CopyFrom(commands_pb2.Transaction(app_id=checked[0], version=checked[1]))


def unpacked(payloads: Iterable[any_pb2.Any], message_type: Any) -> Iterator[Any]:
    """Each extension payload unpacked as ``message_type``.

    Raises:
        RuntimeError: a payload of another type (a server that speaks another contract version).
    """
    for payload in payloads:
        response = message_type()
        if not payload.Unpack(response):
            raise RuntimeError(f"unexpected response type from the server: {payload.type_url}")
        yield response


def _metrics(summary: Any) -> WriteMetrics:
    return WriteMetrics(
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
        object_store_requests=dict(summary.object_store_requests),
    )


def commit_result(payloads: Iterable[any_pb2.Any]) -> CommitResult | StagedCommit:
    """The :class:`CommitResult` of a ``WriteResponse`` stream (file actions, then a ``CommitSummary``),
    or the :class:`StagedCommit` of one that ends with a ``StagedCommit``.

    Raises:
        RuntimeError: the stream ended without a summary, or held another message type.
    """
    adds: list[AddFile] = []
    removes: list[RemoveFile] = []
    cdc: list[AddCDCFile] = []
    summary = None
    for response in unpacked(payloads, commands_pb2.WriteResponse):
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
        elif response.HasField("staged"):
            staged = response.staged
            return StagedCommit(
                id=staged.id or None,
                table_path=staged.table_path,
                read_version=staged.read_version,
                created_time=staged.created_time,
                expiration_time=staged.expiration_time,
                operation=staged.operation,
                add_files=adds,
                remove_files=removes,
                cdc_files=cdc,
                metrics=_metrics(staged.summary),
                protocol=json.loads(staged.protocol_json)["protocol"] if staged.HasField("protocol_json") else None,
                metadata=json.loads(staged.metadata_json)["metaData"] if staged.HasField("metadata_json") else None,
                staged_by=staged.staged_by if staged.HasField("staged_by") else None,
            )
    if summary is None:
        raise RuntimeError("the server finished the write without a commit summary")
    return CommitResult(
        version=summary.version,
        committed=summary.committed,
        table_path=summary.table_path,
        add_files=adds,
        remove_files=removes,
        metrics=_metrics(summary),
        cdc_files=cdc,
        operation_metrics=dict(summary.operation_metrics),
    )


def batch_result(payloads: Iterable[any_pb2.Any]) -> BatchResult:
    """The :class:`BatchResult` of a ``WriteBatchResponse`` stream (file statuses, then a ``BatchSummary``).

    Raises:
        RuntimeError: the stream ended without a summary, its file count differs from the summary's,
            or it held another message type.
    """
    files: list[SinkFileStatus] = []
    summary = None
    for response in unpacked(payloads, sink_pb2.WriteBatchResponse):
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


def set_stage(command: Any, stage: object) -> None:
    """Check ``stage`` (False / None: commit; True: stage with the server's expiry;
    :class:`~filecommit.results.Stage`: stage with its expiry) and set ``command.stage``.

    Raises:
        pyspark.errors.PySparkTypeError: ``NOT_EXPECTED_TYPE`` for anything else.
        pyspark.errors.PySparkValueError: ``VALUE_OUT_OF_BOUNDS`` for an expiry <= 0.
    """
    if stage is None or stage is False:
        return
    if stage is True:
        command.stage.SetInParent()
        return
    if not isinstance(stage, Stage):
        _checks.type_error("stage", "a bool or a filecommit.Stage", stage)
    command.stage.SetInParent()
    if stage.expires_after_ms is not None:
        command.stage.expires_after_ms = _checks.int_in_range("expires_after_ms", stage.expires_after_ms, 1, 2**63 - 1)


def execute_commit(spark: SparkSession, command: Message) -> CommitResult | StagedCommit:
    """Send a table command (``WriteCommand``, ``SetTablePropertiesCommand``, ``DeleteCommand``,
    ``UpdateCommand``, ``MergeCommand``) and collect its :class:`CommitResult`.

    Raises:
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): the server's
            error; ``getCondition()`` is a class of :mod:`filecommit.errors`, or Spark's (analysis,
            task failures). Nothing was committed.
    """
    return commit_result(_connect.execute_extension_command(spark, command, reattachable=_reattachable(command)))


def execute_batch(spark: SparkSession, command: Message) -> BatchResult:
    """Send a ``WriteBatchCommand`` and collect its :class:`BatchResult`.

    Raises:
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): the server's
            error; the batch was not committed by this call.
    """
    return batch_result(_connect.execute_extension_command(spark, command, reattachable=_reattachable(command)))


def _reattachable(command: Any) -> bool:
    """False for a write whose ``input`` is a small local relation (rows shipped in the plan, see
    :func:`filecommit._connect.ships_small_rows`): the server answers it in milliseconds, so it runs
    as one ``ExecutePlan`` stream. Everything else (inputs read by Spark jobs, row-level commands
    that scan the table) keeps pyspark's reattachable execution, which survives a broken stream."""
    if "input" not in command.DESCRIPTOR.fields_by_name or not command.HasField("input"):
        return True
    return not _connect.ships_small_rows(command.input)
