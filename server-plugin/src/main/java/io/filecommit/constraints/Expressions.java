package io.filecommit.constraints;

import io.filecommit.schema.SchemaUtils;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark SQL expressions of table rules: parsing with the session's parser, the columns an
 * expression references, tree walks, and names of column paths as Delta writes them in messages.
 */
final class Expressions {
  private Expressions() {}

  /** Parses with the session's parser; a parse failure (a checked ParseException) comes as unchecked. */
  static Expression parse(SparkSession session, String sql) {
    try {
      return session.sessionState().sqlParser().parseExpression(sql);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  static Expression parseCheck(SparkSession session, String name, String sql) {
    try {
      return parse(session, sql);
    } catch (RuntimeException e) {
      throw unparsable(ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT, "CHECK constraint " + name, sql, e);
    }
  }

  static Expression parseGenerated(SparkSession session, String column, String sql) {
    try {
      return parse(session, sql);
    } catch (RuntimeException e) {
      throw unparsable(ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN,
          "the generation expression of column " + column, sql, e);
    }
  }

  static FileCommitException unparsable(ErrorClass cls, String what, String sql, Exception e) {
    return cls.error("The expression of " + what + " does not parse as Spark SQL: " + sql + " (" + e.getMessage()
        + ")", e, Map.of("expression", sql));
  }

  /**
   * The columns an expression references, to show with a violation: every unresolved attribute
   * whose first name part is a top-level column (lambda variables and the like are left out), named
   * as written, deduplicated.
   */
  static List<ConstraintRules.Shown> referenced(StructType schema, Expression parsed) {
    Map<String, ConstraintRules.Shown> out = new LinkedHashMap<>();
    walk(parsed, e -> {
      if (e instanceof UnresolvedAttribute a) {
        List<String> parts = CollectionConverters.asJava(a.nameParts());
        if (!parts.isEmpty() && topLevel(schema, parts.get(0)) != null) {
          out.putIfAbsent(a.name(), new ConstraintRules.Shown(a.name(), column(parts)));
        }
      }
      return false;
    });
    return new ArrayList<>(out.values());
  }

  static StructField topLevel(StructType schema, String name) {
    for (StructField f : schema.fields()) {
      if (f.name().equalsIgnoreCase(name)) {
        return f;
      }
    }
    return null;
  }

  /** Visits an expression tree depth first; stops at, and returns, the first node {@code stop} accepts. */
  static Expression walk(Expression e, Predicate<Expression> stop) {
    if (stop.test(e)) {
      return e;
    }
    for (Expression c : CollectionConverters.asJava(e.children())) {
      Expression hit = walk(c, stop);
      if (hit != null) {
        return hit;
      }
    }
    return null;
  }

  static boolean walkPlan(LogicalPlan plan, Predicate<Expression> stop) {
    for (Expression e : CollectionConverters.asJava(plan.expressions())) {
      if (walk(e, stop) != null) {
        return true;
      }
    }
    for (LogicalPlan child : CollectionConverters.asJava(plan.children())) {
      if (walkPlan(child, stop)) {
        return true;
      }
    }
    return false;
  }

  /** The unresolved column an analysis failure names (Spark's objectName), or null. */
  static String unresolvedColumn(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SparkThrowable st && st.getCondition() != null
          && (st.getCondition().startsWith("UNRESOLVED_COLUMN") || st.getCondition().startsWith("UNRESOLVED_FIELD"))) {
        String name = st.getMessageParameters().get("objectName");
        if (name == null) {
          name = st.getMessageParameters().get("fieldName");
        }
        return name == null ? "" : name;
      }
    }
    return null;
  }

  /** A column path as Delta names it in messages: parts joined by dots, a part with a dot quoted. */
  static String displayName(List<String> path) {
    StringBuilder sb = new StringBuilder();
    for (String p : path) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      sb.append(p.contains(".") ? SchemaUtils.quote(p) : p);
    }
    return sb.toString();
  }

  static Column column(List<String> path) {
    StringBuilder sb = new StringBuilder();
    for (String p : path) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      sb.append(SchemaUtils.quote(p));
    }
    return functions.col(sb.toString());
  }


  /** Throws {@code e} as it is (Spark's AnalysisException is checked in Java's eyes only). */
  @SuppressWarnings("unchecked")
  static <E extends Exception> RuntimeException rethrow(Exception e) throws E {
    throw (E) e;
  }
}
