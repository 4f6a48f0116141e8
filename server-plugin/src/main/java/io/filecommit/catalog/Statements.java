package io.filecommit.catalog;

import io.filecommit.txn.CommandResult;
import io.filecommit.commands.DeleteCommand;
import io.filecommit.commands.UpdateCommand;
import io.filecommit.commands.merge.MergeClause;
import io.filecommit.commands.merge.MergeIntoCommand;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.RowMetrics;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Assignment;
import org.apache.spark.sql.catalyst.plans.logical.DeleteAction;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.InsertAction;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeAction;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.UpdateAction;
import org.apache.spark.sql.catalyst.plans.logical.UpdateTable;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;

/**
 * SQL's row-level statements on a {@link FileCommitTable}, as Spark resolved them, turned into the
 * plugin's commands (Delta's {@code DeltaAnalysis} turns them into {@code DeleteCommand}, {@code
 * UpdateCommand}, {@code MergeIntoCommand}): resolved column references become references by name
 * (qualified by the command's source and target aliases), so the commands resolve them against the
 * table snapshot they read. The result rows are Delta's: DELETE and UPDATE return {@code
 * num_affected_rows}; MERGE returns {@code num_affected_rows}, {@code num_updated_rows}, {@code
 * num_deleted_rows}, {@code num_inserted_rows} (all longs).
 */
final class Statements {
  private static final String TARGET = "__filecommit_target";
  private static final String SOURCE = "__filecommit_source";

  private Statements() {}

  /** DELETE FROM t [WHERE c]. */
  static LogicalPlan delete(SparkSession session, FileCommitTable t, DeleteFromTable d,
      UnaryOperator<LogicalPlan> reads) {
    refuseTimeTravel(t, "DELETE");
    Set<ExprId> target = ids(d.table().output());
    Expression cond = d.condition();
    Column c = isTrue(cond) ? null : column(cond, target, Set.of(), null);
    return node("DELETE FROM " + t.name(), List.of("num_affected_rows"), () -> Guard.run(session, Map.of(), () -> {
      t.check(io.filecommit.security.Privilege.WRITE);
      CommandResult r = DeleteCommand.run(session, t.path(), c, Map.of(), null, null);
      return List.of(RowFactory.create(r.rowMetrics().deleted()));
    }));
  }

  /** UPDATE t SET ... [WHERE c]. */
  static LogicalPlan update(SparkSession session, FileCommitTable t, UpdateTable u, UnaryOperator<LogicalPlan> reads) {
    refuseTimeTravel(t, "UPDATE");
    Set<ExprId> target = ids(u.table().output());
    Map<String, Column> set = assignments(u.assignments(), target, Set.of(), null);
    Column c = u.condition().isEmpty() || isTrue(u.condition().get()) ? null
        : column(u.condition().get(), target, Set.of(), null);
    return node("UPDATE " + t.name(), List.of("num_affected_rows"), () -> Guard.run(session, Map.of(), () -> {
      t.check(io.filecommit.security.Privilege.WRITE);
      CommandResult r = UpdateCommand.run(session, t.path(), set, c, Map.of(), null, null);
      return List.of(RowFactory.create(r.rowMetrics().updated()));
    }));
  }

  /** MERGE INTO t USING s ON ... WHEN ...; also pyspark's {@code DataFrame.mergeInto}. */
  static LogicalPlan merge(SparkSession session, FileCommitTable t, MergeIntoTable m, UnaryOperator<LogicalPlan> reads) {
    refuseTimeTravel(t, "MERGE");
    Set<ExprId> target = ids(m.targetTable().output());
    Set<ExprId> source = ids(m.sourceTable().output());
    Column on = column(m.mergeCondition(), target, source, TARGET);
    List<MergeClause> clauses = new ArrayList<>();
    for (MergeAction a : scala.jdk.javaapi.CollectionConverters.asJava(m.matchedActions())) {
      clauses.add(clause(a, MergeClause.Kind.MATCHED_UPDATE, MergeClause.Kind.MATCHED_DELETE, target, source));
    }
    for (MergeAction a : scala.jdk.javaapi.CollectionConverters.asJava(m.notMatchedActions())) {
      clauses.add(clause(a, MergeClause.Kind.NOT_MATCHED_INSERT, null, target, source));
    }
    for (MergeAction a : scala.jdk.javaapi.CollectionConverters.asJava(m.notMatchedBySourceActions())) {
      clauses.add(clause(a, MergeClause.Kind.NOT_MATCHED_BY_SOURCE_UPDATE, MergeClause.Kind.NOT_MATCHED_BY_SOURCE_DELETE,
          target, source));
    }
    LogicalPlan sourcePlan = reads.apply(m.sourceTable());
    boolean evolve = m.withSchemaEvolution();
    return node("MERGE INTO " + t.name(), List.of("num_affected_rows", "num_updated_rows", "num_deleted_rows",
        "num_inserted_rows"), () -> Guard.run(session, Map.of(), () -> {
          t.check(io.filecommit.security.Privilege.WRITE);
          Dataset<Row> src = Dataset.ofRows(session, sourcePlan);
          CommandResult r = MergeIntoCommand.run(session, t.path(), src, SOURCE, TARGET, on, clauses, Map.of(), null,
              null, evolve);
          RowMetrics rm = r.rowMetrics();
          return List.of(RowFactory.create(rm.updated() + rm.deleted() + rm.inserted(), rm.updated(), rm.deleted(),
              rm.inserted()));
        }));
  }

  /** INSERT OVERWRITE / {@code writeTo(..).overwritePartitions()} with dynamic partition overwrite. */
  static LogicalPlan overwritePartitions(SparkSession session, FileCommitTable t,
      org.apache.spark.sql.catalyst.plans.logical.OverwritePartitionsDynamic o, UnaryOperator<LogicalPlan> reads) {
    refuseTimeTravel(t, "INSERT OVERWRITE");
    LogicalPlan query = reads.apply(o.query());
    Map<String, String> options = new java.util.HashMap<>(scala.jdk.javaapi.CollectionConverters.asJava(o.writeOptions()));
    options.put(io.filecommit.commands.WriteIntoDelta.PARTITION_OVERWRITE_MODE, "dynamic");
    return node("INSERT OVERWRITE " + t.name(), List.of(), () -> {
      t.check(io.filecommit.security.Privilege.WRITE);
      TableWrites.write(session, io.filecommit.commands.FilledColumns.withoutIdentityOrGenerated(
          Dataset.ofRows(session, query), t.schema()), t.path(), io.filecommit.commands.WriteMode.OVERWRITE,
          List.of(), options, Map.of());
      return List.of();
    });
  }

  /** ALTER TABLE t ADD CONSTRAINT name CHECK (expr): Delta's {@code delta.constraints.<name>}, rows checked. */
  static LogicalPlan addCheck(SparkSession session, FileCommitTable t, String name, String condition) {
    refuseTimeTravel(t, "ALTER TABLE ADD CONSTRAINT");
    return node("ALTER TABLE " + t.name() + " ADD CONSTRAINT " + name, List.of(), () -> Guard.run(session, Map.of(),
        () -> {
          t.check(io.filecommit.security.Privilege.MAINTAIN);
          io.filecommit.commands.CheckConstraintCommand.add(session, t.path(), name, condition);
          return List.<Row>of();
        }));
  }

  /** ALTER TABLE t DROP CONSTRAINT [IF EXISTS] name. */
  static LogicalPlan dropCheck(SparkSession session, FileCommitTable t, String name, boolean ifExists) {
    refuseTimeTravel(t, "ALTER TABLE DROP CONSTRAINT");
    return node("ALTER TABLE " + t.name() + " DROP CONSTRAINT " + name, List.of(), () -> Guard.run(session, Map.of(),
        () -> {
          t.check(io.filecommit.security.Privilege.MAINTAIN);
          io.filecommit.commands.CheckConstraintCommand.drop(session, t.path(), name, ifExists);
          return List.<Row>of();
        }));
  }

  private static MergeClause clause(MergeAction a, MergeClause.Kind update, MergeClause.Kind delete,
      Set<ExprId> target, Set<ExprId> source) {
    Column cond = a.condition().isEmpty() ? null : column(a.condition().get(), target, source, TARGET);
    if (a instanceof DeleteAction) {
      if (delete == null) {
        throw ErrorClass.DELTA_MERGE_MISSING_WHEN.error("MERGE: DELETE in a WHEN NOT MATCHED clause, which can "
            + "only insert", Map.of("operation", "MERGE"));
      }
      return new MergeClause(delete, cond, Map.of(), false);
    }
    if (a instanceof UpdateAction u) {
      return new MergeClause(update, cond, assignments(u.assignments(), target, source, TARGET), false);
    }
    if (a instanceof InsertAction i) {
      return new MergeClause(update, cond, assignments(i.assignments(), target, source, TARGET), false);
    }
    throw ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION.error("MERGE action " + a + " on a Delta table",
        Map.of("operation", "MERGE"));
  }

  private static void refuseTimeTravel(FileCommitTable t, String what) {
    if (!t.readOptions().isEmpty()) {
      throw ErrorClass.FILECOMMIT_TIME_TRAVEL_WRITE.error(what + " on a time-travel version of " + t.name(),
          Map.of("operation", what, "table", t.name()));
    }
  }

  private static Map<String, Column> assignments(scala.collection.immutable.Seq<Assignment> given, Set<ExprId> target,
      Set<ExprId> source, String targetQualifier) {
    Map<String, Column> out = new LinkedHashMap<>();
    for (Assignment a : scala.jdk.javaapi.CollectionConverters.asJava(given)) {
      if (!(a.key() instanceof Attribute key)) {
        throw ErrorClass.DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION.error("Assignment to a nested field ("
            + a.key().sql() + ") of a Delta table: filecommit assigns top-level columns only",
            Map.of("operation", targetQualifier == null ? "UPDATE" : "MERGE", "fieldName", a.key().sql()));
      }
      out.put(key.name(), column(a.value(), target, source, targetQualifier));
    }
    return out;
  }

  private static boolean isTrue(Expression e) {
    return e instanceof org.apache.spark.sql.catalyst.expressions.Literal l && Boolean.TRUE.equals(l.value());
  }

  private static Set<ExprId> ids(scala.collection.immutable.Seq<Attribute> attrs) {
    Set<ExprId> out = new HashSet<>();
    for (Attribute a : scala.jdk.javaapi.CollectionConverters.asJava(attrs)) {
      out.add(a.exprId());
    }
    return out;
  }

  /** A resolved expression as a column whose table and source references are by qualified name. */
  private static Column column(Expression e, Set<ExprId> target, Set<ExprId> source, String targetQualifier) {
    Expression byName = e.transformUp(new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof AttributeReference a && (target.contains(a.exprId()) || source.contains(a.exprId()));
      }

      @Override
      @SuppressWarnings("unchecked")
      public <A1 extends Expression, B1> B1 applyOrElse(A1 x, scala.Function1<A1, B1> otherwise) {
        if (x instanceof AttributeReference a && (target.contains(a.exprId()) || source.contains(a.exprId()))) {
          String q = target.contains(a.exprId()) ? targetQualifier : SOURCE;
          List<String> parts = q == null ? List.of(a.name()) : List.of(q, a.name());
          return (B1) new UnresolvedAttribute(scala.jdk.javaapi.CollectionConverters.asScala(parts).toList());
        }
        return otherwise.apply(x);
      }
    });
    return ExpressionUtils.column(byName);
  }

  private static LogicalPlan node(String statement, List<String> columns, java.util.function.Supplier<List<Row>> body) {
    List<Attribute> out = new ArrayList<>();
    for (String c : columns) {
      out.add(new AttributeReference(c, DataTypes.LongType, false, org.apache.spark.sql.types.Metadata.empty(),
          org.apache.spark.sql.catalyst.expressions.NamedExpression.newExprId(),
          scala.collection.immutable.Seq$.MODULE$.<String>empty()));
    }
    return new CommandNode(statement, scala.jdk.javaapi.CollectionConverters.asScala(out).toList(), body);
  }
}
