package io.filecommit.commands;

import io.filecommit.read.TableScan;
import io.filecommit.delta.MaterializedRowTracking;
import io.filecommit.delta.TableFeatures;
import io.filecommit.files.TransactionalWrite;
import io.filecommit.schema.SchemaUtils;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.LongAccumulator;

/**
 * The output rows of a row-level change, built as an array of structs per input row and exploded,
 * so that one pass produces the new row and its change rows ({@code delete}, {@code
 * update_preimage} / {@code update_postimage}, {@code insert}; protocol "Change Data Files"), as
 * Delta's merge builds its output with {@code MergeOutputGeneration}. Each struct carries its row's
 * {@link Kind} for the row metrics and, per generated column, whether it must be computed from the
 * new values (Delta recomputes generated columns on UPDATE and MERGE).
 */
public final class RowLevelOutput {
  /** Kinds of output rows; {@link #DROP} rows only count a deleted row and are not written. */
  public enum Kind {
    /** An unchanged row of a rewritten file. */
    COPY,
    /** The new row of an updated row. */
    UPDATE,
    /** A deleted row, written as its {@code delete} change row. */
    DELETE,
    /** An inserted row. */
    INSERT,
    /** A change row only (pre or post image, {@code insert} change row): not counted as a row of the table. */
    CHANGE_ONLY,
    /** A deleted row without the change data feed: counted, not written. */
    DROP
  }

  /** Name of the struct column of {@link #output} rows before they are flattened. */
  public static final String OUT = "__fc_out";
  private static final String KIND = "__fc_kind";
  private static final String GEN_PREFIX = "__fc_gen_";

  private final StructType schema;
  private final boolean cdf;
  private final List<String> generated;
  private final MaterializedRowTracking rowTracking;

  /**
   * @param schema the table schema
   * @param cdf whether the table has the change data feed on
   * @param rowTracking the materialized row tracking columns when row tracking is enabled, else
   *     null: then each output row carries its preserved row ID and row commit version (protocol
   *     "Row Tracking": a copied row keeps both, an updated row keeps its ID and takes the commit's
   *     version, an inserted row takes fresh ones), read from the scan's columns of the same names
   */
  RowLevelOutput(StructType schema, boolean cdf, MaterializedRowTracking rowTracking) {
    this.schema = schema;
    this.cdf = cdf;
    this.rowTracking = rowTracking;
    this.generated = TableFeatures.generatedColumns(schema);
  }

  /**
   * Whether a column is a generated column.
   *
   * @param column a column name (exact case)
   * @return true when its metadata has a generation expression
   */
  public boolean isGenerated(String column) {
    return generated.contains(column);
  }

  private StructField[] columns() {
    return schema.fields();
  }

  /**
   * One output row: {@code values} (one per table column, in schema order, cast to the column
   * types), the change type (null for table data), the kind, and which generated columns must be
   * computed from the new values.
   *
   * @param values the row's values, one per table column
   * @param changeType {@code delete}, {@code update_preimage}, {@code update_postimage}, {@code insert} or null
   * @param kind what the row is, for the metrics
   * @param recompute generated columns to compute from the row's other values
   * @return a struct column
   */
  public Column output(List<Column> values, String changeType, Kind kind, Set<String> recompute) {
    StructField[] fields = columns();
    List<Column> parts = new ArrayList<>();
    for (int i = 0; i < fields.length; i++) {
      parts.add(values.get(i).cast(fields[i].dataType()).as(fields[i].name()));
    }
    parts.add(functions.lit(changeType).cast(DataTypes.StringType).as(TransactionalWrite.CDC_TYPE_COLUMN));
    parts.add(functions.lit(kind.ordinal()).as(KIND));
    for (int g = 0; g < generated.size(); g++) {
      parts.add(functions.lit(recompute.contains(generated.get(g))).as(GEN_PREFIX + g));
    }
    if (rowTracking != null) {
      Column none = functions.lit(null).cast(DataTypes.LongType);
      boolean keepsId = kind == Kind.COPY || kind == Kind.UPDATE;
      parts.add((keepsId ? functions.col(SchemaUtils.quote(rowTracking.rowId())) : none).as(rowTracking.rowId()));
      parts.add((kind == Kind.COPY ? functions.col(SchemaUtils.quote(rowTracking.rowCommitVersion())) : none)
          .as(rowTracking.rowCommitVersion()));
    }
    return functions.struct(parts.toArray(new Column[0]));
  }

  /**
   * The output rows of an updated row: the new row, and with the change data feed its pre and post images.
   *
   * @param before the row's values, one per table column
   * @param after its new values, one per table column
   * @param recompute generated columns to compute from the new values
   * @return output struct columns for {@link #array}
   */
  public List<Column> updated(List<Column> before, List<Column> after, Set<String> recompute) {
    List<Column> out = new ArrayList<>();
    out.add(output(after, null, Kind.UPDATE, recompute));
    if (cdf) {
      out.add(output(before, "update_preimage", Kind.CHANGE_ONLY, Set.of()));
      out.add(output(after, "update_postimage", Kind.CHANGE_ONLY, recompute));
    }
    return out;
  }

  /**
   * The output rows of a deleted row: its {@code delete} change row, or a row that only counts.
   *
   * @param before the row's values, one per table column
   * @return output struct columns for {@link #array}
   */
  public List<Column> deleted(List<Column> before) {
    return List.of(cdf ? output(before, "delete", Kind.DELETE, Set.of()) : output(before, null, Kind.DROP, Set.of()));
  }

  /**
   * The output rows of an inserted row: the row, and with the change data feed its {@code insert} change row.
   *
   * @param values the row's values, one per table column
   * @param recompute generated columns to compute from them
   * @return output struct columns for {@link #array}
   */
  public List<Column> inserted(List<Column> values, Set<String> recompute) {
    List<Column> out = new ArrayList<>();
    out.add(output(values, null, Kind.INSERT, recompute));
    if (cdf) {
      out.add(output(values, "insert", Kind.CHANGE_ONLY, recompute));
    }
    return out;
  }

  /**
   * The output row of an unchanged row of a rewritten file.
   *
   * @param before the row's values, one per table column
   * @return output struct columns for {@link #array}
   */
  public List<Column> copied(List<Column> before) {
    return List.of(output(before, null, Kind.COPY, Set.of()));
  }

  /**
   * An array column of output rows.
   *
   * @param outputs struct columns from {@link #output} (or the methods that call it)
   * @return the array column, to be exploded
   */
  public static Column array(List<Column> outputs) {
    return functions.array(outputs.toArray(new Column[0]));
  }

  /**
   * Flattens exploded output rows into what {@link TransactionalWrite#writeFiles} takes: the table
   * columns (generated columns computed where asked), plus {@code _change_type} with the change
   * data feed on. With {@code counters}, each row's kind is counted first.
   *
   * @param rows rows with one column {@value #OUT} (from {@code explode} of {@link #array})
   * @param counters accumulators indexed by {@link Kind#ordinal()}, or null
   * @return rows to write
   */
  public Dataset<Row> finish(Dataset<Row> rows, LongAccumulator[] counters) {
    Dataset<Row> flat = rows.select(functions.col(OUT + ".*"));
    if (counters != null) {
      UserDefinedFunction count = functions.udf((UDF1<Integer, Boolean>) k -> {
        counters[k].add(1);
        return true;
      }, DataTypes.BooleanType).asNondeterministic();
      flat = flat.filter(count.apply(functions.col(KIND)));
    }
    flat = flat.filter(functions.col(KIND).notEqual(functions.lit(Kind.DROP.ordinal())));
    List<Column> cols = new ArrayList<>();
    for (StructField f : columns()) {
      int g = generated.indexOf(f.name());
      Column c = functions.col(SchemaUtils.quote(f.name()));
      if (g >= 0) {
        String expr = f.metadata().getString(TableFeatures.GENERATION_EXPRESSION);
        c = functions.when(functions.col(GEN_PREFIX + g), functions.expr(expr).cast(f.dataType())).otherwise(c);
      }
      cols.add(c.as(f.name()));
    }
    if (cdf) {
      cols.add(functions.col(TransactionalWrite.CDC_TYPE_COLUMN));
    }
    addRowTracking(cols, null);
    return flat.select(cols.toArray(new Column[0]));
  }

  /**
   * The rows of rewritten files after an UPDATE without change data: one projection (no output
   * array), matching rows with their new values, generated columns in {@code recompute} computed
   * from them.
   *
   * @param scan rows of the touched files ({@link RowLevelChange#scan})
   * @param matches the condition, NULL treated as false
   * @param after new values, one per table column
   * @param recompute generated columns to compute for updated rows
   * @return the table's columns
   */
  public Dataset<Row> updatedInPlace(Dataset<Row> scan, Column matches, List<Column> after, Set<String> recompute) {
    StructField[] fields = columns();
    List<Column> cols = new ArrayList<>();
    for (int i = 0; i < fields.length; i++) {
      Column before = DMLUtils.ref(null, fields[i].name());
      cols.add(functions.when(matches, after.get(i).cast(fields[i].dataType())).otherwise(before).as(fields[i].name()));
    }
    addRowTracking(cols, matches);
    if (recompute.isEmpty()) {
      return scan.select(cols.toArray(new Column[0]));
    }
    String flag = "__fc_updated";
    cols.add(matches.as(flag));
    Dataset<Row> stage = scan.select(cols.toArray(new Column[0]));
    List<Column> out = new ArrayList<>();
    for (StructField f : fields) {
      Column c = DMLUtils.ref(null, f.name());
      if (recompute.contains(f.name())) {
        c = functions.when(functions.col(flag),
            functions.expr(f.metadata().getString(TableFeatures.GENERATION_EXPRESSION)).cast(f.dataType())).otherwise(c);
      }
      out.add(c.as(f.name()));
    }
    addRowTracking(out, null);
    return stage.select(out.toArray(new Column[0]));
  }

  /**
   * Adds the materialized row tracking columns (when row tracking is enabled): the row ID as read;
   * the row commit version as read, NULL where {@code updated} holds (the commit's version).
   */
  private void addRowTracking(List<Column> cols, Column updated) {
    if (rowTracking == null) {
      return;
    }
    cols.add(functions.col(SchemaUtils.quote(rowTracking.rowId())));
    Column version = functions.col(SchemaUtils.quote(rowTracking.rowCommitVersion()));
    cols.add(updated == null ? version
        : functions.when(updated, functions.lit(null).cast(DataTypes.LongType)).otherwise(version)
            .as(rowTracking.rowCommitVersion()));
  }

  /**
   * Accumulators for the row kinds, registered with the session's SparkContext.
   *
   * @param session the command's session
   * @param operation the command, in the accumulators' names
   * @return one accumulator per {@link Kind}, indexed by its ordinal
   */
  public static LongAccumulator[] counters(SparkSession session, String operation) {
    LongAccumulator[] acc = new LongAccumulator[Kind.values().length];
    for (Kind k : Kind.values()) {
      acc[k.ordinal()] = session.sparkContext().longAccumulator("filecommit " + operation + " " + k);
    }
    return acc;
  }


  /**
   * Drops the scan's location columns.
   *
   * @param rows rows of {@link TableScan#read}
   * @return the rows without {@link TableScan#FILE_COLUMN} and {@link TableScan#ROW_COLUMN}
   */
  public static Dataset<Row> withoutLocation(Dataset<Row> rows) {
    return rows.drop(TableScan.FILE_COLUMN, TableScan.ROW_COLUMN);
  }
}
