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
 * <p>{@code create_delta_table} ({@code DeltaTable.create / createIfNotExists / replace /
 * createOrReplace ... execute()}) is served by {@link DeltaConnectCreate}. {@code clone_table}, {@code
 * vacuum_table}, {@code upgrade_table_protocol}, {@code generate}, {@code add_feature_support} and
 * {@code drop_feature_support} are refused with {@code
 * FILECOMMIT_DELTA_CONNECT_UNSUPPORTED} (parameter {@code operation}: the kind's name, e.g. {@code
 * VACUUM_TABLE}) before anything is read or committed, instead of Spark Connect's {@code
 * CONNECT_INVALID_PLAN.NO_HANDLER_FOR_EXTENSION}; the filecommit client and SQL do these operations
 * ({@code filecommit.vacuum}, ...).
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
   * Serves a {@code delta.connect.DeltaCommand} of a kind this server serves ({@code
   * create_delta_table}), refuses the others.
   *
   * @param command a serialized {@code google.protobuf.Any}
   * @param planner the session's planner
   * @return true when the command was served; false for any other command, and for every command
   *     when delta-spark's plugins are present
   * @throws io.filecommit.errors.FileCommitException (as the client's type) {@code
   *     FILECOMMIT_DELTA_CONNECT_UNSUPPORTED}, {@code FILECOMMIT_MALFORMED_COMMAND}, and what
   *     {@link DeltaConnectCreate#execute} raises
   */
  @Override
  public boolean process(byte[] command, SparkConnectPlanner planner) {
    Any any = DeltaConnectTables.any(command);
    if (any == null || !any.is(DeltaCommand.class) || DeltaConnectTables.deltaSparkPlugins()) {
      return false;
    }
    try {
      DeltaCommand c = DeltaConnectTables.parse(any.getValue(), DeltaCommand.parser(), "DeltaCommand");
      if (c.getCommandTypeCase() == DeltaCommand.CommandTypeCase.COMMANDTYPE_NOT_SET) {
        throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("delta.connect.DeltaCommand without a command");
      }
      switch (c.getCommandTypeCase()) {
        case CREATE_DELTA_TABLE -> DeltaConnectCreate.execute(c.getCreateDeltaTable(), planner);
        default -> throw DeltaConnectTables.unsupported(c.getCommandTypeCase().name());
      }
      return true;
    } catch (FileCommitException e) {
      throw ClientExceptions.rethrow(e);
    }
  }
}
