package io.filecommit.commands;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.PartitionPaths;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.storage.TableLocation;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.files.ParquetStats;
import io.filecommit.schema.SchemaEvolution;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.PartitioningUtils;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Option;

/**
 * CONVERT TO DELTA of a Parquet directory (Delta's {@code ConvertToDeltaCommand}, its files listed
 * as Delta's {@code ManualListingFileManifest} lists them): the Parquet files under the directory
 * become version 0 of a Delta table at the same path, without being rewritten. The version holds
 * the protocol, the metaData (schema: the files' footer schemas, all fields nullable, merged as
 * Delta's {@code SchemaMergingUtils.mergeSchemas} merges them, then the partition columns as
 * Spark's {@code PartitioningUtils.mergeDataAndPartitionSchema} adds them; partition columns: the
 * given partition schema's names; no table properties), one {@code add} per file (path relative to
 * the root and URI-encoded, partition values parsed from the file's {@code col=value} directories
 * as strings, size, modification time, {@code dataChange=true}, statistics read from the footer
 * by {@link ParquetStats}) and {@code commitInfo} {@link Operation.Convert}.
 *
 * <p>Listed: every file below the root whose name starts with neither {@code _} nor {@code .}, in
 * directories whose names do not either unless they hold {@code =} (Delta's {@code
 * ConvertUtils.dirNameFilter}). A root that already holds a Delta table is left as it is (a no-op,
 * as Delta's). Errors, raised before anything is committed (a {@code _delta_log} made for the
 * commit is removed again): {@code PATH_NOT_FOUND} (no such directory), {@code
 * DELTA_EMPTY_DIRECTORY}, {@code DELTA_FAILED_READ_FILE_FOOTER} (a file that is not Parquet),
 * {@code DELTA_FAILED_TO_MERGE_FIELDS} (a file whose schema does not merge), {@code
 * DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME} / {@code
 * DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME} (directories that do not match the partition
 * schema), {@code DELTA_FAILED_CAST_PARTITION_VALUE}, {@code FILECOMMIT_TABLE_LOCATION_OVERLAP}
 * (a directory inside or holding another table), and the transaction's.
 */
public final class ConvertToDeltaCommand {
  private ConvertToDeltaCommand() {}

  /**
   * What a convert did.
   *
   * @param version the committed version (0), or the existing table's latest version for a no-op
   * @param converted false when the path already held a Delta table (nothing was committed)
   * @param numFiles the files made the table's (0 for a no-op)
   */
  public record Result(long version, boolean converted, long numFiles) {}

  /**
   * The target of a convert, from its identifier's parts ({@code parquet.`/path`}, as Delta's
   * {@code isPathIdentifier} reads it).
   *
   * @param provider the format named, lower case: {@code parquet}, or {@code delta} (a no-op for Delta)
   * @param path the directory as given
   */
  public record Target(String provider, String path) {
    /** {@return whether the identifier names a Delta table already (Delta converts nothing then)} */
    public boolean delta() {
      return provider.equals("delta");
    }
  }

  /**
   * Reads the identifier of a convert.
   *
   * @param parts the identifier's name parts, e.g. {@code [parquet, /data/t]}
   * @return the target
   * @throws FileCommitException {@code DELTA_MISSING_PROVIDER_FOR_CONVERT} (a path without a
   *     format), {@code DELTA_CONVERT_NON_PARQUET_TABLE} (another format), {@code
   *     FILECOMMIT_UNSUPPORTED_OPERATION} (a catalog table's name: this server converts paths only)
   */
  public static Target target(List<String> parts) {
    String id = String.join(".", parts);
    if (parts.size() == 1 && new Path(parts.get(0)).isAbsolute()) {
      throw ErrorClass.DELTA_MISSING_PROVIDER_FOR_CONVERT.error("CONVERT TO DELTA only supports parquet tables. "
          + "Please rewrite your target as parquet.`" + parts.get(0) + "` if it's a parquet directory",
          Map.of("path", parts.get(0)));
    }
    if (parts.size() == 2 && new Path(parts.get(1)).isAbsolute()) {
      String provider = parts.get(0).toLowerCase(Locale.ROOT);
      if (provider.equals("parquet") || provider.equals("delta")) {
        return new Target(provider, parts.get(1));
      }
      String tableId = "`" + parts.get(0) + "`.`" + parts.get(1) + "`";
      throw ErrorClass.DELTA_CONVERT_NON_PARQUET_TABLE.error("CONVERT TO DELTA only supports parquet tables, but "
          + "you are trying to convert a " + parts.get(0) + " source: " + tableId,
          Map.of("sourceName", parts.get(0), "tableId", tableId));
    }
    throw ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION.error("CONVERT TO DELTA of the catalog table " + id
        + " is not supported by this server; convert its directory: parquet.`/path`; nothing was converted",
        Map.of("operation", "CONVERT TO DELTA of a catalog table"));
  }

  /**
   * Converts the Parquet directory at {@code path} in place.
   *
   * @param session Spark session (Parquet schema conversion settings, resolver)
   * @param path the directory, already checked against the allowed roots and privileges
   * @param partitionSchema the partition columns and their types, or null / empty for none
   * @return the commit, or the existing table's version
   * @throws FileCommitException the classes listed in the class comment
   */
  public static Result run(SparkSession session, String path, StructType partitionSchema) {
    StructType parts = partitionSchema == null ? new StructType() : partitionSchema;
    DeltaLog log = DeltaLog.forTable(session, path);
    FileSystem fs = log.fs();
    Path root = fs.makeQualified(log.tablePath());
    List<FileStatus> files;
    OptimisticTransaction txn;
    try {
      if (!fs.exists(root)) {
        throw ErrorClass.PATH_NOT_FOUND.error("CONVERT TO DELTA: " + root + " doesn't exist",
            Map.of("path", root.toString()));
      }
      txn = new OptimisticTransaction(session, log);
      if (txn.snapshot().exists()) {
        return new Result(txn.snapshot().version(), false, 0);
      }
      files = new ArrayList<>();
      list(fs, root, files);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + root + " to convert it", e);
    }
    if (files.isEmpty()) {
      throw ErrorClass.DELTA_EMPTY_DIRECTORY.error("No file found in the directory: " + root,
          Map.of("directory", root.toString()));
    }
    files.sort(Comparator.comparing(f -> f.getPath().toString()));
    org.apache.parquet.ParquetReadOptions options = org.apache.parquet.HadoopReadOptions.builder(log.conf()).build();
    ParquetToSparkSchemaConverter converter = new ParquetToSparkSchemaConverter(session.sessionState().conf());
    int indexed = TableConfig.DATA_SKIPPING_NUM_INDEXED_COLS.defaultValue();
    List<String> stats = new ArrayList<>(); // per file: footers are not kept, a directory may hold many
    StructType data = new StructType();
    for (FileStatus f : files) {
      ParquetMetadata footer;
      try (ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromStatus(f, log.conf()), options)) {
        footer = reader.getFooter();
      } catch (IOException | RuntimeException e) {
        throw ErrorClass.DELTA_FAILED_READ_FILE_FOOTER.error("Could not read footer for file: " + f.getPath(), e,
            Map.of("currentFile", f.getPath().toString()));
      }
      data = SchemaEvolution.merge(data, converter.convert(footer.getFileMetaData().getSchema()).asNullable(), false,
          List.of());
      try {
        stats.add(ParquetStats.fromFooter(footer, indexed));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    boolean caseSensitive = session.sessionState().conf().caseSensitiveAnalysis();
    StructType schema = PartitioningUtils.mergeDataAndPartitionSchema(data, parts, caseSensitive)._1();
    List<AddFile> adds = new ArrayList<>();
    for (int i = 0; i < files.size(); i++) {
      FileStatus f = files.get(i);
      String relative = root.toUri().relativize(f.getPath().toUri()).getPath();
      adds.add(new AddFile(PartitionPaths.toLogPath(relative), partitionValues(session, relative, f, parts),
          f.getLen(), f.getModificationTime(), true, stats.get(i), Map.of()));
    }
    List<String> partitionColumns = List.of(parts.fieldNames());
    try {
      txn.onAbort(TableLocation.claimConvertedTable(session, fs, root));
      txn.updateMetadata(new Metadata(UUID.randomUUID().toString(), null, null, schema.json(), partitionColumns,
          Map.of(), System.currentTimeMillis()));
      long version = txn.commit(adds, new Operation.Convert(adds.size(), partitionColumns, true, "parquet"));
      return new Result(version, true, adds.size());
    } catch (RuntimeException | Error e) {
      txn.abort();
      throw e;
    }
  }

  /** Lists the data files below {@code dir}, as Delta's manual listing does (see the class comment). */
  private static void list(FileSystem fs, Path dir, List<FileStatus> out) throws IOException {
    for (FileStatus s : fs.listStatus(dir)) {
      String name = s.getPath().getName();
      boolean hidden = name.startsWith("_") || name.startsWith(".");
      if (s.isDirectory()) {
        if (!hidden || name.contains("=")) {
          list(fs, s.getPath(), out);
        }
      } else if (!hidden) {
        out.add(s);
      }
    }
  }

  /**
   * A file's partition values from its directories (Delta's {@code ConvertUtils.createAddFile}):
   * as many {@code col=value} directories as partition columns, in order, the names matching
   * (case-insensitively), each value castable to its column's type; the values as written (the
   * default partition name: null), keyed by the partition schema's names.
   */
  private static Map<String, String> partitionValues(SparkSession session, String relative, FileStatus f,
      StructType parts) {
    int slash = relative.lastIndexOf('/');
    Map<String, String> parsed = new LinkedHashMap<>();
    String dir = slash < 0 ? "" : relative.substring(0, slash);
    for (String segment : dir.isEmpty() ? new String[0] : dir.split("/")) {
      int eq = segment.indexOf('=');
      if (eq <= 0) {
        parsed.clear(); // Spark's parsePartition reads only the trailing col=value directories
        continue;
      }
      parsed.putAll(PartitionPaths.parsePartitions(segment));
    }
    String file = f.getPath().toUri().toString();
    List<String> expected = List.of(parts.fieldNames());
    List<String> found = new ArrayList<>(parsed.keySet());
    if (found.size() != expected.size()) {
      throw ErrorClass.DELTA_UNEXPECTED_NUM_PARTITION_COLUMNS_FROM_FILE_NAME.error("Expecting " + expected.size()
          + " partition column(s): " + columns(expected) + ", but found " + found.size() + " partition column(s): "
          + columns(found) + " from parsing the file name: " + file, Map.of("expectedColsSize",
          Integer.toString(expected.size()), "expectedCols", columns(expected), "parsedColsSize",
          Integer.toString(found.size()), "parsedCols", columns(found), "path", file));
    }
    String zone = session.sessionState().conf().sessionLocalTimeZone();
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < expected.size(); i++) {
      StructField field = parts.fields()[i];
      String value = parsed.get(found.get(i));
      if (value != null && new Cast(Literal.create(value, DataTypes.StringType), field.dataType(),
          Option.apply(zone), org.apache.spark.sql.catalyst.expressions.EvalMode.LEGACY()).eval(null) == null) {
        throw ErrorClass.DELTA_FAILED_CAST_PARTITION_VALUE.error("Failed to cast partition value `" + value + "` to "
            + field.dataType(), Map.of("value", value, "dataType", field.dataType().toString()));
      }
      if (!(Boolean) session.sessionState().conf().resolver().apply(expected.get(i), found.get(i))) {
        throw ErrorClass.DELTA_UNEXPECTED_PARTITION_COLUMN_FROM_FILE_NAME.error("Expecting partition column `"
            + expected.get(i) + "`, but found partition column `" + found.get(i) + "` from parsing the file name: "
            + file, Map.of("expectedCol", "`" + expected.get(i) + "`", "parsedCol", "`" + found.get(i) + "`",
            "path", file));
      }
      values.put(expected.get(i), value);
    }
    return values;
  }

  private static String columns(List<String> names) {
    return names.stream().map(n -> "`" + n + "`").collect(java.util.stream.Collectors.joining(", ", "[", "]"));
  }
}
