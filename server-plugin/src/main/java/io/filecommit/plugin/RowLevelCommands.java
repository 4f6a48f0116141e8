package io.filecommit.plugin;

import com.google.protobuf.Any;
import io.filecommit.delta.MergeIntoCommand;
import io.filecommit.delta.WriteIntoDelta;
import io.filecommit.errors.ErrorClass;
import io.filecommit.proto.v1.Assignment;
import io.filecommit.proto.v1.DeleteCommand;
import io.filecommit.proto.v1.MergeClause;
import io.filecommit.proto.v1.MergeCommand;
import io.filecommit.proto.v1.UpdateCommand;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;

/**
 * Decodes the row-level commands of the contract (proto/filecommit/v1/rowlevel.proto: {@code
 * DeleteCommand}, {@code UpdateCommand}, {@code MergeCommand}) and runs them ({@link
 * io.filecommit.delta.DeleteCommand}, {@link io.filecommit.delta.UpdateCommand}, {@link
 * MergeIntoCommand}). Paths pass {@link FileCommitPlugin#allowedPath} first; Spark Connect
 * expressions are turned into columns by the session's planner.
 */
final class RowLevelCommands {
  private RowLevelCommands() {}

  /**
   * Runs the row-level command packed in {@code any}.
   *
   * @param any a packed DeleteCommand, UpdateCommand or MergeCommand
   * @param planner the session's planner
   * @return what was committed
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} for a
   *     malformed message, and the classes of the command
   */
  static WriteIntoDelta.Result handle(Any any, SparkConnectPlanner planner) {
    if (any.is(DeleteCommand.class)) {
      DeleteCommand cmd = FileCommitPlugin.unpack(any, DeleteCommand.class);
      return io.filecommit.delta.DeleteCommand.run(planner.session(), FileCommitPlugin.allowedPath(cmd.getPath(), planner),
          cmd.hasCondition() ? column(planner, cmd.getCondition()) : null, cmd.getOptionsMap(),
          FileCommitPlugin.txnOf(cmd.hasTxn(), cmd.getTxn()));
    }
    if (any.is(UpdateCommand.class)) {
      UpdateCommand cmd = FileCommitPlugin.unpack(any, UpdateCommand.class);
      return io.filecommit.delta.UpdateCommand.run(planner.session(), FileCommitPlugin.allowedPath(cmd.getPath(), planner),
          assignments(planner, cmd.getAssignmentsList(), "UpdateCommand"),
          cmd.hasCondition() ? column(planner, cmd.getCondition()) : null, cmd.getOptionsMap(),
          FileCommitPlugin.txnOf(cmd.hasTxn(), cmd.getTxn()));
    }
    MergeCommand cmd = FileCommitPlugin.unpack(any, MergeCommand.class);
    String path = FileCommitPlugin.allowedPath(cmd.getPath(), planner);
    Dataset<Row> source = FileCommitPlugin.inputData(planner, cmd.hasSource() ? cmd.getSource() : null, "MergeCommand");
    if (!cmd.hasCondition()) {
      throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("MergeCommand.condition (the ON condition) is missing");
    }
    List<MergeIntoCommand.Clause> clauses = new ArrayList<>();
    for (MergeClause c : cmd.getClausesList()) {
      clauses.add(new MergeIntoCommand.Clause(kind(c.getKind()),
          c.hasCondition() ? column(planner, c.getCondition()) : null,
          assignments(planner, c.getAssignmentsList(), "MergeClause"), c.getAllColumns()));
    }
    return MergeIntoCommand.run(planner.session(), path, source, cmd.getSourceAlias(), cmd.getTargetAlias(),
        column(planner, cmd.getCondition()), clauses, cmd.getOptionsMap(), FileCommitPlugin.txnOf(cmd.hasTxn(), cmd.getTxn()));
  }

  private static Column column(SparkConnectPlanner planner, org.apache.spark.connect.proto.Expression e) {
    return ExpressionUtils.column(planner.transformExpression(e));
  }

  private static Map<String, Column> assignments(SparkConnectPlanner planner, List<Assignment> given, String where) {
    Map<String, Column> out = new LinkedHashMap<>();
    for (Assignment a : given) {
      if (a.getColumn().isEmpty() || !a.hasValue()) {
        throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error(where + ": an assignment needs a column and a value, got column '"
            + a.getColumn() + "'");
      }
      if (out.put(a.getColumn(), column(planner, a.getValue())) != null) {
        throw ErrorClass.DELTA_MERGE_UNRESOLVED_EXPRESSION.error(where + ": column '" + a.getColumn() + "' is assigned more than once",
            Map.of("column", a.getColumn()));
      }
    }
    return out;
  }

  private static MergeIntoCommand.ClauseKind kind(MergeClause.Kind kind) {
    return switch (kind) {
      case MATCHED_UPDATE -> MergeIntoCommand.ClauseKind.MATCHED_UPDATE;
      case MATCHED_DELETE -> MergeIntoCommand.ClauseKind.MATCHED_DELETE;
      case NOT_MATCHED_INSERT -> MergeIntoCommand.ClauseKind.NOT_MATCHED_INSERT;
      case NOT_MATCHED_BY_SOURCE_UPDATE -> MergeIntoCommand.ClauseKind.NOT_MATCHED_BY_SOURCE_UPDATE;
      case NOT_MATCHED_BY_SOURCE_DELETE -> MergeIntoCommand.ClauseKind.NOT_MATCHED_BY_SOURCE_DELETE;
      default -> throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("Unknown MERGE clause kind: " + kind);
    };
  }
}
