package io.filecommit.files;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.testing.SparkTestSession;
import io.filecommit.txn.OptimisticTransaction;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Date;
import java.sql.Timestamp;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The actions built from what Spark's Parquet writer left in {@link WrittenFiles} (length, footer)
 * equal the actions built by reading each file back ({@code getFileStatus}, {@link ParquetStats#collect}),
 * for the driver-side write and the job, over every type the statistics cover (NaN and long strings included).
 */
class WrittenFilesTest {
  private static final StructType TABLE = new StructType()
      .add("id", DataTypes.LongType).add("i", DataTypes.IntegerType).add("d", DataTypes.DoubleType)
      .add("f", DataTypes.FloatType).add("s", DataTypes.StringType).add("day", DataTypes.DateType)
      .add("ts", DataTypes.TimestampType).add("dec", DataTypes.createDecimalType(12, 3))
      .add("b", DataTypes.BooleanType).add("bin", DataTypes.BinaryType).add("part", DataTypes.StringType);
  private static SparkSession spark;

  @TempDir
  Path tmp;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  @SuppressWarnings("unchecked")
  private static Dataset<Row> rows(boolean nan) {
    String longString = "x".repeat(40);
    List<Row> rows = Arrays.asList(
        RowFactory.create(1L, 7, 1.5, 2.5f, "a", Date.valueOf("2024-01-02"), Timestamp.valueOf("2024-01-02 03:04:05.678"),
            new BigDecimal("12.345"), true, new byte[] {1, 2}, "p"),
        RowFactory.create(2L, null, nan ? Double.NaN : -3.0, null, longString, null, null, null, false, null, "p"),
        RowFactory.create(3L, -4, null, -1.0f, null, Date.valueOf("1999-12-31"), Timestamp.valueOf("1970-01-01 00:00:00"),
            new BigDecimal("-1.000"), null, new byte[] {}, null));
    return (Dataset<Row>) spark.createDataFrame(rows, TABLE);
  }

  private List<AddFile> write(String name, Dataset<Row> data) {
    OptimisticTransaction txn = new OptimisticTransaction(spark,
        new DeltaLog(new org.apache.hadoop.fs.Path(tmp.resolve(name).toUri()), new Configuration()));
    txn.updateMetadata(new Metadata(UUID.randomUUID().toString(), null, null, TABLE.json(), List.of("part"),
        Map.of(), 0L));
    return new TransactionalWrite(txn).writeFiles(data, Map.of(), false);
  }

  @Test
  void theWritersLengthAndFooterGiveTheActionsAReadBackGives() throws Exception {
    String key = "spark.filecommit.writer.native";
    spark.conf().set(key, "off"); // Spark's Parquet writer (the native writer records nothing here)
    try {
      for (boolean nan : new boolean[] {false, true}) {
        long before = WrittenFiles.taken();
        List<AddFile> fast = write("fast" + nan, rows(nan));
        List<AddFile> job = write("job" + nan, rows(nan).repartition(2));
        assertEquals(fast.size() + job.size(), WrittenFiles.taken() - before, "every file's action came from its writer");
        assertEquals(0, WrittenFiles.pending());
        for (var entry : Map.of("fast" + nan, fast, "job" + nan, job).entrySet()) {
          for (AddFile a : entry.getValue()) {
            org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(
                tmp.resolve(entry.getKey()).toUri().toString(), new java.net.URI(null, null, a.path(), null).getPath());
            FileStatus status = file.getFileSystem(new Configuration()).getFileStatus(file);
            assertEquals(status.getLen(), a.size(), a.path());
            assertEquals(ParquetStats.collect(new Configuration(), status, 32), a.stats(), a.path());
          }
        }
      }
    } finally {
      spark.conf().unset(key);
    }
  }
}
