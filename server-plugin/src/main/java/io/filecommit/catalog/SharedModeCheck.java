package io.filecommit.catalog;

import io.filecommit.connect.SharedMode;
import io.filecommit.security.Privilege;
import java.util.Locale;
import java.util.Set;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.QueryPlan;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Shared mode's check of SQL plans ({@link SharedMode}; a no-op unless {@value
 * SharedMode#enabled()} is {@code true}), in two steps:
 *
 * <ol>
 *   <li>{@link #parsed}, on the parsed plan ({@link DeltaSqlParser#parsePlan}), before Spark's
 *       {@code ResolveSQLOnFile} lists and infers the schema of {@code format.`path`}: a file
 *       format path is checked as a read ({@link SharedMode#checkPath}: no {@code _delta_log},
 *       allowed roots, READ grant); a source outside the allowlist ({@code jdbc.`...`}, a class
 *       name) is refused ({@code DATA_SOURCE}).
 *   <li>{@link #apply}, an analyzer check rule ({@code SparkSessionExtensions.injectCheckRule}) over
 *       the analyzed plan, before anything runs (eager commands included): {@code reflect} / {@code
 *       java_method} / {@code try_reflect} ({@code REFLECT}), Python UDFs / UDAFs / UDTFs and the
 *       Python plan nodes ({@code PYTHON_UDF}), Hive UDFs ({@code HIVE_UDF}), {@code SELECT
 *       TRANSFORM ... USING} ({@code SCRIPT_TRANSFORM}), {@code CREATE FUNCTION} ({@code
 *       CREATE_FUNCTION}), {@code ADD JAR / FILE / ARCHIVE} ({@code ADD_RESOURCE}), {@code USE /
 *       SET CATALOG} ({@code CATALOG_SWITCH}), {@code LOAD DATA} ({@code LOAD_DATA}), {@code INSERT OVERWRITE DIRECTORY} outside the WRITE
 *       grant or with a source outside the allowlist, tables created with a provider other than
 *       Delta ({@code NON_DELTA_TABLE}), temporary views over sources outside the allowlist or paths
 *       outside the READ grant, database LOCATIONs outside the WRITE grant.
 * </ol>
 *
 * Scala UDFs and typed operators are not refused here: filecommit's own commands plan with them
 * (deletion vectors, identity values); a client's arrive as proto messages, which {@code
 * SharedModeInterceptor} refuses.
 */
final class SharedModeCheck extends AbstractFunction1<LogicalPlan, BoxedUnit> {
  private static final Set<String> REFLECT = Set.of("CallMethodViaReflection", "TryReflect");
  private static final Set<String> PYTHON = Set.of("PythonUDF", "PythonUDAF", "PythonUDTF",
      "UnresolvedPolymorphicPythonUDTF");
  private static final Set<String> ADD = Set.of("AddJarsCommand", "AddFilesCommand", "AddArchivesCommand");
  /** Built-in sources outside the allowlist that {@code name.`path`} in SQL would reach. */
  private static final Set<String> OTHER_SOURCES = Set.of("jdbc", "kafka", "hive", "console", "socket", "libsvm",
      "image", "python", "noop");

  private final SparkSession session;

  SharedModeCheck(SparkSession session) {
    this.session = session;
  }

  @Override
  public BoxedUnit apply(LogicalPlan plan) {
    if (SharedMode.enabled()) {
      analyzed(plan);
    }
    return BoxedUnit.UNIT;
  }

  /**
   * Checks a parsed SQL plan (shared mode only).
   *
   * @param session the parsing session
   * @param plan the parsed plan
   * @return {@code plan}
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_SHARED_MODE_REFUSED}, {@code
   *     FILECOMMIT_PATH_NOT_ALLOWED}, {@code FILECOMMIT_PERMISSION_DENIED}
   */
  static LogicalPlan parsed(SparkSession session, LogicalPlan plan) {
    if (SharedMode.enabled()) {
      walk(plan, node -> {
        if (node instanceof UnresolvedRelation u && u.multipartIdentifier().size() == 2) {
          String source = u.multipartIdentifier().apply(0).toLowerCase(Locale.ROOT);
          if (SharedMode.FILE_FORMATS.contains(source)) {
            SharedMode.checkPath(session, Privilege.READ, u.multipartIdentifier().apply(1));
          } else if (OTHER_SOURCES.contains(source) || source.contains(".")) {
            throw SharedMode.refused("DATA_SOURCE", source);
          }
        }
      }, e -> { });
    }
    return plan;
  }

  private void analyzed(LogicalPlan plan) {
    walk(plan, this::node, SharedModeCheck::expression);
  }

  private static void expression(Expression e) {
    String name = e.getClass().getSimpleName();
    if (REFLECT.contains(name)) {
      throw SharedMode.refused("REFLECT", e.prettyName());
    }
    if (PYTHON.contains(name)) {
      throw SharedMode.refused("PYTHON_UDF", e.prettyName());
    }
    if (name.startsWith("Hive") && (name.contains("UDF") || name.contains("UDAF") || name.contains("UDTF"))) {
      throw SharedMode.refused("HIVE_UDF", e.prettyName());
    }
  }

  private void node(LogicalPlan node) {
    String name = node.getClass().getSimpleName();
    if (name.contains("ScriptTransformation")) {
      throw SharedMode.refused("SCRIPT_TRANSFORM", name);
    }
    if (name.contains("Pandas") || name.equals("MapInArrow") || name.contains("InArrow") || name.startsWith("Python")) {
      throw SharedMode.refused("PYTHON_UDF", name);
    }
    if (name.startsWith("Create") && name.contains("Function")) {
      throw SharedMode.refused("CREATE_FUNCTION", name);
    }
    if (ADD.contains(name)) {
      throw SharedMode.refused("ADD_RESOURCE", name);
    }
    if (name.equals("SetCatalogCommand")) {
      throw SharedMode.refused("CATALOG_SWITCH", name);
    }
    if (node instanceof org.apache.spark.sql.catalyst.plans.logical.SetCatalogAndNamespace s
        && s.child() instanceof org.apache.spark.sql.catalyst.analysis.ResolvedNamespace ns
        && !ns.catalog().name().equals(session.sessionState().catalogManager().currentCatalog().name())) {
      throw SharedMode.refused("CATALOG_SWITCH", ns.catalog().name());
    }
    if (name.equals("LoadDataCommand")) {
      throw SharedMode.refused("LOAD_DATA", name); // moves or copies any file into a table
    }
    if (name.equals("InsertIntoHiveDirCommand")) {
      throw SharedMode.refused("DIRECTORY_WRITE", name);
    }
    if (node instanceof org.apache.spark.sql.execution.command.InsertIntoDataSourceDirCommand d) {
      SharedMode.checkSource(d.provider(), session);
      if (d.storage().locationUri().isEmpty()) {
        throw SharedMode.refused("DIRECTORY_WRITE", "no location");
      }
      SharedMode.checkPath(session, Privilege.WRITE, d.storage().locationUri().get().toString());
    }
    if (node instanceof org.apache.spark.sql.execution.datasources.CreateTempViewUsing v) {
      String f = SharedMode.checkSource(v.provider(), session);
      SharedMode.checkOptions(scala.jdk.javaapi.CollectionConverters.asJava(v.options()));
      if (SharedMode.FILE_FORMATS.contains(f)) {
        v.options().get("path").foreach(p -> SharedMode.checkPath(session, Privilege.READ, p));
      }
    }
    if (node instanceof org.apache.spark.sql.catalyst.plans.logical.CreateNamespace c) {
      c.properties().get("location").foreach(p -> SharedMode.checkPath(session, Privilege.WRITE, p));
    }
    provider(node);
  }

  /** Table creation with a provider other than Delta's (v2 {@code tableSpec}, v1 {@code CatalogTable}). */
  private static void provider(LogicalPlan node) {
    scala.Option<String> provider = scala.Option.empty();
    String name = node.getClass().getSimpleName();
    if (!name.startsWith("Create") && !name.startsWith("Replace")) {
      return;
    }
    for (String accessor : new String[] {"tableSpec", "table", "tableDesc", "provider"}) {
      try {
        Object o = node.getClass().getMethod(accessor).invoke(node);
        if (o instanceof scala.Option<?> opt && (opt.isEmpty() || opt.get() instanceof String)) {
          @SuppressWarnings("unchecked")
          scala.Option<String> p = (scala.Option<String>) opt;
          provider = p;
        } else if (o instanceof org.apache.spark.sql.catalyst.plans.logical.TableSpecBase spec) {
          provider = spec.provider();
        } else if (o instanceof org.apache.spark.sql.catalyst.catalog.CatalogTable t) {
          provider = t.provider();
        } else {
          continue;
        }
        break;
      } catch (ReflectiveOperationException e) {
        // no such accessor on this node
      }
    }
    if (provider.isDefined()) {
      String p = provider.get().toLowerCase(Locale.ROOT);
      if (!p.equals("delta") && !p.equals("filecommit")) {
        throw SharedMode.refused("NON_DELTA_TABLE", provider.get());
      }
    }
  }

  /** Visits every node and expression of a plan: children, inner plans (CTEs) and subqueries. */
  private static void walk(QueryPlan<?> plan, java.util.function.Consumer<LogicalPlan> onNode,
      java.util.function.Consumer<Expression> onExpression) {
    if (plan instanceof LogicalPlan l) {
      onNode.accept(l);
    }
    scala.collection.Iterator<Expression> es = plan.expressions().iterator();
    while (es.hasNext()) {
      walkExpression(es.next(), onNode, onExpression);
    }
    scala.collection.Iterator<?> cs = plan.children().iterator();
    while (cs.hasNext()) {
      walk((QueryPlan<?>) cs.next(), onNode, onExpression);
    }
    scala.collection.Iterator<?> inner = plan.innerChildren().iterator();
    while (inner.hasNext()) {
      if (inner.next() instanceof QueryPlan<?> q) {
        walk(q, onNode, onExpression);
      }
    }
  }

  private static void walkExpression(Expression e, java.util.function.Consumer<LogicalPlan> onNode,
      java.util.function.Consumer<Expression> onExpression) {
    onExpression.accept(e);
    if (e instanceof SubqueryExpression s) {
      walk(s.plan(), onNode, onExpression);
    }
    scala.collection.Iterator<Expression> cs = e.children().iterator();
    while (cs.hasNext()) {
      walkExpression(cs.next(), onNode, onExpression);
    }
  }
}
