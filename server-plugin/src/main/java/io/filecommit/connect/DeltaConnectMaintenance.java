package io.filecommit.connect;

import io.filecommit.commands.MaintenanceResults;
import io.filecommit.commands.RestoreCommand;
import io.filecommit.commands.TableProtocolCommand;
import io.filecommit.commands.VacuumCommand;
import io.filecommit.commands.optimize.OptimizeCommand;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.proto.delta.connect.AddFeatureSupport;
import io.filecommit.proto.delta.connect.DeltaTable;
import io.filecommit.proto.delta.connect.DropFeatureSupport;
import io.filecommit.proto.delta.connect.OptimizeTable;
import io.filecommit.proto.delta.connect.RestoreTable;
import io.filecommit.proto.delta.connect.UpgradeTableProtocol;
import io.filecommit.proto.delta.connect.VacuumTable;
import io.filecommit.security.Privilege;
import io.filecommit.txn.InFlightWrites;
import java.util.List;
import java.util.function.Consumer;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;

/**
 * The maintenance calls of delta-spark's Python {@code DeltaTable} over Spark Connect (Delta
 * Connect's {@code OptimizeTable} and {@code RestoreTable} relations, {@code VacuumTable}, {@code
 * UpgradeTableProtocol}, {@code AddFeatureSupport} and {@code DropFeatureSupport} commands; {@code
 * proto/delta/connect/relations.proto}, {@code commands.proto}), answered as Delta's {@code
 * DeltaRelationPlugin} / {@code DeltaCommandPlugin} answer them, through filecommit's commands
 * (the same commit path, conflict rules, retention checks and error classes as SQL and the
 * contract's commands):
 *
 * <ul>
 *   <li>{@code optimize().where(filter)...executeCompaction()} / {@code executeZOrderBy(cols)}
 *       (Delta's {@code DeltaOptimizeBuilder}, {@code OptimizeTableCommand}): {@link
 *       OptimizeCommand}; one row {@link MaintenanceResults#OPTIMIZE} ({@code path}, {@code
 *       metrics}). The filters are SQL predicates on partition columns, all of which must hold;
 *   <li>{@code restoreToVersion(v)} / {@code restoreToTimestamp(ts)} (Delta's {@code
 *       RestoreTableCommand}): {@link RestoreCommand}; one row {@link MaintenanceResults#RESTORE}
 *       (longs, sizes in bytes);
 *   <li>{@code vacuum()} / {@code vacuum(retentionHours)} (Delta's {@code VacuumCommand}): {@link
 *       VacuumCommand}, not a dry run; no result (delta-spark's client returns None). Retention in
 *       hours; without one the table's {@code delta.deletedFileRetentionDuration}; a shorter one is
 *       refused ({@code DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT});
 *   <li>{@code upgradeTableProtocol(reader, writer)}, {@code addFeatureSupport(name)}, {@code
 *       dropFeatureSupport(name[, truncateHistory])}: {@link TableProtocolCommand}; no result.
 * </ul>
 *
 * Each table is checked by {@link DeltaConnectTables#resolve} with the MAINTAIN privilege (as SQL's
 * OPTIMIZE, VACUUM, RESTORE and ALTER TABLE): {@code FILECOMMIT_PATH_NOT_ALLOWED}, {@code
 * FILECOMMIT_PERMISSION_DENIED}, {@code DELTA_MISSING_DELTA_TABLE}, before anything is read or
 * committed. The callers ({@link DeltaConnectRelations}, {@link DeltaConnectCommands}) raise the
 * errors as the client's types.
 */
final class DeltaConnectMaintenance {
  private DeltaConnectMaintenance() {}

  /**
   * {@code DeltaOptimizeBuilder.executeCompaction()} / {@code executeZOrderBy(cols)}.
   *
   * @param o the message: the table, partition filters (SQL), Z-order columns (empty: compaction)
   * @param planner the session's planner
   * @return the plan of the one result row
   */
  static LogicalPlan optimize(OptimizeTable o, SparkConnectPlanner planner) {
    long start = System.currentTimeMillis();
    SparkSession session = planner.session();
    String path = table(o.getTable(), planner);
    OptimizeCommand.Result r = OptimizeCommand.run(session, path, o.getPartitionFiltersList(), null,
        o.getZorderColumnsList());
    return DeltaConnectTables.rows(session, MaintenanceResults.OPTIMIZE,
        List.of(MaintenanceResults.optimize(session, path, r, start)));
  }

  /**
   * {@code DeltaTable.restoreToVersion(v)} / {@code restoreToTimestamp(ts)}.
   *
   * @param r the message: the table and a version ({@code >= 0}) or a timestamp string
   * @param planner the session's planner
   * @return the plan of the one metric row
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} without a
   *     version or timestamp, and {@link RestoreCommand#run}'s classes (e.g. {@code
   *     DELTA_CANNOT_RESTORE_TABLE_VERSION})
   */
  static LogicalPlan restore(RestoreTable r, SparkConnectPlanner planner) {
    SparkSession session = planner.session();
    Long version = switch (r.getVersionOrTimestampCase()) {
      case VERSION -> r.getVersion();
      case TIMESTAMP -> null;
      case VERSIONORTIMESTAMP_NOT_SET -> throw DeltaErrors.malformed(
          "delta.connect.RestoreTable needs a version or a timestamp");
    };
    String path = table(r.getTable(), planner);
    OptimizeCommand.Result result = RestoreCommand.run(session, path, version, version == null ? r.getTimestamp() : null);
    return DeltaConnectTables.rows(session, MaintenanceResults.RESTORE, List.of(MaintenanceResults.restore(result)));
  }

  /**
   * {@code DeltaTable.vacuum([retentionHours])}.
   *
   * @param v the message: the table and the retention in hours, if given
   * @param planner the session's planner
   * @return true (handled)
   */
  static boolean vacuum(VacuumTable v, SparkConnectPlanner planner) {
    return command(planner, session -> VacuumCommand.run(session, table(v.getTable(), planner),
        v.hasRetentionHours() ? v.getRetentionHours() : null, false));
  }

  /**
   * {@code DeltaTable.upgradeTableProtocol(reader, writer)}.
   *
   * @param u the message
   * @param planner the session's planner
   * @return true (handled)
   */
  static boolean upgrade(UpgradeTableProtocol u, SparkConnectPlanner planner) {
    return command(planner, session -> TableProtocolCommand.upgrade(session, table(u.getTable(), planner),
        u.getReaderVersion(), u.getWriterVersion()));
  }

  /**
   * {@code DeltaTable.addFeatureSupport(name)}.
   *
   * @param a the message
   * @param planner the session's planner
   * @return true (handled)
   */
  static boolean addFeature(AddFeatureSupport a, SparkConnectPlanner planner) {
    return command(planner, session -> TableProtocolCommand.addFeature(session, table(a.getTable(), planner),
        a.getFeatureName()));
  }

  /**
   * {@code DeltaTable.dropFeatureSupport(name[, truncateHistory])}.
   *
   * @param d the message
   * @param planner the session's planner
   * @return true (handled)
   */
  static boolean dropFeature(DropFeatureSupport d, SparkConnectPlanner planner) {
    return command(planner, session -> TableProtocolCommand.dropFeature(session, table(d.getTable(), planner),
        d.getFeatureName(), d.hasTruncateHistory() ? d.getTruncateHistory() : null));
  }

  private static String table(DeltaTable t, SparkConnectPlanner planner) {
    return DeltaConnectTables.resolve(t, planner, Privilege.MAINTAIN).path();
  }

  /** Runs a command body as the relation plugin runs its plans: server settings checked, writes in flight kept. */
  private static boolean command(SparkConnectPlanner planner, Consumer<SparkSession> body) {
    try (InFlightWrites.Scope scope = InFlightWrites.openScope();
        ObjectStoreRequests.Scope requests = ObjectStoreRequests.open()) {
      ServerSettings.check(planner.session());
      body.accept(planner.session());
      return true;
    }
  }
}
