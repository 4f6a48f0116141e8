package io.filecommit.commands;

import io.filecommit.delta.IdentityColumns;
import io.filecommit.delta.TableFeatures;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.types.StructType;

/**
 * The columns Spark's analyzer fills in for a SQL INSERT whose column list (or {@code BY NAME}
 * query) leaves them out: Spark's {@code TableOutputResolver} gives a missing column without a
 * default the NULL literal, in the top projection of the statement's query. Delta's {@code
 * DeltaAnalysis} instead leaves identity and generated columns out of the insert, so that the
 * write gives them values (protocol "Identity Columns", "Generated Columns"). Dropping such a
 * column here makes the write treat it as a DataFrame that lacks it ({@link
 * io.filecommit.files.TransactionalWrite#normalizeData}): a new identity value, or the value of the
 * generation expression. A value the statement gives, NULL included, reaches the write as a column
 * of its query, not as a literal of the top projection, and stays (checked as a given value).
 */
public final class FilledColumns {
  private FilledColumns() {}

  /**
   * The data without the identity columns that are the NULL literal (every write: a DataFrame
   * never gives a GENERATED ALWAYS identity column a value).
   *
   * @param data the rows to write
   * @param table the table schema
   * @return {@code data}, or it without such columns
   */
  static Dataset<Row> withoutIdentity(Dataset<Row> data, StructType table) {
    return without(data, table, List.of());
  }

  /**
   * The data of a catalog write (SQL INSERT, {@code INSERT OVERWRITE}) without the identity and
   * generated columns that are the NULL literal.
   *
   * @param data the rows to write (the statement's analyzed query)
   * @param table the table schema
   * @return {@code data}, or it without such columns
   */
  public static Dataset<Row> withoutIdentityOrGenerated(Dataset<Row> data, StructType table) {
    return without(data, table, TableFeatures.generatedColumns(table));
  }

  private static Dataset<Row> without(Dataset<Row> data, StructType table, List<String> generated) {
    if ((IdentityColumns.of(table).isEmpty() && generated.isEmpty())
        || !(data.queryExecution().analyzed() instanceof Project p)) {
      return data;
    }
    List<String> filled = new ArrayList<>();
    for (NamedExpression e : scala.jdk.javaapi.CollectionConverters.asJava(p.projectList())) {
      Expression x = (Expression) e;
      while (x instanceof Alias || x instanceof Cast) {
        x = x.children().head();
      }
      if (x instanceof Literal l && l.value() == null && (IdentityColumns.find(table, e.name()).isPresent()
          || generated.stream().anyMatch(g -> g.equalsIgnoreCase(e.name())))) {
        filled.add(e.name());
      }
    }
    return filled.isEmpty() ? data : data.drop(filled.toArray(new String[0]));
  }
}
