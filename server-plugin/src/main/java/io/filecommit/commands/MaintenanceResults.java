package io.filecommit.commands;

import io.filecommit.commands.optimize.OptimizeCommand;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.txn.CommandResult;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The result rows of OPTIMIZE and RESTORE as Delta returns them, shared by SQL ({@code OPTIMIZE},
 * {@code RESTORE TABLE}) and delta-spark's {@code DeltaTable} ({@code optimize().executeCompaction()},
 * {@code restoreToVersion}) so both answer alike:
 *
 * <ul>
 *   <li>OPTIMIZE (Delta's {@code OptimizeTableCommand} output): one row {@code path} (string, the
 *       table root) and {@code metrics} (struct {@link #OPTIMIZE_METRICS}, Delta's {@code
 *       OptimizeMetrics}: file counts, sizes in bytes, times in ms since the epoch);
 *   <li>RESTORE (Delta's {@code RestoreTableCommand} output): one row of longs {@link #RESTORE}:
 *       {@code table_size_after_restore} (bytes), {@code num_of_files_after_restore}, {@code
 *       num_removed_files}, {@code num_restored_files}, {@code removed_files_size}, {@code
 *       restored_files_size} (bytes).
 * </ul>
 */
public final class MaintenanceResults {
  private static final StructType FILE_SIZES = new StructType()
      .add("min", DataTypes.LongType, true)
      .add("max", DataTypes.LongType, true)
      .add("avg", DataTypes.DoubleType, true)
      .add("totalFiles", DataTypes.LongType, true)
      .add("totalSize", DataTypes.LongType, true);
  private static final StructType NUM_SIZE = new StructType()
      .add("num", DataTypes.LongType, true).add("size", DataTypes.LongType, true);
  private static final StructType FILES_SIZE = new StructType()
      .add("numFiles", DataTypes.LongType, true).add("size", DataTypes.LongType, true);
  /**
   * OPTIMIZE's {@code metrics} struct (Delta's {@code OptimizeMetrics}, its fields in its order):
   * the Z-order, clustering, auto compaction and deletion vector statistics this server does not
   * keep are null.
   */
  public static final StructType OPTIMIZE_METRICS = new StructType()
      .add("numFilesAdded", DataTypes.LongType, true)
      .add("numFilesRemoved", DataTypes.LongType, true)
      .add("filesAdded", FILE_SIZES, true)
      .add("filesRemoved", FILE_SIZES, true)
      .add("partitionsOptimized", DataTypes.LongType, true)
      .add("zOrderStats", new StructType()
          .add("strategyName", DataTypes.StringType, true)
          .add("inputCubeFiles", NUM_SIZE, true)
          .add("inputOtherFiles", NUM_SIZE, true)
          .add("inputNumCubes", DataTypes.LongType, true)
          .add("mergedFiles", NUM_SIZE, true)
          .add("numOutputCubes", DataTypes.LongType, true)
          .add("mergedNumCubes", DataTypes.LongType, true), true)
      .add("clusteringStats", new StructType()
          .add("inputZCubeFiles", FILES_SIZE, true)
          .add("inputOtherFiles", FILES_SIZE, true)
          .add("inputNumZCubes", DataTypes.LongType, true)
          .add("mergedFiles", FILES_SIZE, true)
          .add("numOutputZCubes", DataTypes.LongType, true), true)
      .add("numBins", DataTypes.LongType, true)
      .add("numBatches", DataTypes.LongType, true)
      .add("totalConsideredFiles", DataTypes.LongType, true)
      .add("totalFilesSkipped", DataTypes.LongType, true)
      .add("preserveInsertionOrder", DataTypes.BooleanType, true)
      .add("numFilesSkippedToReduceWriteAmplification", DataTypes.LongType, true)
      .add("numBytesSkippedToReduceWriteAmplification", DataTypes.LongType, true)
      .add("startTimeMs", DataTypes.LongType, true)
      .add("endTimeMs", DataTypes.LongType, true)
      .add("totalClusterParallelism", DataTypes.LongType, true)
      .add("totalScheduledTasks", DataTypes.LongType, true)
      .add("autoCompactParallelismStats", new StructType()
          .add("maxClusterActiveParallelism", DataTypes.LongType, true)
          .add("minClusterActiveParallelism", DataTypes.LongType, true)
          .add("maxSessionActiveParallelism", DataTypes.LongType, true)
          .add("minSessionActiveParallelism", DataTypes.LongType, true), true)
      .add("deletionVectorStats", new StructType()
          .add("numDeletionVectorsRemoved", DataTypes.LongType, true)
          .add("numDeletionVectorRowsRemoved", DataTypes.LongType, true), true)
      .add("numTableColumns", DataTypes.LongType, true)
      .add("numTableColumnsWithStats", DataTypes.LongType, true);
  /** OPTIMIZE's result columns (Delta's {@code OptimizeTableCommand} output): {@code path}, {@code metrics}. */
  public static final StructType OPTIMIZE = new StructType()
      .add("path", DataTypes.StringType, true)
      .add("metrics", OPTIMIZE_METRICS, true);

  /** RESTORE's result columns (Delta's {@code RestoreTableCommand} output), longs, sizes in bytes. */
  public static final StructType RESTORE = new StructType()
      .add("table_size_after_restore", DataTypes.LongType, true)
      .add("num_of_files_after_restore", DataTypes.LongType, true)
      .add("num_removed_files", DataTypes.LongType, true)
      .add("num_restored_files", DataTypes.LongType, true)
      .add("removed_files_size", DataTypes.LongType, true)
      .add("restored_files_size", DataTypes.LongType, true);

  private MaintenanceResults() {}

  /**
   * OPTIMIZE's row from what {@link OptimizeCommand#run} committed: files added and removed with
   * their sizes, partitions touched, and the statistics this server does not keep (Z-order,
   * clustering, auto compaction, deletion vectors) null.
   *
   * @param session the session (its default parallelism is {@code totalClusterParallelism})
   * @param path the table root
   * @param r the command's result
   * @param startMs when the command started, ms since the epoch
   * @return the row of {@link #OPTIMIZE}
   */
  public static Row optimize(SparkSession session, String path, OptimizeCommand.Result r, long startMs) {
    CommandResult c = r.commit();
    List<Long> added = new ArrayList<>();
    for (AddFile a : c.addFiles()) {
      added.add(a.size());
    }
    List<Long> removed = new ArrayList<>();
    Set<Map<String, String>> partitions = new HashSet<>();
    for (RemoveFile f : c.removeFiles()) {
      removed.add(f.size() == null ? 0L : f.size());
      partitions.add(f.partitionValues() == null ? Map.of() : f.partitionValues());
    }
    long columns = DeltaLog.forTable(session, path).snapshot().metadata().schema().fields().length;
    Row metrics = RowFactory.create((long) added.size(), (long) removed.size(), sizes(added), sizes(removed),
        (long) partitions.size(), null, null, (long) partitions.size(), c.committed() ? 1L : 0L,
        (long) removed.size(), 0L, false, 0L, 0L, startMs, System.currentTimeMillis(),
        (long) session.sparkContext().defaultParallelism(), 0L, null, null, columns, Math.min(columns, 32L));
    return RowFactory.create(c.tablePath(), metrics);
  }

  private static Row sizes(List<Long> sizes) {
    long total = sizes.stream().mapToLong(Long::longValue).sum();
    return RowFactory.create(sizes.isEmpty() ? null : sizes.stream().mapToLong(Long::longValue).min().getAsLong(),
        sizes.isEmpty() ? null : sizes.stream().mapToLong(Long::longValue).max().getAsLong(),
        sizes.isEmpty() ? 0.0 : (double) total / sizes.size(), (long) sizes.size(), total);
  }

  /**
   * RESTORE's row from the metrics {@link RestoreCommand#run} committed ({@code commitInfo.operationMetrics}).
   *
   * @param r the command's result
   * @return the row of {@link #RESTORE} (a metric absent from the commit is 0)
   */
  public static Row restore(OptimizeCommand.Result r) {
    Map<String, String> m = r.operationMetrics();
    return RowFactory.create(num(m, "tableSizeAfterRestore"), num(m, "numOfFilesAfterRestore"),
        num(m, "numRemovedFiles"), num(m, "numRestoredFiles"), num(m, "removedFilesSize"),
        num(m, "restoredFilesSize"));
  }

  private static Long num(Map<String, String> m, String key) {
    String v = m.get(key);
    return v == null ? 0L : Long.parseLong(v);
  }
}
