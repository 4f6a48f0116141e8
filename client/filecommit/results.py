"""What the commands return: :class:`CommitResult` with its :class:`WriteMetrics` (Delta tables)
and :class:`BatchResult` with its :class:`SinkFileStatus` entries (batch-id file sinks).

Sizes are bytes; times are milliseconds (durations) or milliseconds since the Unix epoch.
``filecommit._wire`` builds them from the server's responses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from filecommit.actions import AddCDCFile, AddFile, RemoveFile
from filecommit.proto.v1 import sink_pb2


@dataclass(frozen=True)
class WriteMetrics:
    """Counters of one commit, from the server's commit summary (``filecommit.v1.CommitSummary``).

    The counters are named as Delta's operation metrics (``commitInfo.operationMetrics``, delta-spark's
    ``DeltaOperationMetrics``) in snake case: :attr:`num_output_rows`, :attr:`num_files`,
    :attr:`num_output_bytes`, :attr:`num_removed_files`, :attr:`num_added_change_files`,
    ``num_deleted_rows``, ``num_updated_rows``, ``num_inserted_rows``, ``num_copied_rows``. The
    fields ``rows``, ``files``, ``bytes``, ``removed_files`` and ``cdc_files`` hold the same values
    under their earlier names; they are deprecated aliases, kept so existing code works.

    Attributes:
        rows: deprecated alias of :attr:`num_output_rows`.
        files: deprecated alias of :attr:`num_files`.
        bytes: deprecated alias of :attr:`num_output_bytes`.
        removed_files: deprecated alias of :attr:`num_removed_files`.
        duration_ms: server-side wall time of write and commit, ms.
        attempts: commit attempts (1 + retries after losing a version race without conflict).
        cdc_files: deprecated alias of :attr:`num_added_change_files`.
        num_deleted_rows: rows deleted by ``delete`` / ``merge`` (0 for other commands).
        num_updated_rows: rows updated by ``update`` / ``merge``.
        num_inserted_rows: rows inserted by ``merge``.
        num_copied_rows: unchanged rows copied from rewritten files into new files.
        object_store_requests: object-store requests the command made on the server, by Hadoop
            IOStatistics counter name (S3A: ``object_put_request``, ``object_list_request``,
            ``object_metadata_request`` (HEAD), ``action_http_get_request`` (GET), ...); counted in
            the server's JVM, including other commands on the same bucket at the same time; empty
            on the local file system.
    """

    rows: int
    files: int
    bytes: int
    removed_files: int
    duration_ms: int
    attempts: int
    cdc_files: int = 0
    num_deleted_rows: int = 0
    num_updated_rows: int = 0
    num_inserted_rows: int = 0
    num_copied_rows: int = 0
    object_store_requests: dict[str, int] = field(default_factory=dict)

    @property
    def num_output_rows(self) -> int:
        """Rows written to data files (Delta's ``numOutputRows``)."""
        return self.rows

    @property
    def num_files(self) -> int:
        """Data files added (Delta's ``numFiles`` of a write; ``numAddedFiles`` of DELETE / UPDATE / MERGE)."""
        return self.files

    @property
    def num_output_bytes(self) -> int:
        """Bytes of the data files added (Delta's ``numOutputBytes``)."""
        return self.bytes

    @property
    def num_removed_files(self) -> int:
        """Files removed by an overwrite, DELETE, UPDATE or MERGE (Delta's ``numRemovedFiles``)."""
        return self.removed_files

    @property
    def num_added_change_files(self) -> int:
        """Change-data files added (Delta's ``numAddedChangeFiles``)."""
        return self.cdc_files


@dataclass(frozen=True)
class CommitResult:
    """What ``write``, ``set_table_properties``, ``delete``, ``update`` or ``merge`` committed: one
    Delta table version and its file actions (PROTOCOL.md "Actions").

    Attributes:
        version: the table version committed (when ``committed`` is False: the table's current
            version).
        committed: False when nothing was committed: mode "ignore" on an existing table,
            properties already set, no row matched, or a ``txn`` whose version the table already
            has for its app id (the table's latest txn version for the app id is >= the write's).
        table_path: fully qualified table root as the server resolved it.
        add_files: the AddFiles of the commit.
        remove_files: the RemoveFiles of the commit.
        metrics: counters.
        cdc_files: the AddCDCFiles of the commit (``change_data=True``, or row-level changes on a
            table with the change data feed on).
        operation_metrics: the commit's ``commitInfo.operationMetrics`` with Delta's names for
            ``optimize`` (``numAddedFiles``, ``numRemovedFiles``, ``numAddedBytes``,
            ``numRemovedBytes``, ``minFileSize``, ``p25FileSize``, ``p50FileSize``,
            ``p75FileSize``, ``maxFileSize``, ``numDeletionVectorsRemoved``; sizes in bytes) and
            ``restore`` (``numRestoredFiles``, ``restoredFilesSize``, ``numRemovedFiles``,
            ``removedFilesSize``, ``numOfFilesAfterRestore``, ``tableSizeAfterRestore``); values
            are decimal strings. Empty for other commands.
    """

    version: int
    committed: bool
    table_path: str
    add_files: list[AddFile]
    remove_files: list[RemoveFile]
    metrics: WriteMetrics
    cdc_files: list[AddCDCFile] = field(default_factory=list)
    operation_metrics: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SinkFileStatus:
    """One entry of a file sink's log: Spark's ``SinkFileStatus``, a JSON line of
    ``_spark_metadata/<batch id>`` (Spark's ``FileStreamSinkLog``).

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
    def from_proto(cls, message: sink_pb2.SinkFileStatus) -> SinkFileStatus:
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


@dataclass(frozen=True)
class BatchResult:
    """Outcome of ``write_batch``: one batch of a file sink's log.

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

    @property
    def num_files(self) -> int:
        """How many files ``files`` lists."""
        return len(self.files)


@dataclass(frozen=True)
class Stage:
    """Stage a command's commit instead of committing it (``stage=Stage(...)`` or ``stage=True``).

    Attributes:
        expires_after_ms: how long the staged commit may be published, ms (> 0, at most the
            server's ``spark.filecommit.staging.expiration``, default 24 h); None: the server's
            setting. After it the server deletes the staged files and refuses to publish.
    """

    expires_after_ms: int | None = None


@dataclass(frozen=True)
class StagedCommit:
    """A commit held back (contract ``filecommit.v1.StagedCommit``): its files are written under the
    table root, nothing is in ``_delta_log`` until :func:`filecommit.commit` publishes it.

    Attributes:
        id: server-issued id (a UUID str) to publish, read or abort it from any client; None when
            nothing was staged (the command had nothing to commit, as a ``CommitResult`` with
            ``committed=False``).
        table_path: fully qualified table root.
        read_version: the table version the command read (-1: it creates the table); the publish
            checks Delta's conflict rules against every later version.
        created_time: when it was staged, ms since the Unix epoch (0 when nothing was staged).
        expiration_time: when it expires, ms since the Unix epoch (0 when nothing was staged).
        operation: the ``commitInfo.operation`` it will record (``WRITE``, ``DELETE``, ...).
        add_files: the AddFiles it will commit.
        remove_files: the RemoveFiles it will commit.
        cdc_files: the AddCDCFiles it will commit.
        metrics: counters as for a commit (``attempts`` 0).
        protocol: the Delta ``protocol`` action it will commit (the log's JSON object), or None.
        metadata: the Delta ``metaData`` action it will commit (the log's JSON object), or None.
        staged_by: the verified principal that staged it, or None when the server authenticates
            no one (``docs/sharing.md``).
    """

    id: str | None
    table_path: str
    read_version: int
    created_time: int
    expiration_time: int
    operation: str
    add_files: list[AddFile]
    remove_files: list[RemoveFile]
    cdc_files: list[AddCDCFile]
    metrics: WriteMetrics
    protocol: dict[str, object] | None = None
    metadata: dict[str, object] | None = None
    staged_by: str | None = None


@dataclass(frozen=True)
class VacuumResult:
    """What :func:`filecommit.vacuum` deleted, or would delete with ``dry_run=True``.

    Attributes:
        files: absolute URIs of the files, sorted.
        dry_run: True when nothing was deleted.
        num_bytes: their total size, bytes (Delta's ``sizeOfDataToDelete``).
        table_path: fully qualified table root.
        object_store_requests: object-store requests of the VACUUM, as
            :attr:`WriteMetrics.object_store_requests`.
    """

    files: list[str]
    dry_run: bool
    num_bytes: int
    table_path: str
    object_store_requests: dict[str, int] = field(default_factory=dict)

    @property
    def num_files(self) -> int:
        """How many files ``files`` lists (Delta's ``numDeletedFiles`` / ``numFilesToDelete``)."""
        return len(self.files)

