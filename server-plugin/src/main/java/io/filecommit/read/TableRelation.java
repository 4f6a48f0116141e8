package io.filecommit.read;

import io.filecommit.deletionvectors.RowIndexFilter;
import io.filecommit.schema.SchemaUtils;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.PrunedFilteredScan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A read of a Delta table whose rows need more than Spark's Parquet file source gives: column
 * mapping (stored physical names back to logical ones, protocol "Column Mapping"), deletion
 * vectors (protocol "Deletion Vectors"), or a change feed made of several scans. Data Source V1,
 * chosen over V2 because each part stays Spark's own {@code FileSourceScanExec} over a {@link
 * DeltaFileIndex}: the vectorized Parquet reader, Parquet filter pushdown, partition pruning and
 * data skipping in {@link DeltaFileIndex#listFiles}, and Spark's {@code _metadata.row_index} for
 * deletion vectors come with it, where a V2 source would have to re-implement its file reader.
 *
 * <p>{@link #buildScan} builds each part as a DataFrame: the required columns renamed, the pushed
 * filters (as columns, so the part's scan prunes and skips by them), rows marked by a DV dropped
 * on the executors ({@link RowIndexFilter}: a broadcast map file -> descriptor, one bitmap per
 * task at a time, never a row list on the driver); parts are unioned and handed to Spark as
 * internal rows. Spark evaluates the pushed filters again on the output.
 */
final class TableRelation extends BaseRelation implements PrunedFilteredScan {
  private static final String KEY = "__fc_dv_key";
  private static final String ROW = "__fc_dv_row";

  private final SparkSession session;
  private final StructType schema;
  private final List<ScanPart> parts;

  /**
   * @param session the session
   * @param schema the read's columns (logical names)
   * @param parts the scans whose rows are the read's rows (at least one)
   */
  TableRelation(SparkSession session, StructType schema, List<ScanPart> parts) {
    this.session = session;
    this.schema = schema;
    this.parts = parts;
  }

  @Override
  public SQLContext sqlContext() {
    return session.sqlContext();
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public boolean needConversion() {
    return false;
  }

  @Override
  public long sizeInBytes() {
    long total = 0;
    for (ScanPart p : parts) {
      total += p.files().location().sizeInBytes();
    }
    return total;
  }

  @Override
  @SuppressWarnings("unchecked")
  public RDD<Row> buildScan(String[] requiredColumns, Filter[] filters) {
    List<Column> filterColumns = FilterColumns.of(filters);
    Dataset<Row> all = null;
    for (ScanPart p : parts) {
      Dataset<Row> d = part(p, requiredColumns, filterColumns);
      all = all == null ? d : all.union(d);
    }
    return (RDD<Row>) (RDD<?>) all.queryExecution().toRdd();
  }

  private Dataset<Row> part(ScanPart p, String[] required, List<Column> filters) {
    Dataset<Row> raw = session.baseRelationToDataFrame(p.files());
    List<Column> cols = new ArrayList<>();
    for (StructField f : schema.fields()) {
      String stored = p.columnOf().get(f.name());
      Column c = stored == null ? functions.lit(null) : functions.col(SchemaUtils.quote(stored));
      cols.add(c.cast(f.dataType()).as(f.name()));
    }
    if (p.filtersRows()) {
      Column key = functions.col("_metadata.file_path");
      if (p.changeFeedKeys()) {
        key = functions.concat(key, functions.lit("@"), functions.col(p.columnOf().get(ChangeFeed.VERSION)).cast("string"),
            functions.lit("@"), functions.col(p.columnOf().get(ChangeFeed.CHANGE_TYPE)));
      }
      cols.add(key.as(KEY));
      cols.add(functions.col("_metadata.row_index").as(ROW));
    }
    Dataset<Row> rows = raw.select(cols.toArray(new Column[0]));
    for (Column f : filters) {
      rows = rows.filter(f);
    }
    if (!p.drop().isEmpty()) {
      rows = rows.filter(RowIndexFilter.keep(session, p.tablePath(), p.conf(), p.drop(), Set.of(),
          RowIndexFilter.Mode.DROP_MARKED, functions.col(KEY), functions.col(ROW)));
    }
    if (!p.keepOnly().isEmpty()) {
      Column marked = RowIndexFilter.keep(session, p.tablePath(), p.conf(), p.keepOnly(), Set.of(),
          RowIndexFilter.Mode.KEEP_MARKED, functions.col(KEY), functions.col(ROW));
      rows = rows.filter(functions.when(functions.col(KEY).isin(p.keepOnly().keySet().toArray()), marked)
          .otherwise(functions.lit(true)));
    }
    List<Column> out = new ArrayList<>();
    for (String r : required) {
      out.add(functions.col(SchemaUtils.quote(r)));
    }
    return rows.select(out.toArray(new Column[0]));
  }

  /** The type of a read column (for callers building parts). */
  DataType typeOf(String name) {
    return schema.apply(name).dataType();
  }
}
