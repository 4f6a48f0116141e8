package io.filecommit.catalog;

import io.filecommit.read.FileCommitDataSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.analysis.NamedRelation;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.UpdateTable;
import org.apache.spark.sql.catalyst.plans.logical.V2WriteCommand;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.types.StructField;

/**
 * The analysis rule of the session extension (Delta's {@code DeltaAnalysis}):
 *
 * <ul>
 *   <li>a scan of a {@link FileCommitTable} (a table by name, {@code delta.`/path`}, a time-travel
 *       read) becomes the filecommit reader's relation ({@link FileCommitDataSource#relation}),
 *       keeping the scan's attributes, so partition pruning, data skipping and deletion vectors
 *       apply as for {@code spark.read.format("delta")};
 *   <li>DELETE FROM, UPDATE and MERGE INTO a {@link FileCommitTable}, once Spark has resolved them,
 *       become the plugin's {@code DeleteCommand}, {@code UpdateCommand} and {@code
 *       MergeIntoCommand} ({@link Statements});
 *   <li>the target of INSERT / {@code writeTo} stays the table (Spark's V1 fallback write, {@link
 *       TableWrites}); only the query's scans are replaced; a dynamic partition overwrite (which
 *       Spark has no V1 fallback for) runs {@code WriteIntoDelta} with {@code
 *       partitionOverwriteMode=dynamic} directly;
 *   <li>ALTER TABLE ADD CONSTRAINT ... CHECK and DROP CONSTRAINT set and remove Delta's {@code
 *       delta.constraints.<name>} through {@code CheckConstraintCommand}, which checks the table's
 *       rows first.
 * </ul>
 */
final class TableResolution extends Rule<LogicalPlan> {
  private final SparkSession session;

  /**
   * The rule for a session.
   *
   * @param session the session
   */
  TableResolution(SparkSession session) {
    this.session = session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    if (plan instanceof DeleteFromTable d && table(d.table()) != null) {
      return d.resolved() ? Statements.delete(session, table(d.table()), d, this::reads) : plan;
    }
    if (plan instanceof UpdateTable u && table(u.table()) != null) {
      return u.resolved() ? Statements.update(session, table(u.table()), u, this::reads) : plan;
    }
    if (plan instanceof MergeIntoTable m && table(m.targetTable()) != null) {
      return m.resolved() ? Statements.merge(session, table(m.targetTable()), m, this::reads) : plan;
    }
    if (plan instanceof org.apache.spark.sql.catalyst.plans.logical.AddCheckConstraint a && leafTable(a.child()) != null) {
      return Statements.addCheck(session, leafTable(a.child()), a.checkConstraint().name(),
          a.checkConstraint().condition());
    }
    if (plan instanceof org.apache.spark.sql.catalyst.plans.logical.DropConstraint d
        && d.table() instanceof org.apache.spark.sql.catalyst.analysis.ResolvedTable r
        && r.table() instanceof FileCommitTable t) {
      return Statements.dropCheck(session, t, d.name(), d.ifExists());
    }
    if (plan instanceof org.apache.spark.sql.catalyst.plans.logical.OverwritePartitionsDynamic o
        && table(o.table()) != null) {
      return o.resolved() ? Statements.overwritePartitions(session, table(o.table()), o, this::reads) : plan;
    }
    if (plan instanceof V2WriteCommand w && table(w.table()) != null) {
      LogicalPlan q = reads(w.query());
      return q == w.query() ? plan : (LogicalPlan) w.withNewQuery(q);
    }
    return reads(plan);
  }

  /** The table of our own under a plan (through aliases), or null. */
  static FileCommitTable table(LogicalPlan plan) {
    LogicalPlan p = plan;
    while (p instanceof SubqueryAlias a) {
      p = a.child();
    }
    if (p instanceof DataSourceV2Relation r && r.table() instanceof FileCommitTable t) {
      return t;
    }
    return null;
  }

  /** The table of our own that is the only leaf of a plan (ADD CONSTRAINT's filter over the table), or null. */
  static FileCommitTable leafTable(LogicalPlan plan) {
    List<LogicalPlan> leaves = scala.jdk.javaapi.CollectionConverters.asJava(plan.collectLeaves());
    return leaves.size() == 1 ? table(leaves.get(0)) : null;
  }

  /** The same table when a plan is a write target (a {@link NamedRelation}). */
  static FileCommitTable table(NamedRelation relation) {
    return relation instanceof LogicalPlan p ? table(p) : null;
  }

  /**
   * Replaces every scan of a {@link FileCommitTable} in a plan (and its subqueries) with the
   * reader's relation.
   *
   * @param plan a plan
   * @return the plan, the same instance when nothing changed
   */
  LogicalPlan reads(LogicalPlan plan) {
    return plan.transformUpWithSubqueries(partial(p -> {
      if (p instanceof DataSourceV2Relation r && r.table() instanceof FileCommitTable t) {
        return fallback(r, t);
      }
      return null;
    }));
  }

  private LogicalPlan fallback(DataSourceV2Relation r, FileCommitTable t) {
    BaseRelation relation = Guard.errors(() -> FileCommitDataSource.relation(session, t.path(), t.readOptions()));
    List<AttributeReference> scanned = new ArrayList<>();
    List<AttributeReference> out = scala.jdk.javaapi.CollectionConverters.asJava(r.output());
    for (StructField f : relation.schema().fields()) {
      AttributeReference match = null;
      for (AttributeReference a : out) {
        if (a.name().toLowerCase(Locale.ROOT).equals(f.name().toLowerCase(Locale.ROOT))) {
          match = a;
        }
      }
      scanned.add(match != null ? (AttributeReference) match.withDataType(f.dataType()).withNullability(f.nullable())
          : new AttributeReference(f.name(), f.dataType(), f.nullable(), f.metadata(),
              org.apache.spark.sql.catalyst.expressions.NamedExpression.newExprId(),
              scala.collection.immutable.Seq$.MODULE$.<String>empty()));
    }
    LogicalRelation lr = new LogicalRelation(relation, scala.jdk.javaapi.CollectionConverters.asScala(scanned).toList(),
        scala.Option.empty(), false, scala.Option.empty());
    List<NamedExpression> keep = new ArrayList<>();
    for (AttributeReference a : out) {
      for (AttributeReference s : scanned) {
        if (s.exprId().equals(a.exprId())) {
          keep.add(s);
        }
      }
    }
    return new Project(scala.jdk.javaapi.CollectionConverters.asScala(keep).toList(), lr);
  }

  /** A Scala partial function from a Java function that returns null where it is not defined. */
  static scala.PartialFunction<LogicalPlan, LogicalPlan> partial(Function<LogicalPlan, LogicalPlan> f) {
    return new scala.runtime.AbstractPartialFunction<>() {
      @Override
      public boolean isDefinedAt(LogicalPlan p) {
        return f.apply(p) != null;
      }

      @Override
      public <A1 extends LogicalPlan, B1> B1 applyOrElse(A1 p, scala.Function1<A1, B1> otherwise) {
        LogicalPlan r = f.apply(p);
        @SuppressWarnings("unchecked")
        B1 out = r != null ? (B1) r : otherwise.apply(p);
        return out;
      }
    };
  }
}
