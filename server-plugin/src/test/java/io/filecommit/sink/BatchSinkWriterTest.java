package io.filecommit.sink;

import io.filecommit.testing.SparkTestSession;
import io.filecommit.errors.FileCommitException;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Row;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.streaming.sinks.SinkFileStatus;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BatchSinkWriter} end to end on a local Spark ({@code local[2,2]}): what it commits is
 * checked with Spark's own Parquet reader, which honours {@code _spark_metadata}.
 */
class BatchSinkWriterTest {
  /** Attempts of the failing task; static because local-mode tasks run in this JVM. */
  static final AtomicInteger FAILED_ATTEMPTS = new AtomicInteger();

  private static SparkSession spark;

  @TempDir
  Path tmp;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  private Dataset<Row> range(long from, long to) {
    return (Dataset<Row>) spark.range(from, to, 1, 2).toDF().withColumn("k", functions.expr("id % 2"));
  }

  private static List<Long> readIds(SparkSession s, String root) {
    return s.read().parquet(root).select("id").collectAsList().stream()
        .map(r -> r.getLong(0)).sorted().collect(Collectors.toList());
  }

  private static List<Long> seq(long from, long to) {
    return java.util.stream.LongStream.range(from, to).boxed().collect(Collectors.toList());
  }

  /** Data files on disk (not hidden, outside _spark_metadata), as canonical paths. */
  private static Set<String> dataFilesOnDisk(Path root) throws IOException {
    if (!Files.exists(root)) {
      return Set.of();
    }
    try (Stream<Path> s = Files.walk(root)) {
      return s.filter(Files::isRegularFile)
          .filter(p -> !p.toString().contains("_spark_metadata"))
          .filter(p -> !p.getFileName().toString().startsWith(".") && !p.getFileName().toString().startsWith("_"))
          .map(p -> p.toFile().getAbsolutePath())
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  private static Set<String> paths(List<SinkFileStatus> files) {
    return files.stream().map(f -> new File(URI.create(f.path())).getAbsolutePath())
        .collect(Collectors.toCollection(TreeSet::new));
  }

  @Test
  void commitsBatchesSkipsCommittedOnesAndSparksReaderSeesExactlyThem() throws Exception {
    Path root = tmp.resolve("sink");
    BatchSinkWriter.Result r0 = BatchSinkWriter.write(spark, range(0, 10), root.toString(), 0, List.of("k"), Map.of());
    assertTrue(r0.committed());
    assertEquals(0, r0.latestBatchId());
    assertEquals("file:" + root, r0.path());
    assertTrue(r0.files().stream().allMatch(f -> f.path().contains("/k=0/") || f.path().contains("/k=1/")));
    BatchSinkWriter.Result r1 = BatchSinkWriter.write(spark, range(10, 20), root.toString(), 1, List.of("K"), Map.of());
    assertTrue(r1.committed());
    assertEquals(seq(0, 20), readIds(spark, root.toString()));

    BatchSinkWriter.Result again = BatchSinkWriter.write(spark, range(100, 105), root.toString(), 1, List.of(), Map.of());
    assertFalse(again.committed());
    assertEquals(1, again.latestBatchId());
    assertEquals(paths(r1.files()), paths(again.files()));
    BatchSinkWriter.Result older = BatchSinkWriter.write(spark, range(100, 105), root.toString(), 0, List.of(), Map.of());
    assertFalse(older.committed());
    assertEquals(paths(r0.files()), paths(older.files()));
    assertEquals(seq(0, 20), readIds(spark, root.toString()));
    Set<String> all = new TreeSet<>(paths(r0.files()));
    all.addAll(paths(r1.files()));
    assertEquals(all, dataFilesOnDisk(root), "a skipped batch writes nothing");
  }

  @Test
  void badInputIsRefusedBeforeAnythingIsWritten() throws Exception {
    Path root = tmp.resolve("bad");
    String p = root.toString();
    assertTrue(assertThrows(FileCommitException.class,
        () -> BatchSinkWriter.write(spark, range(0, 3), p, -1, List.of(), Map.of())).getMessage().contains("-1"));
    assertTrue(assertThrows(FileCommitException.class,
        () -> BatchSinkWriter.write(spark, range(0, 3), " ", 0, List.of(), Map.of())).getMessage().contains("' '"));
    assertTrue(assertThrows(FileCommitException.class,
        () -> BatchSinkWriter.write(spark, range(0, 3), p, 0, List.of("nope"), Map.of())).getMessage().contains("'nope'"));
    assertTrue(assertThrows(FileCommitException.class,
        () -> BatchSinkWriter.write(spark, range(0, 3), p, 0, List.of("id", "k"), Map.of())).getMessage()
        .contains("every column"));
    assertTrue(assertThrows(FileCommitException.class,
        () -> BatchSinkWriter.write(spark, range(0, 3), p, 0, List.of(), Map.of("retention", "soon"))).getMessage()
        .contains("'soon'"));
    FileCommitException gap = assertThrows(FileCommitException.class,
        () -> BatchSinkWriter.write(spark, range(0, 3), p, 2, List.of(), Map.of()));
    assertTrue(gap.getMessage().contains("Batch id 2") && gap.getMessage().contains("first batch id is 0"), gap.getMessage());
    assertFalse(Files.exists(root), "nothing may be written for bad input");
    BatchSinkWriter.write(spark, range(0, 3), p, 0, List.of(), Map.of());
    FileCommitException gap2 = assertThrows(FileCommitException.class,
        () -> BatchSinkWriter.write(spark, range(0, 3), p, 5, List.of(), Map.of()));
    assertTrue(gap2.getMessage().contains("latest committed batch is 0, so the next batch id is 1"), gap2.getMessage());
    Files.write(tmp.resolve("afile"), new byte[1]);
    assertTrue(assertThrows(FileCommitException.class, () -> BatchSinkWriter.write(
        spark, range(0, 3), tmp.resolve("afile").toString(), 0, List.of(), Map.of())).getMessage().contains("is a file"));
  }

  @Test
  void aTaskThatFailsOnceIsRetriedAndOnlyTheRetrysFilesAreCommitted() throws Exception {
    FAILED_ATTEMPTS.set(0);
    Path root = tmp.resolve("retry");
    MapPartitionsFunction<Long, Long> failFirstAttemptOfPartition1 = rows -> {
      TaskContext tc = TaskContext.get();
      if (tc.partitionId() == 1 && tc.attemptNumber() == 0) {
        FAILED_ATTEMPTS.incrementAndGet();
        throw new IllegalStateException("injected failure of task attempt 0");
      }
      return rows;
    };
    Dataset<Row> data = (Dataset<Row>) spark.range(0, 100, 1, 2)
        .mapPartitions(failFirstAttemptOfPartition1, Encoders.LONG()).toDF("id");
    BatchSinkWriter.Result r = BatchSinkWriter.write(spark, data, root.toString(), 0, List.of(), Map.of());
    assertTrue(FAILED_ATTEMPTS.get() >= 1, "the injected failure must have happened");
    assertTrue(r.committed());
    assertEquals(seq(0, 100), readIds(spark, root.toString()));
    assertEquals(paths(r.files()), dataFilesOnDisk(root), "the failed attempt's file was deleted by abortTask");
  }

  @Test
  void compactionBatchFilesAreThoseOfThatBatchOnly() throws Exception {
    SparkSession s = spark.newSession();
    s.conf().set("spark.sql.streaming.fileSink.log.compactInterval", "3");
    Path root = tmp.resolve("compact");
    BatchSinkWriter.Result[] results = new BatchSinkWriter.Result[4];
    for (int b = 0; b < 4; b++) {
      Dataset<Row> data = (Dataset<Row>) s.range(b * 10L, b * 10L + 10, 1, 2).toDF();
      results[b] = BatchSinkWriter.write(s, data, root.toString(), b, List.of(), Map.of());
    }
    assertTrue(Files.exists(root.resolve("_spark_metadata").resolve("2.compact")));
    assertFalse(Files.exists(root.resolve("_spark_metadata").resolve("2")));
    assertEquals(seq(0, 40), readIds(s, root.toString()));
    for (int b = 0; b < 4; b++) {
      BatchSinkWriter.Result skip = BatchSinkWriter.write(s, (Dataset<Row>) s.range(1).toDF(), root.toString(), b,
          List.of(), Map.of());
      assertFalse(skip.committed());
      assertEquals(paths(results[b].files()), paths(skip.files()), "batch " + b);
    }
  }

  @Test
  void retentionDropsOldEntriesAtCompaction() throws Exception {
    SparkSession s = spark.newSession();
    s.conf().set("spark.sql.streaming.fileSink.log.compactInterval", "2");
    Path root = tmp.resolve("retention");
    // Batch 0: a real Parquet file whose log entry says it is one day old.
    Path staging = tmp.resolve("staging");
    ((Dataset<Row>) s.range(0, 5, 1, 1).toDF()).write().parquet(staging.toString());
    Path old;
    try (Stream<Path> files = Files.list(staging)) {
      old = files.filter(p -> p.getFileName().toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
    Files.createDirectories(root);
    Path moved = Files.move(old, root.resolve("part-00000-old.parquet"));
    long dayAgo = System.currentTimeMillis() - 86_400_000L;
    org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog log =
        new org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog(
            1, s, root.resolve("_spark_metadata").toUri().toString(), scala.Option.empty());
    assertTrue(log.add(0L, new SinkFileStatus[] {
        new SinkFileStatus(moved.toUri().toString(), Files.size(moved), false, dayAgo, 1, 1 << 25, "add")}));
    assertEquals(seq(0, 5), readIds(s, root.toString()), "batch 0 is visible before the compaction");

    BatchSinkWriter.Result r = BatchSinkWriter.write(s, (Dataset<Row>) s.range(10, 13, 1, 1).toDF(), root.toString(), 1,
        List.of(), Map.of("retention", "1h"));

    assertTrue(r.committed());
    assertTrue(Files.exists(root.resolve("_spark_metadata").resolve("1.compact")));
    assertEquals(seq(10, 13), readIds(s, root.toString()), "the day-old entry is dropped, the new one kept");
  }
}
