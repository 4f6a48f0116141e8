package io.filecommit.connect;

import com.google.protobuf.Any;
import io.filecommit.commands.merge.MergeClause;
import io.filecommit.commands.merge.MergeIntoCommand;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.proto.delta.connect.Assignment;
import io.filecommit.proto.delta.connect.DeltaRelation;
import io.filecommit.proto.delta.connect.MergeIntoTable;
import io.filecommit.security.Privilege;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.RowMetrics;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Delta Connect's {@code merge_into_table} relation ({@code delta.connect.MergeIntoTable} of {@code
 * proto/delta/connect/relations.proto}): what delta-spark's Python {@code DeltaMergeBuilder.execute()}
 * sends, run at once by {@link MergeIntoCommand} (the same commit path, conflict rules, schema
 * evolution and error classes as the contract's {@code MergeCommand} and SQL MERGE), answered with
 * the metric row of Delta's {@code MergeIntoCommand}: {@link #METRICS}. The MERGE is one table
 * version (PROTOCOL.md "Add File and Remove File"; on a table that takes them, changed rows marked
 * in "Deletion Vectors" where Delta marks them); the target must be WRITE-able by the session's
 * principal ({@link DeltaConnectTables#resolve}).
 *
 * <p>As Delta's {@code DeltaMergeBuilder} / {@code DeltaMergeInto.resolveReferencesAndSchema}
 * resolve them, before anything is read or written:
 *
 * <ul>
 *   <li>the ON condition and the MATCHED clauses (conditions, assignment values) against the target
 *       (with its {@code DeltaTable.alias}) joined with the source (with its own alias, e.g. {@code
 *       source.alias("s")}); NOT MATCHED clauses against the source only; NOT MATCHED BY SOURCE
 *       clauses against the target only;
 *   <li>an assignment's field against the target: a top-level column (optionally qualified by the
 *       target alias); with {@code withSchemaEvolution()}, also a column the table lacks and the
 *       source has (it is added to the table, Delta's MERGE schema evolution); a nested field is
 *       refused with {@code DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION};
 *   <li>a reference that does not resolve in its clause's scope: {@code
 *       DELTA_MERGE_UNRESOLVED_EXPRESSION} (Delta's class; parameters {@code sqlExpr}, {@code clause},
 *       {@code cols});
 *   <li>an action not allowed in its clause list (e.g. an insert in {@code matched_actions}), an
 *       action without a kind: {@code FILECOMMIT_MALFORMED_COMMAND}.
 * </ul>
 *
 * Resolved references become references by name qualified with the client's aliases (this class's
 * own when either side has none, or both have the same), which
 * {@link MergeIntoCommand} resolves against the snapshot it reads. Clause order and omitted
 * conditions, several source rows matching one target row, non-deterministic conditions and
 * assignments are checked by {@link MergeIntoCommand} ({@code DELTA_NON_LAST_*_CLAUSE_OMIT_CONDITION},
 * {@code DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE}, {@code
 * DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED}); nothing is committed then.
 */
final class DeltaConnectMerge {
  /**
   * Delta's MERGE metric row ({@code MergeIntoCommand.output} of Delta 4.x): the rows changed
   * (updated + deleted + inserted), updated, deleted and inserted, all long.
   */
  static final StructType METRICS = new StructType()
      .add("num_affected_rows", DataTypes.LongType, false)
      .add("num_updated_rows", DataTypes.LongType, false)
      .add("num_deleted_rows", DataTypes.LongType, false)
      .add("num_inserted_rows", DataTypes.LongType, false);

  private static final String TARGET = "__filecommit_target";
  private static final String SOURCE = "__filecommit_source";

  private DeltaConnectMerge() {}

  /**
   * The three scopes a MERGE expression resolves in, whose columns are whose, and the qualifiers of
   * the references by name: the client's aliases when both are given and differ (so the commit's
   * {@code predicate} reads as the client wrote it), else this class's own.
   */
  private record Scopes(Dataset<Row> target, Dataset<Row> source, Dataset<Row> both, Set<ExprId> targetIds,
      Set<ExprId> sourceIds, String targetQualifier, String sourceQualifier) {}

  /**
   * Runs a {@code MergeIntoTable} and answers its metric row.
   *
   * @param m the message
   * @param planner the session's planner
   * @param parse parses a packed {@code DeltaRelation} (the target's scan)
   * @return a local relation of one {@link #METRICS} row
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} without
   *     source or condition, the classes of {@link DeltaConnectTables#resolve}, of the resolution
   *     above and of {@link MergeIntoCommand#run}; Spark's analysis errors (e.g. {@code
   *     AMBIGUOUS_REFERENCE}) as they are
   */
  static LogicalPlan plan(MergeIntoTable m, SparkConnectPlanner planner, Function<Any, DeltaRelation> parse) {
    SparkSession session = planner.session();
    DeltaConnectTables.Target t = DeltaConnectTables.target(m.getTarget(), parse);
    String path = DeltaConnectTables.resolve(t.table(), planner, Privilege.WRITE).path();
    if (!m.hasCondition()) {
      throw DeltaErrors.malformed("delta.connect.MergeIntoTable.condition (the merge condition) is missing");
    }
    Dataset<Row> source = CommandInput.dataFrame(planner, m.hasSource() ? m.getSource() : null, "MergeIntoTable");
    Dataset<Row> target = DeltaConnectTables.scan(session, path);
    if (t.alias() != null) {
      target = target.as(t.alias());
    }
    Scopes scopes = scopes(target, source, t.alias());
    Column on = byName(resolveCondition(scopes.both(), CommandInput.column(planner, m.getCondition()), "search condition"),
        scopes);
    boolean evolve = m.hasWithSchemaEvolution() && m.getWithSchemaEvolution();
    List<MergeClause> clauses = new ArrayList<>();
    for (MergeIntoTable.Action a : m.getMatchedActionsList()) {
      clauses.add(clause(a, Group.MATCHED, scopes, planner, evolve, t.alias()));
    }
    for (MergeIntoTable.Action a : m.getNotMatchedActionsList()) {
      clauses.add(clause(a, Group.NOT_MATCHED, scopes, planner, evolve, t.alias()));
    }
    for (MergeIntoTable.Action a : m.getNotMatchedBySourceActionsList()) {
      clauses.add(clause(a, Group.NOT_MATCHED_BY_SOURCE, scopes, planner, evolve, t.alias()));
    }
    CommandResult r = MergeIntoCommand.run(session, path, source, scopes.sourceQualifier(), scopes.targetQualifier(),
        on, clauses, Map.of(), null, null, evolve);
    RowMetrics rm = r.rowMetrics();
    return DeltaConnectTables.rows(session, METRICS, List.of(RowFactory.create(
        rm.updated() + rm.deleted() + rm.inserted(), rm.updated(), rm.deleted(), rm.inserted())));
  }

  /** The clause lists of {@code MergeIntoTable}, with the scope their expressions resolve in. */
  private enum Group {
    MATCHED("WHEN MATCHED"), NOT_MATCHED("WHEN NOT MATCHED"), NOT_MATCHED_BY_SOURCE("WHEN NOT MATCHED BY SOURCE");

    final String sql;

    Group(String sql) {
      this.sql = sql;
    }

    Dataset<Row> scope(Scopes s) {
      return this == MATCHED ? s.both() : this == NOT_MATCHED ? s.source() : s.target();
    }
  }

  private static Scopes scopes(Dataset<Row> target, Dataset<Row> source, String targetAlias) {
    Dataset<Row> both = target.crossJoin(source);
    Join join = (Join) both.queryExecution().analyzed();
    // A source sharing the target's attributes is renewed in the join: both sets of ids are the source's.
    Set<ExprId> targetIds = ids(join.left());
    targetIds.addAll(ids(target.queryExecution().analyzed()));
    Set<ExprId> sourceIds = ids(join.right());
    sourceIds.addAll(ids(source.queryExecution().analyzed()));
    sourceIds.removeAll(targetIds);
    String sourceAlias = source.queryExecution().analyzed() instanceof SubqueryAlias a ? a.alias() : null;
    boolean own = targetAlias == null || targetAlias.isEmpty() || sourceAlias == null || sourceAlias.isEmpty()
        || targetAlias.equalsIgnoreCase(sourceAlias);
    return new Scopes(target, source, both, targetIds, sourceIds, own ? TARGET : targetAlias, own ? SOURCE : sourceAlias);
  }

  private static Set<ExprId> ids(LogicalPlan plan) {
    Set<ExprId> out = new HashSet<>();
    for (Attribute a : scala.jdk.javaapi.CollectionConverters.asJava(plan.output())) {
      out.add(a.exprId());
    }
    return out;
  }

  private static MergeClause clause(MergeIntoTable.Action a, Group group, Scopes scopes, SparkConnectPlanner planner,
      boolean evolve, String targetAlias) {
    Dataset<Row> scope = group.scope(scopes);
    Column cond = a.hasCondition()
        ? byName(resolveCondition(scope, CommandInput.column(planner, a.getCondition()), group.sql + " condition"), scopes)
        : null;
    boolean matched = group == Group.MATCHED;
    switch (a.getActionTypeCase()) {
      case DELETE_ACTION:
        if (group == Group.NOT_MATCHED) {
          break;
        }
        return new MergeClause(matched ? MergeClause.Kind.MATCHED_DELETE : MergeClause.Kind.NOT_MATCHED_BY_SOURCE_DELETE,
            cond, Map.of(), false);
      case UPDATE_ACTION:
        if (group == Group.NOT_MATCHED) {
          break;
        }
        return new MergeClause(matched ? MergeClause.Kind.MATCHED_UPDATE : MergeClause.Kind.NOT_MATCHED_BY_SOURCE_UPDATE,
            cond, assignments(a.getUpdateAction().getAssignmentsList(), group, scopes, planner, evolve, targetAlias),
            false);
      case UPDATE_STAR_ACTION:
        if (!matched) {
          break;
        }
        return new MergeClause(MergeClause.Kind.MATCHED_UPDATE, cond, Map.of(), true);
      case INSERT_ACTION:
        if (group != Group.NOT_MATCHED) {
          break;
        }
        return new MergeClause(MergeClause.Kind.NOT_MATCHED_INSERT, cond,
            assignments(a.getInsertAction().getAssignmentsList(), group, scopes, planner, evolve, targetAlias), false);
      case INSERT_STAR_ACTION:
        if (group != Group.NOT_MATCHED) {
          break;
        }
        return new MergeClause(MergeClause.Kind.NOT_MATCHED_INSERT, cond, Map.of(), true);
      default:
        throw DeltaErrors.malformed("delta.connect.MergeIntoTable.Action without an action in the " + group.sql
            + " clauses");
    }
    throw DeltaErrors.malformed("delta.connect.MergeIntoTable: a " + a.getActionTypeCase() + " is not allowed in the "
        + group.sql + " clauses");
  }

  /**
   * The assignments of an update or insert: table column name -> value (by name), fields resolved
   * against the target, values in the clause's scope.
   */
  private static Map<String, Column> assignments(List<Assignment> given, Group group, Scopes scopes,
      SparkConnectPlanner planner, boolean evolve, String targetAlias) {
    Map<String, Column> out = new LinkedHashMap<>();
    String what = group.sql + (group == Group.NOT_MATCHED ? " INSERT" : " UPDATE");
    for (Assignment a : given) {
      if (!a.hasField() || !a.hasValue()) {
        throw DeltaErrors.malformed("delta.connect.Assignment needs a field and a value");
      }
      String name = field(CommandInput.column(planner, a.getField()), scopes, evolve, targetAlias, what);
      Column value = byName(resolveValue(group.scope(scopes), CommandInput.column(planner, a.getValue()), what), scopes);
      if (out.put(name, value) != null) {
        throw DeltaErrors.unresolvedAssignment("MERGE", name, true, List.of());
      }
    }
    return out;
  }

  /**
   * The table column an assignment sets: a top-level column of the target; with schema evolution a
   * name the target lacks and the source has (optionally qualified by the target alias).
   */
  private static String field(Column given, Scopes scopes, boolean evolve, String targetAlias, String clause) {
    Expression e = ExpressionUtils.expression(given);
    Expression resolved;
    try {
      resolved = DeltaConnectTables.resolved(scopes.target(), given);
    } catch (Exception ex) { // Spark's AnalysisException is checked in Java's eyes only
      if (!unresolved(ex)) {
        throw sneaky(ex);
      }
      if (evolve && e instanceof UnresolvedAttribute u) {
        List<String> parts = scala.jdk.javaapi.CollectionConverters.asJava(u.nameParts());
        String name = parts.size() == 1 ? parts.get(0)
            : parts.size() == 2 && targetAlias != null && parts.get(0).equalsIgnoreCase(targetAlias) ? parts.get(1) : null;
        if (name != null && List.of(scopes.source().columns()).stream().anyMatch(name::equalsIgnoreCase)) {
          return name;
        }
      }
      throw unresolvedExpression(e.sql(), clause, scopes.target());
    }
    if (!(resolved instanceof AttributeReference key) || !scopes.targetIds().contains(key.exprId())) {
      throw ErrorClass.DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION.error("Assignment to " + resolved.sql()
          + ", which is not a top-level column of the table: filecommit assigns top-level columns only",
          Map.of("operation", "MERGE", "fieldName", resolved.sql()));
    }
    return key.name();
  }

  private static Expression resolveCondition(Dataset<Row> scope, Column condition, String clause) {
    try {
      LogicalPlan plan = scope.filter(condition).queryExecution().analyzed();
      return plan instanceof Filter f ? f.condition() : ExpressionUtils.expression(condition);
    } catch (Exception e) {
      throw unresolved(e) ? unresolvedExpression(ExpressionUtils.expression(condition).sql(), clause, scope) : sneaky(e);
    }
  }

  private static Expression resolveValue(Dataset<Row> scope, Column value, String clause) {
    try {
      LogicalPlan plan = scope.select(value.as("__filecommit_value")).queryExecution().analyzed();
      Object head = ((Project) plan).projectList().head();
      return head instanceof Alias a ? a.child() : (Expression) head;
    } catch (Exception e) {
      throw unresolved(e) ? unresolvedExpression(ExpressionUtils.expression(value).sql(), clause, scope) : sneaky(e);
    }
  }

  /** Whether {@code e} is Spark's analysis error of a reference that does not resolve. */
  private static boolean unresolved(Exception e) {
    String c = e instanceof AnalysisException a ? a.getCondition() : null;
    return c != null && (c.startsWith("UNRESOLVED_COLUMN") || c.startsWith("UNRESOLVED_FIELD"));
  }

  /** Throws {@code e} as it is (Spark's AnalysisException is checked in Java's eyes only). */
  @SuppressWarnings("unchecked")
  private static <E extends Exception> RuntimeException sneaky(Exception e) throws E {
    throw (E) e;
  }

  /** Delta's {@code DeltaErrors.cannotResolveExpression} of MERGE: {@code DELTA_MERGE_UNRESOLVED_EXPRESSION}. */
  private static RuntimeException unresolvedExpression(String sql, String clause, Dataset<Row> scope) {
    String cols = String.join(", ", scope.columns());
    return ErrorClass.DELTA_MERGE_UNRESOLVED_EXPRESSION.error("Cannot resolve " + sql + " in " + clause
        + " given columns " + cols + "; nothing was read or committed",
        Map.of("sqlExpr", sql, "clause", clause, "cols", cols));
  }

  /** A resolved expression whose target and source references are by name, qualified by this class's aliases. */
  private static Column byName(Expression e, Scopes scopes) {
    Expression out = e.transformUp(new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof AttributeReference a
            && (scopes.targetIds().contains(a.exprId()) || scopes.sourceIds().contains(a.exprId()));
      }

      @Override
      @SuppressWarnings("unchecked")
      public <A1 extends Expression, B1> B1 applyOrElse(A1 x, scala.Function1<A1, B1> otherwise) {
        if (isDefinedAt(x)) {
          AttributeReference a = (AttributeReference) x;
          String q = scopes.targetIds().contains(a.exprId()) ? scopes.targetQualifier() : scopes.sourceQualifier();
          return (B1) new UnresolvedAttribute(scala.jdk.javaapi.CollectionConverters.asScala(List.of(q, a.name())).toList());
        }
        return otherwise.apply(x);
      }
    });
    return ExpressionUtils.column(out);
  }
}
