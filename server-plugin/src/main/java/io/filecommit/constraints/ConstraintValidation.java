package io.filecommit.constraints;

import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UserDefinedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * Checks CHECK constraints a user declares, as Delta does when one is added ({@code
 * ALTER TABLE ... ADD CONSTRAINT}; Delta's {@code Constraints} checks): boolean, deterministic,
 * over the table's columns, without aggregates or user-defined functions.
 */
public final class ConstraintValidation {
  private ConstraintValidation() {}

  /**
   * Checks the CHECK constraints a user declares ({@code delta.constraints.<name>} properties,
   * prefix matched case-insensitively), as Delta does when one is added: each must be a boolean,
   * deterministic Spark SQL expression over the schema's columns, without aggregates or
   * user-defined functions. Only analysis runs (over an empty relation of {@code schema}); no Spark
   * job. Other properties are ignored.
   *
   * @param session the Spark session whose parser and analyzer are used
   * @param schema the table schema the constraints will apply to
   * @param properties the properties being set
   * @throws FileCommitException {@code DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT} (does not
   *     parse, or fails analysis otherwise), {@code DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES} (an
   *     unknown column or field, parameter {@code colName}), {@code
   *     DELTA_NON_BOOLEAN_CHECK_CONSTRAINT} (parameters {@code name}, {@code expr}), {@code
   *     DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT}, {@code
   *     DELTA_AGGREGATE_IN_CHECK_CONSTRAINT} or {@code DELTA_UDF_IN_CHECK_CONSTRAINT}; all SQLSTATE
   *     42621
   */
  public static void validateConstraintProperties(SparkSession session, StructType schema, Map<String, String> properties) {
    Map<String, String> checks = ConstraintRules.checkConstraints(properties);
    if (checks.isEmpty()) {
      return;
    }
    Dataset<Row> empty = session.createDataFrame(new ArrayList<Row>(), schema);
    for (Map.Entry<String, String> c : checks.entrySet()) {
      FileCommitException e = checkExpression(empty, c.getKey(), c.getValue());
      if (e != null) {
        throw e;
      }
    }
  }

  /**
   * As {@link #validateConstraintProperties(SparkSession, StructType, Map)} with the active Spark
   * session of this thread (or the default one).
   *
   * @param schema the table schema the constraints will apply to
   * @param properties the properties being set
   * @throws IllegalStateException when there is no Spark session
   */
  public static void validateConstraintProperties(StructType schema, Map<String, String> properties) {
    validateConstraintProperties((SparkSession) org.apache.spark.sql.SparkSession.active(), schema, properties);
  }

  /** The typed error of a CHECK expression over {@code over}'s columns, or null when it is fine. */
  static FileCommitException checkExpression(Dataset<Row> over, String name, String expr) {
    Map<String, String> params = Map.of("name", name, "expr", expr);
    Dataset<Row> analyzed;
    try {
      Expressions.parse(over.sparkSession(), expr);
    } catch (RuntimeException e) {
      return Expressions.unparsable(ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT, "CHECK constraint " + name, expr, e);
    }
    try {
      analyzed = over.select(functions.expr(expr).as("c"));
    } catch (Exception e) {
      String col = Expressions.unresolvedColumn(e);
      if (col != null) {
        return ErrorClass.DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES.error("CHECK constraint " + name + " (" + expr
            + ") uses " + col + ", which is not a column of the table " + List.of(over.schema().fieldNames()), e,
            Map.of("colName", col, "name", name, "expr", expr));
      }
      return ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT.error("CHECK constraint " + name + " (" + expr
          + ") is not a valid expression over the table's columns: " + e.getMessage(), e,
          Map.of("expression", expr, "name", name));
    }
    DataType type = analyzed.schema().fields()[0].dataType();
    if (!(type instanceof BooleanType)) {
      return ErrorClass.DELTA_NON_BOOLEAN_CHECK_CONSTRAINT.error("CHECK constraint " + name + " (" + expr
          + ") must give a boolean, it gives " + type.simpleString(), params);
    }
    LogicalPlan plan = analyzed.queryExecution().analyzed();
    Expression[] bad = new Expression[1];
    ErrorClass[] cls = new ErrorClass[1];
    Expressions.walkPlan(plan, e -> {
      if (e instanceof Alias) {
        return false;
      }
      if (e instanceof UserDefinedExpression) {
        cls[0] = ErrorClass.DELTA_UDF_IN_CHECK_CONSTRAINT;
      } else if (!e.deterministic()) {
        cls[0] = ErrorClass.DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT;
      } else if (e instanceof AggregateExpression) {
        cls[0] = ErrorClass.DELTA_AGGREGATE_IN_CHECK_CONSTRAINT;
      } else {
        return false;
      }
      bad[0] = e;
      return true;
    });
    if (bad[0] != null) {
      String what = switch (cls[0]) {
        case DELTA_UDF_IN_CHECK_CONSTRAINT -> "a user-defined function";
        case DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT -> "a nondeterministic expression";
        default -> "an aggregate";
      };
      return cls[0].error("CHECK constraint " + name + " (" + expr + ") uses " + what + ", " + bad[0].sql()
          + ", which a CHECK constraint cannot", Map.of("expr", bad[0].sql(), "name", name));
    }
    return null;
  }
}
