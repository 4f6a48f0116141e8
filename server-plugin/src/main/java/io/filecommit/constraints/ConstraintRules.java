package io.filecommit.constraints;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.Actions;
import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Finds a table's write-time rules (protocol "Column Invariants", "CHECK Constraints"; Delta's
 * {@code Constraints.getAll}): CHECK constraints of the configuration, NOT NULL fields and column
 * invariants of the schema, depth first through structs, in Delta's order.
 */
final class ConstraintRules {
  private ConstraintRules() {}

  /** A referenced column shown in a violation: its name as written, and its value as a string. */
  record Shown(String name, Column value) {}

  /** One rule: when a row violates it, and what to report. */
  record Rule(ErrorClass cls, String name, String expression, Column violated, List<Shown> shown) {}

  /**
   * Whether the table has anything to check or generate: a {@code delta.constraints.*} property
   * (prefix matched case-insensitively, as Delta does), or a field (top-level or nested in
   * structs) that is non-nullable, has an invariant, or has a generation expression.
   *
   * @param schema the table schema (logical, with column metadata)
   * @param conf the table configuration
   * @return false when {@link #apply} would return its input unchanged
   */
  static boolean hasRules(StructType schema, Map<String, String> conf) {
    return !checkConstraints(conf).isEmpty() || hasFieldRules(schema);
  }

  static boolean hasFieldRules(StructType schema) {
    for (StructField f : schema.fields()) {
      if (!f.nullable() || f.metadata().contains(Constraints.INVARIANTS)
          || f.metadata().contains(TableFeatures.GENERATION_EXPRESSION)) {
        return true;
      }
      if (f.dataType() instanceof StructType s && hasFieldRules(s)) {
        return true;
      }
    }
    return false;
  }

  /** The CHECK constraints of a configuration: name -> expression, sorted by name. */
  static Map<String, String> checkConstraints(Map<String, String> conf) {
    Map<String, String> out = new TreeMap<>();
    int n = TableConfig.CONSTRAINT_PREFIX.length();
    conf.forEach((k, v) -> {
      if (k != null && k.length() > n && k.regionMatches(true, 0, TableConfig.CONSTRAINT_PREFIX, 0, n)) {
        out.put(k.substring(n), v);
      }
    });
    return out;
  }

  /** NOT NULL and invariant rules of the fields, depth first through structs (as Delta). */
  static void schemaRules(SparkSession session, StructType schema, StructField[] fields, List<String> parents,
      List<Rule> rules) {
    for (StructField f : fields) {
      List<String> path = new ArrayList<>(parents);
      path.add(f.name());
      if (!f.nullable()) {
        String name = Expressions.displayName(path);
        rules.add(new Rule(ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED, name, name + " IS NOT NULL",
            Expressions.column(path).isNull(), List.of()));
      } else if (f.metadata().contains(Constraints.INVARIANTS)) {
        // Delta reads a field's invariant only when the field is nullable (a NOT NULL one is
        // reported as NOT NULL).
        String expr = invariantExpression(f.metadata().getString(Constraints.INVARIANTS), Expressions.displayName(path));
        String name = "EXPRESSION(" + expr + ")";
        Expression parsed = Expressions.parseCheck(session, name, expr);
        rules.add(new Rule(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, name, parsed.sql(),
            violatedWhenNotTrue(expr), Expressions.referenced(schema, parsed)));
      }
      if (f.dataType() instanceof StructType s) {
        schemaRules(session, schema, s.fields(), path, rules);
      }
    }
  }

  /** Delta's rule for invariants and CHECK constraints: a false or null result violates. */
  static Column violatedWhenNotTrue(String expr) {
    return functions.not(functions.coalesce(functions.expr(expr), functions.lit(false)));
  }

  static String invariantExpression(String json, String column) {
    try {
      JsonNode n = Actions.MAPPER.readTree(json);
      JsonNode e = n.path("expression").path("expression");
      if (e.isTextual()) {
        return e.asText();
      }
    } catch (IOException ignored) {
      // reported below
    }
    throw ErrorClass.DELTA_UNRECOGNIZED_INVARIANT.error("Column " + column + " has an invariant filecommit does "
        + "not understand (" + json + "); only {\"expression\":{\"expression\":<sql>}} is defined",
        Map.of("columnName", column, "invariant", json));
  }

  /** The invariants of nullable fields, depth first: {@code EXPRESSION(<sql>)} -> sql. */
  static void invariants(StructField[] fields, List<String> parents, Map<String, String> out) {
    for (StructField f : fields) {
      List<String> path = new ArrayList<>(parents);
      path.add(f.name());
      if (f.nullable() && f.metadata().contains(Constraints.INVARIANTS)) {
        String expr = invariantExpression(f.metadata().getString(Constraints.INVARIANTS), Expressions.displayName(path));
        out.put("EXPRESSION(" + expr + ")", expr);
      }
      if (f.dataType() instanceof StructType s) {
        invariants(s.fields(), path, out);
      }
    }
  }
}
