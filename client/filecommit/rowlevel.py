"""Row-level changes over Spark Connect: ``delete``, ``update`` and ``merge``.

Follows proto/filecommit/v1/rowlevel.proto (``DeleteCommand``, ``UpdateCommand``,
``MergeCommand``): conditions and values travel as Spark Connect expressions (SQL text or
``pyspark.sql.connect.functions`` columns), the server finds the files holding affected rows,
rewrites only those through Delta's transactional writer and commits ``remove`` + ``add`` (+ ``cdc``
change files when the table has the change data feed on) in one table version. The committed file
actions stream back as a :class:`~filecommit.CommitResult` whose ``metrics`` carry
``num_deleted_rows``, ``num_updated_rows``, ``num_inserted_rows`` and ``num_copied_rows``.

The merge builder follows delta-spark's ``DeltaMergeBuilder``::

    (filecommit.merge(updates, "/data/t", "target.id = source.id")
        .when_matched_update(set={"v": "source.v"})
        .when_not_matched_insert_all()
        .execute())
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

from filecommit import _checks, _wire
from filecommit._typing import ColumnOrSql, StrMap, WriteTxn
from filecommit.proto.v1 import rowlevel_pb2 as rl
from filecommit.results import CommitResult, Stage, StagedCommit

if TYPE_CHECKING:
    from pyspark.sql.dataframe import DataFrame

    from filecommit._typing import AnySparkSession as SparkSession


def _expression(spark: SparkSession, arg_name: str, value: object) -> Any:
    """The ``spark.connect.Expression`` of a SQL string or a Spark Connect column.

    Raises:
        pyspark.errors.PySparkValueError: ``VALUE_NOT_NON_EMPTY_STR`` for an empty string.
        pyspark.errors.PySparkTypeError: ``NOT_EXPECTED_TYPE`` for anything else.
    """
    from pyspark.sql.connect import functions as F
    from pyspark.sql.connect.column import Column

    if isinstance(value, str):
        value = F.expr(_checks.non_empty_str(arg_name, value))
    if not isinstance(value, Column):
        _checks.type_error(arg_name, "a SQL expression str or a Spark Connect Column", value)
    return value.to_plan(spark.client)


def _assignments(spark: SparkSession, arg_name: str, values: object) -> list[Any]:
    """Contract ``Assignment`` messages for a ``{column: value}`` mapping (at least one entry).

    Raises:
        pyspark.errors.PySparkValueError: ``CANNOT_BE_EMPTY`` for an empty mapping,
            ``VALUE_NOT_NON_EMPTY_STR`` for an empty column name or SQL string.
        pyspark.errors.PySparkTypeError: ``NOT_EXPECTED_TYPE`` for a non-mapping, a non-str column
            name or a value that is neither str nor Column.
    """
    if not isinstance(values, Mapping):
        _checks.type_error(arg_name, "a mapping of column name -> SQL str or Column", values)
    _checks.not_empty(f"assignment in `{arg_name}`", values)
    out = []
    for column, value in values.items():
        name = _checks.non_empty_str(f"column name in `{arg_name}`", column)
        out.append(rl.Assignment(column=name, value=_expression(spark, f"value of `{name}` in `{arg_name}`", value)))
    return out


@overload
def delete(
    spark: SparkSession,
    path: str | None = ...,
    condition: ColumnOrSql | None = ...,
    *,
    table: str | None = ...,
    options: StrMap | None = ...,
    txn: WriteTxn | None = ...,
    stage: Literal[False] = ...,
) -> CommitResult: ...
@overload
def delete(
    spark: SparkSession,
    path: str | None = ...,
    condition: ColumnOrSql | None = ...,
    *,
    table: str | None = ...,
    options: StrMap | None = ...,
    txn: WriteTxn | None = ...,
    stage: Literal[True] | Stage,
) -> StagedCommit: ...
@overload
def delete(
    spark: SparkSession,
    path: str | None = ...,
    condition: ColumnOrSql | None = ...,
    *,
    table: str | None = ...,
    options: StrMap | None = ...,
    txn: WriteTxn | None = ...,
    stage: bool | Stage = ...,
) -> CommitResult | StagedCommit: ...
def delete(
    spark: SparkSession,
    path: str | None = None,
    condition: ColumnOrSql | None = None,
    *,
    table: str | None = None,
    options: StrMap | None = None,
    txn: WriteTxn | None = None,
    stage: bool | Stage = False,
) -> CommitResult | StagedCommit:
    """Delete the rows of the Delta table at ``path`` that satisfy ``condition``, as one version.

    Follows rowlevel.proto ``DeleteCommand`` and delta-spark's ``DeleteCommand``: a condition on partition columns
    only (or none: every row) removes whole files without rewriting them; otherwise only the files
    holding matching rows are rewritten without them. With ``delta.enableChangeDataFeed=true`` the
    deleted rows are written as ``delete`` change rows. Rows where ``condition`` is NULL stay.

    Args:
        spark: a Spark Connect session whose server has the plugin.
        path: table root as the server sees it; the table must exist.
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (e.g. ``"db.t"``), resolved on the server to its location; give exactly one of ``path``
            and ``table`` (``CANNOT_SET_TOGETHER`` otherwise; ``DELTA_TABLE_NOT_FOUND`` from the server
            for an unknown name).
        condition: SQL string or Spark Connect column over the table's columns; None deletes
            every row.
        options: Spark Parquet writer options for rewritten files (str -> str).
        txn: ``(app_id, version)`` for an idempotent change, as in :func:`filecommit.write`.
        stage: stage the change instead of committing it (a :class:`~filecommit.StagedCommit`
            is returned), as in :func:`filecommit.write`.

    Returns:
        CommitResult: ``remove_files`` (every file that left the table), ``add_files`` (rewritten
        files), ``cdc_files``; ``metrics.num_deleted_rows`` and ``metrics.num_copied_rows``
        (unchanged rows moved into new files). ``committed`` is False when no row matched (and no
        ``txn`` was given) or ``txn`` was already applied.

    Raises:
        pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments,
            before anything is sent.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): the server's
            error, with ``getCondition()`` (:mod:`filecommit.errors`): ``DELTA_MISSING_DELTA_TABLE``,
            ``DELTA_CANNOT_MODIFY_APPEND_ONLY``, ``INVALID_NON_DETERMINISTIC_EXPRESSIONS``,
            Spark's ``UNRESOLVED_COLUMN...`` for an unknown column, conflict classes
            (``DELTA_CONCURRENT_DELETE_READ``, ...). Nothing is committed then.
    """
    path, table = _checks.path_or_table(path, table)
    command = rl.DeleteCommand(path=path, table=table, options=_checks.string_map("options", options))
    return _execute(spark, command, condition, txn, stage)


def _execute(
    spark: SparkSession, command: Any, condition: ColumnOrSql | None, txn: WriteTxn | None, stage: object
) -> CommitResult | StagedCommit:
    """Set ``condition``, ``txn`` and ``stage`` on a Delete/UpdateCommand, send it, collect the result."""
    if condition is not None:
        command.condition.CopyFrom(_expression(spark, "condition", condition))
    _wire.set_txn(command, txn)
    _wire.set_stage(command, stage)
    return _wire.execute_commit(spark, command)


@overload
def update(
    spark: SparkSession,
    path: str | None = ...,
    set: Mapping[str, ColumnOrSql] | None = ...,
    condition: ColumnOrSql | None = ...,
    *,
    table: str | None = ...,
    options: StrMap | None = ...,
    txn: WriteTxn | None = ...,
    stage: Literal[False] = ...,
) -> CommitResult: ...
@overload
def update(
    spark: SparkSession,
    path: str | None = ...,
    set: Mapping[str, ColumnOrSql] | None = ...,
    condition: ColumnOrSql | None = ...,
    *,
    table: str | None = ...,
    options: StrMap | None = ...,
    txn: WriteTxn | None = ...,
    stage: Literal[True] | Stage,
) -> StagedCommit: ...
@overload
def update(
    spark: SparkSession,
    path: str | None = ...,
    set: Mapping[str, ColumnOrSql] | None = ...,
    condition: ColumnOrSql | None = ...,
    *,
    table: str | None = ...,
    options: StrMap | None = ...,
    txn: WriteTxn | None = ...,
    stage: bool | Stage = ...,
) -> CommitResult | StagedCommit: ...
def update(
    spark: SparkSession,
    path: str | None = None,
    set: Mapping[str, ColumnOrSql] | None = None,
    condition: ColumnOrSql | None = None,
    *,
    table: str | None = None,
    options: StrMap | None = None,
    txn: WriteTxn | None = None,
    stage: bool | Stage = False,
) -> CommitResult | StagedCommit:
    """Update the rows of the Delta table at ``path`` that satisfy ``condition``, as one version.

    Follows rowlevel.proto ``UpdateCommand`` and delta-spark's ``UpdateCommand``: only files holding matching rows
    are rewritten; values are evaluated on the row before the update and cast to the column types;
    generated columns that are not assigned are computed from the new values; the table's
    constraints hold. With the change data feed on, every updated row gives an
    ``update_preimage`` and an ``update_postimage`` change row.

    Args:
        spark: a Spark Connect session whose server has the plugin.
        path: table root; the table must exist.
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (e.g. ``"db.t"``), resolved on the server to its location; give exactly one of ``path``
            and ``table`` (``CANNOT_SET_TOGETHER`` otherwise; ``DELTA_TABLE_NOT_FOUND`` from the server
            for an unknown name).
        set: ``{column: value}``, values SQL strings or Spark Connect columns; at least one.
        condition: SQL string or column; None updates every row. Rows where it is NULL stay.
        options: Spark Parquet writer options for rewritten files.
        txn: ``(app_id, version)`` for an idempotent change.
        stage: stage the change instead of committing it, as in :func:`filecommit.write`.

    Returns:
        CommitResult with ``metrics.num_updated_rows`` and ``metrics.num_copied_rows``;
        ``committed`` False when no row matched (and no ``txn``) or ``txn`` was already applied.

    Raises:
        pyspark.errors.PySparkValueError, pyspark.errors.PySparkTypeError: invalid arguments
            (``CANNOT_BE_EMPTY`` for no assignment), before anything is sent.
        pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): the server's
            error class, e.g. ``DELTA_MERGE_UNRESOLVED_EXPRESSION`` (unknown column in ``set``),
            ``DELTA_VIOLATE_CONSTRAINT_WITH_VALUES``, ``DELTA_NOT_NULL_CONSTRAINT_VIOLATED``,
            ``DELTA_CANNOT_MODIFY_APPEND_ONLY``, ``INVALID_NON_DETERMINISTIC_EXPRESSIONS``, conflict
            classes (:mod:`filecommit.errors`). Nothing is committed then.
    """
    path, table = _checks.path_or_table(path, table)
    command = rl.UpdateCommand(
        path=path,
        table=table,
        assignments=_assignments(spark, "set", set),
        options=_checks.string_map("options", options),
    )
    return _execute(spark, command, condition, txn, stage)


class MergeBuilder:
    """A MERGE being built: add WHEN clauses, then :meth:`execute` (delta-spark's ``DeltaMergeBuilder``).

    Clauses of one kind are tried in the order added; the first whose condition holds applies.
    Only the last clause of each kind (matched / not matched / not matched by source) may omit
    its condition (Delta's rule). Conditions and values are SQL strings or Spark Connect columns
    over ``<target_alias>.<column>`` and ``<source_alias>.<column>``.

    Every ``when_*`` method returns the builder and raises, before anything is sent,
    ``pyspark.errors.PySparkValueError`` (``CANNOT_BE_EMPTY`` for an empty ``set`` / ``values``,
    ``VALUE_NOT_NON_EMPTY_STR`` for an empty column name or SQL string) or
    ``pyspark.errors.PySparkTypeError`` (``NOT_EXPECTED_TYPE`` for a value that is neither str nor
    Column). Clause-order rules and unknown columns are checked by the server on ``execute()``.
    """

    def __init__(
        self, source: DataFrame, path: str, on: ColumnOrSql | None, source_alias: str | None, target_alias: str,
        table: str = "",
    ) -> None:
        """Use :func:`merge`; arguments as there (already checked; ``path`` or ``table`` is "")."""
        self._source = source
        self._spark: SparkSession = _wire.session_of(source)
        self._path = path
        self._table = table
        self._on = _expression(self._spark, "on", on)
        self._source_alias = source_alias
        self._target_alias = target_alias
        self._clauses: list[Any] = []
        self._schema_evolution = False

    def _add(
        self,
        kind: Any,
        condition: ColumnOrSql | None,
        values: Mapping[str, ColumnOrSql] | None = None,
        all_columns: bool = False,
        arg_name: str = "set",
    ) -> MergeBuilder:
        clause = rl.MergeClause(kind=kind, all_columns=all_columns)
        if condition is not None:
            clause.condition.CopyFrom(_expression(self._spark, "condition", condition))
        if values is not None:
            clause.assignments.extend(_assignments(self._spark, arg_name, values))
        self._clauses.append(clause)
        return self

    def with_schema_evolution(self) -> MergeBuilder:
        """Let the merge evolve the table schema (delta-spark's ``withSchemaEvolution``).

        Source columns the table lacks are added to it (appended, nullable; nested struct fields
        too, and widenings where the table sets ``delta.enableTypeWidening``) when an
        ``update_all`` / ``insert_all`` clause takes them, or when an assignment names a column the
        table lacks and the source has; rows that do not set them read NULL. Incompatible types
        fail on :meth:`execute` with ``DELTA_FAILED_TO_MERGE_FIELDS``.
        """
        self._schema_evolution = True
        return self

    def when_matched_update(self, set: Mapping[str, ColumnOrSql], condition: ColumnOrSql | None = None) -> MergeBuilder:
        """WHEN MATCHED [AND condition] THEN UPDATE SET ``set`` (``{column: value}``, at least one)."""
        return self._add(rl.MergeClause.MATCHED_UPDATE, condition, set)

    def when_matched_update_all(self, condition: ColumnOrSql | None = None) -> MergeBuilder:
        """WHEN MATCHED [AND condition] THEN UPDATE SET * (every column from the source's same-named column)."""
        return self._add(rl.MergeClause.MATCHED_UPDATE, condition, all_columns=True)

    def when_matched_delete(self, condition: ColumnOrSql | None = None) -> MergeBuilder:
        """WHEN MATCHED [AND condition] THEN DELETE."""
        return self._add(rl.MergeClause.MATCHED_DELETE, condition)

    def when_not_matched_insert(
        self, values: Mapping[str, ColumnOrSql], condition: ColumnOrSql | None = None
    ) -> MergeBuilder:
        """WHEN NOT MATCHED [AND condition] THEN INSERT ``values``; other columns NULL (generated: computed)."""
        return self._add(rl.MergeClause.NOT_MATCHED_INSERT, condition, values, arg_name="values")

    def when_not_matched_insert_all(self, condition: ColumnOrSql | None = None) -> MergeBuilder:
        """WHEN NOT MATCHED [AND condition] THEN INSERT * (every column from the source's same-named column)."""
        return self._add(rl.MergeClause.NOT_MATCHED_INSERT, condition, all_columns=True)

    def when_not_matched_by_source_update(
        self, set: Mapping[str, ColumnOrSql], condition: ColumnOrSql | None = None
    ) -> MergeBuilder:
        """WHEN NOT MATCHED BY SOURCE [AND condition] THEN UPDATE SET ``set`` (target columns only)."""
        return self._add(rl.MergeClause.NOT_MATCHED_BY_SOURCE_UPDATE, condition, set)

    def when_not_matched_by_source_delete(self, condition: ColumnOrSql | None = None) -> MergeBuilder:
        """WHEN NOT MATCHED BY SOURCE [AND condition] THEN DELETE."""
        return self._add(rl.MergeClause.NOT_MATCHED_BY_SOURCE_DELETE, condition)

    def build_command(
        self, *, options: StrMap | None = None, txn: WriteTxn | None = None, stage: bool | Stage = False
    ) -> Any:
        """The ``filecommit.v1.MergeCommand`` of this builder (arguments as :meth:`execute`)."""
        _checks.not_empty("WHEN clause of the merge", self._clauses)
        command = rl.MergeCommand(
            path=self._path,
            table=self._table,
            clauses=self._clauses,
            source_alias=self._source_alias or "",
            target_alias=self._target_alias,
            options=_checks.string_map("options", options),
            schema_evolution=self._schema_evolution,
        )
        command.source.CopyFrom(_wire.relation(self._source))
        command.condition.CopyFrom(self._on)
        _wire.set_txn(command, txn)
        _wire.set_stage(command, stage)
        return command

    @overload
    def execute(
        self,
        *,
        options: StrMap | None = ...,
        txn: WriteTxn | None = ...,
        stage: Literal[False] = ...,
    ) -> CommitResult: ...
    @overload
    def execute(
        self,
        *,
        options: StrMap | None = ...,
        txn: WriteTxn | None = ...,
        stage: Literal[True] | Stage,
    ) -> StagedCommit: ...
    @overload
    def execute(
        self,
        *,
        options: StrMap | None = ...,
        txn: WriteTxn | None = ...,
        stage: bool | Stage = ...,
    ) -> CommitResult | StagedCommit: ...
    def execute(
        self, *, options: StrMap | None = None, txn: WriteTxn | None = None, stage: bool | Stage = False
    ) -> CommitResult | StagedCommit:
        """Run the merge as one table version.

        Args:
            options: Spark Parquet writer options for written files.
            txn: ``(app_id, version)`` for an idempotent change, as in :func:`filecommit.write`.
            stage: stage the merge instead of committing it (a :class:`~filecommit.StagedCommit`
                is returned), as in :func:`filecommit.write`.

        Returns:
            CommitResult with ``metrics.num_inserted_rows``, ``num_updated_rows``,
            ``num_deleted_rows``, ``num_copied_rows``; removed, added and change files.

        Raises:
            pyspark.errors.PySparkValueError: ``CANNOT_BE_EMPTY`` without clauses.
            pyspark.errors.exceptions.connect.SparkConnectGrpcException (or a subclass): the
                server's error class, e.g. ``DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE``
                (a target row matched by several source rows), ``DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION``,
                ``DELTA_MERGE_UNRESOLVED_EXPRESSION``, ``DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED``,
                constraint and conflict classes (:mod:`filecommit.errors`). Nothing is committed then.
        """
        return _wire.execute_commit(self._spark, self.build_command(options=options, txn=txn, stage=stage))


def merge(
    source: DataFrame,
    path: str | None = None,
    on: ColumnOrSql | None = None,
    *,
    table: str | None = None,
    source_alias: str | None = None,
    target_alias: str = "target",
) -> MergeBuilder:
    """Start a MERGE of ``source`` into the Delta table at ``path`` (rowlevel.proto ``MergeCommand``,
    delta-spark's ``DeltaTable.merge`` and ``MergeIntoCommand``).

    Args:
        source: a Spark Connect DataFrame (its plan runs on the server).
        path: table root; the table must exist.
        table: instead of ``path``, the name of an existing Delta table of the server's catalog
            (e.g. ``"db.t"``), resolved on the server to its location; give exactly one of ``path``
            and ``table`` (``CANNOT_SET_TOGETHER`` otherwise; ``DELTA_TABLE_NOT_FOUND`` from the server
            for an unknown name).
        on: the ON condition, e.g. ``"target.id = source.id"``.
        source_alias: the source's name in expressions (the source is re-aliased to it). None (the
            default): the source DataFrame's own alias (``source.alias("s")``, Delta's
            convention), or ``"source"`` when it has none.
        target_alias: the table's name in expressions.

    Returns:
        A :class:`MergeBuilder`; add clauses and call ``execute()``.

    Raises:
        pyspark.errors.PySparkValueError: ``VALUE_NOT_NON_EMPTY_STR`` for an empty path, alias or
            ``on`` string; ``VALUE_NOT_ALLOWED`` for equal aliases.
        pyspark.errors.PySparkTypeError: ``NOT_EXPECTED_TYPE`` for a non-Connect DataFrame or an
            ``on`` that is neither str nor Column.
    """
    _wire.relation(source)  # type check first
    path, table = _checks.path_or_table(path, table)
    s = None if source_alias is None else _checks.non_empty_str("source_alias", source_alias)
    t = _checks.non_empty_str("target_alias", target_alias)
    if s is not None and s.lower() == t.lower():
        _checks.not_allowed("source_alias", f"a name other than target_alias '{t}'")
    return MergeBuilder(source, path, on, s, t, table)
