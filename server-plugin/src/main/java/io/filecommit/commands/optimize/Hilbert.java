package io.filecommit.commands.optimize;

import io.filecommit.schema.SchemaUtils;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * Hilbert-curve clustering of rows, as liquid clustering's OPTIMIZE lays files out (Delta's {@code
 * MultiDimClustering} with the {@code hilbert} curve: {@code hilbert_index(bits,
 * range_partition_id(col, n) ...)}; one column is clustered linearly, as Delta does, through {@link
 * ZOrder}). Each column's range id is the Spark partition a {@code repartitionByRange} into {@code
 * 2^bits} ranges puts the row in; the ids are the coordinates of a point whose position along the
 * Hilbert curve of that many dimensions (J. Skilling, "Programming the Hilbert curve", AIP Conf.
 * Proc. 707, 2004: axes to transposed index) orders the rows, which are range-partitioned by it into
 * the output files and sorted by it inside each.
 */
final class Hilbert {
  private static final String H_COLUMN = "__fc_hvalue";
  private static final int MAX_BITS = 10;

  private Hilbert() {}

  /**
   * The rows clustered along the Hilbert curve of {@code columns}.
   *
   * @param data the rows
   * @param columns the clustering columns (resolved names), 1 to 4
   * @param numFiles number of output partitions (files), >= 1
   * @return the rows in {@code numFiles} partitions, with {@code data}'s columns
   */
  static Dataset<Row> cluster(Dataset<Row> data, List<String> columns, int numFiles) {
    int k = columns.size();
    if (k == 1) {
      return ZOrder.cluster(data, columns, numFiles);
    }
    int bits = Math.max(1, Math.min(MAX_BITS, 63 / k));
    Dataset<Row> d = data;
    Column packed = functions.lit(0L);
    for (int i = 0; i < k; i++) {
      String range = "__fc_hrange_" + i;
      d = d.repartitionByRange(1 << bits, functions.col(SchemaUtils.quote(columns.get(i))))
          .withColumn(range, functions.spark_partition_id());
      packed = packed.bitwiseOR(functions.shiftleft(functions.col(range).cast("long"), i * bits));
    }
    int dims = k;
    int b = bits;
    UserDefinedFunction index = functions.udf((UDF1<Long, Long>) p -> index(unpack(p, dims, b), b),
        DataTypes.LongType);
    d = d.withColumn(H_COLUMN, index.apply(packed));
    for (int i = 0; i < k; i++) {
      d = d.drop("__fc_hrange_" + i);
    }
    return d.repartitionByRange(numFiles, functions.col(H_COLUMN)).sortWithinPartitions(H_COLUMN).drop(H_COLUMN);
  }

  private static int[] unpack(long packed, int dims, int bits) {
    int[] x = new int[dims];
    for (int i = 0; i < dims; i++) {
      x[i] = (int) ((packed >>> (i * bits)) & ((1L << bits) - 1));
    }
    return x;
  }

  /**
   * The position of a point along the Hilbert curve.
   *
   * @param point coordinates, each in {@code [0, 2^bits)}; overwritten
   * @param bits bits per coordinate, {@code bits * point.length <= 63}
   * @return the curve index, in {@code [0, 2^(bits * point.length))}
   */
  static long index(int[] point, int bits) {
    int n = point.length;
    int m = 1 << (bits - 1);
    for (int q = m; q > 1; q >>= 1) { // inverse undo
      int p = q - 1;
      for (int i = 0; i < n; i++) {
        if ((point[i] & q) != 0) {
          point[0] ^= p;
        } else {
          int t = (point[0] ^ point[i]) & p;
          point[0] ^= t;
          point[i] ^= t;
        }
      }
    }
    for (int i = 1; i < n; i++) { // Gray encode
      point[i] ^= point[i - 1];
    }
    int t = 0;
    for (int q = m; q > 1; q >>= 1) {
      if ((point[n - 1] & q) != 0) {
        t ^= q - 1;
      }
    }
    for (int i = 0; i < n; i++) {
      point[i] ^= t;
    }
    long h = 0;
    for (int level = bits - 1; level >= 0; level--) {
      for (int i = 0; i < n; i++) {
        h = (h << 1) | ((point[i] >>> level) & 1);
      }
    }
    return h;
  }
}
