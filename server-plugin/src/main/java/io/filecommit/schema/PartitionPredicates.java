package io.filecommit.schema;

import io.filecommit.delta.ColumnMapping;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.ErrorClass;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Partition predicates (replaceWhere, conflict checks, partition pruning) evaluated by Spark on
 * files' partition values (protocol "Partition Value Serialization": values are strings, cast to
 * the column types), as Delta's {@code DeltaLog.filterFileList}: one row per file, no data read.
 */
public final class PartitionPredicates {
  private PartitionPredicates() {}

  /**
   * The log paths of the files whose partition values satisfy {@code predicate}, evaluated by Spark
   * on the typed partition values (a local relation of one row per file; no data is read).
   *
   * @param session Spark session
   * @param md table metadata (partition columns and types; column mapping honoured)
   * @param files the files to test
   * @param predicate SQL predicate over partition columns
   * @param table table path, for messages
   * @return matching log paths
   *
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) if the predicate does not parse or references other columns
   */
  public static Set<String> matching(SparkSession session, Metadata md, Collection<AddFile> files, String predicate,
      String table) {
    if (md.partitionColumns().isEmpty()) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Option replaceWhere needs a partitioned table; " + table + " is not partitioned");
    }
    try {
      return matching(session, md, files, functions.expr(predicate), null);
    } catch (Exception e) { // AnalysisException and ParseException are checked in Java's eyes
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Option replaceWhere '" + predicate + "' must be a predicate on the partition columns "
          + md.partitionColumns() + " of " + table + ": " + e.getMessage(), e);
    }
  }

  /**
   * The log paths of the files whose partition values satisfy {@code predicate} (a predicate for
   * which {@link #onPartitionsOnly} holds).
   *
   * @param session Spark session
   * @param md table metadata
   * @param files the files to test
   * @param predicate predicate over partition columns, qualified with {@code alias} or not
   * @param alias name of the table in {@code predicate} ({@code t.col}), or null
   * @return matching log paths
   * @throws RuntimeException Spark's AnalysisException when {@code predicate} references other columns
   */
  public static Set<String> matching(SparkSession session, Metadata md, Collection<AddFile> files, Column predicate,
      String alias) {
    List<Row> matching = relation(session, md, files, alias).filter(predicate).select(PATH_COLUMN).collectAsList();
    Set<String> paths = new HashSet<>();
    for (Row r : matching) {
      paths.add(r.getString(0));
    }
    return paths;
  }

  /**
   * Whether {@code predicate} references nothing but the table's partition columns (and is
   * deterministic), so that it can be decided per file from partition values alone.
   *
   * @param session Spark session
   * @param md table metadata
   * @param predicate a boolean expression
   * @param alias name of the table in {@code predicate}, or null
   * @return true when Spark resolves it against the partition columns alone
   */
  public static boolean onPartitionsOnly(SparkSession session, Metadata md, Column predicate, String alias) {
    if (md.partitionColumns().isEmpty()) {
      return false;
    }
    try {
      Dataset<Row> filtered = relation(session, md, List.of(), alias).filter(predicate);
      return filtered.queryExecution().analyzed().expressions().forall(e -> e.deterministic());
    } catch (Exception e) { // AnalysisException: a reference to another column (checked in Java's eyes)
      return false;
    }
  }

  /** One row per file: its log path and its typed partition values, named as the partition columns. */
  private static Dataset<Row> relation(SparkSession session, Metadata md, Collection<AddFile> files, String alias) {
    StructType schema = md.schema();
    List<StructField> fields = new ArrayList<>();
    fields.add(new StructField(PATH_COLUMN, DataTypes.StringType, false, org.apache.spark.sql.types.Metadata.empty()));
    for (String p : md.partitionColumns()) {
      fields.add(new StructField(p, DataTypes.StringType, true, org.apache.spark.sql.types.Metadata.empty()));
    }
    List<Row> rows = new ArrayList<>();
    for (AddFile f : files) {
      Object[] values = new Object[fields.size()];
      values[0] = f.path();
      for (int i = 0; i < md.partitionColumns().size(); i++) {
        values[i + 1] = f.partitionValues().get(ColumnMapping.physicalName(md, md.partitionColumns().get(i)));
      }
      rows.add(RowFactory.create(values));
    }
    List<Column> typed = new ArrayList<>();
    typed.add(functions.col(PATH_COLUMN));
    for (String p : md.partitionColumns()) {
      DataType type = SchemaUtils.findField(schema, p).map(StructField::dataType).orElse(DataTypes.StringType);
      typed.add(functions.col(SchemaUtils.quote(p)).cast(type).as(p));
    }
    Dataset<Row> relation = session.createDataFrame(rows, new StructType(fields.toArray(new StructField[0])))
        .select(typed.toArray(new Column[0]));
    return alias == null ? relation : relation.as(alias);
  }

  private static final String PATH_COLUMN = "__filecommit_path";
}
