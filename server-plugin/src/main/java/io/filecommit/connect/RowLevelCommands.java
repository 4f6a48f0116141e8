package io.filecommit.connect;

import io.filecommit.txn.CommandResult;
import io.filecommit.commands.DeleteCommand;
import io.filecommit.commands.UpdateCommand;
import io.filecommit.commands.merge.MergeClause;
import io.filecommit.commands.merge.MergeIntoCommand;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.proto.v1.Assignment;
import io.filecommit.proto.v1.MergeCommand;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;

/**
 * Serves the row-level commands of the contract ({@code rowlevel.proto}: {@code DeleteCommand},
 * {@code UpdateCommand}, {@code MergeCommand}) with {@link DeleteCommand}, {@link UpdateCommand}
 * and {@link MergeIntoCommand}; Spark Connect expressions become columns through the session's
 * planner.
 */
final class RowLevelCommands {
  private RowLevelCommands() {}

  /** Runs a {@code DeleteCommand}. */
  static CommandResult delete(io.filecommit.proto.v1.DeleteCommand cmd, SparkConnectPlanner planner) {
    Map<String, String> options = ServerSettings.options(planner.session(), cmd.getOptionsMap());
    return DeleteCommand.run(planner.session(), CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE),
        cmd.hasCondition() ? CommandInput.column(planner, cmd.getCondition()) : null, options,
        ProtoConversions.txnOf(cmd.hasTxn(), cmd.getTxn()),
        StagingCommands.stage(cmd.hasStage(), cmd.getStage(), planner));
  }

  /** Runs an {@code UpdateCommand}. */
  static CommandResult update(io.filecommit.proto.v1.UpdateCommand cmd, SparkConnectPlanner planner) {
    Map<String, String> options = ServerSettings.options(planner.session(), cmd.getOptionsMap());
    return UpdateCommand.run(planner.session(), CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE),
        assignments(planner, cmd.getAssignmentsList(), "UpdateCommand"),
        cmd.hasCondition() ? CommandInput.column(planner, cmd.getCondition()) : null, options,
        ProtoConversions.txnOf(cmd.hasTxn(), cmd.getTxn()),
        StagingCommands.stage(cmd.hasStage(), cmd.getStage(), planner));
  }

  /**
   * Runs a {@code MergeCommand}.
   *
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} without
   *     source or ON condition, and the classes of {@link MergeIntoCommand#run}
   */
  static CommandResult merge(MergeCommand cmd, SparkConnectPlanner planner) {
    Map<String, String> options = ServerSettings.options(planner.session(), cmd.getOptionsMap());
    String path = CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE);
    var source = CommandInput.dataFrame(planner, cmd.hasSource() ? cmd.getSource() : null, "MergeCommand");
    if (!cmd.hasCondition()) {
      throw DeltaErrors.malformed("MergeCommand.condition (the ON condition) is missing");
    }
    List<MergeClause> clauses = new ArrayList<>();
    for (io.filecommit.proto.v1.MergeClause c : cmd.getClausesList()) {
      clauses.add(new MergeClause(ProtoConversions.toKind(c.getKind()),
          c.hasCondition() ? CommandInput.column(planner, c.getCondition()) : null,
          assignments(planner, c.getAssignmentsList(), "MergeClause"), c.getAllColumns()));
    }
    return MergeIntoCommand.run(planner.session(), path, source, cmd.getSourceAlias(), cmd.getTargetAlias(),
        CommandInput.column(planner, cmd.getCondition()), clauses, options,
        ProtoConversions.txnOf(cmd.hasTxn(), cmd.getTxn()),
        StagingCommands.stage(cmd.hasStage(), cmd.getStage(), planner), cmd.getSchemaEvolution());
  }

  private static Map<String, Column> assignments(SparkConnectPlanner planner, List<Assignment> given, String where) {
    Map<String, Column> out = new LinkedHashMap<>();
    for (Assignment a : given) {
      if (a.getColumn().isEmpty() || !a.hasValue()) {
        throw DeltaErrors.malformed(where + ": an assignment needs a column and a value, got column '"
            + a.getColumn() + "'");
      }
      if (out.put(a.getColumn(), CommandInput.column(planner, a.getValue())) != null) {
        throw DeltaErrors.unresolvedAssignment(where, a.getColumn(), true, List.of());
      }
    }
    return out;
  }
}
