package io.filecommit.files;

import io.filecommit.files.nativewriter.NativeParquetWriter;
import io.filecommit.constraints.Constraints;
import io.filecommit.delta.ColumnMapping;
import io.filecommit.delta.IdentityColumns;
import io.filecommit.delta.MaterializedRowTracking;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.schema.SchemaEvolution;
import io.filecommit.schema.SchemaUtils;
import io.filecommit.txn.InFlightWrites;
import io.filecommit.txn.OptimisticTransaction;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The write half of a Delta transaction (Delta's {@code TransactionalWrite.writeFiles}): the input
 * is normalized to the table's schema (column case and order, null-filled missing columns), the
 * table's write-time rules are applied ({@link Constraints}), columns are renamed to their physical
 * names under column mapping, and Spark's own {@code FileFormatWriter} writes Parquet files through
 * a {@link DelayedCommitProtocol}. The AddFiles (and AddCDCFiles) come back for the transaction to
 * commit; the written files are registered with it ({@link OptimisticTransaction#onAbort}) so that
 * a write that does not commit leaves nothing behind, and the write is registered as in flight on
 * the table ({@link InFlightWrites}, with its committer's file-name token) so that a VACUUM on this
 * server keeps its files until the command ends.
 *
 * <p>Change data (protocol "Change Data Files"; Delta's {@code DelayedCommitProtocol} {@code
 * __is_cdc} partition): the virtual partition column {@code __is_cdc = _change_type IS NOT NULL}
 * goes in front of the table's partition columns. Because a Parquet file has one schema and table
 * files must not carry {@code _change_type}, table rows and change rows are written by two jobs
 * through the same committer.
 *
 * <p>Small inputs already on the driver (a Spark Connect {@code LocalRelation}) are written
 * without a Spark job by {@link DriverSideWrite}, through the same committer and Spark's own
 * task-side writer; anything it cannot write exactly so goes through the job.
 */
public final class TransactionalWrite {
  /** Column of change records that holds the change type (protocol "Change Data Files"). */
  public static final String CDC_TYPE_COLUMN = "_change_type";

  private final OptimisticTransaction txn;
  private DelayedCommitProtocol committer;

  /**
   * A writer for one transaction.
   *
   * @param txn the transaction whose metadata the files follow
   */
  public TransactionalWrite(OptimisticTransaction txn) {
    this.txn = txn;
  }

  /**
   * The committer for a write under the table root (Delta's {@code getCommitter}), with the random
   * prefix and statistics settings of the table's properties (column-mapped tables always use random
   * prefixes, as Delta's writer does).
   *
   * @return a new committer with job id {@code delta}
   */
  DelayedCommitProtocol newCommitter() {
    Metadata md = txn.metadata();
    Integer prefix = TableConfig.RANDOMIZE_FILE_PREFIXES.fromMetadata(md) || ColumnMapping.enabled(md)
        ? TableConfig.RANDOM_PREFIX_LENGTH.fromMetadata(md) : null;
    return new DelayedCommitProtocol("delta", txn.deltaLog().tablePath().toString(), prefix,
        TableConfig.DATA_SKIPPING_NUM_INDEXED_COLS.fromMetadata(md));
  }

  /**
   * Projects the input onto the table schema: table column order and names (input matched
   * case-insensitively), absent non-partition columns filled with their defaults or typed nulls
   * (absent identity columns of table data with new identity values: {@link
   * OptimisticTransaction#identityValues}), nested fields and
   * widened types fitted to the table's ({@link SchemaEvolution#project}); with {@code
   * enforce}, absent generated columns computed and the table's rules checked on every row. The
   * materialized row tracking columns ({@link MaterializedRowTracking}) of the input are kept last
   * for table data (protocol "Row Tracking": preserved stable row IDs) and left out of change data.
   *
   * @param data the input
   * @param changeTypeColumn the input's change-type column, kept as the last column named {@code
   *     _change_type}; null for none
   * @param enforce whether to apply {@link Constraints}
   * @return the normalized input
   * @throws FileCommitException {@code DELTA_PARTITION_COLUMN_NOT_FOUND} for a partition column
   *     missing from the data, {@code DELTA_METADATA_MISMATCH} for a data column not in the table
   */
  public Dataset<Row> normalizeData(Dataset<Row> data, String changeTypeColumn, boolean enforce) {
    Metadata md = txn.metadata();
    StructType table = md.schema();
    StructType input = data.schema();
    MaterializedRowTracking rt = MaterializedRowTracking.of(md).orElse(null);
    for (StructField f : input.fields()) {
      if (!f.name().equals(changeTypeColumn) && SchemaUtils.findField(table, f.name()).isEmpty()
          && (rt == null || !rt.isColumn(f.name()))) {
        throw ErrorClass.DELTA_METADATA_MISMATCH.error("Column '" + f.name() + "' of the data is not in the table schema of "
            + txn.table() + ": " + List.of(table.fieldNames()));
      }
    }
    List<String> generated = TableFeatures.generatedColumns(table);
    Set<String> supplied = new HashSet<>();
    List<Column> cols = new ArrayList<>();
    for (StructField f : table.fields()) {
      Optional<StructField> in = SchemaUtils.findField(input, f.name());
      if (in.isPresent()) {
        supplied.add(f.name());
        cols.add(SchemaEvolution.project(functions.col(SchemaUtils.quote(in.get().name())), in.get().dataType(),
            f.dataType()).as(f.name()));
      } else if (changeTypeColumn == null && IdentityColumns.isIdentity(f)) {
        // protocol "Identity Columns": a row lacking the column gets a new value (its mark moves at commit)
        cols.add(txn.identityValues().generate(f.name()));
      } else if (SchemaUtils.containsIgnoreCase(md.partitionColumns(), f.name())
          && !(enforce && generated.contains(f.name()))) {
        throw ErrorClass.DELTA_PARTITION_COLUMN_NOT_FOUND.error("Partition column '" + f.name()
            + "' is not in the data; columns: " + List.of(input.fieldNames()));
      } else {
        // protocol "Default Columns": a column the data lacks gets its default (else null)
        cols.add(SchemaUtils.defaultValue(f).as(f.name()));
      }
    }
    if (changeTypeColumn != null) {
      cols.add(functions.col(SchemaUtils.quote(changeTypeColumn)).as(CDC_TYPE_COLUMN));
    } else if (rt != null) {
      for (String m : List.of(rt.rowId(), rt.rowCommitVersion())) {
        if (java.util.Arrays.asList(input.fieldNames()).contains(m)) {
          cols.add(functions.col(SchemaUtils.quote(m)).cast(DataTypes.LongType).as(m));
        }
      }
    }
    Dataset<Row> normalized = data.select(cols.toArray(new Column[0]));
    return enforce ? Constraints.apply(normalized, table, md.configuration(), supplied) : normalized;
  }

  /**
   * Writes the data as Parquet files into the table directory, partitioned by the table's partition
   * columns, splitting change data from table data when {@code changeData} is set. Marks the
   * transaction as having written (its metadata is fixed from now on).
   *
   * @param data the input rows; with {@code changeData}, including {@code _change_type}
   * @param writeOptions Spark Parquet writer options (e.g. {@code compression}, {@code
   *     maxRecordsPerFile})
   * @param changeData whether the input carries change records
   * @return the AddFiles of the written table files (change files: {@link #changeFiles()})
   * @throws IllegalStateException if the transaction has no metadata (no table and none set)
   * @throws FileCommitException {@code DELTA_CHANGE_TABLE_FEED_DISABLED} when {@code changeData} and
   *     the table has no change data feed; the table's constraint classes for a violating row
   */
  public List<AddFile> writeFiles(Dataset<Row> data, Map<String, String> writeOptions, boolean changeData) {
    Metadata md = txn.metadata();
    if (md == null) {
      throw new IllegalStateException("No metadata for " + txn.table() + ": set it before writing");
    }
    DelayedCommitProtocol c = newCommitter();
    // In flight until the command ends: VACUUM on this server keeps the job's files (InFlightWrites).
    InFlightWrites.register(txn.deltaLog().tablePath().toString()).protectToken(c.jobToken());
    txn.markWritten();
    committer = c;
    txn.onAbort(() -> {
      c.deleteWrittenFiles(txn.deltaLog().conf());
      c.sweepJobFiles(txn.deltaLog().conf());
    });
    if (!changeData) {
      runWrite(normalizeData(data, null, true), md.partitionColumns(), c, writeOptions);
      return c.addedStatuses();
    }
    if (!TableConfig.ENABLE_CHANGE_DATA_FEED.fromMetadata(md)) {
      throw ErrorClass.DELTA_CHANGE_TABLE_FEED_DISABLED.error("Change data needs "
          + TableConfig.ENABLE_CHANGE_DATA_FEED + "=true on " + txn.table());
    }
    String changeType = SchemaUtils.findField(data.schema(), CDC_TYPE_COLUMN).map(StructField::name)
        .orElseThrow(() -> new IllegalArgumentException("Change data needs a " + CDC_TYPE_COLUMN
            + " column in the input; columns: " + List.of(data.schema().fieldNames())));
    List<String> cdcPartitions = new ArrayList<>();
    cdcPartitions.add(DelayedCommitProtocol.CDC_PARTITION_COL);
    cdcPartitions.addAll(md.partitionColumns());
    Column isCdc = functions.col(SchemaUtils.quote(changeType)).isNotNull();
    boolean local = DriverSideWrite.isLocal(data.queryExecution().analyzed());
    Dataset<Row> cached = local ? data : data.persist();
    try {
      Dataset<Row> rows = normalizeData(cached.filter(functions.not(isCdc)).drop(changeType), null, true);
      runWrite(rows.withColumn(DelayedCommitProtocol.CDC_PARTITION_COL, functions.lit(false)), cdcPartitions, c,
          writeOptions);
      Dataset<Row> changes = normalizeData(cached.filter(isCdc), changeType, false);
      runWrite(changes.withColumn(DelayedCommitProtocol.CDC_PARTITION_COL, functions.lit(true)), cdcPartitions, c,
          writeOptions);
    } finally {
      if (!local) {
        cached.unpersist();
      }
    }
    return c.addedStatuses();
  }

  /** {@return the change-data files of the last {@link #writeFiles}, empty before it} */
  public List<AddCDCFile> changeFiles() {
    return committer == null ? List.of() : committer.changeFiles();
  }

  private void runWrite(Dataset<Row> normalized, List<String> partitionColumns, DelayedCommitProtocol c,
      Map<String, String> writeOptions) {
    Metadata md = txn.metadata();
    if (ColumnMapping.enabled(md)) {
      normalized = toPhysical(md, normalized);
      partitionColumns = partitionColumns.stream().map(p -> ColumnMapping.physicalName(md, p)).toList();
    }
    String outputPath = txn.deltaLog().tablePath().toString();
    try {
      org.apache.spark.sql.catalyst.plans.logical.LocalRelation small =
          ColumnMapping.enabled(md) ? null : DriverSideWrite.local(normalized);
      if (small != null) {
        DriverSideWrite.write(txn.session(), small, outputPath, partitionColumns, c, writeOptions);
        return;
      }
      if (nativeWrite(normalized, outputPath, partitionColumns, writeOptions)) {
        NativeParquetWriter.write(txn.session(), normalized, outputPath, partitionColumns, c, WrittenFiles::record,
            "filecommit write " + outputPath);
        return;
      }
      ParquetJobWriter.write(txn.session(), normalized, outputPath, partitionColumns, c, writeOptions,
          "filecommit write " + outputPath);
    } catch (RuntimeException e) {
      FileCommitException violation = Constraints.translate(e);
      throw violation != null ? violation : e;
    }
  }

  /**
   * Whether a job write goes through {@link NativeParquetWriter}: table data only (no change data,
   * no column mapping), eligible by {@link NativeParquetWriter#ineligible}, native writer available.
   * A write that could have and does not is noted ({@link NativeParquetWriter#fellBack}).
   */
  private boolean nativeWrite(Dataset<Row> normalized, String outputPath, List<String> partitionColumns,
      Map<String, String> writeOptions) {
    Metadata md = txn.metadata();
    Optional<String> reason = partitionColumns.contains(DelayedCommitProtocol.CDC_PARTITION_COL)
        ? Optional.of("change data") : ColumnMapping.enabled(md) ? Optional.of("column mapping")
        : NativeParquetWriter.ineligible(txn.session(), normalized.schema(), partitionColumns, outputPath, writeOptions);
    if (reason.isEmpty() && !NativeParquetWriter.available()) {
      reason = Optional.of("neither duckdb_jdbc nor arrow-dataset on the class path with a native library that loads");
    }
    if (reason.isPresent()) {
      if (!reason.get().equals(NativeParquetWriter.OFF)) {
        NativeParquetWriter.fellBack(outputPath, reason.get());
      }
      return false;
    }
    return true;
  }

  /**
   * Renames the table's columns (already normalized to the logical schema) to their physical names,
   * nested struct fields included, with Parquet field ids (protocol "Column Mapping"). Columns that
   * are not in the table schema (the change-data columns) pass through unchanged.
   */
  static Dataset<Row> toPhysical(Metadata md, Dataset<Row> data) {
    StructType schema = md.schema();
    List<Column> cols = new ArrayList<>();
    for (StructField in : data.schema().fields()) {
      Column c = functions.col(SchemaUtils.quote(in.name()));
      Optional<StructField> table = java.util.Arrays.stream(schema.fields()).filter(f -> f.name().equals(in.name()))
          .findFirst();
      if (table.isEmpty()) {
        cols.add(c);
      } else {
        StructField p = ColumnMapping.physical(table.get());
        cols.add(c.cast(p.dataType()).as(p.name(), p.metadata()));
      }
    }
    return data.select(cols.toArray(new Column[0]));
  }
}
