package io.filecommit.commands.optimize;

import io.filecommit.commands.DeleteCommand;
import io.filecommit.commands.WriteIntoDelta;
import io.filecommit.commands.WriteMode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.errors.FileCommitException;
import io.filecommit.testing.SparkTestSession;
import io.filecommit.txn.OptimisticTransaction;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * OPTIMIZE's file selection and bins, its one-task-per-bin shuffle keys checked against Spark's own
 * hash partitioning, and its isolation: a concurrent append lands, a concurrent delete of a file it
 * read fails it.
 */
class OptimizeTest {
  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  private static AddFile file(String path, String part, long size, DeletionVectorDescriptor dv, String stats) {
    return new AddFile(path, Map.of("p", part), size, 0L, true, stats, Map.of(), dv);
  }

  @Test
  void binsPackSmallFilesPerPartitionAndDropSingleFileBins() {
    DeletionVectorDescriptor dv = new DeletionVectorDescriptor("i", "abc", null, 10, 10);
    List<AddFile> files = List.of(
        file("a1", "a", 40, null, null), file("a2", "a", 30, null, null), file("a3", "a", 50, null, null),
        file("b1", "b", 10, null, null), file("c1", "c", 500, null, null),
        file("d1", "d", 500, dv, "{\"numRecords\":100}"), file("d2", "d", 500, dv, "{\"numRecords\":1000}"));
    List<AddFile> selected = OptimizePlan.toProcess(files, 100, 0.05, false);
    // d2 deletes 1% of its rows: below the ratio, and too big to be small.
    assertEquals(List.of("a1", "a2", "a3", "b1", "d1"), selected.stream().map(AddFile::path).toList());
    List<OptimizePlan.Bin> bins = OptimizePlan.bins(selected, 80, false);
    // Partition a sorted by size: [30, 40] fits 80, then [50]; b and d have one file each.
    assertEquals(1, bins.size());
    assertEquals(List.of("a2", "a1"), bins.get(0).files().stream().map(AddFile::path).toList());
    List<OptimizePlan.Bin> z = OptimizePlan.bins(OptimizePlan.toProcess(files, 100, 0.05, true), 80, true);
    assertEquals(4, z.size(), "Z-order rewrites every partition's files in one bin");
    Map<String, String> m = OptimizePlan.metrics(List.of(file("x", "a", 7, null, null), file("y", "a", 3, null, null),
        file("z", "a", 5, null, null)), List.of(), List.of(dv));
    assertEquals("3", m.get("minFileSize"));
    assertEquals("3", m.get("p25FileSize"), "index n/4 = 0 of the sorted sizes, as Delta's FileSizeStatsWithHistogram");
    assertEquals("5", m.get("p50FileSize"));
    assertEquals("7", m.get("p75FileSize"));
    assertEquals("15", m.get("numAddedBytes"));
    assertEquals("1", m.get("numDeletionVectorsRemoved"));
  }

  @Test
  void binKeysSendEachBinToItsOwnSparkPartition() {
    for (int n : new int[] {1, 2, 7, 64, 300}) {
      int[] keys = OptimizeExecutor.binKeys(n);
      List<Row> rows = new ArrayList<>();
      for (int b = 0; b < n; b++) {
        rows.add(org.apache.spark.sql.RowFactory.create(b, keys[b]));
      }
      Dataset<Row> df = spark.createDataFrame(rows, new org.apache.spark.sql.types.StructType()
          .add("bin", "int").add("key", "int"));
      List<Row> placed = df.repartition(n, functions.col("key"))
          .select(functions.col("bin"), functions.spark_partition_id().as("pid")).collectAsList();
      assertEquals(n, placed.size());
      for (Row r : placed) {
        assertEquals(r.getInt(0), r.getInt(1), "bin " + r.getInt(0) + " of " + n + " landed in another partition");
      }
    }
  }

  private static String table(String name) throws Exception {
    String path = Files.createTempDirectory("optimize-" + name).resolve("t").toString();
    for (int i = 0; i < 4; i++) {
      WriteIntoDelta.run(spark, spark.range(i * 10, i * 10 + 10).selectExpr("id", "id % 2 AS part"), path,
          WriteMode.APPEND, List.of("part"), Map.of(), Map.of(), false, null, null);
    }
    return path;
  }

  private static OptimizeExecutor.Request everything() {
    return new OptimizeExecutor.Request(f -> true, List.of(), 1L << 30, 1L << 30, 0.05, List.of(), false, false);
  }

  private static Set<Long> ids(String path) {
    return spark.read().format("filecommit").load(path).select("id").collectAsList().stream()
        .map(r -> r.getLong(0)).collect(Collectors.toSet());
  }

  @Test
  void aConcurrentAppendLandsAndTheCompactionRetries() throws Exception {
    String path = table("append");
    DeltaLog log = DeltaLog.forTable(spark, path);
    OptimisticTransaction txn = new OptimisticTransaction(spark, log);
    long read = txn.snapshot().version();
    int before = txn.snapshot().allFiles().size();
    WriteIntoDelta.run(spark, spark.range(100, 110).selectExpr("id", "id % 2 AS part"), path, WriteMode.APPEND,
        List.of(), Map.of(), Map.of(), false, null, null);
    OptimizeCommand.Result r = OptimizeExecutor.run(spark, log, txn, everything(), System.currentTimeMillis());
    assertTrue(r.commit().committed());
    assertEquals(read + 2, r.commit().version());
    assertEquals(1, r.commit().attempts(), "the append this server made is judged before the first attempt");
    assertTrue(before > 2);
    assertEquals(before, r.commit().removeFiles().size());
    assertEquals(2, r.commit().addFiles().size());
    assertTrue(r.commit().addFiles().stream().noneMatch(AddFile::dataChange));
    Set<Long> expected = new java.util.HashSet<>();
    for (long i = 0; i < 40; i++) {
      expected.add(i);
    }
    for (long i = 100; i < 110; i++) {
      expected.add(i);
    }
    assertEquals(expected, ids(path));
    int appended = log.snapshotAsOfVersion(read + 1).allFiles().size() - before;
    assertEquals(2 + appended, log.snapshot().allFiles().size(), "2 compacted files + the appended ones");
  }

  @Test
  void aConcurrentDeleteOfAReadFileFailsIt() throws Exception {
    String path = table("delete");
    DeltaLog log = DeltaLog.forTable(spark, path);
    OptimisticTransaction txn = new OptimisticTransaction(spark, log);
    long before = txn.snapshot().version();
    DeleteCommand.run(spark, path, functions.expr("id = 3"), Map.of(), null, null);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> OptimizeExecutor.run(spark, log, txn, everything(), System.currentTimeMillis()));
    assertEquals("DELTA_CONCURRENT_DELETE_READ", e.getErrorClass());
    assertEquals(before + 1, log.snapshot().version(), "nothing committed after the delete");
  }
}
