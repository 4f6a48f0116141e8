package io.filecommit.commands.optimize;

import io.filecommit.txn.CommandResult;
import io.filecommit.delta.Clustering;
import io.filecommit.delta.DeltaLog;
import io.filecommit.conf.FileCommitConf;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.schema.PartitionPredicates;
import io.filecommit.schema.SchemaUtils;
import io.filecommit.txn.OptimisticTransaction;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;

/**
 * OPTIMIZE (Delta's {@code OptimizeTableCommand}): compacts small files per partition
 * (bin-packing), or rewrites the partitions' files Z-ordered by some columns, as a commit with
 * {@code dataChange=false} whose {@code commitInfo} has operation {@code OPTIMIZE} and Delta's
 * parameters and metrics ({@link OptimizeExecutor}).
 *
 * <p>Sizes, bytes: files smaller than {@link FileCommitConf#OPTIMIZE_MIN_FILE_SIZE} (default 1 GiB,
 * Delta's {@code spark.databricks.delta.optimize.minFileSize}) are compacted into files of up to the
 * target size: the call's {@code targetFileSize}, else the table's {@code delta.targetFileSize},
 * else {@link FileCommitConf#OPTIMIZE_MAX_FILE_SIZE} (default 1 GiB, Delta's {@code
 * optimize.maxFileSize}). Files with a deletion vector that deletes more than {@link
 * FileCommitConf#OPTIMIZE_MAX_DELETED_ROWS_RATIO} of their rows (default 0.05) are rewritten too.
 * All three are static server settings.
 */
public final class OptimizeCommand {
  private OptimizeCommand() {}

  /**
   * What OPTIMIZE (or RESTORE) committed.
   *
   * @param commit the commit (file actions, counters)
   * @param operationMetrics the {@code commitInfo.operationMetrics} with Delta's names (empty when
   *     nothing was committed)
   */
  public record Result(CommandResult commit, Map<String, String> operationMetrics) {}

  /**
   * Runs OPTIMIZE.
   *
   * @param session Spark session
   * @param path table root
   * @param where SQL predicates on partition columns (all must hold), empty for the whole table
   * @param targetFileSize target file size in bytes (> 0), or null for the table's / server's
   * @param zOrderBy columns to Z-order by, empty for bin-packing
   * @return the commit and its metrics; {@code committed=false} when nothing needed rewriting
   * @throws io.filecommit.errors.FileCommitException {@code INVALID_EMPTY_LOCATION} (blank path),
   *     {@code FILECOMMIT_INVALID_TARGET_FILE_SIZE} (target size {@code <= 0}), {@code
   *     DELTA_FAILED_RECOGNIZE_PREDICATE} (a blank, unparsable or unresolvable predicate), {@code
   *     DELTA_MISSING_DELTA_TABLE}, {@code DELTA_NON_PARTITION_COLUMN_REFERENCE}, {@code
   *     DELTA_ZORDERING_ON_PARTITION_COLUMN}, {@code DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST} (also a
   *     blank name), {@code DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS}, {@code
   *     FILECOMMIT_TOO_MANY_ZORDER_COLUMNS},
   *     {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE}, {@code DELTA_CONCURRENT_DELETE_READ} and the
   *     other conflict classes
   */
  public static Result run(SparkSession session, String path, List<String> where, Long targetFileSize,
      List<String> zOrderBy) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    if (targetFileSize != null && targetFileSize <= 0) {
      throw ErrorClass.FILECOMMIT_INVALID_TARGET_FILE_SIZE.error("OPTIMIZE target file size must be > 0 bytes, got "
          + targetFileSize, Map.of("targetFileSize", String.valueOf(targetFileSize)));
    }
    DeltaLog log = DeltaLog.forTable(session, path);
    OptimisticTransaction txn = new OptimisticTransaction(session, log);
    Snapshot snapshot = txn.snapshot();
    if (!snapshot.exists()) {
      throw DeltaErrors.missingTable(txn.table(), "OPTIMIZE");
    }
    Metadata md = snapshot.metadata();
    List<Column> predicates = new ArrayList<>();
    for (String w : where) {
      predicates.add(partitionPredicate(session, md, w));
    }
    List<String> clustering = Clustering.columns(log, snapshot);
    if (!clustering.isEmpty() && !zOrderBy.isEmpty()) {
      throw ErrorClass.DELTA_CLUSTERING_WITH_ZORDER_BY.error("OPTIMIZE ZORDER BY " + zOrderBy + " is not allowed on "
          + txn.table() + ": it is clustered by " + clustering, Map.of("zOrderBy", String.join(", ", zOrderBy)));
    }
    List<String> zorder = clustering.isEmpty() ? zOrderColumns(md, zOrderBy) : clustering;
    Set<String> matching = null;
    if (!predicates.isEmpty()) {
      Column all = predicates.stream().reduce(Column::and).orElseThrow();
      matching = PartitionPredicates.matching(session, md, snapshot.allFiles(), all, null);
    }
    Set<String> selected = matching;
    SparkConf conf = session.sparkContext().getConf();
    long target = targetFileSize != null ? targetFileSize : defaultTarget(conf, md);
    OptimizeExecutor.Request request = new OptimizeExecutor.Request(
        f -> selected == null || selected.contains(f.path()), List.copyOf(where), minFileSize(conf), target,
        FileCommitConf.OPTIMIZE_MAX_DELETED_ROWS_RATIO.doubleValue(conf), zorder, false, !clustering.isEmpty());
    return OptimizeExecutor.run(session, log, txn, request, start);
  }

  /** Files below this size are compacted (server setting), bytes. */
  static long minFileSize(SparkConf conf) {
    return FileCommitConf.OPTIMIZE_MIN_FILE_SIZE.bytes(conf, 0);
  }

  /** The target size without an explicit one: the table's delta.targetFileSize, else the server's. */
  static long defaultTarget(SparkConf conf, Metadata md) {
    long table = TableConfig.TARGET_FILE_SIZE.fromMetadata(md);
    return table > 0 ? table : FileCommitConf.OPTIMIZE_MAX_FILE_SIZE.bytes(conf, 0);
  }

  /**
   * A WHERE predicate of OPTIMIZE: it must reference partition columns only (Delta's {@code
   * verifyPartitionPredicates}).
   */
  private static Column partitionPredicate(SparkSession session, Metadata md, String where) {
    if (where == null || where.isBlank()) {
      throw ErrorClass.DELTA_FAILED_RECOGNIZE_PREDICATE.error("OPTIMIZE predicate must be a non-empty SQL predicate, "
          + "got '" + where + "'", Map.of("predicate", String.valueOf(where)));
    }
    Column predicate;
    LogicalPlan analyzed;
    try {
      predicate = functions.expr(where);
      analyzed = session.createDataFrame(List.<Row>of(), md.schema()).filter(predicate).queryExecution().analyzed();
    } catch (Exception e) { // ParseException / AnalysisException are checked in Java's eyes
      throw ErrorClass.DELTA_FAILED_RECOGNIZE_PREDICATE.error("OPTIMIZE predicate '" + where + "' is not a valid "
          + "predicate on the table's columns " + List.of(md.schema().fieldNames()) + ": " + e.getMessage(), e,
          Map.of("predicate", where));
    }
    if (analyzed instanceof Filter filter) {
      for (var a : scala.jdk.javaapi.CollectionConverters.asJava(filter.condition().references().toSeq())) {
        if (!SchemaUtils.containsIgnoreCase(md.partitionColumns(), a.name())) {
          throw ErrorClass.DELTA_NON_PARTITION_COLUMN_REFERENCE.error("Predicate references non-partition column '"
              + a.name() + "'. Only the partition columns may be referenced: " + md.partitionColumns(),
              Map.of("columnName", a.name(), "columnList", String.join(", ", md.partitionColumns())));
        }
      }
    }
    return predicate;
  }

  /**
   * Checks the Z-order columns (Delta's {@code validateZorderByColumns}) and resolves their names:
   * no partition column, every column in the data schema and among the columns with statistics.
   */
  private static List<String> zOrderColumns(Metadata md, List<String> zOrderBy) {
    if (zOrderBy.isEmpty()) {
      return List.of();
    }
    List<String> dataColumns = new ArrayList<>();
    List<StructField> dataFields = new ArrayList<>();
    for (StructField f : md.schema().fields()) {
      if (!SchemaUtils.containsIgnoreCase(md.partitionColumns(), f.name())) {
        dataColumns.add(f.name());
        dataFields.add(f);
      }
    }
    List<String> withStats = statsColumns(dataFields, TableConfig.DATA_SKIPPING_NUM_INDEXED_COLS.fromMetadata(md));
    List<String> out = new ArrayList<>();
    List<String> withoutStats = new ArrayList<>();
    for (String c : zOrderBy) {
      if (c == null || c.isBlank()) {
        throw ErrorClass.DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST.error("Z-order column names must be non-empty, got '"
            + c + "'", Map.of("columnName", String.valueOf(c)));
      }
      if (!SchemaUtils.containsIgnoreCase(withStats, c)) {
        withoutStats.add(c);
      }
      if (SchemaUtils.containsIgnoreCase(md.partitionColumns(), c)) {
        throw ErrorClass.DELTA_ZORDERING_ON_PARTITION_COLUMN.error(c + " is a partition column. Z-Ordering can only "
            + "be performed on data columns", Map.of("colName", c));
      }
      String resolved = dataColumns.stream().filter(d -> d.equalsIgnoreCase(c)).findFirst().orElseThrow(() ->
          ErrorClass.DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST.error("Z-Ordering column " + c + " does not exist in data "
              + "schema " + dataColumns, Map.of("columnName", c)));
      out.add(resolved);
    }
    if (!withoutStats.isEmpty()) {
      throw ErrorClass.DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS.error("Z-Ordering on " + withoutStats + " will be "
          + "ineffective, because no statistics are collected for these columns (table property "
          + TableConfig.DATA_SKIPPING_NUM_INDEXED_COLS.key() + ")", Map.of("cols", String.join(", ", withoutStats)));
    }
    if (out.size() > 63) {
      throw ErrorClass.FILECOMMIT_TOO_MANY_ZORDER_COLUMNS.error("At most 63 Z-order columns, got " + out.size(),
          Map.of("numColumns", Integer.toString(out.size()), "maxColumns", "63"));
    }
    return out;
  }

  /** The top-level data columns whose leaves are within the first {@code n} leaf columns (-1: all). */
  private static List<String> statsColumns(List<StructField> fields, int n) {
    List<String> out = new ArrayList<>();
    int leaves = 0;
    for (StructField f : fields) {
      int count = io.filecommit.delta.Clustering.leafCount(f.dataType());
      if (n < 0 || leaves + count <= n) {
        out.add(f.name().toLowerCase(Locale.ROOT));
      }
      leaves += count;
    }
    return out;
  }
}
