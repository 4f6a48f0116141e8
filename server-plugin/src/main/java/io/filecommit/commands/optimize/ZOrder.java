package io.filecommit.commands.optimize;

import io.filecommit.schema.SchemaUtils;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.functions;

/**
 * Z-order clustering of rows (Delta's {@code MultiDimClustering} with the {@code zorder} curve:
 * {@code interleave_bits(range_partition_id(col, n) ...)}), with Spark expressions only: each
 * column's range id is the Spark partition a {@code repartitionByRange} into {@code 2^bits} ranges
 * puts the row in ({@code spark_partition_id()}), the ids' bits are interleaved into one long (the
 * first column's bit first at each level), and the rows are range-partitioned by that value into
 * the output files and sorted by it inside each.
 */
final class ZOrder {
  private static final String Z_COLUMN = "__fc_zvalue";
  private static final int MAX_BITS = 10;

  private ZOrder() {}

  /**
   * The rows clustered by the Z-order of {@code columns}.
   *
   * @param data the rows (table columns)
   * @param columns the Z-order columns (resolved names), 1 to 63
   * @param numFiles number of output partitions (files), >= 1
   * @return the rows in {@code numFiles} partitions, Z-ordered, with {@code data}'s columns
   */
  static Dataset<Row> cluster(Dataset<Row> data, List<String> columns, int numFiles) {
    int bits = Math.max(1, Math.min(MAX_BITS, 63 / columns.size()));
    int ranges = 1 << bits;
    Dataset<Row> d = data;
    for (int i = 0; i < columns.size(); i++) {
      d = d.repartitionByRange(ranges, functions.col(SchemaUtils.quote(columns.get(i))))
          .withColumn(rangeColumn(i), functions.spark_partition_id());
    }
    Column z = functions.lit(0L);
    int k = columns.size();
    for (int b = 0; b < bits; b++) {
      for (int i = 0; i < k; i++) {
        Column bit = functions.shiftright(functions.col(rangeColumn(i)).cast("long"), b).bitwiseAND(1L);
        int position = b * k + (k - 1 - i);
        z = z.bitwiseOR(functions.shiftleft(bit, position));
      }
    }
    d = d.withColumn(Z_COLUMN, z);
    for (int i = 0; i < k; i++) {
      d = d.drop(rangeColumn(i));
    }
    return d.repartitionByRange(numFiles, functions.col(Z_COLUMN)).sortWithinPartitions(Z_COLUMN).drop(Z_COLUMN);
  }

  private static String rangeColumn(int i) {
    return "__fc_range_" + i;
  }
}
