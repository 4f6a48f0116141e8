"""``filecommit.write``: a transactional Delta write of a Spark Connect DataFrame.

Follows the foundation contract (proto/filecommit/v1/commands.proto, ``WriteCommand``): the
DataFrame's plan, path, save mode, partition columns, writer options and table properties go to the
server plugin, which writes Parquet files through Spark's writer with DelayedCommitProtocol and
commits one Delta version; the committed file actions stream back.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional

from filecommit import _connect
from filecommit.actions import AddCDCFile, AddFile, CommitResult, RemoveFile, WriteMetrics
from filecommit.proto.v1 import commands_pb2 as pb

_MODES = {
    "append": pb.SAVE_MODE_APPEND,
    "overwrite": pb.SAVE_MODE_OVERWRITE,
    "error": pb.SAVE_MODE_ERROR_IF_EXISTS,
    "errorifexists": pb.SAVE_MODE_ERROR_IF_EXISTS,
    "ignore": pb.SAVE_MODE_IGNORE,
}


def _string_map(name: str, value: Optional[Mapping[str, object]]) -> Dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of str to str, got {type(value).__name__}")
    out = {}
    for k, v in value.items():
        if not isinstance(k, str):
            raise TypeError(f"{name} keys must be str, got {k!r}")
        if isinstance(v, bool):
            v = "true" if v else "false"
        if not isinstance(v, (str, int, float)):
            raise TypeError(f"{name}[{k!r}] must be a string, got {v!r}")
        out[k] = str(v)
    return out


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def _check_path(path: object) -> str:
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"path must be a non-empty string, got {path!r}")
    return path


def _unpacked(payloads, message_type):
    """Each extension payload (``google.protobuf.Any``) unpacked as ``message_type``.

    Raises:
        RuntimeError: a payload of another type (a server that speaks another contract version).
    """
    for payload in payloads:
        response = message_type()
        if not payload.Unpack(response):
            raise RuntimeError(f"unexpected response type from the server: {payload.type_url}")
        yield response


def _partition_columns(partition_by: Optional[Iterable[str]]) -> List[str]:
    if partition_by is None:
        return []
    if isinstance(partition_by, str):
        return [partition_by]
    cols = list(partition_by)
    for c in cols:
        if not isinstance(c, str) or not c:
            raise ValueError(f"partition_by must hold non-empty column names, got {c!r}")
    return cols


def build_write_command(
    df,
    path: str,
    *,
    mode: str = "append",
    partition_by: Optional[Iterable[str]] = None,
    options: Optional[Mapping[str, object]] = None,
    table_properties: Optional[Mapping[str, object]] = None,
    change_data: bool = False,
) -> "pb.WriteCommand":
    """Validate the arguments of :func:`write` and build its ``WriteCommand`` message.

    Raises:
        ValueError: unknown mode, empty path, bad partition column names.
        TypeError: a non-Connect DataFrame, options / properties that are not str -> str maps, a
            non-bool change_data.
    """
    _check_path(path)
    if not isinstance(mode, str) or mode.lower() not in _MODES:
        raise ValueError(f"mode must be one of {sorted(_MODES)}, got {mode!r}")
    command = pb.WriteCommand(
        path=path,
        mode=_MODES[mode.lower()],
        partition_by=_partition_columns(partition_by),
        options=_string_map("options", options),
        table_properties=_string_map("table_properties", table_properties),
        change_data=_flag("change_data", change_data),
    )
    command.input.CopyFrom(_connect.relation_of(df))
    return command


def write(
    df,
    path: str,
    *,
    mode: str = "append",
    partition_by: Optional[Iterable[str]] = None,
    options: Optional[Mapping[str, object]] = None,
    table_properties: Optional[Mapping[str, object]] = None,
    change_data: bool = False,
) -> CommitResult:
    """Write a DataFrame into the Delta table at ``path`` as one new table version.

    Args:
        df: a Spark Connect DataFrame; its plan runs on the server.
        path: table root as the server sees it (local path, ``file:``, ``hdfs:``, ...).
        mode: "append" | "overwrite" | "error" (alias "errorifexists") | "ignore", as in Spark.
        partition_by: partition columns, in directory order (new tables; must match on append).
        options: writer options, e.g. ``{"maxRecordsPerFile": "100000", "compression": "zstd"}``,
            ``{"overwriteSchema": "true"}`` with mode "overwrite".
        table_properties: table properties for a new table (e.g. ``delta.randomizeFilePrefixes``,
            ``delta.enableChangeDataFeed``) or to add to an existing one.
        change_data: the input has a ``_change_type`` column: rows where it is set (insert,
            update_preimage, update_postimage, delete) are change records, written under
            ``_change_data/`` and returned as ``cdc_files``; the other rows are table data
            (stored without ``_change_type``). Needs ``delta.enableChangeDataFeed=true``.

    Returns:
        CommitResult with the committed version, AddFiles, AddCDCFiles, RemoveFiles and metrics.

    Raises:
        ValueError, TypeError: invalid arguments, before anything is sent.
        pyspark.errors.exceptions.connect.IllegalArgumentException: bad input found by the
            server (non-table directory, schema or partition mismatch, invalid table property).
        pyspark.errors.exceptions.connect.SparkConnectGrpcException: table exists in mode
            "error", conflicting concurrent commit; the message says which.
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
    )
    return _collect(_connect.execute_extension_command(df.sparkSession, command))


def _collect(payloads) -> CommitResult:
    adds: List[AddFile] = []
    removes: List[RemoveFile] = []
    cdc: List[AddCDCFile] = []
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
        ),
        cdc_files=cdc,
    )


def set_table_properties(spark, path: str, properties: Mapping[str, object]) -> CommitResult:
    """Set table properties on an existing Delta table in a metadata-only commit.

    E.g. ``set_table_properties(spark, path, {"delta.enableChangeDataFeed": "true"})`` enables
    the change data feed (and raises the table protocol to writer version 4).

    Args:
        spark: a Spark Connect session whose server has the plugin.
        path: table root as the server sees it.
        properties: str -> str properties to add or change (bools are written "true"/"false").

    Returns:
        CommitResult of the new version (no file actions); ``committed`` is False when the
        properties were already set.

    Raises:
        ValueError, TypeError: invalid arguments, before anything is sent.
        pyspark.errors.exceptions.connect.IllegalArgumentException: no table at ``path``, or an
            unknown / invalid ``delta.*`` property.
    """
    _check_path(path)
    props = _string_map("properties", properties)
    if not props:
        raise ValueError("properties must not be empty")
    command = pb.SetTablePropertiesCommand(path=path, properties=props)
    return _collect(_connect.execute_extension_command(spark, command))
