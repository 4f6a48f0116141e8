package io.filecommit.errors;

import java.util.Map;

/**
 * The one catalogue of error classes the server raises for users, each with its SQLSTATE. Delta
 * Lake's names and SQLSTATEs are used wherever Delta has a class for the same condition (Delta's
 * {@code delta-error-classes.json}), Spark's where Spark has one ({@code error-conditions.json});
 * conditions neither has a class for are {@code FILECOMMIT_*}
 * with a standard SQLSTATE. Clients match on the class ({@code getCondition()} in pyspark), never
 * on message text. {@link #FILECOMMIT_INVALID_ARGUMENT} and {@link #FILECOMMIT_UNSUPPORTED_OPERATION}
 * are for what no more specific class describes.
 *
 * <p>Over 400 lines: one catalogue, a constant with its one-line meaning per class.
 */
public enum ErrorClass {
  // Concurrency (protocol "Conflict detection"), SQLSTATE class 2D: transaction conflicts.
  /** Files were added to partitions (or a table) this write read. */
  DELTA_CONCURRENT_APPEND("2D521"),
  /** A file this write read was removed concurrently. */
  DELTA_CONCURRENT_DELETE_READ("2D521"),
  /** A file this write removes was removed concurrently. */
  DELTA_CONCURRENT_DELETE_DELETE("2D521"),
  /** A concurrent commit changed the metadata. */
  DELTA_METADATA_CHANGED("2D521"),
  /** A concurrent commit changed the protocol (or created the table). */
  DELTA_PROTOCOL_CHANGED("2D521"),
  /** A concurrent commit of the same application transaction, or no conflict-free version. */
  DELTA_CONCURRENT_TRANSACTION("2D521"),

  // The table's rules.
  /** A null in a NOT NULL column. */
  DELTA_NOT_NULL_CONSTRAINT_VIOLATED("23502"),
  /** A CHECK constraint, column invariant or generated column is violated by a row. */
  DELTA_VIOLATE_CONSTRAINT_WITH_VALUES("23001"),
  /** A CHECK constraint that is not a boolean expression. */
  DELTA_NON_BOOLEAN_CHECK_CONSTRAINT("42621"),
  /** A CHECK constraint that references a column the table does not have. */
  DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES("42621"),
  /** A CHECK constraint that does not parse, or uses an expression a constraint cannot. */
  DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT("42621"),
  /** A CHECK constraint with a nondeterministic expression. */
  DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT("42621"),
  /** A CHECK constraint with an aggregate expression. */
  DELTA_AGGREGATE_IN_CHECK_CONSTRAINT("42621"),
  /** A CHECK constraint that calls a user-defined function. */
  DELTA_UDF_IN_CHECK_CONSTRAINT("42621"),
  /** Rows of the table violate a CHECK constraint being added (ALTER TABLE ADD CONSTRAINT). */
  DELTA_NEW_CHECK_CONSTRAINT_VIOLATION("23512"),
  /** ALTER TABLE ADD CONSTRAINT with the name of an existing constraint (case-insensitive). */
  DELTA_CONSTRAINT_ALREADY_EXISTS("42710"),
  /** ALTER TABLE DROP CONSTRAINT (without IF EXISTS) of a constraint the table does not have. */
  DELTA_CONSTRAINT_DOES_NOT_EXIST("42704"),
  /** A CHECK constraint added by a command that does not check the table's rows (a write's table properties). */
  DELTA_ADD_CONSTRAINTS("0A000", ClientExceptionType.ANALYSIS),
  /** A column invariant ({@code delta.invariants}) of a form filecommit does not know. */
  DELTA_UNRECOGNIZED_INVARIANT("56038"),
  /** A generation expression that references a column the table does not have. */
  DELTA_INVALID_GENERATED_COLUMN_REFERENCES("42621"),
  /** A generation expression that does not parse or cannot be evaluated. */
  DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN("42621"),
  /** A generation expression whose type cannot be cast to its column's type. */
  DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH("42K09"),
  /** A table feature filecommit cannot honour for writes (named in the message). */
  DELTA_UNSUPPORTED_FEATURES_FOR_WRITE("56038"),
  /** A reader feature Delta Kernel cannot read. */
  DELTA_UNSUPPORTED_FEATURES_FOR_READ("56038"),
  /** A write that would remove data from a {@code delta.appendOnly} table. */
  DELTA_CANNOT_MODIFY_APPEND_ONLY("42809", ClientExceptionType.UNSUPPORTED_OPERATION),
  /** A protocol version outside reader 1-3 / writer 1-7 ({@code DeltaTable.upgradeTableProtocol}). */
  DELTA_INVALID_PROTOCOL_VERSION("KD004"),
  /** A {@code delta.feature.<name>} (e.g. {@code DeltaTable.addFeatureSupport}) naming no Delta feature. */
  DELTA_UNSUPPORTED_FEATURES_IN_CONFIG("56038"),
  // The DROP FEATURE classes reach clients as AnalysisException, as Delta's DeltaTableFeatureException.
  /** DROP FEATURE of a name Delta does not know. */
  DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE("0AKDC", ClientExceptionType.ANALYSIS),
  /** DROP FEATURE of a legacy feature Delta never removes (appendOnly, invariants, ...). */
  DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE("0AKDC", ClientExceptionType.ANALYSIS),
  /** DROP FEATURE of a feature the table's protocol does not support. */
  DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT("55000", ClientExceptionType.ANALYSIS),
  /** DROP FEATURE ... TRUNCATE HISTORY of a writer-only feature (its drop truncates nothing). */
  DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED("42000"),
  /** DROP FEATURE checkConstraints while the table has CHECK constraints. */
  DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE("0AKDE", ClientExceptionType.ANALYSIS),
  /**
   * DROP FEATURE of a feature Delta drops but filecommit does not (parameter {@code feature}): a
   * reader-writer feature, whose drop needs checkpoint protection or history truncation, or
   * inCommitTimestamp while it is enabled.
   */
  FILECOMMIT_DROP_FEATURE_UNSUPPORTED("0A000"),

  // Table, schema and options.
  /** Mode error-if-exists on an existing table. */
  DELTA_TABLE_ALREADY_EXISTS("42P07"),
  /** A new table in a directory that holds files and is no Delta table (Delta's class). */
  DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION("42601"),
  /** DeltaTable.create / replace with neither a table name nor a location (Delta's class). */
  DELTA_CREATE_TABLE_MISSING_TABLE_NAME_OR_LOCATION("42601"),
  /** DeltaTable.create / replace naming delta.`path` with another location (Delta's class). */
  DELTA_CREATE_TABLE_IDENTIFIER_LOCATION_MISMATCH("0AKDC", ClientExceptionType.ANALYSIS),
  /** No Delta table at the path. */
  DELTA_TABLE_NOT_FOUND("42P01"),
  /** The path holds something that is not a Delta table (a file sink). */
  DELTA_MISSING_DELTA_TABLE("42P01"),
  /** A blank table or sink path, or a read without one (Spark's class). */
  INVALID_EMPTY_LOCATION("42K05", ClientExceptionType.ILLEGAL_ARGUMENT),
  /** CREATE TABLE AS SELECT or REPLACE TABLE through the catalog of a table that is not (or would not be) Delta. */
  DELTA_TABLE_ONLY_OPERATION("0AKDD", ClientExceptionType.ANALYSIS),
  /** A table name in a schema (database) the session catalog does not have (Spark's class). */
  SCHEMA_NOT_FOUND("42704"),
  /** A table name that does not parse, or a view name that is not a plain identifier (Spark's class). */
  INVALID_SCHEMA_OR_RELATION_NAME("42602"),
  /** The data's schema does not match the table's. */
  DELTA_METADATA_MISMATCH("42KDG"),
  /** mergeSchema cannot merge a field: incompatible types, or a widening the table does not allow. */
  DELTA_FAILED_TO_MERGE_FIELDS("22005", ClientExceptionType.ANALYSIS),
  /** A change of {@code delta.columnMapping.mode} Delta does not allow (only none to name). */
  DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE("0AKDC"),
  /** A partition column is missing from the data or schema. */
  DELTA_PARTITION_COLUMN_NOT_FOUND("42703"),
  /** Partition columns that differ from the table's. */
  DELTA_INVALID_PARTITION_COLUMN("42996"),
  /** A partition column of a complex type. */
  DELTA_INVALID_PARTITION_COLUMN_TYPE("42996"),
  /** A table partitioned by an expression (a transform such as {@code bucket} or {@code years}), not a column. */
  DELTA_OPERATION_NOT_ALLOWED("0AKDC", ClientExceptionType.ANALYSIS),
  /** Every column is a partition column. */
  DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION("428FT"),
  /** A column name with one of {@code " ,;{}()\n\t="}. */
  DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES("42K05"),
  /** Duplicate column names (case-insensitive). */
  DELTA_DUPLICATE_COLUMNS_FOUND("42711"),
  /** A column that is needed but absent. */
  DELTA_COLUMN_NOT_FOUND_IN_SCHEMA("42703"),
  /** A nested field where filecommit takes top-level columns only: an UPDATE assignment, a clustering column. */
  DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION("0AKDC", ClientExceptionType.ANALYSIS),
  /** Written rows that do not satisfy the replaceWhere predicate. */
  DELTA_REPLACE_WHERE_MISMATCH("44000", ClientExceptionType.ANALYSIS),
  /** An invalid writer option or option combination. */
  DELTA_ILLEGAL_OPTION("42616", ClientExceptionType.ILLEGAL_ARGUMENT),
  /** Option overwriteSchema together with partitionOverwriteMode=dynamic. */
  DELTA_OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE("42613"),
  /** Option replaceWhere together with partitionOverwriteMode=dynamic. */
  DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE("42613"),
  /** An unknown {@code delta.*} table property. */
  DELTA_UNKNOWN_CONFIGURATION("F0000", ClientExceptionType.ANALYSIS),
  /** Change records for a table without change data feed. */
  DELTA_CHANGE_TABLE_FEED_DISABLED("42807"),

  // Reads: time travel and the change data feed.
  /** A version to read that is not (or no longer) in the log. */
  DELTA_VERSION_NOT_FOUND("22003", ClientExceptionType.ANALYSIS),
  /** A time travel or change feed timestamp after the latest commit. */
  DELTA_TIMESTAMP_GREATER_THAN_COMMIT("42816"),
  /** A time travel or change feed timestamp before the earliest commit still in the log. */
  DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION("42816"),
  /** A timestamp option that is not a timestamp. */
  DELTA_TIMESTAMP_INVALID("42816"),
  /** Both {@code versionAsOf} and {@code timestampAsOf}, or a RESTORE with neither or both. */
  DELTA_ONEOF_IN_TIMETRAVEL("42601", ClientExceptionType.ILLEGAL_ARGUMENT),
  /** A change feed read without {@code startingVersion} or {@code startingTimestamp}. */
  DELTA_NO_START_FOR_CDC_READ("42601"),
  /** A change feed range that ends before it starts. */
  DELTA_INVALID_CDC_RANGE("22003", ClientExceptionType.ANALYSIS),
  /** A change feed start after the latest version. */
  DELTA_CDC_START_VERSION_AFTER_LATEST("22003", ClientExceptionType.ANALYSIS),
  /** A change feed range with a commit that is no longer in the log (log clean-up). */
  DELTA_LOG_FILE_NOT_FOUND("42K03", ClientExceptionType.RUNTIME),
  /** A change feed range with a version at which the feed was not enabled. */
  DELTA_MISSING_CHANGE_DATA("KD002", ClientExceptionType.ANALYSIS),
  /** {@code table_changes} with fewer than 2 or more than 3 arguments (Delta's class). */
  INCORRECT_NUMBER_OF_ARGUMENTS("42605"),
  /** {@code table_changes} with a null table name (Delta's class for an argument of an unsupported type). */
  DELTA_UNSUPPORTED_EXPRESSION("0A000", ClientExceptionType.ANALYSIS),
  /** {@code table_changes} with a null start or end. */
  DELTA_CDC_READ_NULL_RANGE_BOUNDARY("22004", ClientExceptionType.ILLEGAL_ARGUMENT),
  /** {@code table_changes} with an argument that is not a constant. */
  DELTA_CDC_NON_CONSTANT_ARGUMENT("42K0H"),
  /** DESCRIBE HISTORY with a negative LIMIT (Spark's class). */
  INVALID_LIMIT_LIKE_EXPRESSION("42K0E"),

  // filecommit's own conditions.
  /** A {@code _change_type} value outside insert, update_preimage, update_postimage, delete. */
  FILECOMMIT_INVALID_CHANGE_TYPE("22023"),
  /** An invalid argument of a command that no more specific class describes. */
  FILECOMMIT_INVALID_ARGUMENT("22023"),
  /** A command that cannot be parsed or lacks a required part. */
  FILECOMMIT_MALFORMED_COMMAND("22023"),
  /** A relative path without an allowed root to resolve it against. */
  FILECOMMIT_RELATIVE_PATH("42501"),
  /**
   * A time-travel version ({@code t@v1}, {@code VERSION AS OF}, {@code TIMESTAMP AS OF}) as the
   * target of a statement that writes: DELETE, UPDATE, MERGE, OPTIMIZE, VACUUM, RESTORE, ALTER TABLE.
   */
  FILECOMMIT_TIME_TRAVEL_WRITE("0A000"),
  /** A feature filecommit switches on for new tables only (in-commit timestamps, row tracking) enabled on an existing one. */
  FILECOMMIT_FEATURE_ONLY_ON_NEW_TABLE("0A000"),
  /** A sink batch id that is negative or would leave a gap after the sink log's latest batch. */
  FILECOMMIT_INVALID_BATCH_ID("22023"),
  /** A sink path that is a file, not a directory. */
  FILECOMMIT_PATH_NOT_A_DIRECTORY("22023"),
  // Row-level changes (DELETE, UPDATE, MERGE).
  /** MERGE: a target row matched by several source rows while a MATCHED clause could change it. */
  DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE("21506", ClientExceptionType.UNSUPPORTED_OPERATION),
  /** MERGE: a MATCHED clause without condition that is not the last MATCHED clause. */
  DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION("42601"),
  /** MERGE: a NOT MATCHED clause without condition that is not the last NOT MATCHED clause. */
  DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION("42601"),
  /** MERGE: a NOT MATCHED BY SOURCE clause without condition that is not the last of its kind. */
  DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION("42601"),
  /** MERGE: a clause whose action is not one of the clause's kind, or a MERGE without clauses. */
  DELTA_MERGE_MISSING_WHEN("42601"),
  /** UPDATE / MERGE: an assignment to a column the table does not have, or to one column twice. */
  DELTA_MERGE_UNRESOLVED_EXPRESSION("42601"),
  /** MERGE: a source alias equal to the target alias (case-insensitive). */
  FILECOMMIT_DUPLICATE_MERGE_ALIAS("42712"),

  /** A path outside {@code spark.filecommit.allowedRoots}. */
  FILECOMMIT_PATH_NOT_ALLOWED("42501"),
  /**
   * The session's verified principal lacks a privilege on a path or table (parameters {@code
   * principal}, {@code privilege}, {@code object}); nothing was read or written.
   */
  FILECOMMIT_PERMISSION_DENIED("42501"),
  /**
   * A server in shared mode ({@code spark.filecommit.server.shared=true}) refused a plan, command
   * or RPC it cannot confine to the caller's grants, before anything of it ran (parameters {@code
   * what}: e.g. {@code PYTHON_UDF}, {@code REFLECT}, {@code ADD_ARTIFACTS}, {@code FILE_READ},
   * {@code DATA_SOURCE}; {@code detail}: the refused name or path).
   */
  FILECOMMIT_SHARED_MODE_REFUSED("42501"),
  /**
   * A new table or sink whose directory is not its own: inside another table or sink, above one
   * (a {@code _delta_log} or {@code _spark_metadata} below it), or an allowed root itself.
   */
  FILECOMMIT_TABLE_LOCATION_OVERLAP("42K04"),
  /** A configured LogStore class that cannot be used. */
  FILECOMMIT_LOGSTORE_UNAVAILABLE("0A000"),
  /**
   * The commit's outcome could not be read from the log after the store failed: it may or may not
   * have landed. Every written file is kept; retry with the same {@code txn} to converge.
   */
  FILECOMMIT_COMMIT_STATE_UNKNOWN("40003"),
  /** The store failed to publish the commit and the log shows it did not land: nothing committed. */
  FILECOMMIT_LOG_WRITE_FAILED("58030"),
  /** The table's log could not be read (a storage failure) before anything was written. */
  FILECOMMIT_LOG_READ_FAILED("58030"),
  /** A client session set a setting the server owns (Spark's class for static configuration). */
  CANNOT_MODIFY_STATIC_CONFIG("46110", ClientExceptionType.ANALYSIS),
  /** A server setting whose value is not of its type, e.g. not a whole number (Spark's class). */
  INVALID_CONF_VALUE("22022", ClientExceptionType.ILLEGAL_ARGUMENT),
  /** DELETE / UPDATE: a non-deterministic condition or assignment (Spark's class). */
  INVALID_NON_DETERMINISTIC_EXPRESSIONS("42K0E"),
  /** MERGE: a non-deterministic condition or assignment (Delta's class). */
  DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED("0AKDC"),
  // Staged commits (stage, publish, abort).
  /** No staged commit with that id on the table (never staged, or its record was cleaned up). */
  FILECOMMIT_STAGED_COMMIT_NOT_FOUND("42704"),
  /** The staged commit was aborted (its files are deleted); it cannot be published. */
  FILECOMMIT_STAGED_COMMIT_ABORTED("55000"),
  /** The staged commit expired (or the log it was read from was cleaned); it cannot be published. */
  FILECOMMIT_STAGED_COMMIT_EXPIRED("55000"),
  /** The staged commit is already in a table version (published): it cannot be aborted or published in another group. */
  FILECOMMIT_STAGED_COMMIT_PUBLISHED("55000"),
  /** A publish and an abort of the same staged commit met; neither happened; call again. */
  FILECOMMIT_STAGED_COMMIT_BUSY("55006"),
  /** The table holds as many pending staged commits as the server allows ({@code spark.filecommit.staging.maxPending}). */
  FILECOMMIT_TOO_MANY_STAGED_COMMITS("54000"),
  /** DROP of a managed table (or a database holding one) whose files staged commits still need: publish or abort them first. */
  FILECOMMIT_STAGED_COMMITS_PENDING("55000"),
  /** Staged commits that cannot be one transaction (same file removed twice, other metadata, ...). */
  FILECOMMIT_STAGED_COMMITS_INCOMPATIBLE("42000"),
  /** A file handed to the server to stage that it cannot commit (outside the table, not Parquet, ...). */
  FILECOMMIT_INVALID_STAGED_FILE("22023"),
  /** Staged commit ids to publish, abort or read that are none, or repeat one. */
  FILECOMMIT_INVALID_STAGED_COMMIT_IDS("22023"),
  /** A staged commit expiry ({@code Stage.expires_after_ms}) not above 0 or beyond the server's {@code spark.filecommit.staging.expiration}. */
  FILECOMMIT_INVALID_STAGE_EXPIRY("22023"),
  /** A commit the server cannot stage: one that writes domain metadata, or files written elsewhere for a column-mapped table. */
  FILECOMMIT_CANNOT_STAGE("0A000"),
  /** A path that does not exist (Spark's class). */
  PATH_NOT_FOUND("42K03"),
  // CONVERT TO DELTA (Delta's ConvertToDeltaCommand).
  /** CONVERT TO DELTA of a directory without data files. */
  DELTA_EMPTY_DIRECTORY("42K03", ClientExceptionType.RUNTIME),
  /** CONVERT TO DELTA of a path without a format ({@code `/path`} instead of {@code parquet.`/path`}). */
  DELTA_MISSING_PROVIDER_FOR_CONVERT("0AKDC", ClientExceptionType.ANALYSIS),
  /** CONVERT TO DELTA of a path in a format other than Parquet ({@code json.`/path`}). */
  DELTA_CONVERT_NON_PARQUET_TABLE("0AKDC", ClientExceptionType.ANALYSIS),
  /** CONVERT TO DELTA: a file's partition directory names another column than the partition schema's. */
  DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME("KD009", ClientExceptionType.ANALYSIS),
  /** CONVERT TO DELTA: a file's partition directories are not as many as the partition schema's columns. */
  DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME("KD009", ClientExceptionType.ANALYSIS),
  /** CONVERT TO DELTA: a partition directory's value that does not cast to its column's type. */
  DELTA_FAILED_CAST_PARTITION_VALUE("22018", ClientExceptionType.RUNTIME),
  /** CONVERT TO DELTA: a data file whose Parquet footer cannot be read. */
  DELTA_FAILED_READ_FILE_FOOTER("KD001", ClientExceptionType.RUNTIME),
  /**
   * VACUUM with a retention below the table's delta.deletedFileRetentionDuration or the server's
   * retention floor (Delta's class for its retention check).
   */
  DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT("22003", ClientExceptionType.ILLEGAL_ARGUMENT),
  /** VACUUM with a negative retention (Delta's class). */
  DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE("22003", ClientExceptionType.ILLEGAL_ARGUMENT),
  /** A delta.deletedFileRetentionDuration below the server's retention floor (spark.filecommit.retention.minimum). */
  FILECOMMIT_RETENTION_BELOW_MINIMUM("22003", ClientExceptionType.ILLEGAL_ARGUMENT),
  /**
   * A rewrite (DELETE, UPDATE, MERGE, OPTIMIZE) in a session whose read settings would drop or
   * change rows silently ({@code ignoreMissingFiles}, {@code ignoreCorruptFiles}, LEGACY rebase);
   * parameters {@code key}, {@code value}; nothing was written.
   */
  FILECOMMIT_UNSAFE_READ_SETTING("22023"),
  /** A file a commit would reference does not exist (Delta's class for a missing referenced file). */
  DELTA_FILE_NOT_FOUND("42K03", ClientExceptionType.RUNTIME),
  // OPTIMIZE and RESTORE (Delta's OptimizeTableCommand and RestoreTableCommand).
  /** OPTIMIZE: a WHERE predicate that references a column that is not a partition column. */
  DELTA_NON_PARTITION_COLUMN_REFERENCE("42P10"),
  /** OPTIMIZE: a WHERE predicate that is blank, does not parse or does not resolve against the table (Delta's class). */
  DELTA_FAILED_RECOGNIZE_PREDICATE("42601"),
  /** OPTIMIZE with a target file size that is not above 0 bytes. */
  FILECOMMIT_INVALID_TARGET_FILE_SIZE("22023"),
  /** OPTIMIZE ZORDER BY a partition column. */
  DELTA_ZORDERING_ON_PARTITION_COLUMN("42P10"),
  /** OPTIMIZE ZORDER BY a column the table does not have. */
  DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST("42703"),
  /** OPTIMIZE ZORDER BY a column without per-file statistics (beyond delta.dataSkippingNumIndexedCols). */
  DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS("KD00D", ClientExceptionType.ANALYSIS),
  /** OPTIMIZE ZORDER BY more than 63 columns (the Z-order curve interleaves at most 63 of them). */
  FILECOMMIT_TOO_MANY_ZORDER_COLUMNS("54000", ClientExceptionType.ILLEGAL_ARGUMENT),
  /** RESTORE to a version that is not before the latest or no longer recreatable. */
  DELTA_CANNOT_RESTORE_TABLE_VERSION("22003", ClientExceptionType.ANALYSIS),
  /** RESTORE to a timestamp before the earliest commit still in the log. */
  DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER("22003", ClientExceptionType.ANALYSIS),
  /** RESTORE to a timestamp after the latest commit. */
  DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER("22003", ClientExceptionType.ANALYSIS),
  /** RESTORE to a version older than the table's delta.deletedFileRetentionDuration. */
  DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION("0AKDC"),
  /** RESTORE to a version whose data files are gone (vacuumed or deleted). */
  FILECOMMIT_RESTORE_MISSING_FILES("42K03"),
  /** Row tracking: a file to commit has no numRecords statistic, so no fresh row IDs can be assigned (Delta's class). */
  DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS("22000"),
  /** A value given for a GENERATED ALWAYS AS IDENTITY column (Delta's class). */
  DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED("42808"),
  /** An UPDATE (or MERGE update) assigning an identity column (Delta's class). */
  DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED("42808"),
  /** An identity column whose metadata has a start but no step or no allowExplicitInsert (Delta's class). */
  DELTA_IDENTITY_COLUMN_INCONSISTENT_METADATA("42000"),
  /** A column declared both an identity column and a generated column (Delta's class). */
  DELTA_IDENTITY_COLUMNS_WITH_GENERATED_EXPRESSION("42613"),
  /** An identity column with step 0 (Delta's class). */
  DELTA_IDENTITY_COLUMNS_ILLEGAL_STEP("42611"),
  /** An identity column declared with a type other than BIGINT (Delta's class). */
  DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE("428H2"),
  /** A table declared PARTITIONED BY one of its identity columns (Delta's class). */
  DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED("42601"),
  /** A schema column named as the table's materialized row tracking column (Delta's class). */
  DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED("42000"),
  /** OPTIMIZE ZORDER BY on a clustered table (Delta's class). */
  DELTA_CLUSTERING_WITH_ZORDER_BY("42613"),
  /** Clustering columns together with partition columns (Delta's class). */
  DELTA_CLUSTER_BY_WITH_PARTITIONED_BY("42613"),
  /** More clustering columns than Delta allows (4). */
  DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS("54000"),
  /** A clustering column of a type without data skipping statistics (Delta's class). */
  DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED("0A000"),
  /** A clustering column outside the statistics columns (delta.dataSkippingNumIndexedCols). */
  DELTA_CLUSTERING_COLUMN_MISSING_STATS("22000"),
  /** A write's clustering columns differ from the existing table's (Delta's class). */
  DELTA_CLUSTERING_COLUMNS_MISMATCH("42P10"),
  /** ALTER TABLE CLUSTER BY on a partitioned table (Delta's class). */
  DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED("42000"),
  /** REPLACE TABLE of a clustered table with a partitioned one (Delta's class). */
  DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE("42000"),
  /** A delta.autoOptimize.autoCompact value other than true / false (Delta's class). */
  DELTA_INVALID_AUTO_COMPACT_TYPE("22023"),
  /** OPTIMIZE FULL on a table without clustering columns (Delta's class). */
  DELTA_OPTIMIZE_FULL_NOT_SUPPORTED("42601"),
  /**
   * A Delta Connect message (delta-spark's {@code DeltaTable} API over Spark Connect: a {@code
   * delta.connect.DeltaRelation} or {@code DeltaCommand}) of a kind this server does not serve yet,
   * or a part of one it does not take (parameter {@code operation}: the kind, e.g. {@code
   * MERGE_INTO_TABLE}, {@code GENERATE}); refused before anything is read or committed.
   */
  FILECOMMIT_DELTA_CONNECT_UNSUPPORTED("0A000"),
  /** Something filecommit does not do that no more specific class describes (parameter {@code operation} names it). */
  FILECOMMIT_UNSUPPORTED_OPERATION("0A000");

  private final String sqlState;
  private final ClientExceptionType clientType;

  /** A class whose exception type follows Spark's rule by SQLSTATE ({@link ClientExceptionType#bySqlState}). */
  ErrorClass(String sqlState) {
    this(sqlState, ClientExceptionType.bySqlState(sqlState));
  }

  /**
   * A class raised as another type than its SQLSTATE says: the type Delta (Delta's {@code
   * DeltaErrors}) or Spark raises it as, or for a {@code FILECOMMIT_*} class the type its refusal had.
   */
  ErrorClass(String sqlState, ClientExceptionType clientType) {
    this.sqlState = sqlState;
    this.clientType = clientType;
  }

  /** {@return the SQLSTATE of this class} */
  public String sqlState() {
    return sqlState;
  }

  /** {@return the JVM exception type this class reaches Spark Connect clients as} */
  public ClientExceptionType clientType() {
    return clientType;
  }

  /**
   * An exception of this class.
   *
   * @param message what went wrong, naming the values involved
   * @param params message parameters (name -> value) for programs
   * @return the exception, to throw
   */
  public FileCommitException error(String message, Map<String, String> params) {
    return new FileCommitException(name(), sqlState, message, params);
  }

  /**
   * An exception of this class without message parameters.
   *
   * @param message what went wrong, naming the values involved
   * @return the exception, to throw
   */
  public FileCommitException error(String message) {
    return error(message, Map.of());
  }

  /**
   * An exception of this class with the exception that caused it.
   *
   * @param message what went wrong, naming the values involved
   * @param cause the underlying exception
   * @return the exception, to throw
   */
  public FileCommitException error(String message, Throwable cause) {
    FileCommitException e = error(message, Map.of());
    e.initCause(cause);
    return e;
  }

  /**
   * An exception of this class with message parameters and the exception that caused it.
   *
   * @param message what went wrong, naming the values involved
   * @param cause the underlying exception (may be null)
   * @param params message parameters (name -> value) for programs
   * @return the exception, to throw
   */
  public FileCommitException error(String message, Throwable cause, Map<String, String> params) {
    FileCommitException e = error(message, params);
    if (cause != null) {
      e.initCause(cause);
    }
    return e;
  }
}
