package io.filecommit.commands;

import io.filecommit.txn.CommandResult;
import io.filecommit.delta.Clustering;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code ALTER TABLE ... CLUSTER BY (cols)} and {@code CLUSTER BY NONE} (Delta's {@code
 * AlterTableClusterByDeltaCommand}; protocol "Clustered Table"): one commit of the new {@code
 * delta.clustering} domain metadata and no files (nothing is rewritten: OPTIMIZE clusters the files
 * by the new columns later). A table that is not clustered yet gets the {@code clustering} and
 * {@code domainMetadata} writer features in the same commit; {@code CLUSTER BY NONE} on it commits
 * nothing; on a clustered table it leaves the table clustered by no column.
 */
public final class ClusterByCommand {
  private ClusterByCommand() {}

  /**
   * Changes the clustering columns of an existing table.
   *
   * @param session Spark session
   * @param path table root
   * @param columns the new clustering columns, logical names; empty for {@code CLUSTER BY NONE}
   * @return the commit (no file actions); {@code committed=false} for {@code CLUSTER BY NONE} on a
   *     table that is not clustered
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_TABLE_NOT_FOUND} without a table;
   *     {@code DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED} on a partitioned
   *     table; the classes of {@link Clustering#domain}; {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE};
   *     conflict classes ({@code DELTA_CONCURRENT_TRANSACTION} when a concurrent commit changed the
   *     clustering columns, {@code DELTA_METADATA_CHANGED} for a concurrent metadata change)
   */
  public static CommandResult run(SparkSession session, String path, List<String> columns) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    DeltaLog log = DeltaLog.forTable(session, path);
    OptimisticTransaction txn = new OptimisticTransaction(session, log);
    Snapshot snapshot = txn.snapshot();
    String table = txn.table();
    if (!snapshot.exists()) {
      throw ErrorClass.DELTA_TABLE_NOT_FOUND.error("No Delta table at " + table + " to change the clustering of");
    }
    Metadata md = snapshot.metadata();
    TableFeatures.checkWritable(snapshot.protocol(), md, table);
    if (md.partitionColumns() != null && !md.partitionColumns().isEmpty()) {
      throw ErrorClass.DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED.error("ALTER TABLE CLUSTER BY "
          + "cannot be applied to the partitioned table " + table + " (partition columns "
          + md.partitionColumns() + ")", Map.of());
    }
    if (columns.isEmpty() && !Clustering.clustered(snapshot.protocol())) {
      return CommandResult.nothingCommitted(snapshot.version(), table, start, 0);
    }
    List<String> old = Clustering.columns(log, snapshot);
    txn.updateDomainMetadata(Clustering.domain(md, columns), Clustering.FEATURES);
    long version = txn.commit(List.of(), new Operation.ClusterBy(old, columns));
    return new CommandResult(version, txn.committed(), table, List.of(), List.of(), List.of(), 0, 0,
        System.currentTimeMillis() - start, txn.attempts(), RowMetrics.NONE, txn.staged());
  }
}
