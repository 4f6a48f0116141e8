package io.filecommit.connect;

import com.google.protobuf.Any;
import io.filecommit.errors.ClientExceptions;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.proto.delta.connect.DeltaCommand;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.plugin.CommandPlugin;

/**
 * The Spark Connect command plugin (Spark's {@code org.apache.spark.sql.connect.plugin.CommandPlugin})
 * of Delta Connect's {@code delta.connect.DeltaCommand} ({@code proto/delta/connect/commands.proto}),
 * what delta-spark's Python {@code DeltaTable} sends for calls without a result DataFrame (Delta's own
 * {@code DeltaCommandPlugin} answers them on a server with delta-spark).
 *
 * <p>Served: {@code create_delta_table} ({@code DeltaTable.create / createIfNotExists / replace /
 * createOrReplace ... execute()}), run by {@link DeltaConnectCreate}; {@code vacuum_table}, {@code
 * upgrade_table_protocol}, {@code add_feature_support} and {@code drop_feature_support}, run by
 * {@link DeltaConnectMaintenance} (Delta's {@code VacuumCommand}, {@code
 * AlterTableSetPropertiesDeltaCommand}, {@code AlterTableDropFeatureDeltaCommand}; no result rows,
 * as Delta's plugin). The others, {@code clone_table} and {@code generate}, are refused with {@code
 * FILECOMMIT_DELTA_CONNECT_UNSUPPORTED} (parameter {@code operation}: the kind's name, e.g. {@code
 * GENERATE}) before anything is read or committed, instead of Spark Connect's {@code
 * CONNECT_INVALID_PLAN.NO_HANDLER_FOR_EXTENSION}.
 *
 * <p>Register next to {@link FileCommitPlugin} with {@code
 * spark.connect.extensions.command.classes=io.filecommit.connect.FileCommitPlugin,io.filecommit.connect.DeltaConnectCommands}.
 * Spark Connect asks each registered command plugin in turn until one handles the command; this one
 * declines (returns false) every command when delta-spark's own Delta Connect plugins are on the
 * server's class path ({@link DeltaConnectTables#deltaSparkPlugins}), and every command that is not a
 * {@code DeltaCommand}.
 */
public final class DeltaConnectCommands implements CommandPlugin {
  /** Public no-arg constructor, used by Spark's plugin registry. */
  public DeltaConnectCommands() {}

  /**
   * Runs or refuses a {@code delta.connect.DeltaCommand}.
   *
   * @param command a serialized {@code google.protobuf.Any}
   * @param planner the session's planner
   * @return true for a served command, run; false for any other command, and for every command
   *     when delta-spark's plugins are present
   * @throws io.filecommit.errors.FileCommitException (as the client's type) {@code
   *     FILECOMMIT_DELTA_CONNECT_UNSUPPORTED}, {@code FILECOMMIT_MALFORMED_COMMAND}, and the
   *     classes of the served commands ({@link DeltaConnectMaintenance}, {@link DeltaConnectCreate#execute})
   */
  @Override
  public boolean process(byte[] command, SparkConnectPlanner planner) {
    Any any = DeltaConnectTables.any(command);
    if (any == null || !any.is(DeltaCommand.class) || DeltaConnectTables.deltaSparkPlugins()) {
      return false;
    }
    try {
      DeltaCommand c = DeltaConnectTables.parse(any.getValue(), DeltaCommand.parser(), "DeltaCommand");
      switch (c.getCommandTypeCase()) {
        case VACUUM_TABLE:
          return DeltaConnectMaintenance.vacuum(c.getVacuumTable(), planner);
        case UPGRADE_TABLE_PROTOCOL:
          return DeltaConnectMaintenance.upgrade(c.getUpgradeTableProtocol(), planner);
        case ADD_FEATURE_SUPPORT:
          return DeltaConnectMaintenance.addFeature(c.getAddFeatureSupport(), planner);
        case DROP_FEATURE_SUPPORT:
          return DeltaConnectMaintenance.dropFeature(c.getDropFeatureSupport(), planner);
        case CREATE_DELTA_TABLE:
          DeltaConnectCreate.execute(c.getCreateDeltaTable(), planner);
          return true;
        case COMMANDTYPE_NOT_SET:
          throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("delta.connect.DeltaCommand without a command");
        default:
          throw DeltaConnectTables.unsupported(c.getCommandTypeCase().name());
      }
    } catch (FileCommitException e) {
      throw ClientExceptions.rethrow(e);
    }
  }
}
