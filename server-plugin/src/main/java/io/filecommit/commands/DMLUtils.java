package io.filecommit.commands;

import io.filecommit.errors.ErrorClass;
import io.filecommit.schema.SchemaUtils;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;

/**
 * What DELETE, UPDATE and MERGE share besides their transaction ({@link RowLevelChange}): splitting
 * a condition into conjuncts, refusing non-deterministic expressions, the SQL text of a condition
 * for commitInfo, and column references under a table alias (Delta's {@code DMLUtils} and the
 * helpers of its {@code DeltaCommand}).
 */
public final class DMLUtils {
  private DMLUtils() {}

  /**
   * {@return the top-level AND-ed parts of a condition (the session's converter parses SQL-text columns
   * such as {@code functions.expr(...)} first)}
   * @param session the command's session
   * @param condition the condition
   */
  public static List<Column> conjuncts(SparkSession session, Column condition) {
    List<Expression> parts = new ArrayList<>();
    split(session.expression(condition), parts);
    return parts.stream().map(ExpressionUtils::column).toList();
  }

  private static void split(Expression e, List<Expression> out) {
    if (e instanceof And and) {
      split(and.left(), out);
      split(and.right(), out);
    } else if (e instanceof UnresolvedFunction f && f.nameParts().size() == 1
        && f.nameParts().head().equalsIgnoreCase("and") && f.arguments().size() == 2 && !f.isDistinct()
        && f.filter().isEmpty()) {
      // Column.and(...) before analysis
      split(f.arguments().apply(0), out);
      split(f.arguments().apply(1), out);
    } else {
      out.add(e);
    }
  }

  /**
   * Refuses non-deterministic expressions before anything is written (invariant: one decision per
   * row): Spark's {@code CheckAnalysis} refuses them in DELETE and UPDATE with {@code
   * INVALID_NON_DETERMINISTIC_EXPRESSIONS}, Delta's {@code PreprocessTableMerge.checkCondition} in
   * MERGE conditions with {@code DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED}. An expression is
   * non-deterministic when Spark's {@code Expression.deterministic} is false after analysis
   * ({@code rand()}, {@code uuid()}, UDFs marked {@code asNondeterministic()}, Python UDFs included).
   *
   * @param analyzed a DataFrame whose top operator holds the expressions to check (a {@code
   *     filter} for a condition, a {@code select} for values), over a plan that allows
   *     non-deterministic expressions there
   * @param error the class to refuse with
   * @param operation what is checked, for the message, e.g. {@code "the condition of DELETE"}
   * @throws io.filecommit.errors.FileCommitException of class {@code error} naming the SQL of the
   *     non-deterministic expressions (parameter {@code sqlExprs})
   */
  public static void requireDeterministic(Dataset<Row> analyzed, ErrorClass error, String operation) {
    List<String> found = new ArrayList<>();
    for (Expression e : scala.jdk.javaapi.CollectionConverters.asJava(analyzed.queryExecution().analyzed().expressions())) {
      if (!e.deterministic()) {
        found.add(e.sql());
      }
    }
    if (!found.isEmpty()) {
      throw error.error("Non-deterministic expressions are not supported in " + operation + ": " + String.join(", ", found)
          + ". A row-level change decides each row once; nothing was written",
          Map.of("operation", operation, "sqlExprs", String.join(", ", found)));
    }
  }

  /** {@return the SQL text of a condition for commitInfo ({@code true} for none)}
   * @param condition the condition, or null */
  public static String sql(Column condition) {
    return condition == null ? "true" : condition.toString();
  }

  /** {@return a column reference to {@code name}, qualified with {@code alias} when given}
   * @param alias a table alias, or null
   * @param name a column name */
  public static Column ref(String alias, String name) {
    return functions.col((alias == null ? "" : SchemaUtils.quote(alias) + ".") + SchemaUtils.quote(name));
  }

}
