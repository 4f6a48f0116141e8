package io.filecommit.commands;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import io.filecommit.txn.TransactionId;
import io.filecommit.txn.staging.StageRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code ALTER TABLE ... SET TBLPROPERTIES} as a metadata-only commit (Delta's {@code
 * AlterTableSetPropertiesDeltaCommand}), e.g. {@code delta.enableChangeDataFeed=true}, which also
 * raises the protocol to the change data feed's writer requirement. A CHECK constraint set or
 * changed ({@code delta.constraints.<name>}) is checked against the table's rows first, in the same
 * transaction, as {@link CheckConstraintCommand#add} does (Delta itself refuses constraints here,
 * {@code DELTA_ADD_CONSTRAINTS}, and wants ALTER TABLE ADD CONSTRAINT).
 */
public final class SetTablePropertiesCommand {
  private SetTablePropertiesCommand() {}

  /**
   * Sets table properties on an existing table.
   *
   * @param session Spark session
   * @param path table root
   * @param properties properties to add or change
   * @param txnId application transaction of an idempotent call, or null
   * @param stage when not null, the commit is staged ({@link CommandResult#staged()}), not published
   * @return the commit (no file actions); {@code committed=false} when nothing changed (and no
   *     {@code txnId}) or the {@code txnId} was already applied
   * @throws io.filecommit.errors.FileCommitException {@code INVALID_EMPTY_LOCATION} for a blank
   *     path, {@code DELTA_TABLE_NOT_FOUND} without a table, the classes of {@link
   *     TableConfig#validate}, {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE}, {@code
   *     DELTA_NEW_CHECK_CONSTRAINT_VIOLATION} and the expression classes for a CHECK constraint,
   *     conflict classes
   */
  public static CommandResult run(SparkSession session, String path, Map<String, String> properties,
      TransactionId txnId, StageRequest stage) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    TableConfig.validate(properties);
    OptimisticTransaction txn = new OptimisticTransaction(session, DeltaLog.forTable(session, path));
    if (stage != null) {
      txn.stageInstead(stage);
    }
    Snapshot snapshot = txn.snapshot();
    String table = txn.table();
    if (!snapshot.exists()) {
      throw ErrorClass.DELTA_TABLE_NOT_FOUND.error("No Delta table at " + table + " to set properties on");
    }
    TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), table);
    if (txnId != null && txn.setTransaction(txnId)) {
      return CommandResult.nothingCommitted(snapshot.version(), table, start, 0);
    }
    Map<String, String> conf = new LinkedHashMap<>(snapshot.metadata().configuration());
    conf.putAll(properties);
    boolean changes = !conf.equals(snapshot.metadata().configuration());
    if (!changes && txnId == null) {
      return CommandResult.nothingCommitted(snapshot.version(), table, start, 0);
    }
    if (changes) {
      Map<String, String> constraints = new LinkedHashMap<>(TableConfig.changed(snapshot.metadata().configuration(), conf));
      constraints.keySet().removeIf(k -> !k.startsWith(TableConfig.CONSTRAINT_PREFIX));
      if (!constraints.isEmpty()) {
        CheckConstraintCommand.checkRows(session, txn, constraints); // as ALTER TABLE ADD CONSTRAINT
      }
      txn.updateMetadata(snapshot.metadata().withConfiguration(conf));
    }
    long version = txn.commit(List.of(), new Operation.SetTableProperties(properties));
    return new CommandResult(version, txn.committed(), table, List.of(), List.of(), List.of(), 0, 0,
        System.currentTimeMillis() - start, txn.attempts(), RowMetrics.NONE, txn.staged());
  }
}
