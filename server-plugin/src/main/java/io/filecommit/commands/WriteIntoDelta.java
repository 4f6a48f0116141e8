package io.filecommit.commands;

import io.filecommit.commands.optimize.AutoCompact;
import io.filecommit.delta.Clustering;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.IdentityColumns;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.files.TransactionalWrite;
import io.filecommit.schema.PartitionPredicates;
import io.filecommit.schema.SchemaEvolution;
import io.filecommit.schema.SchemaUtils;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import io.filecommit.txn.TransactionId;
import io.filecommit.txn.staging.StageRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A DataFrame write into a Delta table with Spark's save modes, as one transaction (Delta's
 * {@code WriteIntoDelta} command):
 *
 * <ul>
 *   <li>append: create the table if absent, else add files (schema must match);
 *   <li>overwrite: add files and remove every active file in the same commit; option {@code
 *       overwriteSchema=true} replaces schema and partition columns; option {@code replaceWhere}
 *       removes only the files of matching partitions;
 *   <li>append and overwrite with option {@code mergeSchema=true}: the data's new columns and nested
 *       fields are added to the table schema and allowed widenings applied ({@link SchemaEvolution});
 *       without it, the data's schema must fit the table's;
 *   <li>error-if-exists: fail if the table exists;
 *   <li>ignore: do nothing if the table exists.
 * </ul>
 *
 * Every check (path, schema, partition columns, properties, mode, change types, replaceWhere) runs
 * before any file is written.
 *
 * <p>Over 400 lines: every save mode with its checks, which all run before any file is written
 * (Delta's WriteIntoDelta is one class too).
 */
public final class WriteIntoDelta {
  /** Writer option that lets overwrite replace the schema and partition columns. */
  public static final String OVERWRITE_SCHEMA = "overwriteSchema";
  /**
   * Writer option that merges the data's schema into the table's (new columns and nested fields
   * appended; widenings where the table allows them), as Delta's {@code mergeSchema}.
   */
  public static final String MERGE_SCHEMA = "mergeSchema";
  /** Writer option: overwrite only the partitions matching this predicate on partition columns. */
  public static final String REPLACE_WHERE = "replaceWhere";
  /** Writer option: {@code commitInfo.userMetadata} of the commit (Delta's {@code userMetadata}). */
  public static final String USER_METADATA = "userMetadata";
  /**
   * Writer option {@code static} (default) or {@code dynamic}: a dynamic overwrite of a
   * partitioned table removes only the files of the partitions the data writes into (Delta's
   * {@code partitionOverwriteMode}).
   */
  public static final String PARTITION_OVERWRITE_MODE = "partitionOverwriteMode";
  /** The change types a change record may carry (protocol "Change Data Files"). */
  public static final List<String> CHANGE_TYPES = List.of("insert", "update_preimage", "update_postimage", "delete");
  /**
   * Table property (Spark's reserved {@code TableCatalog.PROP_COMMENT}) a CREATE / REPLACE gives: the new
   * metadata's {@code description} (Delta's {@code CreateDeltaTableCommand}), never a {@code configuration} key.
   */
  public static final String DESCRIPTION = "comment";

  private WriteIntoDelta() {}

  /**
   * Runs the write.
   *
   * @param session Spark session
   * @param data the rows to write
   * @param path table root (any Hadoop path)
   * @param mode the save mode
   * @param partitionBy partition columns (empty: unpartitioned, or the existing table's)
   * @param options writer options (Parquet options; {@code overwriteSchema}, {@code replaceWhere})
   * @param tableProperties table properties for a new table or to add to an existing one
   * @param changeData whether the input carries change records in {@code _change_type}
   * @param txnId the application transaction of an idempotent write, or null: when the table's
   *     latest version for its appId is already >= its version, nothing is written ({@code
   *     committed=false}); else the commit carries {@code txn}
   * @param stage when not null, the commit is staged ({@link CommandResult#staged()}), not published
   * @return what was committed
   * @throws io.filecommit.errors.FileCommitException for bad input (empty path, non-table
   *     directory, schema or partition mismatch, invalid properties, options or change types),
   *     {@code DELTA_TABLE_ALREADY_EXISTS} in mode error-if-exists, the table's constraint classes, a
   *     conflict class when a concurrent commit conflicts; {@code
   *     DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED} when the data has a {@code GENERATED
   *     ALWAYS AS IDENTITY} column (identity columns the data lacks get new values)
   */
  public static CommandResult run(SparkSession session, Dataset<Row> data, String path, WriteMode mode,
      List<String> partitionBy, Map<String, String> options, Map<String, String> tableProperties, boolean changeData,
      TransactionId txnId, StageRequest stage) {
    boolean[] unchecked = new boolean[1];
    try {
      return run(session, data, path, mode, partitionBy, options, tableProperties, changeData, txnId, stage, unchecked);
    } catch (io.filecommit.errors.FileCommitException e) {
      // Started from this server's own last commit, unchecked: the change may predate the write. Once more, checked.
      if (!unchecked[0] || !CHANGED_UNDER_AN_UNCHECKED_SNAPSHOT.contains(e.getCondition())) {
        throw e;
      }
      return run(session, data, path, mode, partitionBy, options, tableProperties, changeData, txnId, stage, null);
    }
  }

  private static final Set<String> CHANGED_UNDER_AN_UNCHECKED_SNAPSHOT =
      Set.of(ErrorClass.DELTA_METADATA_CHANGED.name(), ErrorClass.DELTA_PROTOCOL_CHANGED.name());

  /** {@link #run}; {@code unchecked} null: from the latest snapshot, else may start from the server's own last commit. */
  private static CommandResult run(SparkSession session, Dataset<Row> data, String path, WriteMode mode,
      List<String> partitionBy, Map<String, String> options, Map<String, String> tableProperties, boolean changeData,
      TransactionId txnId, StageRequest stage, boolean[] unchecked) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    List<String> clusterBy = Clustering.fromProperty(tableProperties.get(Clustering.PROPERTY));
    if (clusterBy != null) {
      tableProperties = new LinkedHashMap<>(tableProperties);
      tableProperties.remove(Clustering.PROPERTY);
    }
    TableConfig.validate(tableProperties);
    boolean overwriteSchema = "true".equalsIgnoreCase(options.get(OVERWRITE_SCHEMA));
    if (overwriteSchema && mode != WriteMode.OVERWRITE) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Option overwriteSchema=true needs mode overwrite, got mode "
          + mode.sparkName());
    }
    String replaceWhere = options.get(REPLACE_WHERE);
    if (replaceWhere != null && (mode != WriteMode.OVERWRITE || overwriteSchema)) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Option replaceWhere needs mode overwrite without overwriteSchema, "
          + "got mode " + mode.sparkName() + (overwriteSchema ? " with overwriteSchema" : ""));
    }
    boolean mergeSchema = "true".equalsIgnoreCase(options.get(MERGE_SCHEMA));
    boolean dynamic = dynamicOverwrite(options.get(PARTITION_OVERWRITE_MODE), mode, overwriteSchema, replaceWhere);
    String userMetadata = options.get(USER_METADATA);
    Map<String, String> writerOptions = new LinkedHashMap<>(options);
    for (String k : List.of(OVERWRITE_SCHEMA, MERGE_SCHEMA, REPLACE_WHERE, USER_METADATA, PARTITION_OVERWRITE_MODE)) {
      writerOptions.remove(k);
    }

    DeltaLog log = DeltaLog.forTable(session, path);
    // A plain append reads nothing of the table: it may start from this server's own last commit.
    boolean blindAppend = unchecked != null && mode == WriteMode.APPEND && !mergeSchema && tableProperties.isEmpty()
        && clusterBy == null && stage == null;
    OptimisticTransaction txn = new OptimisticTransaction(session, log, blindAppend);
    if (unchecked != null) {
      unchecked[0] = txn.snapshotUnchecked();
    }
    txn.registerPostCommitHook(AutoCompact.HOOK);
    if (stage != null) {
      txn.stageInstead(stage);
    }
    Snapshot snapshot = txn.snapshot();
    String table = txn.table();
    if (!snapshot.exists() && isFileSinkDirectory(log)) {
      throw ErrorClass.DELTA_MISSING_DELTA_TABLE.error("Path " + table + " is a batch-id file sink (it has "
          + "_spark_metadata), not a Delta table; refusing to write a table into it");
    }
    if (snapshot.exists()) {
      TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), table);
      if (mode == WriteMode.ERROR_IF_EXISTS) {
        throw ErrorClass.DELTA_TABLE_ALREADY_EXISTS.error(
            "Delta table already exists at " + table + " (version " + snapshot.version() + ") and mode is 'error'");
      }
      if (mode == WriteMode.IGNORE) {
        return CommandResult.nothingCommitted(snapshot.version(), table, start, 0);
      }
    }
    if (txnId != null && txn.setTransaction(txnId)) {
      return CommandResult.nothingCommitted(snapshot.version(), table, start, 0);
    }

    StructType inputSchema = data.schema();
    Optional<StructField> changeTypeField = SchemaUtils.findField(inputSchema, TransactionalWrite.CDC_TYPE_COLUMN);
    if (changeData && changeTypeField.isEmpty()) {
      throw ErrorClass.DELTA_COLUMN_NOT_FOUND_IN_SCHEMA.error("change_data=True needs a "
          + TransactionalWrite.CDC_TYPE_COLUMN + " column in the input; columns: " + List.of(inputSchema.fieldNames()));
    }
    StructType dataSchema = changeData ? SchemaUtils.withoutField(inputSchema, changeTypeField.get().name()) : inputSchema;
    Map<String, String> futureConf = new LinkedHashMap<>(snapshot.exists() ? snapshot.metadata().configuration() : Map.of());
    futureConf.putAll(tableProperties);
    if (!changeData && changeTypeField.isPresent() && TableConfig.ENABLE_CHANGE_DATA_FEED.fromConfiguration(futureConf)) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Column " + TransactionalWrite.CDC_TYPE_COLUMN + " is reserved for "
          + "change data on " + table + " (change data feed enabled): pass change_data=True to write change records");
    }
    if (replaceWhere != null && !snapshot.exists()) {
      throw ErrorClass.DELTA_TABLE_NOT_FOUND.error("Option replaceWhere needs an existing table at " + table);
    }
    try { // from here a new table's directory is claimed (updateMetadata): every failure aborts
      updateMetadata(txn, dataSchema, partitionBy, tableProperties, overwriteSchema, mergeSchema);
      cluster(txn, clusterBy, !snapshot.exists() || (mode == WriteMode.OVERWRITE && replaceWhere == null));
      if (mode == WriteMode.OVERWRITE && TableConfig.APPEND_ONLY.fromMetadata(txn.metadata())) {
        throw DeltaErrors.appendOnly(table, TableConfig.APPEND_ONLY.key(), "mode overwrite is not allowed");
      }
      boolean cdfEnabled = TableConfig.ENABLE_CHANGE_DATA_FEED.fromMetadata(txn.metadata());
      if (changeData && !cdfEnabled) {
        throw ErrorClass.DELTA_CHANGE_TABLE_FEED_DISABLED.error("change_data=True needs the change data feed on the "
            + "table at " + table + ": set table property " + TableConfig.ENABLE_CHANGE_DATA_FEED
            + "=true (table_properties or set_table_properties)");
      }
      if (changeData) {
        for (IdentityColumns.Info i : IdentityColumns.of(txn.metadata().schema())) {
          if (SchemaUtils.findField(dataSchema, i.name()).isEmpty()) {
            // protocol "Identity Columns" + "Change Data Files": a change record must carry the value
            // of its row, and a generated value of a table row cannot be tied to a separate record
            throw ErrorClass.DELTA_COLUMN_NOT_FOUND_IN_SCHEMA.error("change_data=True on " + table + " needs the "
                + "identity column " + i.name() + " in the input: the change records would carry no value for it",
                Map.of("columnName", i.name(), "tableSchema", dataSchema.simpleString()));
          }
        }
        checkChangeTypes(data, changeTypeField.get().name());
      }
      Set<String> replaced = null;
      if (replaceWhere != null) {
        replaced = PartitionPredicates.matching(session, snapshot.metadata(), snapshot.allFiles(), replaceWhere, table);
        txn.readPartitions(replaceWhere, replaced);
        checkRowsMatch(data, changeData ? changeTypeField.get().name() : null, replaceWhere, table);
      }
      dynamic = dynamic && !txn.metadata().partitionColumns().isEmpty();
      if (mode == WriteMode.OVERWRITE && replaceWhere == null && !dynamic && snapshot.exists()) {
        txn.readWholeTable();
      }
      CommitOptions commitOptions = new CommitOptions(userMetadata, dynamic);
      return writeAndCommit(txn, data, writerOptions, changeData, mode, replaced, replaceWhere, commitOptions, start);
    } catch (RuntimeException | Error e) {
      txn.abort();
      throw e;
    }
  }

  /**
   * The clustering columns of the write ({@link Clustering#PROPERTY}; Delta's {@code
   * ClusteredTableUtils} and {@code WriteIntoDelta}): a new table, or an existing one the write
   * replaces (mode overwrite without replaceWhere), gets the {@code clustering} and {@code
   * domainMetadata} writer features and the {@code delta.clustering} domain; on an append (or a
   * replaceWhere) the table's clustering columns must equal them ({@code
   * DELTA_CLUSTERING_COLUMNS_MISMATCH}, as Delta's append checks; change them with ALTER TABLE
   * CLUSTER BY). A replacing write without clustering columns on a table with the {@code
   * delta.clustering} domain leaves it clustered by no column (Delta's {@code getNewDomainMetadata}).
   */
  private static void cluster(OptimisticTransaction txn, List<String> clusterBy, boolean replacing) {
    Snapshot snapshot = txn.snapshot();
    if (clusterBy == null || clusterBy.isEmpty()) {
      if (replacing && Clustering.hasDomain(txn.deltaLog(), snapshot)) {
        // Delta's getNewDomainMetadata: a replacing write without clustering columns clusters by none
        txn.updateDomainMetadata(Clustering.none(), Set.of());
      }
      return;
    }
    if (replacing) {
      txn.updateDomainMetadata(Clustering.domain(txn.metadata(), clusterBy), Clustering.FEATURES);
      return;
    }
    List<String> existing = Clustering.columns(txn.deltaLog(), snapshot);
    List<String> given = clusterBy.stream().map(c -> c.toLowerCase(Locale.ROOT)).toList();
    if (!given.equals(existing.stream().map(c -> c.toLowerCase(Locale.ROOT)).toList())) {
      throw ErrorClass.DELTA_CLUSTERING_COLUMNS_MISMATCH.error("The clustering columns " + clusterBy + " of the "
          + "write differ from the clustering columns " + existing + " of " + txn.table() + "; change them with "
          + "ALTER TABLE ... CLUSTER BY", Map.of("providedClusteringColumns", String.join(",", clusterBy),
          "existingClusteringColumns", String.join(",", existing)));
    }
  }

  /** The metadata of a new table, an overwritten schema, or new table properties. */
  private static void updateMetadata(OptimisticTransaction txn, StructType dataSchema, List<String> partitionBy,
      Map<String, String> tableProperties, boolean overwriteSchema, boolean mergeSchema) {
    Snapshot snapshot = txn.snapshot();
    tableProperties = new LinkedHashMap<>(tableProperties);
    String description = tableProperties.remove(DESCRIPTION);
    if (!snapshot.exists() || overwriteSchema) {
      Map<String, String> conf = new LinkedHashMap<>(snapshot.exists() ? snapshot.metadata().configuration() : Map.of());
      conf.putAll(tableProperties);
      List<String> partitionColumns = new ArrayList<>();
      for (String p : partitionBy) {
        partitionColumns.add(SchemaUtils.findField(dataSchema, p).map(StructField::name).orElse(p));
      }
      txn.updateMetadata(new Metadata(snapshot.exists() ? snapshot.metadata().id() : UUID.randomUUID().toString(),
          null, description, SchemaUtils.defaultCollationAsPlainString(dataSchema).json(), partitionColumns, conf,
          System.currentTimeMillis()));
      return;
    }
    Metadata md = snapshot.metadata();
    checkPartitioning(md, partitionBy, txn.table());
    Map<String, String> conf = new LinkedHashMap<>(md.configuration());
    conf.putAll(tableProperties);
    StructType schema = md.schema();
    if (mergeSchema) {
      schema = SchemaEvolution.merge(schema, SchemaUtils.defaultCollationAsPlainString(dataSchema),
          TableConfig.ENABLE_TYPE_WIDENING.fromConfiguration(conf), md.partitionColumns());
    } else {
      checkSchema(schema, dataSchema, txn.table());
    }
    if (!conf.equals(md.configuration()) || !schema.equals(md.schema())) {
      txn.updateMetadata(new Metadata(md.id(), md.name(), md.description(), md.format(), schema.json(),
          md.partitionColumns(), conf, md.createdTime()));
    }
  }

  /** Writes the files and commits them; the caller aborts the transaction when this throws. */
  private static CommandResult writeAndCommit(OptimisticTransaction txn, Dataset<Row> data,
      Map<String, String> writerOptions, boolean changeData, WriteMode mode, Set<String> replaced, String replaceWhere,
      CommitOptions commitOptions, long start) {
    Snapshot snapshot = txn.snapshot();
    // protocol "Identity Columns": GENERATED ALWAYS columns take no given values (refused before any job)
    data = FilledColumns.withoutIdentity(data, txn.metadata().schema());
    if (!(data.queryExecution().analyzed() instanceof org.apache.spark.sql.catalyst.plans.logical.LocalRelation l
        && l.data().isEmpty() && (!snapshot.exists() || mode == WriteMode.OVERWRITE))) {
      // a CREATE (OR REPLACE) TABLE's first commit writes no rows: it gives no values
      IdentityColumns.checkExplicitInsert(txn.metadata().schema(), List.of(data.schema().fieldNames()));
    }
    TransactionalWrite writer = new TransactionalWrite(txn);
    List<AddFile> adds = writer.writeFiles(data, writerOptions, changeData);
    List<AddCDCFile> cdc = writer.changeFiles();
    if (commitOptions.dynamicPartitionOverwrite() && snapshot.exists()) {
      Column written = writtenPartitions(txn.metadata(), adds);
      replaced = PartitionPredicates.matching(txn.session(), snapshot.metadata(), snapshot.allFiles(), written, null);
      txn.readPartitions(written, null, replaced);
    }
    List<RemoveFile> removes = new ArrayList<>();
    long now = System.currentTimeMillis();
    if (mode == WriteMode.OVERWRITE && snapshot.exists()) {
      for (AddFile f : snapshot.allFiles()) {
        if (replaced == null || replaced.contains(f.path())) {
          removes.add(f.toRemove(now));
        }
      }
    }
    List<FileAction> actions = new ArrayList<>(adds);
    actions.addAll(cdc);
    actions.addAll(removes);
    long[] totals = CommandResult.rowsAndBytes(adds);
    Operation op = new Operation.Write(mode.sparkName(), txn.metadata().partitionColumns(),
        replaceWhere, adds.size(), totals[0], totals[1], removes.size(), cdc.size());
    long version = txn.commit(actions, commitOptions.apply(op));
    if (!txn.committed()) {
      txn.abort();
      return CommandResult.nothingCommitted(version, txn.table(), start, txn.attempts());
    }
    return new CommandResult(version, true, txn.table(), adds, removes, cdc, totals[0], totals[1],
        System.currentTimeMillis() - start, txn.attempts(), RowMetrics.NONE, txn.staged());
  }

  /** What the commit carries besides its files: userMetadata, and whether only written partitions are replaced. */
  private record CommitOptions(String userMetadata, boolean dynamicPartitionOverwrite) {
    Operation apply(Operation op) {
      return userMetadata == null ? op : new Operation.WithUserMetadata(op, userMetadata);
    }
  }

  /**
   * Whether an overwrite replaces only the partitions written (Delta's {@code
   * partitionOverwriteMode=dynamic}).
   *
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_ILLEGAL_OPTION} for a value other
   *     than static / dynamic; {@code DELTA_OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE} /
   *     {@code DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE} for dynamic with those options
   */
  private static boolean dynamicOverwrite(String value, WriteMode mode, boolean overwriteSchema, String replaceWhere) {
    if (value == null || value.equalsIgnoreCase("static")) {
      return false;
    }
    if (!value.equalsIgnoreCase("dynamic")) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Invalid value '" + value + "' for option '"
          + PARTITION_OVERWRITE_MODE + "': must be 'STATIC' or 'DYNAMIC'",
          Map.of("name", PARTITION_OVERWRITE_MODE, "input", value));
    }
    if (overwriteSchema) {
      throw ErrorClass.DELTA_OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE.error("overwriteSchema cannot be used "
          + "with " + PARTITION_OVERWRITE_MODE + "=dynamic");
    }
    if (replaceWhere != null) {
      throw ErrorClass.DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE.error("replaceWhere cannot be used "
          + "with " + PARTITION_OVERWRITE_MODE + "=dynamic");
    }
    return mode == WriteMode.OVERWRITE;
  }

  /** The predicate matching exactly the partitions of {@code adds} (partition values cast as the log's readers do). */
  private static Column writtenPartitions(Metadata md, List<AddFile> adds) {
    Column any = functions.lit(false);
    Set<Map<String, String>> seen = new java.util.HashSet<>();
    for (AddFile f : adds) {
      if (!seen.add(f.partitionValues())) {
        continue;
      }
      Column all = functions.lit(true);
      for (String p : md.partitionColumns()) {
        org.apache.spark.sql.types.DataType type = SchemaUtils.findField(md.schema(), p).map(StructField::dataType)
            .orElseThrow();
        String value = f.partitionValues().get(io.filecommit.delta.ColumnMapping.physicalName(md, p));
        all = all.and(functions.col(SchemaUtils.quote(p)).eqNullSafe(functions.lit(value).cast(type)));
      }
      any = any.or(all);
    }
    return any;
  }

  /**
   * Whether the table root holds a Spark file-sink log ({@code _spark_metadata}): such a directory
   * is a batch-id sink, not a place for a Delta table. Any other content that no Delta commit lists
   * (leftovers, foreign files) does not stop a new table, as in Delta.
   */
  private static boolean isFileSinkDirectory(DeltaLog log) {
    try {
      return log.fs().exists(new Path(log.tablePath(), "_spark_metadata"));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + log.tablePath(), e);
    }
  }

  /** Fails on the first change type outside {@link #CHANGE_TYPES}, naming it, before any write. */
  private static void checkChangeTypes(Dataset<Row> data, String column) {
    Column c = functions.col(SchemaUtils.quote(column));
    Column allowed = c.isin(CHANGE_TYPES.toArray());
    List<Row> bad = data.filter(c.isNotNull().and(functions.not(allowed))).select(c).limit(1).collectAsList();
    if (!bad.isEmpty()) {
      throw ErrorClass.FILECOMMIT_INVALID_CHANGE_TYPE.error("Invalid " + TransactionalWrite.CDC_TYPE_COLUMN + " value '"
          + bad.get(0).get(0) + "'; allowed: " + CHANGE_TYPES + " (or null for table data)");
    }
  }

  /** Fails if a table-data row does not satisfy the replaceWhere predicate (Delta's rule). */
  private static void checkRowsMatch(Dataset<Row> data, String changeTypeColumn, String predicate, String table) {
    Dataset<Row> rows = changeTypeColumn == null ? data
        : data.filter(functions.col(SchemaUtils.quote(changeTypeColumn)).isNull());
    Column matches = functions.coalesce(functions.expr(predicate), functions.lit(false));
    if (!rows.filter(functions.not(matches)).limit(1).collectAsList().isEmpty()) {
      throw ErrorClass.DELTA_REPLACE_WHERE_MISMATCH.error("Data written out does not match replaceWhere '" + predicate
          + "' for " + table);
    }
  }

  private static void checkPartitioning(Metadata md, List<String> partitionBy, String table) {
    if (partitionBy.isEmpty()) {
      return;
    }
    List<String> given = partitionBy.stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
    List<String> existing = md.partitionColumns().stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
    if (!given.equals(existing)) {
      throw ErrorClass.DELTA_INVALID_PARTITION_COLUMN.error("Partition columns " + partitionBy
          + " do not match the partition columns " + md.partitionColumns() + " of the table at " + table);
    }
  }

  private static void checkSchema(StructType table, StructType data, String tablePath) {
    for (StructField f : data.fields()) {
      Optional<StructField> t = SchemaUtils.findField(table, f.name());
      if (t.isEmpty()) {
        throw ErrorClass.DELTA_METADATA_MISMATCH.error("Schema mismatch: column '" + f.name() + "' ("
            + f.dataType().simpleString() + ") is not in the table at " + tablePath + " with columns "
            + List.of(table.fieldNames()));
      }
      if (!SchemaUtils.sameTypeForWrite(t.get().dataType(), f.dataType())) {
        throw ErrorClass.DELTA_METADATA_MISMATCH.error("Schema mismatch: column '" + f.name() + "' has type "
            + f.dataType().simpleString() + " in the data but " + t.get().dataType().simpleString()
            + " in the table at " + tablePath);
      }
    }
  }
}
