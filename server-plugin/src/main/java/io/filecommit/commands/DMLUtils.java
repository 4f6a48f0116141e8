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

  /**
   * Session settings under which a rewrite would read the table wrongly and commit it: Spark's
   * {@code ignoreMissingFiles} / {@code ignoreCorruptFiles} turn a file that cannot be read into
   * no rows (which a rewrite then removes for good), and the LEGACY rebase modes shift dates and
   * timestamps of files written by Spark 2 / Hive (as Spark's {@code SQLConf} names them).
   */
  private static final Map<String, String> UNSAFE_READS = Map.of(
      "spark.sql.files.ignoreMissingFiles", "true",
      "spark.sql.files.ignoreCorruptFiles", "true",
      "spark.sql.parquet.datetimeRebaseModeInRead", "LEGACY",
      "spark.sql.parquet.int96RebaseModeInRead", "LEGACY");

  /**
   * Refuses a rewrite in a session whose read settings would drop or change rows silently (see
   * {@link #UNSAFE_READS}); a client may set these for its own reads, but a rewrite commits what it
   * read: a missing or corrupt file must fail it, as Delta's own reads of a table do.
   *
   * @param session the command's session
   * @param operation the rewrite, for the message ({@code DELETE}, {@code OPTIMIZE}, ...)
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_UNSAFE_READ_SETTING} naming
   *     the setting and its value (parameters {@code key}, {@code value}) before anything is read
   */
  public static void requireStrictReads(SparkSession session, String operation) {
    for (Map.Entry<String, String> e : UNSAFE_READS.entrySet()) {
      scala.Option<String> set = session.conf().getOption(e.getKey());
      String value = set.isDefined() ? set.get() : "";
      if (value.trim().equalsIgnoreCase(e.getValue())) {
        throw ErrorClass.FILECOMMIT_UNSAFE_READ_SETTING.error(operation + " is refused while the session sets "
            + e.getKey() + "=" + value.trim() + ": it would read the table wrongly (a missing or corrupt file as no "
            + "rows, or shifted dates) and commit that; unset it for this session. Nothing was written",
            Map.of("key", e.getKey(), "value", value.trim()));
      }
    }
  }
}
