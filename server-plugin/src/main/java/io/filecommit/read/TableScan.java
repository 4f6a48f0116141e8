package io.filecommit.read;

import io.filecommit.delta.ColumnMapping;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.MaterializedRowTracking;
import io.filecommit.deletionvectors.RowIndexFilter;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.ErrorClass;
import io.filecommit.schema.SchemaUtils;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The rows of some of a table's active files as one DataFrame, as a Delta reader sees them:
 * Parquet files read by Spark's Parquet reader with the table's data schema (columns absent from
 * older files read as null), partition columns from each file's {@code partitionValues} (protocol
 * "Partition Value Serialization"), physical column names mapped back to logical ones (protocol
 * "Column Mapping"), and rows marked deleted by a file's deletion vector left out (protocol
 * "Deletion Vectors": a filter on the executors, {@link RowIndexFilter}, whose closure holds only the
 * descriptors; bitmaps read by Delta Kernel one file at a time per task).
 *
 * <p>Each row also carries where it lives: {@link #FILE_COLUMN} (the file's log path) and {@link
 * #ROW_COLUMN} (its 0-based position in the Parquet file, Spark's {@code _metadata.row_index}),
 * which row-level changes use to find the files they touch and to identify target rows.
 *
 * <p>On a table with row tracking enabled, each row also carries its stable row ID and row commit
 * version in the columns named by {@link MaterializedRowTracking} (protocol "Row Tracking", reader
 * requirements: the materialized value when not NULL, else {@code baseRowId} + row index and the
 * file's {@code defaultRowCommitVersion}), so rewrites write them back and rows keep them.
 */
public final class TableScan {
  /** Column with the log path of the file a row was read from. */
  public static final String FILE_COLUMN = "__fc_file";
  /** Column with the row's index in its Parquet file (long, 0-based). */
  public static final String ROW_COLUMN = "__fc_row";
  private static final String URI_COLUMN = "__fc_uri";
  private static final String BASE_ROW_ID = "__fc_base_row_id";
  private static final String COMMIT_VERSION = "__fc_default_row_commit_version";

  private TableScan() {}

  /**
   * Reads the given files of a table.
   *
   * @param session Spark session
   * @param log the table's log (resolves log paths, reads deletion vectors)
   * @param md the table's metadata (schema, partition columns, column mapping)
   * @param files active files of the snapshot being changed
   * @return the table's columns in schema order (logical names and types), then {@link
   *     #FILE_COLUMN} (string) and {@link #ROW_COLUMN} (long), then with row tracking enabled the
   *     materialized row ID and row commit version (long); empty with that schema when {@code
   *     files} is empty
   * @throws UncheckedIOException when the file system cannot be reached
   */
  public static Dataset<Row> read(SparkSession session, DeltaLog log, Metadata md, Collection<AddFile> files) {
    StructType schema = md.schema();
    List<String> partitionColumns = md.partitionColumns();
    boolean mapped = ColumnMapping.enabled(md);
    MaterializedRowTracking rt = MaterializedRowTracking.of(md).orElse(null);
    if (files.isEmpty()) {
      List<StructField> out = new ArrayList<>();
      for (StructField f : schema.fields()) {
        out.add(new StructField(f.name(), f.dataType(), true, org.apache.spark.sql.types.Metadata.empty()));
      }
      out.add(new StructField(FILE_COLUMN, DataTypes.StringType, false, org.apache.spark.sql.types.Metadata.empty()));
      out.add(new StructField(ROW_COLUMN, DataTypes.LongType, false, org.apache.spark.sql.types.Metadata.empty()));
      if (rt != null) {
        out.add(new StructField(rt.rowId(), DataTypes.LongType, true, org.apache.spark.sql.types.Metadata.empty()));
        out.add(new StructField(rt.rowCommitVersion(), DataTypes.LongType, true,
            org.apache.spark.sql.types.Metadata.empty()));
      }
      return session.createDataFrame(List.<Row>of(), new StructType(out.toArray(new StructField[0])));
    }

    // Data columns as stored: physical names (column mapping), no partition columns.
    List<StructField> stored = new ArrayList<>();
    for (StructField f : schema.fields()) {
      if (!isPartition(partitionColumns, f.name())) {
        StructField p = mapped ? ColumnMapping.physical(f) : f;
        stored.add(new StructField(p.name(), p.dataType(), true, org.apache.spark.sql.types.Metadata.empty()));
      }
    }
    if (rt != null) {
      stored.add(new StructField(rt.rowId(), DataTypes.LongType, true, org.apache.spark.sql.types.Metadata.empty()));
      stored.add(new StructField(rt.rowCommitVersion(), DataTypes.LongType, true,
          org.apache.spark.sql.types.Metadata.empty()));
    }

    // One row per file: the URI Spark reports as _metadata.file_path, the log path, partition values.
    FileSystem fs = log.fs();
    List<String> paths = new ArrayList<>();
    List<Row> fileRows = new ArrayList<>();
    Map<String, DeletionVectorDescriptor> dvs = new HashMap<>();
    for (AddFile f : files) {
      Path qualified = fs.makeQualified(log.absolutePath(f.path()));
      String uri = qualified.toUri().toString();
      paths.add(qualified.toString());
      Object[] values = new Object[4 + partitionColumns.size()];
      values[0] = uri;
      values[1] = f.path();
      for (int i = 0; i < partitionColumns.size(); i++) {
        values[i + 2] = f.partitionValues().get(ColumnMapping.physicalName(md, partitionColumns.get(i)));
      }
      values[2 + partitionColumns.size()] = f.baseRowId();
      values[3 + partitionColumns.size()] = f.defaultRowCommitVersion();
      fileRows.add(RowFactory.create(values));
      if (f.deletionVector() != null) {
        dvs.put(uri, f.deletionVector());
      }
    }
    List<StructField> fileFields = new ArrayList<>();
    fileFields.add(new StructField(URI_COLUMN, DataTypes.StringType, false, org.apache.spark.sql.types.Metadata.empty()));
    fileFields.add(new StructField(FILE_COLUMN, DataTypes.StringType, false, org.apache.spark.sql.types.Metadata.empty()));
    for (String p : partitionColumns) {
      fileFields.add(new StructField(p, DataTypes.StringType, true, org.apache.spark.sql.types.Metadata.empty()));
    }
    fileFields.add(new StructField(BASE_ROW_ID, DataTypes.LongType, true, org.apache.spark.sql.types.Metadata.empty()));
    fileFields.add(new StructField(COMMIT_VERSION, DataTypes.LongType, true,
        org.apache.spark.sql.types.Metadata.empty()));
    Dataset<Row> fileTable = session.createDataFrame(fileRows, new StructType(fileFields.toArray(new StructField[0])));

    Dataset<Row> raw = session.read().schema(new StructType(stored.toArray(new StructField[0])))
        .parquet(paths.toArray(new String[0]));
    List<Column> rawCols = new ArrayList<>();
    for (StructField s : stored) {
      rawCols.add(functions.col(SchemaUtils.quote(s.name())));
    }
    rawCols.add(functions.col("_metadata.file_path").as(URI_COLUMN));
    rawCols.add(functions.col("_metadata.row_index").as(ROW_COLUMN));
    Dataset<Row> rows = raw.select(rawCols.toArray(new Column[0]));
    if (!dvs.isEmpty()) {
      // Rows marked by their file's DV are left out on the executors, one file's bitmap at a time.
      rows = rows.filter(RowIndexFilter.keep(session, log.tablePath().toString(), log.conf(), dvs, Set.of(),
          RowIndexFilter.Mode.DROP_MARKED, functions.col(URI_COLUMN), functions.col(ROW_COLUMN)));
    }
    rows = rows.join(functions.broadcast(fileTable),
        scala.jdk.javaapi.CollectionConverters.asScala(List.of(URI_COLUMN)).toSeq(), "inner");

    List<Column> out = new ArrayList<>();
    for (StructField f : schema.fields()) {
      if (isPartition(partitionColumns, f.name())) {
        String p = partitionColumns.stream().filter(c -> c.equalsIgnoreCase(f.name())).findFirst().orElseThrow();
        out.add(functions.col(SchemaUtils.quote(p)).cast(f.dataType()).as(f.name()));
      } else {
        String storedName = mapped ? ColumnMapping.physical(f).name() : f.name();
        Column c = functions.col(SchemaUtils.quote(storedName));
        DataType t = f.dataType();
        out.add((mapped ? c.cast(t) : c).as(f.name()));
      }
    }
    out.add(functions.col(FILE_COLUMN));
    out.add(functions.col(ROW_COLUMN));
    if (rt != null) {
      out.add(functions.coalesce(functions.col(SchemaUtils.quote(rt.rowId())),
          functions.col(BASE_ROW_ID).plus(functions.col(ROW_COLUMN))).as(rt.rowId()));
      out.add(functions.coalesce(functions.col(SchemaUtils.quote(rt.rowCommitVersion())), functions.col(COMMIT_VERSION))
          .as(rt.rowCommitVersion()));
    }
    return rows.select(out.toArray(new Column[0]));
  }

  /**
   * Live rows in the files according to their statistics ({@code numRecords} minus the deletion
   * vector's cardinality), or -1 when a file has no trustworthy count.
   *
   * @param files active files
   * @return the sum over them, or -1
   */
  public static long statsRowCount(Collection<AddFile> files) {
    long total = 0;
    for (AddFile f : files) {
      java.util.OptionalLong n = f.numLogicalRecords();
      if (n.isEmpty()) {
        return -1;
      }
      total += n.getAsLong();
    }
    return total;
  }

  private static boolean isPartition(List<String> partitionColumns, String name) {
    return partitionColumns.stream().anyMatch(p -> p.equalsIgnoreCase(name));
  }

  /**
   * Session settings under which a rewrite would read the table wrongly and commit it: Spark's
   * {@code ignoreMissingFiles} / {@code ignoreCorruptFiles} turn a file that cannot be read into
   * no rows (which a rewrite then removes for good), and the LEGACY rebase modes shift dates and
   * timestamps of files written by Spark 2 / Hive (as Spark's {@code SQLConf} names them).
   */
  private static final Map<String, String> UNSAFE_READS = Map.of(
      "spark.sql.files.ignoreMissingFiles", "true",
      "spark.sql.files.ignoreCorruptFiles", "true",
      "spark.sql.parquet.datetimeRebaseModeInRead", "LEGACY",
      "spark.sql.parquet.int96RebaseModeInRead", "LEGACY");

  /**
   * Refuses a rewrite in a session whose read settings would drop or change rows silently (see
   * {@link #UNSAFE_READS}); a client may set these for its own reads, but a rewrite commits what it
   * read: a missing or corrupt file must fail it, as Delta's own reads of a table do.
   *
   * @param session the command's session
   * @param operation the rewrite, for the message ({@code DELETE}, {@code OPTIMIZE}, ...)
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_UNSAFE_READ_SETTING} naming
   *     the setting and its value (parameters {@code key}, {@code value}) before anything is read
   */
  public static void requireStrictReads(SparkSession session, String operation) {
    for (Map.Entry<String, String> e : UNSAFE_READS.entrySet()) {
      scala.Option<String> set = session.conf().getOption(e.getKey());
      String value = set.isDefined() ? set.get() : "";
      if (value.trim().equalsIgnoreCase(e.getValue())) {
        throw ErrorClass.FILECOMMIT_UNSAFE_READ_SETTING.error(operation + " is refused while the session sets "
            + e.getKey() + "=" + value.trim() + ": it would read the table wrongly (a missing or corrupt file as no "
            + "rows, or shifted dates) and commit that; unset it for this session. Nothing was written",
            Map.of("key", e.getKey(), "value", value.trim()));
      }
    }
  }
}
