"""The error classes a caller matches on: ``e.getCondition()``, never the message text.

Server classes arrive as ``pyspark.errors.exceptions.connect.SparkConnectGrpcException`` (or a
subclass) with ``getCondition()`` the class, ``getSqlState()`` its SQLSTATE and
``getMessageParameters()``. Nothing is committed when one is raised, except that after
``FILECOMMIT_COMMIT_STATE_UNKNOWN`` the commit may have landed. They are the server's
catalogue (Java enum ``ErrorClass``): Delta Lake's names and SQLSTATEs wherever Delta has a class
for the condition (Delta's ``delta-error-classes.json``), Spark's where Spark has one (Spark's
``error-conditions.json``), ``FILECOMMIT_*`` otherwise.

Client classes are pyspark's own (``pyspark/errors/error-conditions.json``), raised as
``PySparkValueError`` (a ``ValueError``) or ``PySparkTypeError`` (a ``TypeError``) by the
argument checks, before anything is sent.

Example::

    try:
        filecommit.write(df, path, mode="overwrite")
    except SparkConnectGrpcException as e:
        if e.getCondition() in filecommit.errors.CONCURRENCY:
            ...  # another writer won: read the table again and retry

Each constant's value is its name; its docstring starts with its SQLSTATE.
"""

from __future__ import annotations

# ----------------------------------------------------------------- concurrency (SQLSTATE class 2D)
# Delta's conflict rules, PROTOCOL.md "Conflict detection" (Delta's ConflictChecker).

DELTA_CONCURRENT_APPEND = "DELTA_CONCURRENT_APPEND"
"""SQLSTATE 2D521. Files were added to partitions (or a table) this write read, e.g. an overwrite
racing an append under ``delta.isolationLevel=Serializable``."""

DELTA_CONCURRENT_DELETE_READ = "DELTA_CONCURRENT_DELETE_READ"
"""SQLSTATE 2D521. A file this write read was removed by a concurrent commit."""

DELTA_CONCURRENT_DELETE_DELETE = "DELTA_CONCURRENT_DELETE_DELETE"
"""SQLSTATE 2D521. A file this write removes was removed by a concurrent commit."""

DELTA_METADATA_CHANGED = "DELTA_METADATA_CHANGED"
"""SQLSTATE 2D521. A concurrent commit changed the table's metadata (schema, properties)."""

DELTA_PROTOCOL_CHANGED = "DELTA_PROTOCOL_CHANGED"
"""SQLSTATE 2D521. A concurrent commit changed the protocol, or created the table."""

DELTA_CONCURRENT_TRANSACTION = "DELTA_CONCURRENT_TRANSACTION"
"""SQLSTATE 2D521. A concurrent commit of the same ``txn`` app id, or no conflict-free version was
found: call again (a ``txn`` write is then skipped if the other commit applied its version)."""

CONCURRENCY = frozenset({
    DELTA_CONCURRENT_APPEND,
    DELTA_CONCURRENT_DELETE_READ,
    DELTA_CONCURRENT_DELETE_DELETE,
    DELTA_METADATA_CHANGED,
    DELTA_PROTOCOL_CHANGED,
    DELTA_CONCURRENT_TRANSACTION,
})
"""Lost a commit race: nothing was committed; the same call may succeed on a fresh snapshot."""

# ----------------------------------------------------------------- the table's rules
# PROTOCOL.md "Column Invariants", "CHECK Constraints", "Generated Columns", "Append-only Tables",
# "Table Features".

DELTA_NOT_NULL_CONSTRAINT_VIOLATED = "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"
"""SQLSTATE 23502. A written row has a null in a NOT NULL column."""

DELTA_VIOLATE_CONSTRAINT_WITH_VALUES = "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
"""SQLSTATE 23001. A written row violates a CHECK constraint, a column invariant or a generated
column's expression; the message names the constraint and the values."""

DELTA_NON_BOOLEAN_CHECK_CONSTRAINT = "DELTA_NON_BOOLEAN_CHECK_CONSTRAINT"
"""SQLSTATE 42621. A CHECK constraint (``delta.constraints.<name>``) is not a boolean expression."""

DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES = "DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES"
"""SQLSTATE 42621. A CHECK constraint references a column the table does not have."""

DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT = "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"
"""SQLSTATE 42621. A CHECK constraint does not parse, or uses an expression a constraint cannot."""

DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT = "DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT"
"""SQLSTATE 42621. A CHECK constraint has a non-deterministic expression."""

DELTA_AGGREGATE_IN_CHECK_CONSTRAINT = "DELTA_AGGREGATE_IN_CHECK_CONSTRAINT"
"""SQLSTATE 42621. A CHECK constraint has an aggregate expression."""

DELTA_UDF_IN_CHECK_CONSTRAINT = "DELTA_UDF_IN_CHECK_CONSTRAINT"
"""SQLSTATE 42621. A CHECK constraint calls a user-defined function."""

DELTA_NEW_CHECK_CONSTRAINT_VIOLATION = "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION"
"""SQLSTATE 23512. ALTER TABLE ADD CONSTRAINT (or ``set_table_properties`` with a
``delta.constraints.<name>``) on a table some of whose rows violate it (false or null); the count is
the parameter ``numRows``."""

DELTA_CONSTRAINT_ALREADY_EXISTS = "DELTA_CONSTRAINT_ALREADY_EXISTS"
"""SQLSTATE 42710. ALTER TABLE ADD CONSTRAINT with the name (case-insensitive) of a constraint the
table has."""

DELTA_CONSTRAINT_DOES_NOT_EXIST = "DELTA_CONSTRAINT_DOES_NOT_EXIST"
"""SQLSTATE 42704. ALTER TABLE DROP CONSTRAINT (without IF EXISTS) of a constraint the table does
not have."""

DELTA_ADD_CONSTRAINTS = "DELTA_ADD_CONSTRAINTS"
"""SQLSTATE 0A000. A write's table properties add a CHECK constraint (``delta.constraints.<name>``) to
an existing table whose rows the write does not check: use ALTER TABLE ADD CONSTRAINT or
``set_table_properties``, which check them (Delta refuses constraints there too)."""

DELTA_UNRECOGNIZED_INVARIANT = "DELTA_UNRECOGNIZED_INVARIANT"
"""SQLSTATE 56038. A column invariant (``delta.invariants`` field metadata) of an unknown form."""

DELTA_INVALID_GENERATED_COLUMN_REFERENCES = "DELTA_INVALID_GENERATED_COLUMN_REFERENCES"
"""SQLSTATE 42621. A generation expression references a column the table does not have."""

DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN = "DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN"
"""SQLSTATE 42621. A generation expression does not parse or cannot be evaluated."""

DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH = "DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH"
"""SQLSTATE 42K09. A generation expression's type cannot be cast to its column's type."""

DELTA_UNSUPPORTED_FEATURES_FOR_WRITE = "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE"
"""SQLSTATE 56038. The table needs a feature filecommit cannot honour for writes (named in the
message), e.g. identity columns or row tracking."""

DELTA_UNSUPPORTED_FEATURES_FOR_READ = "DELTA_UNSUPPORTED_FEATURES_FOR_READ"
"""SQLSTATE 56038. The table needs a reader feature Delta Kernel cannot read."""

DELTA_CANNOT_MODIFY_APPEND_ONLY = "DELTA_CANNOT_MODIFY_APPEND_ONLY"
"""SQLSTATE 42809. An overwrite, DELETE, UPDATE or MERGE would remove data from a
``delta.appendOnly=true`` table."""

DELTA_INVALID_PROTOCOL_VERSION = "DELTA_INVALID_PROTOCOL_VERSION"
"""SQLSTATE KD004. A protocol version outside reader 1-3 / writer 1-7 (``DeltaTable.upgradeTableProtocol``)."""

DELTA_UNSUPPORTED_FEATURES_IN_CONFIG = "DELTA_UNSUPPORTED_FEATURES_IN_CONFIG"
"""SQLSTATE 56038. A ``delta.feature.<name>`` (e.g. ``DeltaTable.addFeatureSupport``) naming no Delta feature."""

DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE = "DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE"
"""SQLSTATE 0AKDC. DROP FEATURE of a name Delta does not know."""

DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE = "DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE"
"""SQLSTATE 0AKDC. DROP FEATURE of a legacy feature Delta never removes (appendOnly, invariants, ...)."""

DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT = "DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT"
"""SQLSTATE 55000. DROP FEATURE of a feature the table's protocol does not support."""

DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED = "DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED"
"""SQLSTATE 42000. DROP FEATURE ... TRUNCATE HISTORY of a writer-only feature."""

DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE = "DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE"
"""SQLSTATE 0AKDE. DROP FEATURE checkConstraints while the table has CHECK constraints."""

TABLE_RULES = frozenset({
    DELTA_NOT_NULL_CONSTRAINT_VIOLATED,
    DELTA_VIOLATE_CONSTRAINT_WITH_VALUES,
    DELTA_NON_BOOLEAN_CHECK_CONSTRAINT,
    DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES,
    DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT,
    DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT,
    DELTA_AGGREGATE_IN_CHECK_CONSTRAINT,
    DELTA_UDF_IN_CHECK_CONSTRAINT,
    DELTA_NEW_CHECK_CONSTRAINT_VIOLATION,
    DELTA_CONSTRAINT_ALREADY_EXISTS,
    DELTA_CONSTRAINT_DOES_NOT_EXIST,
    DELTA_ADD_CONSTRAINTS,
    DELTA_UNRECOGNIZED_INVARIANT,
    DELTA_INVALID_GENERATED_COLUMN_REFERENCES,
    DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN,
    DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH,
    DELTA_UNSUPPORTED_FEATURES_FOR_WRITE,
    DELTA_UNSUPPORTED_FEATURES_FOR_READ,
    DELTA_CANNOT_MODIFY_APPEND_ONLY,
    DELTA_INVALID_PROTOCOL_VERSION,
    DELTA_UNSUPPORTED_FEATURES_IN_CONFIG,
    DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE,
    DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE,
    DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT,
    DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED,
    DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE,
})
"""The data or the table breaks a rule the table declares: retrying the same call fails again."""

# ----------------------------------------------------------------- table, schema and options

DELTA_TABLE_ALREADY_EXISTS = "DELTA_TABLE_ALREADY_EXISTS"
"""SQLSTATE 42P07. Mode "error" (``errorifexists``) on an existing table."""

DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION = "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"
"""SQLSTATE 42601. A new table in a directory that already holds files and is no Delta table (someone
else's Parquet files, say, which a later VACUUM would delete); nothing was written."""

DELTA_CREATE_TABLE_MISSING_TABLE_NAME_OR_LOCATION = "DELTA_CREATE_TABLE_MISSING_TABLE_NAME_OR_LOCATION"
"""SQLSTATE 42601. ``DeltaTable.create`` / ``replace`` with neither a table name nor a location."""

DELTA_CREATE_TABLE_IDENTIFIER_LOCATION_MISMATCH = "DELTA_CREATE_TABLE_IDENTIFIER_LOCATION_MISMATCH"
"""SQLSTATE 0AKDC. ``DeltaTable.create`` / ``replace`` naming ``delta.`path``` with another location."""

DELTA_TABLE_NOT_FOUND = "DELTA_TABLE_NOT_FOUND"
"""SQLSTATE 42P01. No Delta table at the path for ``set_table_properties`` or the ``replaceWhere``
option."""

DELTA_MISSING_DELTA_TABLE = "DELTA_MISSING_DELTA_TABLE"
"""SQLSTATE 42P01. The path holds no Delta table (DELETE / UPDATE / MERGE) or something else,
such as a batch-id file sink."""

INVALID_EMPTY_LOCATION = "INVALID_EMPTY_LOCATION"
"""SQLSTATE 42K05. A blank table or sink path, or a ``format("delta")`` read or save without one
(Spark's class; ``getMessageParameters()["location"]`` is what was sent)."""

DELTA_TABLE_ONLY_OPERATION = "DELTA_TABLE_ONLY_OPERATION"
"""SQLSTATE 0AKDD. ``CREATE TABLE ... AS SELECT`` or ``REPLACE TABLE`` through the server's catalog
for a provider other than ``delta``, or REPLACE of a table that is not a Delta table."""

SCHEMA_NOT_FOUND = "SCHEMA_NOT_FOUND"
"""SQLSTATE 42704. A new table named in a schema (database) the session catalog does not have
(Spark's class)."""

INVALID_SCHEMA_OR_RELATION_NAME = "INVALID_SCHEMA_OR_RELATION_NAME"
"""SQLSTATE 42602. A ``table=`` name or a ``table_changes`` table name that does not parse as a
table name, or a staged commit ``view_name`` that is not a plain identifier (Spark's class)."""

DELTA_METADATA_MISMATCH = "DELTA_METADATA_MISMATCH"
"""SQLSTATE 42KDG. The data's schema does not match the table's (use ``overwriteSchema`` with mode
"overwrite" to replace it)."""

DELTA_FAILED_TO_MERGE_FIELDS = "DELTA_FAILED_TO_MERGE_FIELDS"
"""SQLSTATE 22005. ``mergeSchema`` cannot merge a field of the data into the table's: incompatible
types, a narrower type, or a widening without ``delta.enableTypeWidening=true``."""

DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE = "DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE"
"""SQLSTATE 0AKDC. A change of ``delta.columnMapping.mode`` other than ``none`` to ``name`` on an
existing table."""

DELTA_PARTITION_COLUMN_NOT_FOUND = "DELTA_PARTITION_COLUMN_NOT_FOUND"
"""SQLSTATE 42703. A partition column is missing from the data or the schema."""

DELTA_INVALID_PARTITION_COLUMN = "DELTA_INVALID_PARTITION_COLUMN"
"""SQLSTATE 42996. ``partition_by`` differs from the existing table's partition columns."""

DELTA_INVALID_PARTITION_COLUMN_TYPE = "DELTA_INVALID_PARTITION_COLUMN_TYPE"
"""SQLSTATE 42996. A partition column of a complex type (struct, array, map)."""

DELTA_OPERATION_NOT_ALLOWED = "DELTA_OPERATION_NOT_ALLOWED"
"""SQLSTATE 0AKDC. ``CREATE TABLE ... PARTITIONED BY`` an expression (``bucket``, ``years``, ...):
Delta tables are partitioned by columns only."""

DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION = "DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION"
"""SQLSTATE 428FT. Every column is a partition column."""

DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES = "DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES"
"""SQLSTATE 42K05. A column name holds one of `` ,;{}()\\n\\t=``."""

DELTA_DUPLICATE_COLUMNS_FOUND = "DELTA_DUPLICATE_COLUMNS_FOUND"
"""SQLSTATE 42711. Duplicate column names (case-insensitive)."""

DELTA_COLUMN_NOT_FOUND_IN_SCHEMA = "DELTA_COLUMN_NOT_FOUND_IN_SCHEMA"
"""SQLSTATE 42703. A column the write needs is absent, e.g. ``_change_type`` with
``change_data=True``."""

DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION = "DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION"
"""SQLSTATE 0AKDC. A nested field where the server takes top-level columns only: an UPDATE or MERGE
assignment to ``s.x``, a clustering column ``s.x``; parameters ``operation`` and ``fieldName``."""

DELTA_REPLACE_WHERE_MISMATCH = "DELTA_REPLACE_WHERE_MISMATCH"
"""SQLSTATE 44000. Written rows do not satisfy the ``replaceWhere`` predicate."""

DELTA_ILLEGAL_OPTION = "DELTA_ILLEGAL_OPTION"
"""SQLSTATE 42616. An invalid writer option, option value or combination of options."""

DELTA_OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE = "DELTA_OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE"
"""SQLSTATE 42613. ``overwriteSchema`` together with ``partitionOverwriteMode=dynamic``."""

DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE = "DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE"
"""SQLSTATE 42613. ``replaceWhere`` together with ``partitionOverwriteMode=dynamic``."""

DELTA_UNKNOWN_CONFIGURATION = "DELTA_UNKNOWN_CONFIGURATION"
"""SQLSTATE F0000. An unknown ``delta.*`` table property."""

DELTA_CHANGE_TABLE_FEED_DISABLED = "DELTA_CHANGE_TABLE_FEED_DISABLED"
"""SQLSTATE 42807. Change records (``change_data=True``) for a table without
``delta.enableChangeDataFeed=true``."""

CANNOT_MODIFY_STATIC_CONFIG = "CANNOT_MODIFY_STATIC_CONFIG"
"""SQLSTATE 46110. A client session set a server-owned setting such as ``spark.delta.logStore.*``
(Spark's class; set it in the server's configuration instead)."""

INVALID_CONF_VALUE = "INVALID_CONF_VALUE"
"""SQLSTATE 22022. A server setting (``spark.filecommit.*``) whose value is not of its type, e.g.
not a whole number: an operator error; ``getMessageParameters()["confName"]`` names it (Spark's
class)."""

DELTA_VERSION_NOT_FOUND = "DELTA_VERSION_NOT_FOUND"
"""SQLSTATE 22003. A read (``versionAsOf``, a change feed range) of a version that is not in the
log: after the latest, or older than the earliest one still recreatable after log clean-up."""

DELTA_TIMESTAMP_GREATER_THAN_COMMIT = "DELTA_TIMESTAMP_GREATER_THAN_COMMIT"
"""SQLSTATE 42816. A read's ``timestampAsOf`` / ``startingTimestamp`` after the latest commit."""

DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION = "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"
"""SQLSTATE 42816. A read's ``timestampAsOf`` / ``endingTimestamp`` before the earliest commit in
the log."""

DELTA_TIMESTAMP_INVALID = "DELTA_TIMESTAMP_INVALID"
"""SQLSTATE 42816. A read's timestamp option that is not a timestamp or date string."""

DELTA_ONEOF_IN_TIMETRAVEL = "DELTA_ONEOF_IN_TIMETRAVEL"
"""SQLSTATE 42601. A read with both ``versionAsOf`` and ``timestampAsOf``, or a restore command
with neither or both of version and timestamp."""

DELTA_NO_START_FOR_CDC_READ = "DELTA_NO_START_FOR_CDC_READ"
"""SQLSTATE 42601. A ``readChangeFeed`` read without ``startingVersion`` or ``startingTimestamp``."""

DELTA_INVALID_CDC_RANGE = "DELTA_INVALID_CDC_RANGE"
"""SQLSTATE 22003. A change feed read whose end version is before its start version."""

DELTA_CDC_START_VERSION_AFTER_LATEST = "DELTA_CDC_START_VERSION_AFTER_LATEST"
"""SQLSTATE 22003. A change feed read whose start version is after the table's latest version."""

DELTA_LOG_FILE_NOT_FOUND = "DELTA_LOG_FILE_NOT_FOUND"
"""SQLSTATE 42K03. A change feed range with a commit no longer in the log (log clean-up)."""

DELTA_MISSING_CHANGE_DATA = "DELTA_MISSING_CHANGE_DATA"
"""SQLSTATE KD002. A change feed range with a version at which ``delta.enableChangeDataFeed`` was
not on (before it was enabled, or after it was disabled)."""

INCORRECT_NUMBER_OF_ARGUMENTS = "INCORRECT_NUMBER_OF_ARGUMENTS"
"""SQLSTATE 42605. ``table_changes`` with fewer than 2 or more than 3 arguments (Delta's class)."""

DELTA_UNSUPPORTED_EXPRESSION = "DELTA_UNSUPPORTED_EXPRESSION"
"""SQLSTATE 0A000. ``table_changes`` with a null table name."""

DELTA_CDC_READ_NULL_RANGE_BOUNDARY = "DELTA_CDC_READ_NULL_RANGE_BOUNDARY"
"""SQLSTATE 22004. ``table_changes`` with a null start or end."""

DELTA_CDC_NON_CONSTANT_ARGUMENT = "DELTA_CDC_NON_CONSTANT_ARGUMENT"
"""SQLSTATE 42K0H. ``table_changes`` with an argument that is not a constant, e.g. ``rand()``."""

INVALID_LIMIT_LIKE_EXPRESSION = "INVALID_LIMIT_LIKE_EXPRESSION"
"""SQLSTATE 42K0E. ``DESCRIBE HISTORY ... LIMIT`` with a negative number (Spark's class)."""

DELTA_NON_PARTITION_COLUMN_REFERENCE = "DELTA_NON_PARTITION_COLUMN_REFERENCE"
"""SQLSTATE 42P10. ``optimize(where=...)`` with a predicate on a column that is not a partition
column (Delta's OPTIMIZE takes partition predicates only). Nothing was committed."""

DELTA_FAILED_RECOGNIZE_PREDICATE = "DELTA_FAILED_RECOGNIZE_PREDICATE"
"""SQLSTATE 42601. ``optimize(where=...)`` (or ``OPTIMIZE ... WHERE``) with a predicate that is
blank, does not parse or does not resolve against the table's columns."""

DELTA_ZORDERING_ON_PARTITION_COLUMN = "DELTA_ZORDERING_ON_PARTITION_COLUMN"
"""SQLSTATE 42P10. ``optimize(zorder_by=...)`` naming a partition column."""

DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST = "DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST"
"""SQLSTATE 42703. ``optimize(zorder_by=...)`` naming a column the table does not have."""

DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS = "DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS"
"""SQLSTATE KD00D. ``optimize(zorder_by=...)`` naming a column without per-file statistics
(beyond the table's ``delta.dataSkippingNumIndexedCols``)."""

DELTA_CANNOT_RESTORE_TABLE_VERSION = "DELTA_CANNOT_RESTORE_TABLE_VERSION"
"""SQLSTATE 22003. ``restore(version=...)`` to a version that is not before the latest, or no
longer recreatable from the log."""

DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER = "DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER"
"""SQLSTATE 22003. ``restore(timestamp=...)`` before the earliest commit still in the log."""

DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER = "DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER"
"""SQLSTATE 22003. ``restore(timestamp=...)`` after the latest commit."""

DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION = (
    "DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION"
)
"""SQLSTATE 0AKDC. ``restore`` to a version committed longer ago than the table's
``delta.deletedFileRetentionDuration`` (its files may have been vacuumed), as Delta refuses."""

DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT = "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"
"""SQLSTATE 22003. ``vacuum`` with a retention below the table's
``delta.deletedFileRetentionDuration`` or below the server's retention floor
(``spark.filecommit.retention.minimum``); nothing was deleted.
``getMessageParameters()["configuredRetentionHours"]`` is the least retention allowed."""

DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE = "DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE"
"""SQLSTATE 22003. ``vacuum`` (or ``VACUUM ... RETAIN``) with a negative retention; nothing was
deleted."""

DELTA_INVALID_AUTO_COMPACT_TYPE = "DELTA_INVALID_AUTO_COMPACT_TYPE"
"""SQLSTATE 22023. A ``delta.autoOptimize.autoCompact`` table property other than true / false."""
PATH_NOT_FOUND = "PATH_NOT_FOUND"
"""SQLSTATE 42K03. A file given to ``stage_files`` does not exist (Spark's class)."""

DELTA_EMPTY_DIRECTORY = "DELTA_EMPTY_DIRECTORY"
"""SQLSTATE 42K03. CONVERT TO DELTA (``DeltaTable.convertToDelta``) of a directory without data files."""

DELTA_MISSING_PROVIDER_FOR_CONVERT = "DELTA_MISSING_PROVIDER_FOR_CONVERT"
"""SQLSTATE 0AKDC. CONVERT TO DELTA of a path without a format (```/path``` instead of ``parquet.`/path```)."""

DELTA_CONVERT_NON_PARQUET_TABLE = "DELTA_CONVERT_NON_PARQUET_TABLE"
"""SQLSTATE 0AKDC. CONVERT TO DELTA of a path in a format other than Parquet (``json.`/path```)."""

DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME = "DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME"
"""SQLSTATE KD009. CONVERT TO DELTA: a partition directory names another column than the partition schema."""

DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME = "DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME"
"""SQLSTATE KD009. CONVERT TO DELTA: a file has not as many partition directories as the schema columns."""

DELTA_FAILED_CAST_PARTITION_VALUE = "DELTA_FAILED_CAST_PARTITION_VALUE"
"""SQLSTATE 22018. CONVERT TO DELTA: a partition directory's value does not cast to its column's type."""

DELTA_FAILED_READ_FILE_FOOTER = "DELTA_FAILED_READ_FILE_FOOTER"
"""SQLSTATE KD001. CONVERT TO DELTA: a data file's Parquet footer cannot be read."""

DELTA_FILE_NOT_FOUND = "DELTA_FILE_NOT_FOUND"
"""SQLSTATE 42K03. A file a staged commit adds (data, deletion vector, change data) was deleted
after it was staged: ``commit`` refuses to publish it; nothing was committed (Delta's class for a
missing file the log would reference). Abort the staged commit and stage again."""

DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED = "DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED"
"""SQLSTATE 42000. A column named like a table's hidden row tracking column (its materialized row
ID or row commit version column): refused, so data can never set row IDs of its own."""

DELTA_OPTIMIZE_FULL_NOT_SUPPORTED = "DELTA_OPTIMIZE_FULL_NOT_SUPPORTED"
"""SQLSTATE 42601. OPTIMIZE FULL on a table without clustering columns."""

DELTA_CLUSTERING_WITH_ZORDER_BY = "DELTA_CLUSTERING_WITH_ZORDER_BY"
"""SQLSTATE 42613. OPTIMIZE with Z-order columns on a clustered table (its clustering columns
decide the layout)."""

DELTA_CLUSTER_BY_WITH_PARTITIONED_BY = "DELTA_CLUSTER_BY_WITH_PARTITIONED_BY"
"""SQLSTATE 42613. ``cluster_by`` (or ``CLUSTER BY``) together with partition columns."""

DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE = "DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE"
"""SQLSTATE 42000. REPLACE TABLE (or CREATE OR REPLACE) of a clustered table with a partitioned one."""

DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS = "DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS"
"""SQLSTATE 54000. More than 4 clustering columns."""

DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED = "DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED"
"""SQLSTATE 0A000. A clustering column of a type without data skipping statistics (boolean,
binary, struct, array, map, variant)."""

DELTA_CLUSTERING_COLUMN_MISSING_STATS = "DELTA_CLUSTERING_COLUMN_MISSING_STATS"
"""SQLSTATE 22000. A clustering column beyond the statistics columns
(``delta.dataSkippingNumIndexedCols``)."""

DELTA_CLUSTERING_COLUMNS_MISMATCH = "DELTA_CLUSTERING_COLUMNS_MISMATCH"
"""SQLSTATE 42P10. A write's ``cluster_by`` differs from the existing table's clustering columns
(change them with ``ALTER TABLE ... CLUSTER BY``)."""

DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED = "DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED"  # noqa: E501
"""SQLSTATE 42000. ``ALTER TABLE ... CLUSTER BY`` on a partitioned table."""

DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS = "DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS"
"""SQLSTATE 22000. A file added to a row tracking table has no ``numRecords`` statistic, so no
row IDs can be assigned to it."""

DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED = "DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED"
"""SQLSTATE 42808. A write, an INSERT or a MERGE insert gave values for a ``GENERATED ALWAYS AS
IDENTITY`` column: leave the column out and its values are generated."""

DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED = "DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED"
"""SQLSTATE 42808. An UPDATE or a MERGE update assigned an identity column."""

DELTA_IDENTITY_COLUMN_INCONSISTENT_METADATA = "DELTA_IDENTITY_COLUMN_INCONSISTENT_METADATA"
"""SQLSTATE 42000. An identity column's metadata has a start but no step or no
``allowExplicitInsert``: the table's identity definition is damaged."""

DELTA_IDENTITY_COLUMNS_WITH_GENERATED_EXPRESSION = "DELTA_IDENTITY_COLUMNS_WITH_GENERATED_EXPRESSION"
"""SQLSTATE 42613. A column declared both an identity column and a generated column."""

DELTA_IDENTITY_COLUMNS_ILLEGAL_STEP = "DELTA_IDENTITY_COLUMNS_ILLEGAL_STEP"
"""SQLSTATE 42611. An identity column with step 0."""

DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE = "DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE"
"""SQLSTATE 428H2. A ``CREATE TABLE`` declared an identity column of a type other than ``BIGINT``."""

DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED = "DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED"
"""SQLSTATE 42601. A ``CREATE TABLE`` partitioned the table by one of its identity columns."""

TABLE_SCHEMA_OPTIONS = frozenset({
    DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED,
    DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED,
    DELTA_IDENTITY_COLUMN_INCONSISTENT_METADATA,
    DELTA_IDENTITY_COLUMNS_WITH_GENERATED_EXPRESSION,
    DELTA_IDENTITY_COLUMNS_ILLEGAL_STEP,
    DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE,
    DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED,
    DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED,
    DELTA_CLUSTERING_WITH_ZORDER_BY,
    DELTA_OPTIMIZE_FULL_NOT_SUPPORTED,
    DELTA_CLUSTER_BY_WITH_PARTITIONED_BY,
    DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS,
    DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED,
    DELTA_CLUSTERING_COLUMN_MISSING_STATS,
    DELTA_CLUSTERING_COLUMNS_MISMATCH,
    DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED,
    DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE,
    DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS,
    PATH_NOT_FOUND,
    DELTA_EMPTY_DIRECTORY,
    DELTA_MISSING_PROVIDER_FOR_CONVERT,
    DELTA_CONVERT_NON_PARQUET_TABLE,
    DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME,
    DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME,
    DELTA_FAILED_CAST_PARTITION_VALUE,
    DELTA_FAILED_READ_FILE_FOOTER,
    DELTA_FILE_NOT_FOUND,
    DELTA_TABLE_ALREADY_EXISTS,
    DELTA_TABLE_NOT_FOUND,
    DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION,
    DELTA_CREATE_TABLE_MISSING_TABLE_NAME_OR_LOCATION,
    DELTA_CREATE_TABLE_IDENTIFIER_LOCATION_MISMATCH,
    DELTA_MISSING_DELTA_TABLE,
    DELTA_METADATA_MISMATCH,
    DELTA_FAILED_TO_MERGE_FIELDS,
    DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE,
    DELTA_PARTITION_COLUMN_NOT_FOUND,
    DELTA_INVALID_PARTITION_COLUMN,
    DELTA_INVALID_PARTITION_COLUMN_TYPE,
    DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION,
    DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES,
    DELTA_DUPLICATE_COLUMNS_FOUND,
    DELTA_COLUMN_NOT_FOUND_IN_SCHEMA,
    DELTA_REPLACE_WHERE_MISMATCH,
    DELTA_ILLEGAL_OPTION,
    DELTA_OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE,
    DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE,
    DELTA_UNKNOWN_CONFIGURATION,
    DELTA_CHANGE_TABLE_FEED_DISABLED,
    CANNOT_MODIFY_STATIC_CONFIG,
    DELTA_VERSION_NOT_FOUND,
    DELTA_TIMESTAMP_GREATER_THAN_COMMIT,
    DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION,
    DELTA_TIMESTAMP_INVALID,
    DELTA_ONEOF_IN_TIMETRAVEL,
    DELTA_NO_START_FOR_CDC_READ,
    DELTA_INVALID_CDC_RANGE,
    DELTA_CDC_START_VERSION_AFTER_LATEST,
    DELTA_LOG_FILE_NOT_FOUND,
    DELTA_MISSING_CHANGE_DATA,
    DELTA_NON_PARTITION_COLUMN_REFERENCE,
    DELTA_ZORDERING_ON_PARTITION_COLUMN,
    DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST,
    DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS,
    DELTA_CANNOT_RESTORE_TABLE_VERSION,
    DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER,
    DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER,
    DELTA_INVALID_AUTO_COMPACT_TYPE,
    DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION,
    DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT,
    DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE,
    INVALID_EMPTY_LOCATION,
    DELTA_TABLE_ONLY_OPERATION,
    SCHEMA_NOT_FOUND,
    INVALID_SCHEMA_OR_RELATION_NAME,
    DELTA_OPERATION_NOT_ALLOWED,
    DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION,
    INVALID_CONF_VALUE,
    INCORRECT_NUMBER_OF_ARGUMENTS,
    DELTA_UNSUPPORTED_EXPRESSION,
    DELTA_CDC_READ_NULL_RANGE_BOUNDARY,
    DELTA_CDC_NON_CONSTANT_ARGUMENT,
    INVALID_LIMIT_LIKE_EXPRESSION,
    DELTA_FAILED_RECOGNIZE_PREDICATE,
})
"""The path, the data's schema, partitioning, options or properties do not fit the table."""

# ----------------------------------------------------------------- row-level changes
# DELETE, UPDATE, MERGE (Delta's DeleteCommand, UpdateCommand, MergeIntoCommand).

DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE = "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"
"""SQLSTATE 21506. MERGE: a target row matched by several source rows while a MATCHED clause could
change it."""

DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION = "DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION"
"""SQLSTATE 42601. MERGE: a MATCHED clause without condition is not the last MATCHED clause."""

DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION = "DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION"
"""SQLSTATE 42601. MERGE: a NOT MATCHED clause without condition is not the last NOT MATCHED clause."""

DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION = (
    "DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION"
)
"""SQLSTATE 42601. MERGE: a NOT MATCHED BY SOURCE clause without condition is not the last of its
kind."""

DELTA_MERGE_MISSING_WHEN = "DELTA_MERGE_MISSING_WHEN"
"""SQLSTATE 42601. MERGE: a clause whose action does not fit its kind, or no clause at all."""

DELTA_MERGE_UNRESOLVED_EXPRESSION = "DELTA_MERGE_UNRESOLVED_EXPRESSION"
"""SQLSTATE 42601. UPDATE / MERGE: an assignment to a column the table does not have, or to one
column twice."""

INVALID_NON_DETERMINISTIC_EXPRESSIONS = "INVALID_NON_DETERMINISTIC_EXPRESSIONS"
"""SQLSTATE 42K0E. DELETE / UPDATE: a non-deterministic condition or assignment (Spark's class),
e.g. ``rand() < 0.1``."""

DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED = "DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED"
"""SQLSTATE 0AKDC. MERGE: a non-deterministic expression in the ON condition, a clause condition
or an assignment."""

ROW_LEVEL = frozenset({
    DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE,
    DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION,
    DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION,
    DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION,
    DELTA_MERGE_MISSING_WHEN,
    DELTA_MERGE_UNRESOLVED_EXPRESSION,
    INVALID_NON_DETERMINISTIC_EXPRESSIONS,
    DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED,
})
"""A DELETE, UPDATE or MERGE statement the server refuses as written."""

# ----------------------------------------------------------------- filecommit's own conditions
# Conditions Delta and Spark have no class for; standard SQLSTATEs.

FILECOMMIT_INVALID_CHANGE_TYPE = "FILECOMMIT_INVALID_CHANGE_TYPE"
"""SQLSTATE 22023. A ``_change_type`` value other than insert, update_preimage, update_postimage
or delete (``change_data=True``)."""

FILECOMMIT_INVALID_ARGUMENT = "FILECOMMIT_INVALID_ARGUMENT"
"""SQLSTATE 22023. An invalid command argument no more specific class describes; the message names
it."""

FILECOMMIT_MALFORMED_COMMAND = "FILECOMMIT_MALFORMED_COMMAND"
"""SQLSTATE 22023. A command that cannot be parsed or lacks a required part (a client of another
contract version)."""

FILECOMMIT_RELATIVE_PATH = "FILECOMMIT_RELATIVE_PATH"
"""SQLSTATE 42501. A relative path and no ``spark.filecommit.allowedRoots`` to resolve it against."""

FILECOMMIT_TIME_TRAVEL_WRITE = "FILECOMMIT_TIME_TRAVEL_WRITE"
"""SQLSTATE 0A000. A time-travel version (``t@v1``, ``VERSION AS OF``, ``TIMESTAMP AS OF``) given
as the target of a statement that writes: DELETE, UPDATE, MERGE, OPTIMIZE, VACUUM, RESTORE, ALTER
TABLE; nothing ran. The parameter ``operation`` names the statement."""

FILECOMMIT_FEATURE_ONLY_ON_NEW_TABLE = "FILECOMMIT_FEATURE_ONLY_ON_NEW_TABLE"
"""SQLSTATE 0A000. ``delta.enableInCommitTimestamps`` or ``delta.enableRowTracking`` switched on for
an existing table: the server enables them only when a table is created (parameter ``property``);
nothing was committed."""

FILECOMMIT_INVALID_BATCH_ID = "FILECOMMIT_INVALID_BATCH_ID"
"""SQLSTATE 22023. ``write_batch`` with a batch id that is negative or would leave a gap after the
sink log's latest batch (the next id is the latest + 1); parameter ``batchId``."""

FILECOMMIT_PATH_NOT_A_DIRECTORY = "FILECOMMIT_PATH_NOT_A_DIRECTORY"
"""SQLSTATE 22023. A sink path that is a file, not a directory; nothing was written."""

FILECOMMIT_DUPLICATE_MERGE_ALIAS = "FILECOMMIT_DUPLICATE_MERGE_ALIAS"
"""SQLSTATE 42712. MERGE whose source alias equals its target alias (case-insensitive)."""

FILECOMMIT_INVALID_TARGET_FILE_SIZE = "FILECOMMIT_INVALID_TARGET_FILE_SIZE"
"""SQLSTATE 22023. ``optimize(target_file_size=...)`` not above 0 bytes."""

FILECOMMIT_TOO_MANY_ZORDER_COLUMNS = "FILECOMMIT_TOO_MANY_ZORDER_COLUMNS"
"""SQLSTATE 54000. ``optimize(zorder_by=...)`` with more than 63 columns (the Z-order curve
interleaves at most 63)."""

FILECOMMIT_PATH_NOT_ALLOWED = "FILECOMMIT_PATH_NOT_ALLOWED"
"""SQLSTATE 42501. A path outside the server's ``spark.filecommit.allowedRoots``."""

FILECOMMIT_PERMISSION_DENIED = "FILECOMMIT_PERMISSION_DENIED"
"""SQLSTATE 42501. The caller's verified principal lacks a privilege (READ, WRITE, MAINTAIN, OWNER)
on a path or table; nothing was read or written. ``getMessageParameters()`` has ``principal``,
``privilege`` and ``object``."""

FILECOMMIT_SHARED_MODE_REFUSED = "FILECOMMIT_SHARED_MODE_REFUSED"
"""SQLSTATE 42501. A server in shared mode (``spark.filecommit.server.shared=true``) refused a plan,
command or RPC it cannot confine to the caller's grants (client code, code-calling functions,
artifacts, files outside the grants, ``_delta_log`` internals, data sources outside the allowlist,
catalog switches, Hadoop options); nothing of it ran. ``getMessageParameters()`` has ``what`` and
``detail``."""

FILECOMMIT_TABLE_LOCATION_OVERLAP = "FILECOMMIT_TABLE_LOCATION_OVERLAP"
"""SQLSTATE 42K04. A new table or sink whose directory is not its own: inside another table or sink
(an ancestor holds ``_delta_log`` or ``_spark_metadata``), above one (either below it), or an
allowed root itself; nothing was written."""

FILECOMMIT_LOGSTORE_UNAVAILABLE = "FILECOMMIT_LOGSTORE_UNAVAILABLE"
"""SQLSTATE 0A000. The configured LogStore class (``spark.delta.logStore.*``) cannot be used."""

FILECOMMIT_DROP_FEATURE_UNSUPPORTED = "FILECOMMIT_DROP_FEATURE_UNSUPPORTED"
"""SQLSTATE 0A000. DROP FEATURE of a feature Delta drops but filecommit does not (parameter ``feature``): a
reader-writer feature, whose drop needs checkpoint protection or history truncation, or inCommitTimestamp
while it is enabled."""

FILECOMMIT_DELTA_CONNECT_UNSUPPORTED = "FILECOMMIT_DELTA_CONNECT_UNSUPPORTED"
"""SQLSTATE 0A000. A call of delta-spark's ``DeltaTable`` API over Spark Connect (a Delta Connect
``DeltaRelation`` or ``DeltaCommand``) that this server does not serve yet, e.g. ``merge``,
``vacuum``, ``optimize``, ``restoreToVersion``, the ``create`` builders; nothing was read or
committed. ``getMessageParameters()`` has ``operation``, the message's kind (``MERGE_INTO_TABLE``,
``GENERATE``, ...)."""

FILECOMMIT_UNSUPPORTED_OPERATION = "FILECOMMIT_UNSUPPORTED_OPERATION"
"""SQLSTATE 0A000. Something filecommit does not do that no more specific class describes (named
in the message and the parameter ``operation``), e.g. a Delta SQL statement it does not run
(CONVERT TO DELTA, GENERATE, REORG TABLE, VACUUM LITE) or an ALTER TABLE change other than
properties, constraints, clustering and new columns."""

FILECOMMIT_COMMIT_STATE_UNKNOWN = "FILECOMMIT_COMMIT_STATE_UNKNOWN"
"""SQLSTATE 40003. The commit's outcome could not be read from the log; every written file was
kept. Retry with the same ``txn``: it is then skipped if the commit landed."""

FILECOMMIT_LOG_WRITE_FAILED = "FILECOMMIT_LOG_WRITE_FAILED"
"""SQLSTATE 58030. The storage failed to publish the commit and the log shows it did not land:
nothing was committed."""

FILECOMMIT_LOG_READ_FAILED = "FILECOMMIT_LOG_READ_FAILED"
"""SQLSTATE 58030. The table's log could not be read (a storage failure) before anything was
written: nothing was committed; retry the call."""

FILECOMMIT_STAGED_COMMIT_NOT_FOUND = "FILECOMMIT_STAGED_COMMIT_NOT_FOUND"
"""SQLSTATE 42704. No staged commit with that id on the table: never staged there, not an id, or
its record was cleaned up after it was published or expired."""

FILECOMMIT_STAGED_COMMIT_ABORTED = "FILECOMMIT_STAGED_COMMIT_ABORTED"
"""SQLSTATE 55000. The staged commit was aborted and its files deleted: it cannot be published."""

FILECOMMIT_STAGED_COMMIT_EXPIRED = "FILECOMMIT_STAGED_COMMIT_EXPIRED"
"""SQLSTATE 55000. The staged commit expired (its files are deleted by the server), or a version
it must be checked against was cleaned from the log: it cannot be published."""

FILECOMMIT_STAGED_COMMIT_PUBLISHED = "FILECOMMIT_STAGED_COMMIT_PUBLISHED"
"""SQLSTATE 55000. The staged commit is already in a table version: it cannot be aborted, or
published again in another group of staged commits."""

FILECOMMIT_STAGED_COMMIT_BUSY = "FILECOMMIT_STAGED_COMMIT_BUSY"
"""SQLSTATE 55006. A publish and an abort of the same staged commit met (or a publish's outcome is
unknown): the abort did nothing; its files are kept."""

FILECOMMIT_TOO_MANY_STAGED_COMMITS = "FILECOMMIT_TOO_MANY_STAGED_COMMITS"
"""SQLSTATE 54000. The table holds as many pending staged commits (neither published nor aborted)
as the server allows (``spark.filecommit.staging.maxPending``): nothing was staged; publish or
abort some first. Parameters ``table``, ``pending``, ``maxPending``, ``key``."""

FILECOMMIT_STAGED_COMMITS_PENDING = "FILECOMMIT_STAGED_COMMITS_PENDING"
"""SQLSTATE 55000. ``DROP TABLE`` of a managed table (or ``DROP DATABASE ... CASCADE`` of its
database) while staged commits of the table are pending: dropping it would delete their files.
Nothing was dropped; publish or abort them first. Parameters ``table``, ``pending``."""

FILECOMMIT_STAGED_COMMITS_INCOMPATIBLE = "FILECOMMIT_STAGED_COMMITS_INCOMPATIBLE"
"""SQLSTATE 42000. Staged commits that cannot be one transaction: both remove a file, change the
metadata differently, carry the same txn app id, or one changes the metadata next to another's
files. Nothing was committed."""

FILECOMMIT_INVALID_STAGED_FILE = "FILECOMMIT_INVALID_STAGED_FILE"
"""SQLSTATE 22023. A file given to ``stage_files`` that cannot be committed: outside the table
root, in ``_delta_log`` / ``_change_data``, already in the table, given twice, not Parquet, or
without the table's partition values. Nothing was staged."""

FILECOMMIT_INVALID_STAGED_COMMIT_IDS = "FILECOMMIT_INVALID_STAGED_COMMIT_IDS"
"""SQLSTATE 22023. Staged commit ids to publish, abort or read that are none, or repeat one;
nothing was done."""

FILECOMMIT_INVALID_STAGE_EXPIRY = "FILECOMMIT_INVALID_STAGE_EXPIRY"
"""SQLSTATE 22023. A staged commit expiry not above 0 or beyond the server's
``spark.filecommit.staging.expiration`` (parameter ``maxMs``); nothing was staged."""

FILECOMMIT_CANNOT_STAGE = "FILECOMMIT_CANNOT_STAGE"
"""SQLSTATE 0A000. A commit the server cannot stage: one that writes domain metadata (a clustered
table's clustering, ...), or ``stage_files`` into a column-mapped table. Commit it directly."""

FILECOMMIT_RESTORE_MISSING_FILES = "FILECOMMIT_RESTORE_MISSING_FILES"
"""SQLSTATE 42K03. ``restore`` to a version whose data files are gone (vacuumed or deleted);
nothing was committed. The message names up to 100 of them."""

FILECOMMIT_UNSAFE_READ_SETTING = "FILECOMMIT_UNSAFE_READ_SETTING"
"""SQLSTATE 22023. A DELETE, UPDATE, MERGE or OPTIMIZE in a session that sets
``spark.sql.files.ignoreMissingFiles`` / ``ignoreCorruptFiles`` or a LEGACY Parquet rebase mode on
read: the rewrite would commit rows read wrongly (a missing file as no rows); nothing was written.
``getMessageParameters()`` has ``key`` and ``value``."""

FILECOMMIT_RETENTION_BELOW_MINIMUM = "FILECOMMIT_RETENTION_BELOW_MINIMUM"
"""SQLSTATE 22003. A ``delta.deletedFileRetentionDuration`` table property (set on an existing
table or given for a new one) below the server's retention floor
(``spark.filecommit.retention.minimum``, default 168 hours); nothing was committed.
``getMessageParameters()`` has ``value`` and ``minimumHours``."""

FILECOMMIT = frozenset({
    FILECOMMIT_INVALID_CHANGE_TYPE,
    FILECOMMIT_INVALID_ARGUMENT,
    FILECOMMIT_MALFORMED_COMMAND,
    FILECOMMIT_RELATIVE_PATH,
    FILECOMMIT_PATH_NOT_ALLOWED,
    FILECOMMIT_PERMISSION_DENIED,
    FILECOMMIT_UNSAFE_READ_SETTING,
    FILECOMMIT_SHARED_MODE_REFUSED,
    FILECOMMIT_TABLE_LOCATION_OVERLAP,
    FILECOMMIT_LOGSTORE_UNAVAILABLE,
    FILECOMMIT_DROP_FEATURE_UNSUPPORTED,
    FILECOMMIT_DELTA_CONNECT_UNSUPPORTED,
    FILECOMMIT_UNSUPPORTED_OPERATION,
    FILECOMMIT_COMMIT_STATE_UNKNOWN,
    FILECOMMIT_LOG_WRITE_FAILED,
    FILECOMMIT_LOG_READ_FAILED,
    FILECOMMIT_STAGED_COMMIT_NOT_FOUND,
    FILECOMMIT_STAGED_COMMIT_ABORTED,
    FILECOMMIT_STAGED_COMMIT_EXPIRED,
    FILECOMMIT_STAGED_COMMIT_PUBLISHED,
    FILECOMMIT_STAGED_COMMIT_BUSY,
    FILECOMMIT_STAGED_COMMITS_INCOMPATIBLE,
    FILECOMMIT_TOO_MANY_STAGED_COMMITS,
    FILECOMMIT_STAGED_COMMITS_PENDING,
    FILECOMMIT_INVALID_STAGED_FILE,
    FILECOMMIT_RETENTION_BELOW_MINIMUM,
    FILECOMMIT_RESTORE_MISSING_FILES,
    FILECOMMIT_TIME_TRAVEL_WRITE,
    FILECOMMIT_FEATURE_ONLY_ON_NEW_TABLE,
    FILECOMMIT_INVALID_BATCH_ID,
    FILECOMMIT_PATH_NOT_A_DIRECTORY,
    FILECOMMIT_DUPLICATE_MERGE_ALIAS,
    FILECOMMIT_INVALID_TARGET_FILE_SIZE,
    FILECOMMIT_TOO_MANY_ZORDER_COLUMNS,
    FILECOMMIT_INVALID_STAGED_COMMIT_IDS,
    FILECOMMIT_INVALID_STAGE_EXPIRY,
    FILECOMMIT_CANNOT_STAGE,
})
"""filecommit's own conditions (``FILECOMMIT_*``)."""

SERVER = CONCURRENCY | TABLE_RULES | TABLE_SCHEMA_OPTIONS | ROW_LEVEL | FILECOMMIT
"""Every class the server raises for a user."""

# ----------------------------------------------------------------- client side (pyspark's classes)
# Raised by the argument checks before anything is sent; pyspark's registry gives most of them no
# SQLSTATE (``getSqlState()`` is None). ``getMessageParameters()["arg_name"]`` names the argument.

VALUE_NOT_NON_EMPTY_STR = "VALUE_NOT_NON_EMPTY_STR"
"""SQLSTATE none; ``PySparkValueError``. An empty or blank str, or a non-str, where a name is
needed: path, partition column, ``txn`` app id, alias, column name, SQL string, master."""

VALUE_NOT_ALLOWED = "VALUE_NOT_ALLOWED"
"""SQLSTATE none; ``PySparkValueError``. A value outside the allowed ones: an unknown save mode,
or MERGE aliases that are equal."""

NEGATIVE_VALUE = "NEGATIVE_VALUE"
"""SQLSTATE none; ``PySparkValueError``. A negative batch id, ``txn`` version or port."""

VALUE_OUT_OF_BOUNDS = "VALUE_OUT_OF_BOUNDS"
"""SQLSTATE none; ``PySparkValueError``. A batch id or ``txn`` version above 2**63 - 1 (int64),
or a port above 65535."""

CANNOT_BE_EMPTY = "CANNOT_BE_EMPTY"
"""SQLSTATE none; ``PySparkValueError``. No table property, no assignment in ``set`` /
``values``, or a MERGE without WHEN clause."""

CANNOT_SET_TOGETHER = "CANNOT_SET_TOGETHER"
"""SQLSTATE none; ``PySparkValueError``. Two arguments that exclude each other, e.g. both a path
and a table name."""

NOT_EXPECTED_TYPE = "NOT_EXPECTED_TYPE"
"""SQLSTATE 42K09; ``PySparkTypeError``. An argument of the wrong type, e.g. a DataFrame that is
not a Spark Connect one, a non-bool flag, a bool where an int is needed."""

CLIENT = frozenset({
    VALUE_NOT_NON_EMPTY_STR,
    VALUE_NOT_ALLOWED,
    NEGATIVE_VALUE,
    VALUE_OUT_OF_BOUNDS,
    CANNOT_BE_EMPTY,
    CANNOT_SET_TOGETHER,
    NOT_EXPECTED_TYPE,
})
"""Every class the client's own argument checks raise."""
