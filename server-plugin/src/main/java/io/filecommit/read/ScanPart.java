package io.filecommit.read;

import io.filecommit.delta.actions.DeletionVectorDescriptor;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;

/**
 * One file scan of a read: Spark's Parquet file source over a {@link DeltaFileIndex}, how its
 * columns become the read's columns, and the deletion vectors to apply.
 *
 * @param files the file relation (data columns under their stored names, partition columns and
 *     constants under the read's names)
 * @param columnOf the read's column name -> the column of {@code files} that holds it
 * @param tablePath the table root (resolves relative DV paths)
 * @param conf Hadoop configuration for reading DV files on the executors
 * @param drop entry key -> DV whose marked rows are left out (protocol "Deletion Vectors")
 * @param keepOnly entry key -> DV whose marked rows alone are kept (a change feed's rows deleted
 *     by a commit that marked them), applied after {@code drop}
 * @param changeFeedKeys whether entry keys carry the commit version and change type (change feed
 *     scans, where one file may appear in several commits) or are the file URI alone
 */
record ScanPart(HadoopFsRelation files, Map<String, String> columnOf, String tablePath, Configuration conf,
    Map<String, DeletionVectorDescriptor> drop, Map<String, DeletionVectorDescriptor> keepOnly,
    boolean changeFeedKeys) {

  /** Whether the rows of this scan go through a deletion vector filter. */
  boolean filtersRows() {
    return !drop.isEmpty() || !keepOnly.isEmpty();
  }

  /** The key of a change feed entry: file URI, commit version, change type. */
  static String changeKey(String uri, long version, String changeType) {
    return uri + "@" + version + "@" + changeType;
  }
}
