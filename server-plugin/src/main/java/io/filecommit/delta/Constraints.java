package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
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
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A Delta table's write-time rules, enforced on every written row inside the write job (protocol
 * "Column Invariants", "CHECK Constraints", "Generated Columns"; writer features {@code
 * invariants}, {@code checkConstraints}, {@code generatedColumns}). The rules, as Delta Lake
 * applies them:
 *
 * <ul>
 *   <li>Generated columns (top-level fields whose metadata has {@code delta.generationExpression},
 *       a Spark SQL expression over other columns): a column the writer did not supply is computed
 *       from its expression (cast to the column type); a supplied one must satisfy {@code col <=>
 *       expr} on every row, else {@code DELTA_VIOLATE_CONSTRAINT_WITH_VALUES} with constraint name
 *       {@code Generated Column} (Delta reports it as a CHECK constraint of that name).
 *   <li>NOT NULL: every non-nullable field, top-level or nested in structs (not inside arrays or
 *       maps, which Delta does not enforce on write), must not be null, else {@code
 *       DELTA_NOT_NULL_CONSTRAINT_VIOLATED} naming the column path ({@code s.a}). As in Delta, a
 *       nested field of a null struct is null, so a NOT NULL nested field also requires its parents
 *       to be present.
 *   <li>Column invariants ({@code delta.invariants} = {@code {"expression":{"expression":sql}}} in a
 *       field's metadata, top-level or nested in structs) and CHECK constraints (table property
 *       {@code delta.constraints.<name>} = sql): a row whose expression is {@code false} <em>or
 *       null</em> violates (Delta's rule), giving {@code DELTA_VIOLATE_CONSTRAINT_WITH_VALUES} naming
 *       the rule ({@code EXPRESSION(<sql>)} for an invariant, the constraint's name for a CHECK), its
 *       expression, and the row's values of the columns it references.
 * </ul>
 *
 * <p>Cost: the checks add no Spark job. {@link #apply} returns a projection whose first column is
 * {@code CASE WHEN <violation 1> THEN raise_error(<payload 1>) WHEN ... ELSE <first column> END};
 * the Parquet writer evaluates it per row, so a violating row fails its task, the job aborts and
 * nothing is committed. {@link #translate} turns that job failure back into the typed {@link
 * FileCommitException}. (When the rows are a small local relation, Spark's optimizer may evaluate
 * the projection on the driver; the same error is then thrown there, before any task.) A table
 * without rules gets its input Dataset back (same instance).
 */
public final class Constraints {
  /** Column metadata key of a column invariant (protocol "Column Invariants"). */
  public static final String INVARIANTS = "delta.invariants";
  /** Constraint name Delta gives the check of a supplied generated column's value. */
  public static final String GENERATED_COLUMN_RULE = "Generated Column";

  /**
   * Starts the payload of a raised violation. Holds control characters that JSON always escapes,
   * so neither the marker nor {@link #PAYLOAD_END} can occur inside the JSON parts of the payload.
   */
  static final String PAYLOAD_START = "\u001eFILECOMMIT_CONSTRAINT\u001f";
  /** Separates the payload's rule JSON from its row-values JSON. */
  static final String PAYLOAD_SEP = "\u001f";
  /** Ends the payload. */
  static final String PAYLOAD_END = "\u001e";
  private static final String USER_RAISED = "USER_RAISED_EXCEPTION";

  private Constraints() {}

  // ---------------------------------------------------------------------------------------------
  // What the table has

  /**
   * Whether the table has anything to check or generate: a {@code delta.constraints.*} property
   * (prefix matched case-insensitively, as Delta does), or a field (top-level or nested in
   * structs) that is non-nullable, has an invariant, or has a generation expression.
   *
   * @param schema the table schema (logical, with column metadata)
   * @param conf the table configuration
   * @return false when {@link #apply} would return its input unchanged
   */
  public static boolean hasRules(StructType schema, Map<String, String> conf) {
    return !checkConstraints(conf).isEmpty() || hasFieldRules(schema);
  }

  private static boolean hasFieldRules(StructType schema) {
    for (StructField f : schema.fields()) {
      if (!f.nullable() || f.metadata().contains(INVARIANTS)
          || f.metadata().contains(TableFeatures.GENERATION_EXPRESSION)) {
        return true;
      }
      if (f.dataType() instanceof StructType s && hasFieldRules(s)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The table's generated columns: top-level fields with {@code delta.generationExpression}, in
   * schema order. A caller may let a write omit one of these even when it is a partition column,
   * since {@link #apply} computes it.
   *
   * @param schema the table schema (with column metadata)
   * @return the column names (exact table case), possibly empty
   */
  public static List<String> generatedColumns(StructType schema) {
    return TableFeatures.generatedColumns(schema);
  }

  /** The CHECK constraints of a configuration: name -> expression, sorted by name. */
  private static Map<String, String> checkConstraints(Map<String, String> conf) {
    Map<String, String> out = new TreeMap<>();
    int n = TableFeatures.CONSTRAINT_PREFIX.length();
    conf.forEach((k, v) -> {
      if (k != null && k.length() > n && k.regionMatches(true, 0, TableFeatures.CONSTRAINT_PREFIX, 0, n)) {
        out.put(k.substring(n), v);
      }
    });
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Enforcing

  /** A referenced column shown in a violation: its name as written, and its value as a string. */
  private record Shown(String name, Column value) {}

  /** One rule: when a row violates it, and what to report. */
  private record Rule(ErrorClass cls, String name, String expression, Column violated, List<Shown> shown) {}

  /**
   * The rows to hand to the Parquet writer: absent generated columns computed, every rule checked
   * per row inside the write job.
   *
   * <p>Shape: the columns of {@code schema} (names, order, types), each carrying its field's
   * metadata, followed by any other columns of {@code data} unchanged (e.g. a change-type column). The first column is wrapped in the violation check (see the class comment),
   * so it must be written (it always is: Delta writes every column, partition columns included).
   *
   * @param data rows normalized to the table schema: the table's column names in its order, columns
   *     the writer did not supply present as typed nulls
   * @param schema the table schema (logical, from the metaData schemaString, with column metadata)
   * @param conf the table configuration ({@code delta.constraints.*})
   * @param supplied the table column names (exact table case) the writer's data had; a generated
   *     column in it is checked, one not in it is computed
   * @return {@code data} itself when {@link #hasRules} is false, else the checked projection
   * @throws FileCommitException when a rule of the table cannot be evaluated over its schema:
   *     {@code DELTA_UNRECOGNIZED_INVARIANT} (an invariant that is not {@code
   *     {"expression":{"expression":sql}}}), {@code DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES},
   *     {@code DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT}, {@code
   *     DELTA_NON_BOOLEAN_CHECK_CONSTRAINT} (a CHECK or invariant), {@code
   *     DELTA_INVALID_GENERATED_COLUMN_REFERENCES}, {@code
   *     DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN} or {@code
   *     DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH} (a generation expression)
   */
  public static Dataset<Row> apply(Dataset<Row> data, StructType schema, Map<String, String> conf, Set<String> supplied) {
    if (!hasRules(schema, conf)) {
      return data;
    }
    SparkSession session = data.sparkSession();
    StructField[] fields = schema.fields();

    // Generated columns: computed when absent, checked when supplied.
    List<Rule> generatedRules = new ArrayList<>();
    List<Column> cols = new ArrayList<>();
    for (StructField f : fields) {
      Column c = functions.col(quote(f.name()));
      if (f.metadata().contains(TableFeatures.GENERATION_EXPRESSION)) {
        String expr = f.metadata().getString(TableFeatures.GENERATION_EXPRESSION);
        Expression parsed = parseGenerated(session, f.name(), expr);
        if (supplied.contains(f.name())) {
          List<Shown> shown = new ArrayList<>();
          shown.add(new Shown(f.name(), c));
          shown.addAll(referenced(schema, parsed));
          generatedRules.add(new Rule(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, GENERATED_COLUMN_RULE,
              "(" + quote(f.name()) + " <=> " + parsed.sql() + ")",
              functions.not(c.eqNullSafe(functions.expr(expr))), shown));
        } else {
          c = functions.expr(expr).cast(f.dataType());
        }
      }
      cols.add(c.as(f.name(), f.metadata()));
    }
    // Columns of the data that are not table columns (e.g. a change-type column) pass through.
    List<String> extra = new ArrayList<>();
    Set<String> tableColumns = new java.util.HashSet<>(List.of(schema.fieldNames()));
    for (String name : data.schema().fieldNames()) {
      if (!tableColumns.contains(name)) {
        extra.add(name);
        cols.add(functions.col(quote(name)));
      }
    }
    Dataset<Row> out;
    try {
      out = data.select(cols.toArray(new Column[0]));
    } catch (Exception e) {
      throw diagnose(data, schema, conf, e);
    }

    // Delta's order: CHECK constraints, then the schema's NOT NULL fields and invariants (depth
    // first), then generated columns. It decides which rule a row breaking several is reported by.
    List<Rule> rules = new ArrayList<>();
    checkConstraints(conf).forEach((name, expr) -> {
      Expression parsed = parseCheck(session, name, expr);
      rules.add(new Rule(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, name, parsed.sql(),
          violatedWhenNotTrue(expr), referenced(schema, parsed)));
    });
    schemaRules(session, schema, fields, List.of(), rules);
    rules.addAll(generatedRules);
    if (rules.isEmpty()) {
      return out;
    }

    Column checked = null;
    for (Rule r : rules) {
      Column raise = functions.raise_error(payload(r));
      checked = checked == null ? functions.when(r.violated(), raise) : checked.when(r.violated(), raise);
    }
    StructField first = fields[0];
    List<Column> guarded = new ArrayList<>();
    guarded.add(checked.otherwise(functions.col(quote(first.name()))).cast(first.dataType())
        .as(first.name(), first.metadata()));
    for (int i = 1; i < fields.length; i++) {
      guarded.add(functions.col(quote(fields[i].name())));
    }
    for (String name : extra) {
      guarded.add(functions.col(quote(name)));
    }
    try {
      return out.select(guarded.toArray(new Column[0]));
    } catch (Exception e) {
      throw diagnose(data, schema, conf, e);
    }
  }

  /** NOT NULL and invariant rules of the fields, depth first through structs (as Delta). */
  private static void schemaRules(SparkSession session, StructType schema, StructField[] fields, List<String> parents,
      List<Rule> rules) {
    for (StructField f : fields) {
      List<String> path = new ArrayList<>(parents);
      path.add(f.name());
      if (!f.nullable()) {
        String name = displayName(path);
        rules.add(new Rule(ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED, name, name + " IS NOT NULL",
            column(path).isNull(), List.of()));
      } else if (f.metadata().contains(INVARIANTS)) {
        // Delta reads a field's invariant only when the field is nullable (a NOT NULL one is
        // reported as NOT NULL).
        String expr = invariantExpression(f.metadata().getString(INVARIANTS), displayName(path));
        String name = "EXPRESSION(" + expr + ")";
        Expression parsed = parseCheck(session, name, expr);
        rules.add(new Rule(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, name, parsed.sql(),
            violatedWhenNotTrue(expr), referenced(schema, parsed)));
      }
      if (f.dataType() instanceof StructType s) {
        schemaRules(session, schema, s.fields(), path, rules);
      }
    }
  }

  /** Delta's rule for invariants and CHECK constraints: a false or null result violates. */
  private static Column violatedWhenNotTrue(String expr) {
    return functions.not(functions.coalesce(functions.expr(expr), functions.lit(false)));
  }

  /**
   * What {@code raise_error} raises for a rule: {@code PAYLOAD_START <rule json> PAYLOAD_SEP <row
   * values json> PAYLOAD_END}. The rule JSON is a constant; the values JSON is computed only for a
   * violating row (the CASE branch), with nulls kept.
   */
  private static Column payload(Rule r) {
    ObjectNode rule = ActionJson.MAPPER.createObjectNode();
    rule.put("class", r.cls().name());
    rule.put("name", r.name());
    rule.put("expression", r.expression());
    String head;
    try {
      head = ActionJson.MAPPER.writeValueAsString(rule);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    Column values;
    if (r.shown().isEmpty()) {
      values = functions.lit("{}");
    } else {
      List<Column> named = new ArrayList<>();
      for (Shown s : r.shown()) {
        named.add(s.value().cast("string").as(s.name()));
      }
      values = functions.to_json(functions.struct(named.toArray(new Column[0])), Map.of("ignoreNullFields", "false"));
    }
    return functions.concat(functions.lit(PAYLOAD_START + head + PAYLOAD_SEP), values, functions.lit(PAYLOAD_END));
  }

  private static String invariantExpression(String json, String column) {
    try {
      JsonNode n = ActionJson.MAPPER.readTree(json);
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

  // ---------------------------------------------------------------------------------------------
  // Expressions: parsing, referenced columns, diagnosing

  /** Parses with the session's parser; a parse failure (a checked ParseException) comes as unchecked. */
  private static Expression parse(SparkSession session, String sql) {
    try {
      return session.sessionState().sqlParser().parseExpression(sql);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  private static Expression parseCheck(SparkSession session, String name, String sql) {
    try {
      return parse(session, sql);
    } catch (RuntimeException e) {
      throw unparsable(ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT, "CHECK constraint " + name, sql, e);
    }
  }

  private static Expression parseGenerated(SparkSession session, String column, String sql) {
    try {
      return parse(session, sql);
    } catch (RuntimeException e) {
      throw unparsable(ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN,
          "the generation expression of column " + column, sql, e);
    }
  }

  private static FileCommitException unparsable(ErrorClass cls, String what, String sql, Exception e) {
    return cls.error("The expression of " + what + " does not parse as Spark SQL: " + sql + " (" + e.getMessage()
        + ")", e, Map.of("expression", sql));
  }

  /**
   * The columns an expression references, to show with a violation: every unresolved attribute
   * whose first name part is a top-level column (lambda variables and the like are left out), named
   * as written, deduplicated.
   */
  private static List<Shown> referenced(StructType schema, Expression parsed) {
    Map<String, Shown> out = new LinkedHashMap<>();
    walk(parsed, e -> {
      if (e instanceof UnresolvedAttribute a) {
        List<String> parts = CollectionConverters.asJava(a.nameParts());
        if (!parts.isEmpty() && topLevel(schema, parts.get(0)) != null) {
          out.putIfAbsent(a.name(), new Shown(a.name(), column(parts)));
        }
      }
      return false;
    });
    return new ArrayList<>(out.values());
  }

  private static StructField topLevel(StructType schema, String name) {
    for (StructField f : schema.fields()) {
      if (f.name().equalsIgnoreCase(name)) {
        return f;
      }
    }
    return null;
  }

  /** Visits an expression tree depth first; stops at, and returns, the first node {@code stop} accepts. */
  private static Expression walk(Expression e, Predicate<Expression> stop) {
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

  /**
   * The typed error for a projection over the table's rules that failed analysis: the first rule
   * that fails on its own, or {@code cause} itself when none does.
   */
  private static RuntimeException diagnose(Dataset<Row> data, StructType schema, Map<String, String> conf,
      Exception cause) {
    for (StructField f : schema.fields()) {
      if (f.metadata().contains(TableFeatures.GENERATION_EXPRESSION)) {
        String expr = f.metadata().getString(TableFeatures.GENERATION_EXPRESSION);
        DataType type;
        try {
          type = data.select(functions.expr(expr)).schema().fields()[0].dataType();
        } catch (Exception e) {
          ErrorClass cls = unresolvedColumn(e) != null ? ErrorClass.DELTA_INVALID_GENERATED_COLUMN_REFERENCES
              : ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN;
          return cls.error("The generation expression of column " + f.name() + " (" + expr + ") cannot be "
              + "evaluated over the table's columns: " + e.getMessage(), e,
              Map.of("columnName", f.name(), "expression", expr));
        }
        try {
          data.select(functions.expr(expr).cast(f.dataType()));
        } catch (Exception e) {
          return ErrorClass.DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH.error("Column " + f.name() + " is of type "
              + f.dataType().simpleString() + " but its generation expression (" + expr + ") gives "
              + type.simpleString() + ", which cannot be cast to it", e,
              Map.of("columnName", f.name(), "expressionType", type.sql(), "columnType", f.dataType().sql()));
        }
      }
    }
    Map<String, String> checks = new LinkedHashMap<>(checkConstraints(conf));
    invariants(schema.fields(), List.of(), checks);
    for (Map.Entry<String, String> c : checks.entrySet()) {
      FileCommitException e = checkExpression(data, c.getKey(), c.getValue());
      if (e != null) {
        return e;
      }
    }
    return Constraints.<RuntimeException>rethrow(cause);
  }

  /** The invariants of nullable fields, depth first: {@code EXPRESSION(<sql>)} -> sql. */
  private static void invariants(StructField[] fields, List<String> parents, Map<String, String> out) {
    for (StructField f : fields) {
      List<String> path = new ArrayList<>(parents);
      path.add(f.name());
      if (f.nullable() && f.metadata().contains(INVARIANTS)) {
        String expr = invariantExpression(f.metadata().getString(INVARIANTS), displayName(path));
        out.put("EXPRESSION(" + expr + ")", expr);
      }
      if (f.dataType() instanceof StructType s) {
        invariants(s.fields(), path, out);
      }
    }
  }

  /** Throws {@code e} as it is (Spark's AnalysisException is checked in Java's eyes only). */
  @SuppressWarnings("unchecked")
  private static <E extends Exception> RuntimeException rethrow(Exception e) throws E {
    throw (E) e;
  }

  // ---------------------------------------------------------------------------------------------
  // Translating a failed write job

  /**
   * The typed violation behind a failed write job, or null when the failure is not one of ours.
   *
   * <p>Recognition: {@link #apply} raises each violation with Spark's {@code raise_error}, whose
   * message is a payload between two markers made of control characters ({@code \u001e}, {@code
   * \u001f}) that JSON always escapes, so they cannot come from data. Spark 4 throws it as a {@code
   * SparkRuntimeException} of condition {@code USER_RAISED_EXCEPTION} with the payload in message
   * parameter {@code errorMessage}; the write job wraps it (task failure, job abort). This walks the
   * cause chain of {@code failure} (cycle safe) and takes the payload from that parameter, or, for a
   * wrapper that kept only the text, from the throwable's message.
   *
   * @param failure what the write job threw (any Throwable; null gives null)
   * @return {@code DELTA_NOT_NULL_CONSTRAINT_VIOLATED} (parameter {@code columnName}) or {@code
   *     DELTA_VIOLATE_CONSTRAINT_WITH_VALUES} (parameters {@code constraintName}, {@code expression}
   *     and {@code values}: one {@code " - <column> : <value>"} line per referenced column, sorted by
   *     column, as Delta), without a cause; or null
   */
  public static FileCommitException translate(Throwable failure) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof FileCommitException fc && isViolation(fc)) {
        return fc;
      }
      FileCommitException typed = null;
      if (t instanceof SparkThrowable st && USER_RAISED.equals(st.getCondition())) {
        typed = decode(st.getMessageParameters().get("errorMessage"));
      }
      if (typed == null) {
        typed = decode(t.getMessage());
      }
      if (typed != null) {
        return typed;
      }
    }
    return null;
  }

  private static boolean isViolation(FileCommitException e) {
    return e.getCondition().equals(ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED.name())
        || e.getCondition().equals(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES.name());
  }

  private static FileCommitException decode(String text) {
    if (text == null) {
      return null;
    }
    int start = text.indexOf(PAYLOAD_START);
    if (start < 0) {
      return null;
    }
    int head = start + PAYLOAD_START.length();
    int sep = text.indexOf(PAYLOAD_SEP, head);
    int end = sep < 0 ? -1 : text.indexOf(PAYLOAD_END, sep + 1);
    if (end < 0) {
      return null;
    }
    try {
      JsonNode rule = ActionJson.MAPPER.readTree(text.substring(head, sep));
      JsonNode row = ActionJson.MAPPER.readTree(text.substring(sep + 1, end));
      ErrorClass cls = ErrorClass.valueOf(rule.path("class").asText());
      String name = rule.path("name").asText();
      String expression = rule.path("expression").asText();
      if (cls == ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED) {
        return cls.error("Column " + name + " is NOT NULL, but a written row has no value for it (a nested field "
            + "is also null when its parent struct is).", Map.of("columnName", name));
      }
      Map<String, String> sorted = new TreeMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = row.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        sorted.put(e.getKey(), e.getValue().isNull() ? "null" : e.getValue().asText());
      }
      StringBuilder values = new StringBuilder();
      sorted.forEach((k, v) -> {
        if (values.length() > 0) {
          values.append('\n');
        }
        values.append(" - ").append(k).append(" : ").append(v);
      });
      Map<String, String> params = new LinkedHashMap<>();
      params.put("constraintName", name);
      params.put("expression", expression);
      params.put("values", values.toString());
      return cls.error("A written row breaks CHECK constraint " + name + " " + expression
          + " (false or null for it). The row's values:\n" + values, params);
    } catch (IOException | IllegalArgumentException e) {
      return null;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Declared constraints

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
    Map<String, String> checks = checkConstraints(properties);
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
   * @throws IllegalStateException when there is no Spark session
   */
  public static void validateConstraintProperties(StructType schema, Map<String, String> properties) {
    validateConstraintProperties((SparkSession) org.apache.spark.sql.SparkSession.active(), schema, properties);
  }

  /** The typed error of a CHECK expression over {@code over}'s columns, or null when it is fine. */
  private static FileCommitException checkExpression(Dataset<Row> over, String name, String expr) {
    Map<String, String> params = Map.of("name", name, "expr", expr);
    Dataset<Row> analyzed;
    try {
      parse(over.sparkSession(), expr);
    } catch (RuntimeException e) {
      return unparsable(ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT, "CHECK constraint " + name, expr, e);
    }
    try {
      analyzed = over.select(functions.expr(expr).as("c"));
    } catch (Exception e) {
      String col = unresolvedColumn(e);
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
    walkPlan(plan, e -> {
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

  private static boolean walkPlan(LogicalPlan plan, Predicate<Expression> stop) {
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
  private static String unresolvedColumn(Throwable e) {
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

  // ---------------------------------------------------------------------------------------------
  // Names

  /** A column path as Delta names it in messages: parts joined by dots, a part with a dot quoted. */
  private static String displayName(List<String> path) {
    StringBuilder sb = new StringBuilder();
    for (String p : path) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      sb.append(p.contains(".") ? quote(p) : p);
    }
    return sb.toString();
  }

  private static Column column(List<String> path) {
    StringBuilder sb = new StringBuilder();
    for (String p : path) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      sb.append(quote(p));
    }
    return functions.col(sb.toString());
  }

  private static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }
}
