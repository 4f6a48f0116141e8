package io.filecommit.commands;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.ProtocolChanges;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.classic.SparkSession;

/**
 * Protocol changes of an existing table, each one commit as Delta makes it (protocol sections
 * "Protocol Evolution" and "Table Features"; the protocol computed by {@link ProtocolChanges}):
 *
 * <ul>
 *   <li>{@link #upgrade}: Delta's {@code DeltaTable.upgradeTableProtocol}, an {@code
 *       AlterTableSetPropertiesDeltaCommand} of {@code delta.minReaderVersion} / {@code
 *       delta.minWriterVersion}: operation {@code SET TBLPROPERTIES}, the metadata unchanged (Delta
 *       keeps protocol properties out of the configuration) and the merged protocol;
 *   <li>{@link #addFeature}: Delta's {@code DeltaTable.addFeatureSupport}, the same command with
 *       {@code delta.feature.<name> = supported};
 *   <li>{@link #dropFeature}: Delta's {@code AlterTableDropFeatureDeltaCommand} ({@code
 *       DeltaTable.dropFeatureSupport}), operation {@code DROP FEATURE}, for the writer-only
 *       features whose removal needs no history truncation and no rewrite of data or log: {@code
 *       checkConstraints} (when the table has no CHECK constraint) and {@code inCommitTimestamp}
 *       (when it is not enabled). Others are refused before anything is committed: a feature
 *       Delta does not know ({@code DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE}), a legacy
 *       feature Delta never drops ({@code DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE}), one the
 *       table does not support ({@code DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT}), history
 *       truncation asked for a writer-only feature ({@code
 *       DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED}), and every other feature ({@code
 *       FILECOMMIT_DROP_FEATURE_UNSUPPORTED}, parameter {@code feature}: reader-writer
 *       features need Delta's checkpoint protection or history truncation, which filecommit does
 *       not do).
 * </ul>
 *
 * Each reads the table's protocol and metadata, so a concurrent metadata or protocol change
 * conflicts ({@code DELTA_METADATA_CHANGED}, {@code DELTA_PROTOCOL_CHANGED}).
 */
public final class TableProtocolCommand {
  /** Drop is done here for these writer-only features only (see the class comment). */
  private static final Set<String> DROPPABLE = Set.of("checkConstraints", "inCommitTimestamp");
  /** Legacy features Delta refuses to drop ({@code DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE}). */
  private static final Set<String> NON_REMOVABLE = Set.of("appendOnly", "invariants", "changeDataFeed",
      "generatedColumns", "identityColumns");

  private TableProtocolCommand() {}

  /**
   * {@code DeltaTable.upgradeTableProtocol(reader, writer)}.
   *
   * @param session Spark session
   * @param path table root
   * @param reader reader version, 1 to 3
   * @param writer writer version, 1 to 7
   * @return the commit (no file actions; always a new version, as Delta's)
   * @throws io.filecommit.errors.FileCommitException {@code INVALID_EMPTY_LOCATION}, {@code
   *     DELTA_MISSING_DELTA_TABLE}, {@code DELTA_INVALID_PROTOCOL_VERSION}, {@code
   *     DELTA_UNSUPPORTED_FEATURES_FOR_WRITE}, conflict classes
   */
  public static CommandResult upgrade(SparkSession session, String path, int reader, int writer) {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("delta.minReaderVersion", Integer.toString(reader));
    props.put("delta.minWriterVersion", Integer.toString(writer));
    return run(session, path, "upgradeTableProtocol", txn -> ProtocolChanges.upgraded(txn.protocol(), reader, writer),
        new Operation.SetTableProperties(props));
  }

  /**
   * {@code DeltaTable.addFeatureSupport(name)}.
   *
   * @param session Spark session
   * @param path table root
   * @param feature the feature's name as Delta spells it, e.g. {@code deletionVectors}
   * @return the commit (no file actions; always a new version, as Delta's)
   * @throws io.filecommit.errors.FileCommitException {@code INVALID_EMPTY_LOCATION}, {@code
   *     DELTA_MISSING_DELTA_TABLE}, {@code DELTA_UNSUPPORTED_FEATURES_IN_CONFIG} (unknown name),
   *     {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE} (a feature filecommit does not honour),
   *     conflict classes
   */
  public static CommandResult addFeature(SparkSession session, String path, String feature) {
    return run(session, path, "addFeatureSupport", txn -> ProtocolChanges.withFeature(txn.protocol(), feature),
        new Operation.SetTableProperties(Map.of("delta.feature." + feature, "supported")));
  }

  /**
   * {@code DeltaTable.dropFeatureSupport(name, truncateHistory)} for the features listed in the
   * class comment.
   *
   * @param session Spark session
   * @param path table root
   * @param feature the feature's name
   * @param truncateHistory whether the caller asked for history truncation (null: not given)
   * @return the commit (no file actions)
   * @throws io.filecommit.errors.FileCommitException the classes of the class comment, {@code
   *     DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE} while CHECK constraints exist, {@code
   *     INVALID_EMPTY_LOCATION}, {@code DELTA_MISSING_DELTA_TABLE}, conflict classes
   */
  public static CommandResult dropFeature(SparkSession session, String path, String feature, Boolean truncateHistory) {
    boolean truncate = Boolean.TRUE.equals(truncateHistory);
    return run(session, path, "dropFeatureSupport", txn -> {
      Map<String, String> params = Map.of("feature", feature);
      if (!ProtocolChanges.known(feature)) {
        throw ErrorClass.DELTA_FEATURE_DROP_UNSUPPORTED_CLIENT_FEATURE.error("Cannot drop table feature '" + feature
            + "': Delta does not know it; nothing was committed", params);
      }
      if (NON_REMOVABLE.contains(feature)) {
        throw ErrorClass.DELTA_FEATURE_DROP_NONREMOVABLE_FEATURE.error("Table feature " + feature
            + " cannot be dropped (Delta never removes it); nothing was committed", params);
      }
      if (!ProtocolChanges.features(txn.protocol()).contains(feature)) {
        throw ErrorClass.DELTA_FEATURE_DROP_FEATURE_NOT_PRESENT.error("Cannot drop table feature " + feature
            + ": the table's protocol does not support it; nothing was committed", params);
      }
      if (!DROPPABLE.contains(feature)) {
        throw ErrorClass.FILECOMMIT_DROP_FEATURE_UNSUPPORTED.error("DROP FEATURE " + feature + " is not done by "
            + "filecommit (it needs checkpoint protection or history truncation); nothing was committed", params);
      }
      if (truncate) {
        throw ErrorClass.DELTA_FEATURE_DROP_HISTORY_TRUNCATION_NOT_ALLOWED.error("Table feature " + feature
            + " is a writer feature: its drop does not truncate history; call without truncateHistory", params);
      }
      Map<String, String> conf = txn.metadata().configuration();
      if (feature.equals("checkConstraints")
          && conf.keySet().stream().anyMatch(k -> k.startsWith(TableConfig.CONSTRAINT_PREFIX))) {
        throw ErrorClass.DELTA_CANNOT_DROP_CHECK_CONSTRAINT_FEATURE.error("Cannot drop checkConstraints: the "
            + "table has CHECK constraints; drop them first (ALTER TABLE DROP CONSTRAINT)",
            Map.of("constraints", String.join(", ", conf.keySet().stream()
                .filter(k -> k.startsWith(TableConfig.CONSTRAINT_PREFIX))
                .map(k -> k.substring(TableConfig.CONSTRAINT_PREFIX.length())).sorted().toList())));
      }
      if (feature.equals("inCommitTimestamp") && (TableConfig.IN_COMMIT_TIMESTAMPS.fromConfiguration(conf)
          || conf.keySet().stream().anyMatch(k -> k.startsWith("delta.inCommitTimestampEnablement")))) {
        throw ErrorClass.FILECOMMIT_DROP_FEATURE_UNSUPPORTED.error("DROP FEATURE inCommitTimestamp of a table "
            + "with in-commit timestamps enabled is not done by filecommit; nothing was committed", params);
      }
      return ProtocolChanges.without(txn.protocol(), feature);
    }, new Operation.DropFeature(feature, truncate));
  }

  private static CommandResult run(SparkSession session, String path, String call,
      java.util.function.Function<OptimisticTransaction, Protocol> next, Operation operation) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    OptimisticTransaction txn = new OptimisticTransaction(session, DeltaLog.forTable(session, path));
    Snapshot snapshot = txn.snapshot();
    String table = txn.table();
    if (!snapshot.exists()) {
      throw DeltaErrors.missingTable(table, call);
    }
    TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), table);
    Protocol protocol = next.apply(txn);
    txn.updateMetadata(snapshot.metadata()); // Delta's command commits the (unchanged) metadata too
    txn.updateProtocol(protocol);
    long version = txn.commit(List.of(), operation);
    return new CommandResult(version, txn.committed(), table, List.of(), List.of(), List.of(), 0, 0,
        System.currentTimeMillis() - start, txn.attempts(), RowMetrics.NONE, txn.staged());
  }
}
