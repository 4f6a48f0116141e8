"""The file actions of a commit, as the server returns them (contract proto/filecommit/v1).

They mirror Delta's ``add``, ``remove`` and ``cdc`` actions and deletion vector descriptors
(PROTOCOL.md "Add File and Remove File", "Add CDC File", "Deletion Vector Descriptor Schema").
Paths are relative to the table root and URI-encoded exactly as in the Delta log; sizes are bytes;
times are milliseconds since the Unix epoch. Partition values are strings, ``None`` for SQL NULL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from filecommit.proto.v1 import commands_pb2 as pb


def _partition_values(values: Iterable[Any]) -> dict[str, str | None]:
    return {v.column: (v.value if v.HasField("value") else None) for v in values}


@dataclass(frozen=True)
class DeletionVector:
    """Delta deletion vector descriptor (protocol "Deletion Vector Descriptor Schema"): the rows of a
    data file that are not in the table.

    Attributes:
        storage_type: "u" (file under the table root named from a UUID), "i" (inline) or "p" (absolute path).
        path_or_inline_dv: Z85-encoded UUID with optional random prefix, inline bitmap, or path.
        offset: byte offset of the DV in its file; None for inline DVs.
        size_in_bytes: size of the serialized DV in bytes.
        cardinality: number of rows deleted.
    """

    storage_type: str
    path_or_inline_dv: str
    offset: int | None
    size_in_bytes: int
    cardinality: int

    @classmethod
    def from_proto(cls, m: pb.DeletionVectorDescriptor) -> DeletionVector:
        """Build from a ``filecommit.v1.DeletionVectorDescriptor`` message."""
        return cls(
            storage_type=m.storage_type,
            path_or_inline_dv=m.path_or_inline_dv,
            offset=m.offset if m.HasField("offset") else None,
            size_in_bytes=m.size_in_bytes,
            cardinality=m.cardinality,
        )


def _dv(m: Any) -> DeletionVector | None:
    return DeletionVector.from_proto(m.deletion_vector) if m.HasField("deletion_vector") else None


@dataclass(frozen=True)
class AddFile:
    """Delta ``add`` action: a data file that became part of the table.

    Attributes:
        path: relative, URI-encoded path under the table root.
        partition_values: column -> string value (``None`` = NULL); ``{}`` if unpartitioned.
        size: file size in bytes.
        modification_time: ms since the Unix epoch.
        data_change: True for files written by a write command.
        stats: statistics JSON string (numRecords, minValues, maxValues, nullCount) or None.
        tags: string tags.
        deletion_vector: the file's deletion vector (rows not in the table), or None.
    """

    path: str
    partition_values: dict[str, str | None]
    size: int
    modification_time: int
    data_change: bool
    stats: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    deletion_vector: DeletionVector | None = None

    @classmethod
    def from_proto(cls, m: pb.AddFile) -> AddFile:
        """Build from a ``filecommit.v1.AddFile`` message."""
        return cls(
            path=m.path,
            partition_values=_partition_values(m.partition_values),
            size=m.size,
            modification_time=m.modification_time,
            data_change=m.data_change,
            stats=m.stats if m.HasField("stats") else None,
            tags=dict(m.tags),
            deletion_vector=_dv(m),
        )


@dataclass(frozen=True)
class RemoveFile:
    """Delta ``remove`` action: a data file that left the table (e.g. on overwrite).

    Attributes:
        path: relative, URI-encoded path (equal to the removed ``add`` path).
        deletion_timestamp: ms since the Unix epoch.
        data_change: True when the removal changes the table's data.
        extended_file_metadata: True when partition_values and size are present.
        partition_values: partition values of the removed file.
        size: size in bytes, or None when unknown.
        deletion_vector: the deletion vector of the removed (file, DV) pair, or None.
    """

    path: str
    deletion_timestamp: int
    data_change: bool
    extended_file_metadata: bool
    partition_values: dict[str, str | None]
    size: int | None = None
    deletion_vector: DeletionVector | None = None

    @classmethod
    def from_proto(cls, m: pb.RemoveFile) -> RemoveFile:
        """Build from a ``filecommit.v1.RemoveFile`` message."""
        return cls(
            path=m.path,
            deletion_timestamp=m.deletion_timestamp,
            data_change=m.data_change,
            extended_file_metadata=m.extended_file_metadata,
            partition_values=_partition_values(m.partition_values),
            size=m.size if m.HasField("size") else None,
            deletion_vector=_dv(m),
        )


@dataclass(frozen=True)
class AddCDCFile:
    """Delta ``cdc`` action: a change-data file under ``_change_data/`` whose rows carry
    ``_change_type`` (insert | update_preimage | update_postimage | delete). dataChange is false.

    Attributes:
        path: relative, URI-encoded path under the table root (starts with ``_change_data/``).
        partition_values: column -> string value (``None`` = NULL), without ``__is_cdc``.
        size: file size in bytes.
        tags: string tags.
    """

    path: str
    partition_values: dict[str, str | None]
    size: int
    tags: dict[str, str] = field(default_factory=dict)
    data_change: bool = False

    @classmethod
    def from_proto(cls, m: pb.AddCDCFile) -> AddCDCFile:
        """Build from a ``filecommit.v1.AddCDCFile`` message."""
        return cls(
            path=m.path,
            partition_values=_partition_values(m.partition_values),
            size=m.size,
            tags=dict(m.tags),
        )
