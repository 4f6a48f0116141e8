package io.filecommit.constraints;

import io.filecommit.delta.TableFeatures;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.schema.SchemaUtils;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

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

  private Constraints() {}


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
    return ConstraintRules.hasRules(schema, conf);
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
    if (!ConstraintRules.hasRules(schema, conf)) {
      return data;
    }
    SparkSession session = data.sparkSession();
    StructField[] fields = schema.fields();

    // Generated columns: computed when absent, checked when supplied.
    List<ConstraintRules.Rule> generatedRules = new ArrayList<>();
    List<Column> cols = new ArrayList<>();
    for (StructField f : fields) {
      Column c = functions.col(SchemaUtils.quote(f.name()));
      if (f.metadata().contains(TableFeatures.GENERATION_EXPRESSION)) {
        String expr = f.metadata().getString(TableFeatures.GENERATION_EXPRESSION);
        Expression parsed = Expressions.parseGenerated(session, f.name(), expr);
        if (supplied.contains(f.name())) {
          List<ConstraintRules.Shown> shown = new ArrayList<>();
          shown.add(new ConstraintRules.Shown(f.name(), c));
          shown.addAll(Expressions.referenced(schema, parsed));
          generatedRules.add(new ConstraintRules.Rule(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, GENERATED_COLUMN_RULE,
              "(" + SchemaUtils.quote(f.name()) + " <=> " + parsed.sql() + ")",
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
        cols.add(functions.col(SchemaUtils.quote(name)));
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
    List<ConstraintRules.Rule> rules = new ArrayList<>();
    ConstraintRules.checkConstraints(conf).forEach((name, expr) -> {
      Expression parsed = Expressions.parseCheck(session, name, expr);
      rules.add(new ConstraintRules.Rule(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, name, parsed.sql(),
          ConstraintRules.violatedWhenNotTrue(expr), Expressions.referenced(schema, parsed)));
    });
    ConstraintRules.schemaRules(session, schema, fields, List.of(), rules);
    rules.addAll(generatedRules);
    if (rules.isEmpty()) {
      return out;
    }

    Column checked = null;
    for (ConstraintRules.Rule r : rules) {
      Column raise = functions.raise_error(ViolationPayload.payload(r));
      checked = checked == null ? functions.when(r.violated(), raise) : checked.when(r.violated(), raise);
    }
    StructField first = fields[0];
    List<Column> guarded = new ArrayList<>();
    guarded.add(checked.otherwise(functions.col(SchemaUtils.quote(first.name()))).cast(first.dataType())
        .as(first.name(), first.metadata()));
    for (int i = 1; i < fields.length; i++) {
      guarded.add(functions.col(SchemaUtils.quote(fields[i].name())));
    }
    for (String name : extra) {
      guarded.add(functions.col(SchemaUtils.quote(name)));
    }
    try {
      return out.select(guarded.toArray(new Column[0]));
    } catch (Exception e) {
      throw diagnose(data, schema, conf, e);
    }
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
          ErrorClass cls = Expressions.unresolvedColumn(e) != null ? ErrorClass.DELTA_INVALID_GENERATED_COLUMN_REFERENCES
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
    Map<String, String> checks = new LinkedHashMap<>(ConstraintRules.checkConstraints(conf));
    ConstraintRules.invariants(schema.fields(), List.of(), checks);
    for (Map.Entry<String, String> c : checks.entrySet()) {
      FileCommitException e = ConstraintValidation.checkExpression(data, c.getKey(), c.getValue());
      if (e != null) {
        return e;
      }
    }
    return Expressions.<RuntimeException>rethrow(cause);
  }

  /**
   * The typed violation behind a failed write job, or null when the failure is not one of ours
   * ({@link ViolationPayload#translate}).
   *
   * @param failure what the write job threw (null gives null)
   * @return the violation, or null
   */
  public static FileCommitException translate(Throwable failure) {
    return ViolationPayload.translate(failure);
  }
}
