package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.actions.AddCDCFile;
import io.filecommit.actions.AddFile;
import io.filecommit.actions.FileAction;
import io.filecommit.actions.RemoveFile;
import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A DataFrame write into a Delta table with Spark's save modes, as one transaction (Delta's
 * {@code WriteIntoDelta} command; reference table-formats.md "Delta log").
 *
 * <ul>
 *   <li>append: create the table if absent, else add files (schema must match);
 *   <li>overwrite: add files and remove every active file in the same commit; option {@code
 *       overwriteSchema=true} replaces schema and partition columns;
 *   <li>error-if-exists: fail if the table exists;
 *   <li>ignore: do nothing if the table exists.
 * </ul>
 *
 * All checks (path, schema, partition columns, properties, mode) run before any file is written.
 */
public final class WriteIntoDelta {
  /** Spark's save modes. */
  public enum Mode {
    APPEND("Append"), OVERWRITE("Overwrite"), ERROR_IF_EXISTS("ErrorIfExists"), IGNORE("Ignore");

    private final String sparkName;

    Mode(String sparkName) {
      this.sparkName = sparkName;
    }

    /** The name Spark and Delta use in commitInfo ({@code Append}, {@code Overwrite}, ...). */
    public String sparkName() {
      return sparkName;
    }
  }

  /**
   * What a write committed.
   *
   * @param version committed version, or the current version when {@code committed} is false
   * @param committed false when nothing was committed (ignore on an existing table)
   * @param tablePath fully qualified table root
   * @param addFiles the added data files
   * @param removeFiles the removed files (overwrite)
   * @param cdcFiles the added change-data files
   * @param numOutputRows rows in the added data files
   * @param numOutputBytes bytes of the added data files
   * @param durationMs wall time of the write and commit, ms
   * @param attempts commit attempts
   * @param rowMetrics rows deleted, updated, inserted and copied by a row-level change
   *     ({@link RowMetrics#NONE} for other writes)
   */
  public record Result(
      long version,
      boolean committed,
      String tablePath,
      List<AddFile> addFiles,
      List<RemoveFile> removeFiles,
      List<AddCDCFile> cdcFiles,
      long numOutputRows,
      long numOutputBytes,
      long durationMs,
      int attempts,
      RowMetrics rowMetrics) {

    /** A result without row metrics (writes that are not row-level changes). */
    public Result(long version, boolean committed, String tablePath, List<AddFile> addFiles,
        List<RemoveFile> removeFiles, List<AddCDCFile> cdcFiles, long numOutputRows, long numOutputBytes,
        long durationMs, int attempts) {
      this(version, committed, tablePath, addFiles, removeFiles, cdcFiles, numOutputRows, numOutputBytes,
          durationMs, attempts, RowMetrics.NONE);
    }
  }

  /**
   * Row counts of a DELETE, UPDATE or MERGE (Delta's numDeletedRows, numUpdatedRows,
   * numInsertedRows, numCopiedRows).
   *
   * @param deleted rows deleted
   * @param updated rows updated
   * @param inserted rows inserted
   * @param copied unchanged rows copied from rewritten files into new files
   */
  public record RowMetrics(long deleted, long updated, long inserted, long copied) {
    /** All zero. */
    public static final RowMetrics NONE = new RowMetrics(0, 0, 0, 0);
  }

  /**
   * An idempotent write's application transaction (protocol "Transaction Identifiers").
   *
   * @param appId application id, non-empty
   * @param version the application's version, >= 0
   */
  public record Txn(String appId, long version) {}

  /** Writer option that lets overwrite replace the schema and partition columns. */
  public static final String OVERWRITE_SCHEMA = "overwriteSchema";
  /** Writer option: overwrite only the partitions matching this predicate on partition columns. */
  public static final String REPLACE_WHERE = "replaceWhere";
  /** The change types a change record may carry (protocol "Change Data Files"). */
  public static final List<String> CHANGE_TYPES = List.of("insert", "update_preimage", "update_postimage", "delete");

  private WriteIntoDelta() {}

  /**
   * Runs the write.
   *
   * @param session Spark session
   * @param data the rows to write
   * @param path table root (any Hadoop path)
   * @param mode the save mode
   * @param partitionBy partition columns (empty: unpartitioned, or the existing table's)
   * @param options writer options (Parquet options; {@code overwriteSchema})
   * @param tableProperties table properties for a new table or to add to an existing one
   * @param changeData whether the input carries change records in {@code _change_type}
   * @param txnId the application transaction of an idempotent write, or null: when the table's
   *     latest version for its appId is already >= its version, nothing is written ({@code
   *     committed=false}); else the commit carries {@code txn}
   * @return what was committed
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) for bad input (empty path, non-table directory, schema or
   *     partition mismatch, invalid properties)
   * @throws io.filecommit.errors.FileCommitException DELTA_TABLE_ALREADY_EXISTS in mode error-if-exists, a conflict class when a concurrent commit
   *     conflicts
   */
  public static Result run(
      SparkSession session,
      Dataset<Row> data,
      String path,
      Mode mode,
      List<String> partitionBy,
      Map<String, String> options,
      Map<String, String> tableProperties,
      boolean changeData,
      Txn txnId) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw ErrorClass.FILECOMMIT_INVALID_ARGUMENT.error("Table path must not be empty, got '" + path + "'");
    }
    TableProperties.validate(tableProperties);
    boolean overwriteSchema = "true".equalsIgnoreCase(options.get(OVERWRITE_SCHEMA));
    if (overwriteSchema && mode != Mode.OVERWRITE) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Option overwriteSchema=true needs mode overwrite, got mode " + mode.sparkName());
    }
    String replaceWhere = options.get(REPLACE_WHERE);
    if (replaceWhere != null && (mode != Mode.OVERWRITE || overwriteSchema)) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Option replaceWhere needs mode overwrite without overwriteSchema, got mode "
          + mode.sparkName() + (overwriteSchema ? " with overwriteSchema" : ""));
    }
    Map<String, String> writerOptions = new LinkedHashMap<>(options);
    writerOptions.remove(OVERWRITE_SCHEMA);
    writerOptions.remove(REPLACE_WHERE);

    DeltaLog log = DeltaLog.forTable(session, path);
    TransactionalWrite txn = new TransactionalWrite(session, log);
    Snapshot snapshot = txn.snapshot();
    String table = log.tablePath().toString();
    if (!snapshot.exists() && log.isFileSinkDirectory()) {
      throw ErrorClass.DELTA_MISSING_DELTA_TABLE.error("Path " + table + " is a batch-id file sink (it has _spark_metadata), not a "
          + "Delta table; refusing to write a table into it");
    }
    if (snapshot.exists()) {
      TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), table);
      if (mode == Mode.ERROR_IF_EXISTS) {
        throw ErrorClass.DELTA_TABLE_ALREADY_EXISTS.error(
            "Delta table already exists at " + table + " (version " + snapshot.version() + ") and mode is 'error'");
      }
      if (mode == Mode.IGNORE) {
        return new Result(snapshot.version(), false, table, List.of(), List.of(), List.of(), 0, 0,
            System.currentTimeMillis() - start, 0);
      }
    }
    if (txnId != null && txn.setTransaction(txnId.appId(), txnId.version())) {
      return new Result(snapshot.version(), false, table, List.of(), List.of(), List.of(), 0, 0,
          System.currentTimeMillis() - start, 0);
    }

    StructType inputSchema = data.schema();
    Optional<StructField> changeTypeField = TransactionalWrite.findField(inputSchema, TransactionalWrite.CDC_TYPE_COLUMN);
    if (changeData && changeTypeField.isEmpty()) {
      throw ErrorClass.DELTA_COLUMN_NOT_FOUND_IN_SCHEMA.error("change_data=True needs a " + TransactionalWrite.CDC_TYPE_COLUMN
          + " column in the input; columns: " + List.of(inputSchema.fieldNames()));
    }
    StructType dataSchema = changeData ? withoutField(inputSchema, changeTypeField.get().name()) : inputSchema;
    Map<String, String> futureConf = new LinkedHashMap<>(snapshot.exists() ? snapshot.metadata().configuration() : Map.of());
    futureConf.putAll(tableProperties);
    if (!changeData && changeTypeField.isPresent() && TableProperties.isTrue(futureConf, TableProperties.ENABLE_CDF)) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Column " + TransactionalWrite.CDC_TYPE_COLUMN + " is reserved for change data on "
          + table + " (change data feed enabled): pass change_data=True to write change records");
    }
    if (replaceWhere != null && !snapshot.exists()) {
      throw ErrorClass.DELTA_TABLE_NOT_FOUND.error("Option replaceWhere needs an existing table at " + table);
    }
    if (!snapshot.exists() || overwriteSchema) {
      Map<String, String> conf = new LinkedHashMap<>(snapshot.exists() ? snapshot.metadata().configuration() : Map.of());
      conf.putAll(tableProperties);
      txn.updateMetadata(new Metadata(
          snapshot.exists() ? snapshot.metadata().id() : UUID.randomUUID().toString(),
          null, null,
          defaultCollationAsPlainString(dataSchema).json(),
          resolvePartitionColumns(dataSchema, partitionBy),
          conf,
          System.currentTimeMillis()));
    } else {
      Metadata md = snapshot.metadata();
      checkPartitioning(md, partitionBy, table);
      checkSchema(md.schema(), dataSchema, table);
      Map<String, String> conf = new LinkedHashMap<>(md.configuration());
      conf.putAll(tableProperties);
      if (!conf.equals(md.configuration())) {
        txn.updateMetadata(md.withConfiguration(conf));
      }
    }
    if (mode == Mode.OVERWRITE && TableProperties.isTrue(txn.metadata().configuration(), TableProperties.APPEND_ONLY)) {
      throw ErrorClass.DELTA_CANNOT_MODIFY_APPEND_ONLY.error("Table " + table + " is append-only ("
          + TableProperties.APPEND_ONLY + "=true); mode overwrite is not allowed",
          Map.of("table_name", table, "config", TableProperties.APPEND_ONLY + "=false"));
    }
    boolean cdfEnabled = TableProperties.isTrue(txn.metadata().configuration(), TableProperties.ENABLE_CDF);
    if (changeData && !cdfEnabled) {
      throw ErrorClass.DELTA_CHANGE_TABLE_FEED_DISABLED.error("change_data=True needs the change data feed on the table at " + table
          + ": set table property " + TableProperties.ENABLE_CDF + "=true (table_properties or set_table_properties)");
    }
    if (changeData) {
      checkChangeTypes(data, changeTypeField.get().name());
    }
    Set<String> replaced = null;
    if (replaceWhere != null) {
      replaced = PartitionPredicates.matching(session, snapshot.metadata(), snapshot.allFiles(), replaceWhere, table);
      txn.readPartitions(replaceWhere, replaced);
      checkRowsMatch(data, changeData ? changeTypeField.get().name() : null, replaceWhere, table);
    }

    if (mode == Mode.OVERWRITE && replaceWhere == null && snapshot.exists()) {
      txn.readWholeTable();
    }
    try {
      return writeAndCommit(session, txn, data, writerOptions, changeData, mode, replaced, replaceWhere, table, start);
    } catch (RuntimeException | Error e) {
      txn.deleteWrittenFiles();
      throw e;
    }
  }

  /** Writes the files and commits them; the caller deletes the files when this throws. */
  private static Result writeAndCommit(SparkSession session, TransactionalWrite txn, Dataset<Row> data,
      Map<String, String> writerOptions, boolean changeData, Mode mode, Set<String> replaced, String replaceWhere,
      String table, long start) {
    Snapshot snapshot = txn.snapshot();
    List<AddFile> adds = txn.writeFiles(data, writerOptions, changeData);
    List<AddCDCFile> cdc = txn.changeFiles();
    List<RemoveFile> removes = new ArrayList<>();
    long now = System.currentTimeMillis();
    if (mode == Mode.OVERWRITE && snapshot.exists()) {
      for (AddFile f : snapshot.allFiles()) {
        if (replaced == null || replaced.contains(f.path())) {
          removes.add(f.toRemove(now));
        }
      }
    }
    List<FileAction> actions = new ArrayList<>(adds);
    actions.addAll(cdc);
    actions.addAll(removes);

    long[] totals = rowsAndBytes(adds);
    long rows = totals[0];
    long bytes = totals[1];
    ObjectNode info = ActionJson.MAPPER.createObjectNode();
    info.put("operation", "WRITE");
    ObjectNode params = info.putObject("operationParameters");
    params.put("mode", mode.sparkName());
    if (replaceWhere != null) {
      params.put("predicate", replaceWhere);
    }
    params.put("partitionBy", ActionJson.MAPPER.valueToTree(txn.metadata().partitionColumns()).toString());
    ObjectNode metrics = info.putObject("operationMetrics");
    metrics.put("numFiles", Integer.toString(adds.size()));
    metrics.put("numOutputRows", Long.toString(rows));
    metrics.put("numOutputBytes", Long.toString(bytes));
    if (!removes.isEmpty()) {
      metrics.put("numRemovedFiles", Integer.toString(removes.size()));
    }
    if (!cdc.isEmpty()) {
      metrics.put("numAddedChangeFiles", Integer.toString(cdc.size()));
    }
    info.put("engineInfo", "filecommit/0.1.0 Apache-Spark/" + session.version());
    long version = txn.commit(actions, info, mode == Mode.APPEND);
    if (!txn.committed()) {
      txn.deleteWrittenFiles();
      return new Result(version, false, table, List.of(), List.of(), List.of(), 0, 0,
          System.currentTimeMillis() - start, txn.attempts());
    }
    return new Result(version, true, table, adds, removes, cdc, rows, bytes,
        System.currentTimeMillis() - start, txn.attempts());
  }

  /**
   * Sets table properties on an existing table in a metadata-only commit (e.g. {@code
   * delta.enableChangeDataFeed=true}, which also raises the protocol to writer 4).
   *
   * @param session Spark session
   * @param path table root
   * @param properties properties to add or change
   * @param txnId application transaction of an idempotent call, or null (as in {@link #run})
   * @return the commit (no file actions)
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) if there is no table at {@code path}, or a property is invalid
   * @throws io.filecommit.errors.FileCommitException on a conflicting concurrent commit
   */
  public static Result setTableProperties(SparkSession session, String path, Map<String, String> properties,
      Txn txnId) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw ErrorClass.FILECOMMIT_INVALID_ARGUMENT.error("Table path must not be empty, got '" + path + "'");
    }
    TableProperties.validate(properties);
    DeltaLog log = DeltaLog.forTable(session, path);
    TransactionalWrite txn = new TransactionalWrite(session, log);
    Snapshot snapshot = txn.snapshot();
    String table = log.tablePath().toString();
    if (!snapshot.exists()) {
      throw ErrorClass.DELTA_TABLE_NOT_FOUND.error("No Delta table at " + table + " to set properties on");
    }
    TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), table);
    if (txnId != null && txn.setTransaction(txnId.appId(), txnId.version())) {
      return new Result(snapshot.version(), false, table, List.of(), List.of(), List.of(), 0, 0,
          System.currentTimeMillis() - start, 0);
    }
    Map<String, String> conf = new LinkedHashMap<>(snapshot.metadata().configuration());
    conf.putAll(properties);
    if (conf.equals(snapshot.metadata().configuration()) && txnId == null) {
      return new Result(snapshot.version(), false, table, List.of(), List.of(), List.of(), 0, 0,
          System.currentTimeMillis() - start, 0);
    }
    if (!conf.equals(snapshot.metadata().configuration())) {
      txn.updateMetadata(snapshot.metadata().withConfiguration(conf));
    }
    ObjectNode info = ActionJson.MAPPER.createObjectNode();
    info.put("operation", "SET TBLPROPERTIES");
    info.putObject("operationParameters").put("properties", ActionJson.MAPPER.valueToTree(properties).toString());
    info.put("engineInfo", "filecommit/0.1.0 Apache-Spark/" + session.version());
    long version = txn.commit(List.of(), info, false);
    return new Result(version, txn.committed(), table, List.of(), List.of(), List.of(), 0, 0,
        System.currentTimeMillis() - start, txn.attempts());
  }

  private static StructType withoutField(StructType schema, String name) {
    List<StructField> kept = new ArrayList<>();
    for (StructField f : schema.fields()) {
      if (!f.name().equals(name)) {
        kept.add(f);
      }
    }
    return new StructType(kept.toArray(new StructField[0]));
  }

  /** Fails on the first change type outside {@link #CHANGE_TYPES}, naming it, before any write. */
  private static void checkChangeTypes(Dataset<Row> data, String column) {
    Column c = functions.col("`" + column.replace("`", "``") + "`");
    Column allowed = c.isin(CHANGE_TYPES.toArray());
    List<Row> bad = data.filter(c.isNotNull().and(functions.not(allowed))).select(c).limit(1).collectAsList();
    if (!bad.isEmpty()) {
      throw ErrorClass.FILECOMMIT_INVALID_CHANGE_TYPE.error("Invalid " + TransactionalWrite.CDC_TYPE_COLUMN + " value '" + bad.get(0).get(0)
          + "'; allowed: " + CHANGE_TYPES + " (or null for table data)");
    }
  }


  /** Fails if a table-data row does not satisfy the replaceWhere predicate (Delta's rule). */
  private static void checkRowsMatch(Dataset<Row> data, String changeTypeColumn, String predicate, String table) {
    Dataset<Row> rows = changeTypeColumn == null ? data
        : data.filter(functions.col("`" + changeTypeColumn.replace("`", "``") + "`").isNull());
    Column matches = functions.coalesce(functions.expr(predicate), functions.lit(false));
    if (!rows.filter(functions.not(matches)).limit(1).collectAsList().isEmpty()) {
      throw ErrorClass.DELTA_REPLACE_WHERE_MISMATCH.error("Data written out does not match replaceWhere '" + predicate + "' for " + table);
    }
  }

  /** {rows (from the stats' numRecords), bytes} of the added files. */
  static long[] rowsAndBytes(List<AddFile> adds) {
    long rows = 0;
    long bytes = 0;
    for (AddFile a : adds) {
      rows += numRecords(a);
      bytes += a.size();
    }
    return new long[] {rows, bytes};
  }

  /** The {@code numRecords} of an AddFile's stats, 0 when absent. */
  static long numRecords(AddFile a) {
    if (a.stats() == null) {
      return 0;
    }
    try {
      JsonNode n = ActionJson.MAPPER.readTree(a.stats());
      return n.path("numRecords").asLong(0);
    } catch (IOException e) {
      return 0;
    }
  }

  private static List<String> resolvePartitionColumns(StructType schema, List<String> partitionBy) {
    List<String> resolved = new ArrayList<>();
    for (String p : partitionBy) {
      Optional<StructField> f = TransactionalWrite.findField(schema, p);
      resolved.add(f.map(StructField::name).orElse(p));
    }
    return resolved;
  }

  private static void checkPartitioning(Metadata md, List<String> partitionBy, String table) {
    if (partitionBy.isEmpty()) {
      return;
    }
    List<String> given = partitionBy.stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
    List<String> existing = md.partitionColumns().stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
    if (!given.equals(existing)) {
      throw ErrorClass.DELTA_INVALID_PARTITION_COLUMN.error("Partition columns " + partitionBy + " do not match the partition columns "
          + md.partitionColumns() + " of the table at " + table);
    }
  }

  /**
   * The schema with every explicitly collated {@code UTF8_BINARY} string (Spark 4 gives Python UDF
   * results that type) as the plain {@code string} Delta's schema language has; other collations
   * are kept (their readers need them). Nullability and field metadata are unchanged.
   */
  static StructType defaultCollationAsPlainString(StructType schema) {
    return (StructType) normalizeType(schema, false);
  }

  /** The type without nullability and without field metadata (column mapping, comments). */
  private static DataType plain(DataType t) {
    return normalizeType(t, true);
  }

  /**
   * A type with explicitly collated {@code UTF8_BINARY} strings as plain strings, nested types
   * included; with {@code plain}, also nullable everywhere and without field metadata.
   */
  private static DataType normalizeType(DataType t, boolean plain) {
    if (t instanceof org.apache.spark.sql.types.StringType st && st.collationId() == 0) {
      return DataTypes.StringType;
    }
    if (t instanceof StructType s) {
      List<StructField> fields = new ArrayList<>();
      for (StructField f : s.fields()) {
        fields.add(new StructField(f.name(), normalizeType(f.dataType(), plain), plain || f.nullable(),
            plain ? org.apache.spark.sql.types.Metadata.empty() : f.metadata()));
      }
      return new StructType(fields.toArray(new StructField[0]));
    }
    if (t instanceof org.apache.spark.sql.types.ArrayType a) {
      return new org.apache.spark.sql.types.ArrayType(normalizeType(a.elementType(), plain), plain || a.containsNull());
    }
    if (t instanceof org.apache.spark.sql.types.MapType m) {
      return new org.apache.spark.sql.types.MapType(normalizeType(m.keyType(), plain), normalizeType(m.valueType(), plain),
          plain || m.valueContainsNull());
    }
    return t;
  }

  private static void checkSchema(StructType table, StructType data, String tablePath) {
    for (StructField f : data.fields()) {
      Optional<StructField> t = TransactionalWrite.findField(table, f.name());
      if (t.isEmpty()) {
        throw ErrorClass.DELTA_METADATA_MISMATCH.error("Schema mismatch: column '" + f.name() + "' (" + f.dataType().simpleString()
            + ") is not in the table at " + tablePath + " with columns " + List.of(table.fieldNames()));
      }
      if (!plain(t.get().dataType()).equals(plain(f.dataType()))) {
        throw ErrorClass.DELTA_METADATA_MISMATCH.error("Schema mismatch: column '" + f.name() + "' has type "
            + f.dataType().simpleString() + " in the data but " + t.get().dataType().simpleString()
            + " in the table at " + tablePath);
      }
    }
  }
}
