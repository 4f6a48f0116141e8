package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A table's write-time rules, enforced on every written row (protocol "Column Invariants", "CHECK
 * Constraints", "Generated Columns"; writer features {@code invariants}, {@code checkConstraints},
 * {@code generatedColumns}):
 *
 * <ul>
 *   <li>generated columns ({@code delta.generationExpression} in the column metadata): an absent
 *       value is computed from the expression; a supplied one must equal it ({@code col <=> expr},
 *       as Delta checks it) -> {@code DELTA_VIOLATE_CONSTRAINT_WITH_VALUES};
 *   <li>NOT NULL (a non-nullable field; nested fields only where their parent is not null) ->
 *       {@code DELTA_NOT_NULL_CONSTRAINT_VIOLATED} naming the column;
 *   <li>column invariants ({@code delta.invariants} = {@code {"expression":{"expression":sql}}}) and
 *       CHECK constraints ({@code delta.constraints.<name>} = sql): a row whose expression is false
 *       <em>or null</em> (Delta's rule) -> {@code DELTA_VIOLATE_CONSTRAINT_WITH_VALUES} naming the
 *       rule and showing the row's values of the columns it references.
 * </ul>
 *
 * <p>The checks run inside the write job, as Delta's invariant checker does, so bulk writes pay no
 * second pass: the first written column becomes {@code CASE WHEN <violation 1> THEN
 * raise_error(...) ... ELSE col END}; a violating row fails its task, the job aborts (its files
 * deleted), nothing is committed, and {@link #translate} turns Spark's error back into the typed
 * one. A table without rules gets its input back unchanged.
 */
public final class Constraints {
  /** Column metadata key of a column invariant. */
  public static final String INVARIANTS = "delta.invariants";
  /** Marks messages raised by our checks, so {@link #translate} knows them. */
  static final String MARKER = "__filecommit_constraint__";
  private static final String SEP = "\u001f";

  private Constraints() {}

  /** Whether the table has any rule to check or column to generate. */
  public static boolean hasRules(StructType schema, Map<String, String> conf) {
    if (conf.keySet().stream().anyMatch(k -> k.startsWith(TableFeatures.CONSTRAINT_PREFIX))) {
      return true;
    }
    return hasFieldRules(schema);
  }

  private static boolean hasFieldRules(StructType schema) {
    for (StructField f : schema.fields()) {
      if (!f.nullable() || f.metadata().contains(INVARIANTS) || f.metadata().contains(TableFeatures.GENERATION_EXPRESSION)) {
        return true;
      }
      if (f.dataType() instanceof StructType s && hasFieldRules(s)) {
        return true;
      }
    }
    return false;
  }

  /** One rule: a violation predicate and what to report. */
  private record Rule(ErrorClass cls, String name, String expression, Column violated, List<String> shown) {}

  /**
   * The rows to write, with generated columns computed and every rule checked in the write job.
   *
   * @param data rows normalized to the table schema (table column names and order; absent columns
   *     as typed nulls)
   * @param schema the table schema (logical, with column metadata)
   * @param conf the table configuration ({@code delta.constraints.*})
   * @param supplied names of the table columns the writer's data had (exact table case)
   * @return the rows to hand to the writer; {@code data} itself when the table has no rules
   */
  public static Dataset<Row> apply(Dataset<Row> data, StructType schema, Map<String, String> conf, Set<String> supplied) {
    if (!hasRules(schema, conf)) {
      return data;
    }
    List<Rule> rules = new ArrayList<>();
    List<Column> cols = new ArrayList<>();
    for (StructField f : schema.fields()) {
      Column c = functions.col(quote(f.name()));
      if (f.metadata().contains(TableFeatures.GENERATION_EXPRESSION)) {
        String expr = f.metadata().getString(TableFeatures.GENERATION_EXPRESSION);
        Column generated = functions.expr(expr).cast(f.dataType());
        if (supplied.contains(f.name())) {
          rules.add(new Rule(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, "Generated Column",
              "(" + quote(f.name()) + " <=> " + expr + ")", functions.not(c.eqNullSafe(generated)),
              referenced(schema, f.name() + " " + expr)));
        } else {
          c = generated;
        }
      }
      cols.add(c.as(f.name(), f.metadata()));
    }
    Dataset<Row> out = data.select(cols.toArray(new Column[0]));
    notNullRules(schema.fields(), "", null, rules, schema);
    for (StructField f : schema.fields()) {
      if (f.metadata().contains(INVARIANTS)) {
        String expr = invariantExpression(f.metadata().getString(INVARIANTS), f.name());
        rules.add(new Rule(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, "EXPRESSION(" + expr + ")", expr,
            violatedWhenNotTrue(expr), referenced(schema, expr)));
      }
    }
    conf.forEach((k, v) -> {
      if (k.startsWith(TableFeatures.CONSTRAINT_PREFIX)) {
        String name = k.substring(TableFeatures.CONSTRAINT_PREFIX.length());
        rules.add(new Rule(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, name, v, violatedWhenNotTrue(v),
            referenced(schema, v)));
      }
    });
    if (rules.isEmpty()) {
      return out;
    }
    String first = schema.fields()[0].name();
    Column checked = null;
    for (Rule r : rules) {
      List<Column> parts = new ArrayList<>();
      parts.add(functions.lit(MARKER + r.cls().name() + SEP + r.name() + SEP + r.expression() + SEP));
      List<Column> values = new ArrayList<>();
      for (String s : r.shown()) {
        values.add(functions.coalesce(functions.col(quote(s)).cast("string"), functions.lit("null")).as(s));
      }
      parts.add(values.isEmpty() ? functions.lit("{}") : functions.to_json(functions.struct(values.toArray(new Column[0]))));
      Column raise = functions.raise_error(functions.concat(parts.toArray(new Column[0])));
      checked = checked == null ? functions.when(r.violated(), raise) : checked.when(r.violated(), raise);
    }
    StructField firstField = schema.fields()[0];
    Column guarded = checked.otherwise(functions.col(quote(first))).cast(firstField.dataType());
    return out.withColumn(first, guarded);
  }

  private static void notNullRules(StructField[] fields, String prefix, Column parentNotNull, List<Rule> rules,
      StructType schema) {
    for (StructField f : fields) {
      String path = prefix.isEmpty() ? f.name() : prefix + "." + f.name();
      Column c = prefix.isEmpty() ? functions.col(quote(f.name())) : col(path);
      if (!f.nullable()) {
        Column violated = parentNotNull == null ? c.isNull() : parentNotNull.and(c.isNull());
        rules.add(new Rule(ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED, path, path + " IS NOT NULL", violated, List.of()));
      }
      if (f.dataType() instanceof StructType s) {
        Column present = parentNotNull == null ? c.isNotNull() : parentNotNull.and(c.isNotNull());
        notNullRules(s.fields(), path, present, rules, schema);
      }
    }
  }

  /** Delta's rule for invariants and CHECK constraints: a false or null result violates. */
  private static Column violatedWhenNotTrue(String expr) {
    return functions.not(functions.coalesce(functions.expr(expr), functions.lit(false)));
  }

  private static String invariantExpression(String json, String column) {
    try {
      JsonNode n = ActionJson.MAPPER.readTree(json);
      String e = n.path("expression").path("expression").asText(null);
      if (e == null) {
        throw new IOException("no expression.expression");
      }
      return e;
    } catch (IOException ex) {
      throw ErrorClass.DELTA_UNSUPPORTED_FEATURES_FOR_WRITE.error("Column '" + column + "' has an invariant that "
          + "filecommit cannot read (" + json + ")", Map.of("unsupported", "invariants"));
    }
  }

  /** Top-level columns whose names appear in the expression (for the violation message). */
  private static List<String> referenced(StructType schema, String expr) {
    List<String> out = new ArrayList<>();
    String lower = expr.toLowerCase(Locale.ROOT);
    for (StructField f : schema.fields()) {
      Pattern p = Pattern.compile("(?<![A-Za-z0-9_])`?" + Pattern.quote(f.name().toLowerCase(Locale.ROOT)) + "`?(?![A-Za-z0-9_])");
      if (p.matcher(lower).find()) {
        out.add(f.name());
      }
    }
    return out;
  }

  /**
   * The typed error of a write job that a constraint check failed, found in the exception's cause
   * chain (Spark wraps {@code raise_error} as {@code USER_RAISED_EXCEPTION} inside the job failure).
   *
   * @param failure what the write job threw
   * @return the {@link FileCommitException} to throw instead, or null when the failure is not a
   *     constraint violation
   */
  public static FileCommitException translate(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String msg = t.getMessage();
      int at = msg == null ? -1 : msg.indexOf(MARKER);
      if (at < 0) {
        continue;
      }
      String rest = msg.substring(at + MARKER.length());
      String[] parts = rest.split(SEP, 4);
      if (parts.length < 4) {
        continue;
      }
      ErrorClass cls = ErrorClass.valueOf(parts[0]);
      String values = parts[3];
      int end = values.lastIndexOf('}');
      values = end >= 0 ? values.substring(0, end + 1) : values;
      if (cls == ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED) {
        return cls.error("NOT NULL constraint violated for column: " + parts[1] + ".", Map.of("columnName", parts[1]));
      }
      StringBuilder text = new StringBuilder("CHECK constraint " + parts[1] + " " + parts[2]
          + " violated by row with values:");
      Map<String, String> params = new LinkedHashMap<>();
      params.put("constraintName", parts[1]);
      params.put("expression", parts[2]);
      try {
        JsonNode row = ActionJson.MAPPER.readTree(values);
        for (Iterator<Map.Entry<String, JsonNode>> it = row.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          text.append("\n - ").append(e.getKey()).append(" : ").append(e.getValue().asText());
          params.put("value." + e.getKey(), e.getValue().asText());
        }
      } catch (IOException ignored) {
        text.append(' ').append(values);
      }
      return cls.error(text.toString(), params);
    }
    return null;
  }

  /**
   * Checks CHECK constraints a user declares ({@code delta.constraints.<name>}): each must be a
   * boolean SQL expression over the table's columns.
   *
   * @param session Spark session (parses and analyzes the expressions)
   * @param schema the table schema
   * @param properties the properties being set
   * @throws FileCommitException {@code DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES} when an
   *     expression does not parse or names an unknown column, {@code
   *     DELTA_NON_BOOLEAN_CHECK_CONSTRAINT} when it is not boolean
   */
  public static void validateConstraintProperties(SparkSession session, StructType schema, Map<String, String> properties) {
    Dataset<Row> empty = null;
    for (Map.Entry<String, String> e : properties.entrySet()) {
      if (!e.getKey().startsWith(TableFeatures.CONSTRAINT_PREFIX)) {
        continue;
      }
      String name = e.getKey().substring(TableFeatures.CONSTRAINT_PREFIX.length());
      if (empty == null) {
        empty = session.createDataFrame(new ArrayList<Row>(), schema);
      }
      DataType type;
      try {
        type = empty.select(functions.expr(e.getValue())).schema().fields()[0].dataType();
      } catch (Exception ex) { // ParseException and AnalysisException are checked in Java's eyes
        throw ErrorClass.DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES.error("CHECK constraint '" + name + "' ("
            + e.getValue() + ") is not a valid expression over the columns " + List.of(schema.fieldNames()) + ": "
            + ex.getMessage(), Map.of("constraintName", name, "expression", e.getValue()));
      }
      if (!(type instanceof BooleanType)) {
        throw ErrorClass.DELTA_NON_BOOLEAN_CHECK_CONSTRAINT.error("CHECK constraint '" + name + "' (" + e.getValue()
            + ") should be a boolean expression, it is " + type.simpleString(),
            Map.of("name", name, "expr", e.getValue()));
      }
    }
  }

  private static Column col(String path) {
    StringBuilder sb = new StringBuilder();
    for (String part : path.split("\\.")) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      sb.append(quote(part));
    }
    return functions.col(sb.toString());
  }

  private static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }
}
