package io.filecommit.connect;

import com.google.protobuf.Any;
import io.filecommit.commands.DeleteCommand;
import io.filecommit.commands.UpdateCommand;
import io.filecommit.errors.ClientExceptions;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.proto.delta.connect.Assignment;
import io.filecommit.proto.delta.connect.DeleteFromTable;
import io.filecommit.proto.delta.connect.DeltaRelation;
import io.filecommit.proto.delta.connect.UpdateTable;
import io.filecommit.read.TableDescriptions;
import io.filecommit.security.Privilege;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.InFlightWrites;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.plugin.RelationPlugin;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The Spark Connect relation plugin (Spark's {@code org.apache.spark.sql.connect.plugin.RelationPlugin})
 * of Delta Connect's {@code delta.connect.DeltaRelation} ({@code proto/delta/connect/relations.proto}),
 * what delta-spark's Python {@code DeltaTable} sends on a Spark Connect session; it answers as
 * Delta's own {@code DeltaRelationPlugin} does, through filecommit's commands:
 *
 * <ul>
 *   <li>{@code scan} ({@code forPath} / {@code forName(...).toDF()}): the table's latest version
 *       at each execution ({@link DeltaConnectTables#scanPlan});
 *   <li>{@code is_delta_table}: one row, boolean column {@code value}: whether the path is the root
 *       of a Delta table (a path outside the allowed roots is refused, not answered false);
 *   <li>{@code describe_history}: Delta's DESCRIBE HISTORY rows and columns, newest first
 *       ({@link TableDescriptions#HISTORY}); the client applies {@code history(limit)};
 *   <li>{@code describe_detail}: Delta's one DESCRIBE DETAIL row ({@link TableDescriptions#DETAIL});
 *   <li>{@code delete_from_table}, {@code update_table}: run at once by {@link DeleteCommand} /
 *       {@link UpdateCommand} (the same commit path, conflict rules and error classes as the
 *       contract's commands), answered with Delta's metric row: one long column {@code
 *       num_affected_rows} (rows deleted, rows updated). The condition and the assignments are
 *       resolved against the target with its alias ({@code DeltaTable.alias}) before anything is
 *       read or written (Spark's analysis errors, e.g. {@code UNRESOLVED_COLUMN.WITH_SUGGESTION});
 *       an assignment to a nested field is refused ({@code DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION});
 *   <li>{@code optimize_table}, {@code restore_table}: run at once by {@link DeltaConnectMaintenance}
 *       (Delta's {@code OptimizeTableCommand} / {@code RestoreTableCommand} result rows).
 *   <li>{@code merge_into_table}: run at once by {@link DeltaConnectMerge} (filecommit's {@code
 *       MergeIntoCommand}), answered with Delta's MERGE metric row ({@link DeltaConnectMerge#METRICS});
 *   <li>{@code convert_to_delta}: run at once by {@link DeltaConnectConvert} (filecommit's {@code
 *       ConvertToDeltaCommand}), answered with the table's identifier ({@code delta.`/path`}).
 * </ul>
 *
 * A kind this server does not know is refused with {@code FILECOMMIT_DELTA_CONNECT_UNSUPPORTED} (parameter
 * {@code operation}: the kind's name) before anything is read. Tables are checked as {@link
 * DeltaConnectTables#resolve} says (allowed roots, privileges: READ to read, WRITE to change).
 *
 * <p>Register with {@code spark.connect.extensions.relation.classes=io.filecommit.connect.DeltaConnectRelations}.
 * Spark Connect asks each registered relation plugin in turn and takes the first that answers; this
 * one answers nothing (returns empty) when delta-spark's own Delta Connect plugins are on the
 * server's class path ({@link DeltaConnectTables#deltaSparkPlugins}), so Delta keeps its messages,
 * and nothing for any other extension. Errors reach the client as the JVM types Delta raises for
 * their classes ({@link ClientExceptions}).
 */
public final class DeltaConnectRelations implements RelationPlugin {
  /** The metric row of DELETE and UPDATE (Delta's {@code DeleteCommand} / {@code UpdateCommand} output). */
  static final StructType AFFECTED_ROWS = new StructType().add("num_affected_rows", DataTypes.LongType, false);
  /** The answer of {@code is_delta_table} (a Dataset of one boolean, as Delta's plugin makes it). */
  static final StructType IS_DELTA_TABLE = new StructType().add("value", DataTypes.BooleanType, false);

  /** Public no-arg constructor, used by Spark's plugin registry. */
  public DeltaConnectRelations() {}

  /**
   * Answers a {@code delta.connect.DeltaRelation}.
   *
   * @param relation a serialized {@code google.protobuf.Any}
   * @param planner the session's planner
   * @return the relation's plan; empty for another plugin's relation, and for every relation when
   *     delta-spark's plugins are present
   * @throws io.filecommit.errors.FileCommitException (as the client's type) the classes listed above
   */
  @Override
  public Optional<LogicalPlan> transform(byte[] relation, SparkConnectPlanner planner) {
    Any any = DeltaConnectTables.any(relation);
    if (any == null || !any.is(DeltaRelation.class) || DeltaConnectTables.deltaSparkPlugins()) {
      return Optional.empty();
    }
    try (InFlightWrites.Scope scope = InFlightWrites.openScope();
        ObjectStoreRequests.Scope requests = ObjectStoreRequests.open()) {
      ServerSettings.check(planner.session());
      return Optional.of(plan(parse(any), planner));
    } catch (FileCommitException e) {
      throw ClientExceptions.rethrow(e);
    }
  }

  private static DeltaRelation parse(Any any) {
    return DeltaConnectTables.parse(any.getValue(), DeltaRelation.parser(), "DeltaRelation");
  }

  private static LogicalPlan plan(DeltaRelation r, SparkConnectPlanner planner) {
    SparkSession session = planner.session();
    switch (r.getRelationTypeCase()) {
      case SCAN: {
        DeltaConnectTables.Resolved t = DeltaConnectTables.resolve(r.getScan().getTable(), planner, Privilege.READ);
        return DeltaConnectTables.scanPlan(session, t, r.getScan().getTable().getTableOrViewName());
      }
      case IS_DELTA_TABLE: {
        String path = CommandInput.path(r.getIsDeltaTable().getPath(), planner, Privilege.READ);
        boolean table = path != null && !path.isBlank()
            && io.filecommit.delta.DeltaLog.forTable(session, path).snapshot().exists();
        return DeltaConnectTables.rows(session, IS_DELTA_TABLE, List.of(RowFactory.create(table)));
      }
      case DESCRIBE_HISTORY: {
        String path = DeltaConnectTables.resolve(r.getDescribeHistory().getTable(), planner, Privilege.READ).path();
        return DeltaConnectTables.rows(session, TableDescriptions.HISTORY, TableDescriptions.history(session, path, null));
      }
      case DESCRIBE_DETAIL: {
        DeltaConnectTables.Resolved t = DeltaConnectTables.resolve(r.getDescribeDetail().getTable(), planner,
            Privilege.READ);
        return DeltaConnectTables.rows(session, TableDescriptions.DETAIL,
            List.of(TableDescriptions.detail(session, t.path(), t.name())));
      }
      case DELETE_FROM_TABLE:
        return delete(r.getDeleteFromTable(), planner);
      case UPDATE_TABLE:
        return update(r.getUpdateTable(), planner);
      case OPTIMIZE_TABLE:
        return DeltaConnectMaintenance.optimize(r.getOptimizeTable(), planner);
      case RESTORE_TABLE:
        return DeltaConnectMaintenance.restore(r.getRestoreTable(), planner);
      case MERGE_INTO_TABLE:
        return DeltaConnectMerge.plan(r.getMergeIntoTable(), planner, DeltaConnectRelations::parse);
      case CONVERT_TO_DELTA:
        return DeltaConnectConvert.plan(r.getConvertToDelta(), planner);
      case RELATIONTYPE_NOT_SET:
        throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("delta.connect.DeltaRelation without a relation");
      default:
        throw DeltaConnectTables.unsupported(r.getRelationTypeCase().name());
    }
  }

  /** DELETE: {@link DeleteCommand}, answered with {@link #AFFECTED_ROWS} (rows deleted). */
  private static LogicalPlan delete(DeleteFromTable d, SparkConnectPlanner planner) {
    SparkSession session = planner.session();
    DeltaConnectTables.Target t = DeltaConnectTables.target(d.getTarget(), DeltaConnectRelations::parse);
    String path = DeltaConnectTables.resolve(t.table(), planner, Privilege.WRITE).path();
    Dataset<Row> target = aliased(session, path, t.alias());
    Column condition = d.hasCondition()
        ? DeltaConnectTables.condition(target, CommandInput.column(planner, d.getCondition())) : null;
    CommandResult r = DeleteCommand.run(session, path, condition, Map.of(), null, null);
    return DeltaConnectTables.rows(session, AFFECTED_ROWS, List.of(RowFactory.create(r.rowMetrics().deleted())));
  }

  /** UPDATE: {@link UpdateCommand}, answered with {@link #AFFECTED_ROWS} (rows updated). */
  private static LogicalPlan update(UpdateTable u, SparkConnectPlanner planner) {
    SparkSession session = planner.session();
    DeltaConnectTables.Target t = DeltaConnectTables.target(u.getTarget(), DeltaConnectRelations::parse);
    String path = DeltaConnectTables.resolve(t.table(), planner, Privilege.WRITE).path();
    Dataset<Row> target = aliased(session, path, t.alias());
    Set<ExprId> ids = DeltaConnectTables.ids(target);
    Map<String, Column> set = new LinkedHashMap<>();
    for (Assignment a : u.getAssignmentsList()) {
      if (!a.hasField() || !a.hasValue()) {
        throw DeltaErrors.malformed("delta.connect.Assignment needs a field and a value");
      }
      Expression field = DeltaConnectTables.resolved(target, CommandInput.column(planner, a.getField()));
      if (!(field instanceof AttributeReference key) || !ids.contains(key.exprId())) {
        throw ErrorClass.DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION.error("Assignment to " + field.sql()
            + ", which is not a top-level column of the table: filecommit assigns top-level columns only",
            Map.of("operation", "UPDATE", "fieldName", field.sql()));
      }
      Expression value = DeltaConnectTables.resolved(target, CommandInput.column(planner, a.getValue()));
      if (set.put(key.name(), ExpressionUtils.column(DeltaConnectTables.byName(value, ids))) != null) {
        throw DeltaErrors.unresolvedAssignment("UPDATE", key.name(), true, List.of());
      }
    }
    Column condition = u.hasCondition()
        ? DeltaConnectTables.condition(target, CommandInput.column(planner, u.getCondition())) : null;
    CommandResult r = UpdateCommand.run(session, path, set, condition, Map.of(), null, null);
    return DeltaConnectTables.rows(session, AFFECTED_ROWS, List.of(RowFactory.create(r.rowMetrics().updated())));
  }

  private static Dataset<Row> aliased(SparkSession session, String path, String alias) {
    Dataset<Row> scan = DeltaConnectTables.scan(session, path);
    return alias == null ? scan : scan.as(alias);
  }
}
