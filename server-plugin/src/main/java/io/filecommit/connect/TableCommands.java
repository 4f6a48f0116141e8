package io.filecommit.connect;

import io.filecommit.commands.CommandResult;
import io.filecommit.commands.SetTablePropertiesCommand;
import io.filecommit.commands.WriteIntoDelta;
import io.filecommit.proto.v1.WriteCommand;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;

/**
 * Serves the table commands of the contract ({@code commands.proto}: {@code WriteCommand}, {@code
 * SetTablePropertiesCommand}) with {@link WriteIntoDelta} and {@link SetTablePropertiesCommand}.
 */
final class TableCommands {
  private TableCommands() {}

  /** Runs a {@code WriteCommand}. */
  static CommandResult write(WriteCommand cmd, SparkConnectPlanner planner) {
    return WriteIntoDelta.run(planner.session(),
        CommandInput.dataFrame(planner, cmd.hasInput() ? cmd.getInput() : null, "WriteCommand"),
        CommandInput.path(cmd.getPath(), planner), ProtoConversions.toMode(cmd.getMode()), cmd.getPartitionByList(),
        cmd.getOptionsMap(), cmd.getTablePropertiesMap(), cmd.getChangeData(),
        ProtoConversions.txnOf(cmd.hasTxn(), cmd.getTxn()),
        StagingCommands.stage(cmd.hasStage(), cmd.getStage(), planner));
  }

  /** Runs a {@code SetTablePropertiesCommand}. */
  static CommandResult setTableProperties(io.filecommit.proto.v1.SetTablePropertiesCommand cmd,
      SparkConnectPlanner planner) {
    return SetTablePropertiesCommand.run(planner.session(), CommandInput.path(cmd.getPath(), planner),
        cmd.getPropertiesMap(), ProtoConversions.txnOf(cmd.hasTxn(), cmd.getTxn()),
        StagingCommands.stage(cmd.hasStage(), cmd.getStage(), planner));
  }

  /** Runs a {@code VacuumCommand}: the files in batches of 10,000, then the summary. */
  static void vacuum(io.filecommit.proto.v1.VacuumCommand cmd, SparkConnectPlanner planner) {
    String path = CommandInput.path(cmd.getPath(), planner);
    io.filecommit.commands.VacuumCommand.Result r = io.filecommit.commands.VacuumCommand.run(planner.session(), path,
        cmd.hasRetentionHours() ? cmd.getRetentionHours() : null, cmd.getDryRun());
    java.util.function.Consumer<io.filecommit.proto.v1.VacuumResponse> out = ResponseStream.of(planner);
    for (int i = 0; i < r.files().size(); i += 10_000) {
      out.accept(io.filecommit.proto.v1.VacuumResponse.newBuilder().setFiles(io.filecommit.proto.v1.VacuumFileBatch
          .newBuilder().addAllFiles(r.files().subList(i, Math.min(r.files().size(), i + 10_000)))).build());
    }
    out.accept(io.filecommit.proto.v1.VacuumResponse.newBuilder().setSummary(io.filecommit.proto.v1.VacuumSummary
        .newBuilder().setDryRun(r.dryRun()).setNumFiles(r.files().size()).setNumBytes(r.bytes())
        .setTablePath(path)).build());
  }
}
