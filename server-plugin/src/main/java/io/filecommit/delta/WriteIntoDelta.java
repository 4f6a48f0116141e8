package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.actions.AddCDCFile;
import io.filecommit.actions.AddFile;
import io.filecommit.actions.FileAction;
import io.filecommit.actions.RemoveFile;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Row;
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
      int attempts) {}

  /** Writer option that lets overwrite replace the schema and partition columns. */
  public static final String OVERWRITE_SCHEMA = "overwriteSchema";

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
   * @return what was committed
   * @throws IllegalArgumentException for bad input (empty path, non-table directory, schema or
   *     partition mismatch, invalid properties)
   * @throws DeltaWriteException when the table exists in mode error-if-exists or a concurrent commit
   *     conflicts
   */
  public static Result run(
      SparkSession session,
      Dataset<Row> data,
      String path,
      Mode mode,
      List<String> partitionBy,
      Map<String, String> options,
      Map<String, String> tableProperties) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw new IllegalArgumentException("Table path must not be empty, got '" + path + "'");
    }
    TableProperties.validate(tableProperties);
    boolean overwriteSchema = "true".equalsIgnoreCase(options.get(OVERWRITE_SCHEMA));
    if (overwriteSchema && mode != Mode.OVERWRITE) {
      throw new IllegalArgumentException("Option overwriteSchema=true needs mode overwrite, got mode " + mode.sparkName());
    }
    Map<String, String> writerOptions = new LinkedHashMap<>(options);
    writerOptions.remove(OVERWRITE_SCHEMA);

    DeltaLog log = new DeltaLog(new Path(path), session.sessionState().newHadoopConf());
    TransactionalWrite txn = new TransactionalWrite(session, log);
    Snapshot snapshot = txn.snapshot();
    String table = log.tablePath().toString();
    if (!snapshot.exists() && log.tablePathHasContent()) {
      throw new IllegalArgumentException(
          "Path " + table + " is not a Delta table (no commits in _delta_log) and is not empty; refusing to write into it");
    }
    if (snapshot.exists()) {
      snapshot.protocol().checkSupported(table);
      if (mode == Mode.ERROR_IF_EXISTS) {
        throw new DeltaWriteException(
            "Delta table already exists at " + table + " (version " + snapshot.version() + ") and mode is 'error'");
      }
      if (mode == Mode.IGNORE) {
        return new Result(snapshot.version(), false, table, List.of(), List.of(), List.of(), 0, 0,
            System.currentTimeMillis() - start, 0);
      }
    }

    StructType dataSchema = data.schema();
    if (!snapshot.exists() || overwriteSchema) {
      Map<String, String> conf = new LinkedHashMap<>(snapshot.exists() ? snapshot.metadata().configuration() : Map.of());
      conf.putAll(tableProperties);
      txn.updateMetadata(new Metadata(
          snapshot.exists() ? snapshot.metadata().id() : UUID.randomUUID().toString(),
          null, null,
          dataSchema.asNullable().json(),
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
      throw new IllegalArgumentException("Table " + table + " is append-only (delta.appendOnly=true); mode overwrite is not allowed");
    }

    List<AddFile> adds = txn.writeFiles(data, writerOptions);
    List<AddCDCFile> cdc = txn.changeFiles();
    List<RemoveFile> removes = new ArrayList<>();
    long now = System.currentTimeMillis();
    if (mode == Mode.OVERWRITE && snapshot.exists()) {
      for (AddFile f : snapshot.allFiles()) {
        removes.add(f.toRemove(now));
      }
    }
    List<FileAction> actions = new ArrayList<>(adds);
    actions.addAll(cdc);
    actions.addAll(removes);

    long rows = 0;
    long bytes = 0;
    for (AddFile a : adds) {
      rows += numRecords(a);
      bytes += a.size();
    }
    ObjectNode info = ActionJson.MAPPER.createObjectNode();
    info.put("operation", "WRITE");
    ObjectNode params = info.putObject("operationParameters");
    params.put("mode", mode.sparkName());
    params.put("partitionBy", ActionJson.MAPPER.valueToTree(txn.metadata().partitionColumns()).toString());
    ObjectNode metrics = info.putObject("operationMetrics");
    metrics.put("numFiles", Integer.toString(adds.size()));
    metrics.put("numOutputRows", Long.toString(rows));
    metrics.put("numOutputBytes", Long.toString(bytes));
    if (!removes.isEmpty()) {
      metrics.put("numRemovedFiles", Integer.toString(removes.size()));
    }
    info.put("engineInfo", "filecommit/0.1.0 Apache-Spark/" + session.version());
    long version = txn.commit(actions, info, mode == Mode.APPEND);
    return new Result(version, true, table, adds, removes, cdc, rows, bytes,
        System.currentTimeMillis() - start, txn.attempts());
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
      throw new IllegalArgumentException("Partition columns " + partitionBy + " do not match the partition columns "
          + md.partitionColumns() + " of the table at " + table);
    }
  }

  private static void checkSchema(StructType table, StructType data, String tablePath) {
    for (StructField f : data.fields()) {
      Optional<StructField> t = TransactionalWrite.findField(table, f.name());
      if (t.isEmpty()) {
        throw new IllegalArgumentException("Schema mismatch: column '" + f.name() + "' (" + f.dataType().simpleString()
            + ") is not in the table at " + tablePath + " with columns " + List.of(table.fieldNames()));
      }
      if (!t.get().dataType().asNullable().equals(f.dataType().asNullable())) {
        throw new IllegalArgumentException("Schema mismatch: column '" + f.name() + "' has type "
            + f.dataType().simpleString() + " in the data but " + t.get().dataType().simpleString()
            + " in the table at " + tablePath);
      }
    }
  }
}
