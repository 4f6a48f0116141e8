package io.filecommit.commands;

import io.filecommit.constraints.Constraints;
import io.filecommit.delta.ColumnMapping;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.PartitionPaths;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.files.ParquetStats;
import io.filecommit.read.TableScan;
import io.filecommit.schema.SchemaUtils;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import io.filecommit.txn.TransactionId;
import io.filecommit.txn.staging.StageRequest;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Stages Parquet files that another process wrote under the table root (pyarrow, delta-rs'
 * writers, a loader in another language) as the {@code add} actions of a staged append, so that
 * the usual publish commits them (Delta has no such command; the add actions are those of protocol
 * "Add File and Remove File", with "Per-file Statistics" read from each file's footer).
 *
 * <p>Every file is checked before anything is staged: it lies under the table root outside {@code
 * _delta_log} and {@code _change_data}, exists, is not already in the table, its footer schema
 * holds only table columns with the table's types (non-partition columns; missing nullable columns
 * read as null, as Delta reads older files), and its partition values (given, or parsed from its
 * {@code col=value} directories) name exactly the partition columns. The table's rules (NOT NULL,
 * CHECK constraints, invariants, generated columns) are checked on the files' rows by a Spark job.
 * Column-mapped tables are refused (a foreign writer does not know the physical names).
 */
public final class StageFilesCommand {
  private StageFilesCommand() {}

  /**
   * One file to stage.
   *
   * @param path path relative to the table root (not URI-encoded) or absolute under it
   * @param partitionValues partition column -> value (null = SQL NULL), or null to parse them from
   *     the path's {@code col=value} directories
   */
  public record StagedFile(String path, Map<String, String> partitionValues) {}

  /**
   * Stages the files.
   *
   * @param session Spark session
   * @param path table root (the table must exist)
   * @param files the files, at least one
   * @param txnId the application transaction the publish will carry, or null
   * @param stage how long the staged commit lives
   * @return the staged commit ({@link CommandResult#staged()}); {@code committed=false}
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_INVALID_STAGED_FILE} (outside
   *     the root, in the log, already in the table, repeated, not Parquet, bad partition values),
   *     {@code PATH_NOT_FOUND}, {@code DELTA_METADATA_MISMATCH} (footer schema), {@code
   *     DELTA_TABLE_NOT_FOUND}, {@code FILECOMMIT_CANNOT_STAGE} (column mapping), {@code
   *     FILECOMMIT_MALFORMED_COMMAND} (no files), the table's rule classes
   */
  public static CommandResult run(SparkSession session, String path, List<StagedFile> files, TransactionId txnId,
      StageRequest stage) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    if (files.isEmpty()) {
      throw DeltaErrors.malformed("No files given to stage for " + path);
    }
    DeltaLog log = DeltaLog.forTable(session, path);
    OptimisticTransaction txn = new OptimisticTransaction(session, log);
    txn.stageInstead(new StageRequest(stage.expiresAfterMs(), true));
    Snapshot snapshot = txn.snapshot();
    String table = txn.table();
    if (!snapshot.exists()) {
      throw ErrorClass.DELTA_TABLE_NOT_FOUND.error("No Delta table at " + table + " to stage files for");
    }
    Metadata md = snapshot.metadata();
    TableFeatures.checkWritable(snapshot.protocol(), md, table);
    if (ColumnMapping.enabled(md)) {
      throw ErrorClass.FILECOMMIT_CANNOT_STAGE.error("Staging files written elsewhere into the column-mapped "
          + "table " + table + " is not supported: their columns would need the table's physical names",
          Map.of("operation", "stage_files", "table", table));
    }
    if (txnId != null && txn.setTransaction(txnId)) {
      return CommandResult.nothingCommitted(snapshot.version(), table, start, 0);
    }
    List<AddFile> adds = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    // Built once: read options from the Hadoop configuration walk all its entries.
    org.apache.parquet.ParquetReadOptions options = org.apache.parquet.HadoopReadOptions.builder(log.conf()).build();
    ParquetToSparkSchemaConverter converter = new ParquetToSparkSchemaConverter(session.sessionState().conf());
    int indexed = TableConfig.DATA_SKIPPING_NUM_INDEXED_COLS.fromMetadata(md);
    for (StagedFile f : files) {
      AddFile add = check(log, md, snapshot, f, options, converter, indexed);
      if (!seen.add(add.path())) {
        throw invalid(f.path(), table, "it is given twice");
      }
      adds.add(add);
    }
    if (Constraints.hasRules(md.schema(), md.configuration())) {
      Set<String> all = new HashSet<>(List.of(md.schema().fieldNames()));
      try {
        Constraints.apply(TableScan.read(session, log, md, adds).drop(TableScan.FILE_COLUMN, TableScan.ROW_COLUMN),
            md.schema(), md.configuration(), all).foreach(r -> { });
      } catch (RuntimeException e) {
        throw Constraints.translate(e);
      }
    }
    long[] totals = CommandResult.rowsAndBytes(adds);
    txn.commit(adds, new Operation.Write("Append", md.partitionColumns(), null, adds.size(), totals[0], totals[1], 0, 0));
    return new CommandResult(snapshot.version(), false, table, adds, List.of(), List.of(), totals[0], totals[1],
        System.currentTimeMillis() - start, 1, RowMetrics.NONE, txn.staged());
  }

  /** Checks one file and builds its add action. */
  private static AddFile check(DeltaLog log, Metadata md, Snapshot snapshot, StagedFile f,
      org.apache.parquet.ParquetReadOptions options, ParquetToSparkSchemaConverter converter, int indexed) {
    String table = log.tablePath().toString();
    if (f.path() == null || f.path().isBlank()) {
      throw invalid(f.path(), table, "the path is empty");
    }
    Path root = log.fs().makeQualified(log.tablePath());
    Path given = new Path(f.path());
    Path file = log.fs().makeQualified(given.isAbsolute() || given.toUri().getScheme() != null ? given
        : new Path(log.tablePath(), f.path()));
    URI rel = root.toUri().relativize(file.toUri());
    String relative = rel.getPath();
    if (rel.isAbsolute() || relative.equals(file.toUri().getPath()) || relative.isEmpty()) {
      throw invalid(f.path(), table, "it is not under the table root");
    }
    if (relative.contains("..")) {
      throw invalid(f.path(), table, "it leaves the table root");
    }
    String first = relative.split("/")[0];
    if (first.startsWith("_") || first.startsWith(".")) {
      throw invalid(f.path(), table, "it lies in " + first + ", which holds the log or change data, not table data");
    }
    FileStatus status;
    try {
      status = log.fs().getFileStatus(file);
    } catch (FileNotFoundException e) {
      throw ErrorClass.PATH_NOT_FOUND.error("File " + file + " to stage for " + table + " does not exist",
          Map.of("path", file.toString()));
    } catch (IOException e) {
      throw log.readFailure(e);
    }
    if (!status.isFile()) {
      throw invalid(f.path(), table, "it is a directory");
    }
    String logPath = PartitionPaths.toLogPath(relative);
    if (snapshot.activeFiles().containsKey(logPath)) {
      throw invalid(f.path(), table, "it is already in the table");
    }
    Map<String, String> partitionValues = partitionValues(md, f, relative, table);
    org.apache.parquet.hadoop.metadata.ParquetMetadata footer;
    try (ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromStatus(status, log.conf()), options)) {
      footer = reader.getFooter();
    } catch (IOException | RuntimeException e) {
      throw invalid(f.path(), table, "it is not a readable Parquet file (" + e.getMessage() + ")");
    }
    checkSchema(md, converter.convert(footer.getFileMetaData().getSchema()), f.path(), table);
    String stats;
    try {
      stats = ParquetStats.fromFooter(footer, indexed);
    } catch (IOException e) {
      throw invalid(f.path(), table, "its footer cannot be read (" + e.getMessage() + ")");
    }
    return new AddFile(logPath, partitionValues, status.getLen(), status.getModificationTime(), true, stats, Map.of());
  }

  private static Map<String, String> partitionValues(Metadata md, StagedFile f, String relative, String table) {
    Map<String, String> given = f.partitionValues();
    if (given == null) {
      int slash = relative.lastIndexOf('/');
      try {
        given = PartitionPaths.parsePartitions(slash < 0 ? "" : relative.substring(0, slash));
      } catch (IllegalArgumentException e) {
        given = Map.of();
      }
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (String column : md.partitionColumns()) {
      Optional<String> key = given.keySet().stream().filter(k -> k.equalsIgnoreCase(column)).findFirst();
      if (key.isEmpty()) {
        throw invalid(f.path(), table, "it has no value for partition column '" + column + "' (given: " + given + ")");
      }
      out.put(column, given.get(key.get()));
    }
    if (given.size() != md.partitionColumns().size()) {
      throw invalid(f.path(), table, "its partition values " + given + " are not those of the partition columns "
          + md.partitionColumns());
    }
    return out;
  }

  private static void checkSchema(Metadata md, StructType fileSchema, String path, String table) {
    Set<String> partition = new HashSet<>();
    md.partitionColumns().forEach(c -> partition.add(c.toLowerCase(Locale.ROOT)));
    StructType tableSchema = md.schema();
    for (StructField f : fileSchema.fields()) {
      Optional<StructField> t = SchemaUtils.findField(tableSchema, f.name());
      if (t.isEmpty() || partition.contains(f.name().toLowerCase(Locale.ROOT))) {
        throw ErrorClass.DELTA_METADATA_MISMATCH.error("File " + path + " has column '" + f.name() + "', which is not "
            + "a data column of the table at " + table + " " + List.of(tableSchema.fieldNames()));
      }
      if (!SchemaUtils.sameTypeForWrite(t.get().dataType(), f.dataType())) {
        throw ErrorClass.DELTA_METADATA_MISMATCH.error("Column '" + f.name() + "' of file " + path + " has type "
            + f.dataType().simpleString() + " but " + t.get().dataType().simpleString() + " in the table at " + table);
      }
    }
  }

  private static RuntimeException invalid(String path, String table, String why) {
    return ErrorClass.FILECOMMIT_INVALID_STAGED_FILE.error("Cannot stage file '" + path + "' for " + table + ": " + why,
        Map.of("path", String.valueOf(path), "reason", why));
  }
}
