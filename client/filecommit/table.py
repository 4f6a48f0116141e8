"""A Delta table handle: one object per table whose methods run the package's commands on it.

``filecommit.table(spark, "/data/t")`` (a path) or ``filecommit.table(spark, "db.t")`` (a table of
the server's catalog) returns a :class:`Table`, as delta-spark's ``DeltaTable.forPath`` /
``DeltaTable.forName`` and delta-rs's ``DeltaTable(uri)`` do. Every method delegates to the free
function of the same name (:func:`filecommit.write`, :func:`filecommit.delete`, ...) with the
table's ``path`` or ``table`` argument filled in, so results, errors and wire messages are the same;
the method takes that function's other arguments in the same order. No command is sent when the
handle is made: an unknown table fails at the first method that reaches the server
(``DELTA_TABLE_NOT_FOUND`` / ``DELTA_MISSING_DELTA_TABLE``).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, overload

from filecommit import _checks, maintenance, rowlevel, staging, writer
from filecommit._typing import ColumnOrSql, PartitionBy, SaveMode, StrMap, WriteTxn
from filecommit.history import Commit
from filecommit.history import history as _history
from filecommit.results import CommitResult, Stage, StagedCommit, VacuumResult
from filecommit.rowlevel import MergeBuilder
from filecommit.staging import StagedRef

if TYPE_CHECKING:
    from pyspark.sql.dataframe import DataFrame

    from filecommit._typing import AnySparkSession as SparkSession

Timestamp = str | datetime.datetime | datetime.date
"""A point in time: a str in the server session's time zone, or a ``datetime`` / ``date``."""


def _looks_like_path(value: str) -> bool:
    """A str with a ``/``, a ``\\`` or a URI scheme (``file:``, ``s3a:``, ...) is a path; else a name."""
    if "/" in value or "\\" in value:
        return True
    scheme, sep, _ = value.partition(":")
    return bool(sep) and scheme.replace("+", "").replace("-", "").replace(".", "").isalnum()


def _quoted(name: str) -> str:
    """A multi-part catalog name (``db.t``) with each part in backquotes, for SQL text."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in name.split("."))


class Table:
    """A handle on one Delta table, by path or by catalog name; mirrors delta-spark's ``DeltaTable``
    (``forPath`` / ``forName``, ``delete``, ``update``, ``merge``, ``optimize``, ``vacuum``,
    ``restoreToVersion``, ``history``, ``toDF``) and delta-rs's ``DeltaTable``.

    Make it with :func:`filecommit.table`, :meth:`for_path` or :meth:`for_name`. The handle holds no
    snapshot: every call sees the table's latest version on the server.

    Attributes:
        spark: the Spark Connect session the commands run in.
        path: table root as the server sees it, or None for a handle by name.
        name: the catalog table name (``"db.t"``), or None for a handle by path.
    """

    def __init__(self, spark: SparkSession, path: str | None = None, name: str | None = None) -> None:
        """Use :func:`filecommit.table`, :meth:`for_path` or :meth:`for_name`.

        Raises:
            pyspark.errors.PySparkValueError: ``VALUE_NOT_NON_EMPTY_STR`` for an empty, non-str or
                missing path or name, ``CANNOT_SET_TOGETHER`` when both are given.
        """
        p, t = _checks.path_or_table(path, name)
        self.spark = spark
        self.path: str | None = p or None
        self.name: str | None = t or None

    @classmethod
    def for_path(cls, spark: SparkSession, path: str) -> Table:
        """The table at ``path`` (delta-spark's ``DeltaTable.forPath``); the path is not checked here.

        Raises:
            pyspark.errors.PySparkValueError: ``VALUE_NOT_NON_EMPTY_STR`` for an empty or non-str path.
        """
        return cls(spark, path=path)

    @classmethod
    def for_name(cls, spark: SparkSession, name: str) -> Table:
        """The catalog table ``name`` (``"db.t"``; delta-spark's ``DeltaTable.forName``), resolved on
        the server at each call.

        Raises:
            pyspark.errors.PySparkValueError: ``VALUE_NOT_NON_EMPTY_STR`` for an empty or non-str name.
        """
        return cls(spark, name=name)

    def __repr__(self) -> str:
        """``Table(path='/data/t')`` or ``Table(name='db.t')``."""
        return f"Table(path={self.path!r})" if self.path is not None else f"Table(name={self.name!r})"

    # -- writes -------------------------------------------------------------------------------

    @overload
    def write(
        self,
        df: DataFrame,
        *,
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
        self,
        df: DataFrame,
        *,
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
        self,
        df: DataFrame,
        *,
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
        self,
        df: DataFrame,
        *,
        mode: SaveMode = "append",
        partition_by: PartitionBy = None,
        options: StrMap | None = None,
        table_properties: StrMap | None = None,
        change_data: bool = False,
        txn: WriteTxn | None = None,
        stage: bool | Stage = False,
        cluster_by: PartitionBy = None,
    ) -> CommitResult | StagedCommit:
        """Write ``df`` into this table as one version: :func:`filecommit.write` (arguments, result
        and errors as there; delta-spark's ``df.write.format("delta").save(path)``, delta-rs's
        ``write_deltalake``). A handle by name writes to an existing catalog table.

        Returns:
            CommitResult; with ``stage=True`` or a :class:`~filecommit.Stage`, the StagedCommit.

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments,
                before anything is sent.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error
                (:mod:`filecommit.errors`), as for :func:`filecommit.write`.
        """
        return writer.write(
            df, self.path, table=self.name, mode=mode, partition_by=partition_by, options=options,
            table_properties=table_properties, change_data=change_data, txn=txn, stage=stage,
            cluster_by=cluster_by,
        )

    @overload
    def set_table_properties(
        self, properties: StrMap, *, txn: WriteTxn | None = ..., stage: Literal[False] = ...
    ) -> CommitResult: ...
    @overload
    def set_table_properties(
        self, properties: StrMap, *, txn: WriteTxn | None = ..., stage: Literal[True] | Stage
    ) -> StagedCommit: ...
    @overload
    def set_table_properties(
        self, properties: StrMap, *, txn: WriteTxn | None = ..., stage: bool | Stage = ...
    ) -> CommitResult | StagedCommit: ...
    def set_table_properties(
        self, properties: StrMap, *, txn: WriteTxn | None = None, stage: bool | Stage = False
    ) -> CommitResult | StagedCommit:
        """Set table properties in a metadata-only commit: :func:`filecommit.set_table_properties`
        (``ALTER TABLE ... SET TBLPROPERTIES``; delta-rs's ``DeltaTable.alter.set_table_properties``).

        Returns:
            CommitResult (no file actions); with ``stage``, the StagedCommit.

        Raises:
            pyspark.errors.PySparkValueError: ``CANNOT_BE_EMPTY`` for no properties, a bad txn.
            pyspark.errors.PySparkTypeError: properties not a str -> str map.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.set_table_properties`.
        """
        return writer.set_table_properties(self.spark, self.path, properties, table=self.name, txn=txn, stage=stage)

    # -- row-level changes ----------------------------------------------------------------------

    @overload
    def delete(
        self, condition: ColumnOrSql | None = ..., *, options: StrMap | None = ..., txn: WriteTxn | None = ...,
        stage: Literal[False] = ...,
    ) -> CommitResult: ...
    @overload
    def delete(
        self, condition: ColumnOrSql | None = ..., *, options: StrMap | None = ..., txn: WriteTxn | None = ...,
        stage: Literal[True] | Stage,
    ) -> StagedCommit: ...
    @overload
    def delete(
        self, condition: ColumnOrSql | None = ..., *, options: StrMap | None = ..., txn: WriteTxn | None = ...,
        stage: bool | Stage = ...,
    ) -> CommitResult | StagedCommit: ...
    def delete(
        self, condition: ColumnOrSql | None = None, *, options: StrMap | None = None, txn: WriteTxn | None = None,
        stage: bool | Stage = False,
    ) -> CommitResult | StagedCommit:
        """Delete the rows matching ``condition`` (None: every row) as one version:
        :func:`filecommit.delete` (delta-spark's / delta-rs's ``DeltaTable.delete``).

        Returns:
            CommitResult with ``metrics.num_deleted_rows``; with ``stage``, the StagedCommit.

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments,
                before anything is sent.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.delete`.
        """
        return rowlevel.delete(self.spark, self.path, condition, table=self.name, options=options, txn=txn, stage=stage)

    @overload
    def update(
        self, set: Mapping[str, ColumnOrSql], condition: ColumnOrSql | None = ..., *,
        options: StrMap | None = ..., txn: WriteTxn | None = ..., stage: Literal[False] = ...,
    ) -> CommitResult: ...
    @overload
    def update(
        self, set: Mapping[str, ColumnOrSql], condition: ColumnOrSql | None = ..., *,
        options: StrMap | None = ..., txn: WriteTxn | None = ..., stage: Literal[True] | Stage,
    ) -> StagedCommit: ...
    @overload
    def update(
        self, set: Mapping[str, ColumnOrSql], condition: ColumnOrSql | None = ..., *,
        options: StrMap | None = ..., txn: WriteTxn | None = ..., stage: bool | Stage = ...,
    ) -> CommitResult | StagedCommit: ...
    def update(
        self, set: Mapping[str, ColumnOrSql], condition: ColumnOrSql | None = None, *,
        options: StrMap | None = None, txn: WriteTxn | None = None, stage: bool | Stage = False,
    ) -> CommitResult | StagedCommit:
        """Set columns (``{"v": "v + 1"}``, SQL or Column values) of the rows matching ``condition``
        (None: every row) as one version: :func:`filecommit.update` (delta-spark's
        ``DeltaTable.update(condition, set)``, delta-rs's ``DeltaTable.update(updates, predicate)``).

        Returns:
            CommitResult with ``metrics.num_updated_rows``; with ``stage``, the StagedCommit.

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments
                (``CANNOT_BE_EMPTY`` for no assignment), before anything is sent.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.update`.
        """
        return rowlevel.update(
            self.spark, self.path, set, condition, table=self.name, options=options, txn=txn, stage=stage
        )

    def merge(
        self, source: DataFrame, on: ColumnOrSql, *, source_alias: str | None = None, target_alias: str = "target"
    ) -> MergeBuilder:
        """Start a MERGE of ``source`` into this table: :func:`filecommit.merge` (delta-spark's
        ``DeltaTable.merge(source, condition)``, delta-rs's ``DeltaTable.merge``); add clauses and
        call ``execute()`` (typed :class:`~filecommit.CommitResult`, or StagedCommit with ``stage``).

        Returns:
            A :class:`~filecommit.MergeBuilder`.

        Raises:
            pyspark.errors.PySparkValueError: an empty ``on`` or alias, equal aliases.
            pyspark.errors.PySparkTypeError: a non-Connect DataFrame, an ``on`` neither str nor Column.
        """
        return rowlevel.merge(source, self.path, on, table=self.name, source_alias=source_alias,
                              target_alias=target_alias)

    # -- maintenance ------------------------------------------------------------------------------

    def optimize(
        self,
        where: str | Iterable[str] | None = None,
        target_file_size: int | None = None,
        zorder_by: str | Iterable[str] | None = None,
    ) -> CommitResult:
        """Compact small files (optionally Z-order or cluster them) in one commit:
        :func:`filecommit.optimize` (delta-spark's ``DeltaTable.optimize().executeCompaction()`` /
        ``executeZOrderBy``, delta-rs's ``DeltaTable.optimize.compact`` / ``z_order``).

        Args:
            where: partition predicates (SQL over partition columns) limiting the files compacted.
            target_file_size: target file size, bytes.
            zorder_by: columns to Z-order by.

        Returns:
            CommitResult with ``operation_metrics`` (``numAddedFiles``, ``numRemovedFiles``, sizes in bytes).

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.optimize`.
        """
        return maintenance.optimize(self.spark, self.path, where, target_file_size, zorder_by, table=self.name)

    def vacuum(self, retention_hours: float | None = None, dry_run: bool = False) -> VacuumResult:
        """Delete files no longer referenced by the table and older than the retention:
        :func:`filecommit.vacuum` (delta-spark's ``DeltaTable.vacuum(retentionHours)``, delta-rs's
        ``DeltaTable.vacuum(retention_hours, dry_run)``).

        Args:
            retention_hours: retention in hours (None: the table's ``delta.deletedFileRetentionDuration``).
            dry_run: list the files without deleting them.

        Returns:
            VacuumResult: ``files`` (URIs), ``num_files``, ``num_bytes`` (bytes).

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.vacuum`.
        """
        return maintenance.vacuum(self.spark, self.path, table=self.name, retention_hours=retention_hours,
                                  dry_run=dry_run)

    def restore(self, version: int | None = None, timestamp: Timestamp | None = None) -> CommitResult:
        """Bring the table back to an earlier version or timestamp in one ``RESTORE`` commit:
        :func:`filecommit.restore` (delta-spark's ``DeltaTable.restoreToVersion`` /
        ``restoreToTimestamp``, delta-rs's ``DeltaTable.restore``). Exactly one of the two.

        Returns:
            CommitResult with ``operation_metrics`` (``numRestoredFiles``, ...).

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: neither or both given,
                a negative version.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.restore`.
        """
        return maintenance.restore(self.spark, self.path, version, timestamp, table=self.name)

    # -- reads -------------------------------------------------------------------------------------

    def history(self, limit: int | None = None) -> list[Commit]:
        """The table's commits, newest first: :func:`filecommit.history` (delta-spark's
        ``DeltaTable.history(limit)``, delta-rs's ``DeltaTable.history(limit)``).

        Returns:
            list of :class:`~filecommit.Commit` (``timestamp`` a naive ``datetime`` in the session's time zone).

        Raises:
            pyspark.errors.PySparkValueError: a limit below 1.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.history`.
        """
        return _history(self.spark, self.path, limit, table=self.name)

    def to_df(self, version: int | None = None, timestamp: Timestamp | None = None) -> DataFrame:
        """The table's rows as a Spark Connect DataFrame, at the latest version or, with time travel,
        at ``version`` or at the latest version committed at or before ``timestamp`` (delta-spark's
        ``DeltaTable.toDF()`` and the ``versionAsOf`` / ``timestampAsOf`` read options, delta-rs's
        ``DeltaTable(uri, version=...).to_pyarrow_table()``).

        A handle by path reads with ``spark.read.format("filecommit")`` (docs/reading.md); a handle
        by name with ``spark.table(name)`` or ``SELECT * FROM name VERSION AS OF n`` /
        ``TIMESTAMP AS OF 'ts'``. The snapshot is fixed when the DataFrame is made.

        Raises:
            pyspark.errors.PySparkValueError: ``VALUE_NOT_ALLOWED`` for both ``version`` and
                ``timestamp``; ``NEGATIVE_VALUE`` for a negative version.
            pyspark.errors.PySparkTypeError: a version not an int, a timestamp not a str / datetime.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, e.g.
                ``DELTA_VERSION_NOT_FOUND``, ``DELTA_TIMESTAMP_GREATER_THAN_COMMIT``, an unknown table.
        """
        if version is not None and timestamp is not None:
            _checks.not_allowed("version", "None when timestamp is given (one of version and timestamp)")
        v = None if version is None else _checks.int64_at_least_zero("version", version)
        ts: str | None = None
        if timestamp is not None:
            if isinstance(timestamp, (datetime.datetime, datetime.date)):
                ts = str(timestamp)  # as filecommit.restore sends it
            else:
                ts = _checks.non_empty_str("timestamp", timestamp)
        if self.path is not None:
            reader = self.spark.read.format("filecommit")
            if v is not None:
                reader = reader.option("versionAsOf", v)
            if ts is not None:
                reader = reader.option("timestampAsOf", ts)
            return reader.load(self.path)
        assert self.name is not None
        if v is None and ts is None:
            return self.spark.table(self.name)
        clause = f"VERSION AS OF {v}" if v is not None else "TIMESTAMP AS OF '" + str(ts).replace("'", "''") + "'"
        return self.spark.sql(f"SELECT * FROM {_quoted(self.name)} {clause}")

    # -- staged commits ------------------------------------------------------------------------

    def stage(
        self,
        files: Sequence[str | tuple[str, Mapping[str, str | None]]],
        *,
        txn: WriteTxn | None = None,
        stage: bool | Stage = True,
    ) -> StagedCommit:
        """Stage Parquet files already under the table root as one staged commit:
        :func:`filecommit.stage_files` (delta-rs's ``create_write_transaction`` with
        ``add`` actions, held back); publish with :meth:`commit`.

        Returns:
            The StagedCommit.

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.stage_files`.
        """
        return staging.stage_files(self.spark, self.path, files, txn=txn, stage=stage, table=self.name)

    def commit(self, staged: StagedRef | Sequence[StagedRef], *, txn: WriteTxn | None = None) -> CommitResult:
        """Publish one or several staged commits of this table as one version: :func:`filecommit.commit`.

        Returns:
            CommitResult of the version.

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: no or malformed ids.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error (an
                unknown, expired or conflicting staged commit), as for :func:`filecommit.commit`.
        """
        return staging.commit(self.spark, self.path, staged, txn=txn, table=self.name)

    def abort(self, staged: StagedRef | Sequence[StagedRef]) -> int:
        """Delete staged commits of this table and their files: :func:`filecommit.abort`.

        Returns:
            How many staged commits were aborted.

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: no or malformed ids.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.abort`.
        """
        return staging.abort(self.spark, self.path, staged, table=self.name)

    def get_staged(self, staged_id: str) -> StagedCommit:
        """A staged commit of this table by id: :func:`filecommit.get_staged`.

        Raises:
            pyspark.errors.PySparkValueError: an empty id.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: an unknown id, as for
                :func:`filecommit.get_staged`.
        """
        return staging.get_staged(self.spark, self.path, staged_id, table=self.name)

    def read_staged(self, staged: StagedRef | Sequence[StagedRef], *, table_after: bool = False) -> DataFrame:
        """The rows of staged commits (or, with ``table_after``, the table as publishing them would
        leave it) for an audit: :func:`filecommit.read_staged`.

        Raises:
            pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: no or malformed ids.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException: the server's error, as for
                :func:`filecommit.read_staged`.
        """
        return staging.read_staged(self.spark, self.path, staged, table_after=table_after, table=self.name)


def table(spark: SparkSession, path_or_name: str) -> Table:
    """A :class:`Table` handle on the Delta table at a path or of a catalog name (delta-spark's
    ``DeltaTable.forPath`` / ``forName``, delta-rs's ``DeltaTable(uri)``).

    ``path_or_name`` with a ``/`` (or ``\\``) or a URI scheme (``file:``, ``s3a://``, ...) is a path
    as the server sees it; anything else (``"t"``, ``"db.t"``, ``"catalog.db.t"``) is a table name of
    the server's catalog. Use :meth:`Table.for_path` for a relative path without ``/``.

    Raises:
        pyspark.errors.PySparkValueError: ``VALUE_NOT_NON_EMPTY_STR`` for an empty str or a value
            that is not a str (as the package's other path and name checks).
    """
    value = _checks.non_empty_str("path_or_name", path_or_name)
    return Table.for_path(spark, value) if _looks_like_path(value) else Table.for_name(spark, value)
