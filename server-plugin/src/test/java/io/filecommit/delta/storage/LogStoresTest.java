package io.filecommit.delta.storage;

import io.filecommit.errors.FileCommitException;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.delta.storage.LogStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** LogStore choice per scheme (Delta's defaults and keys) and the local put-if-absent. */
class LogStoresTest {
  private static String pick(String scheme, Map<String, String> conf) {
    return LogStores.className(scheme, conf::get);
  }

  @Test
  void defaultsByScheme() {
    for (String s : List.of("s3", "s3a", "S3A")) {
      assertEquals(S3ConditionalLogStore.class.getName(), pick(s, Map.of()), s);
    }
    assertEquals("io.delta.storage.S3SingleDriverLogStore", pick("s3n", Map.of()));
    for (String s : List.of("abfs", "abfss", "adl", "wasb", "wasbs")) {
      assertEquals("io.delta.storage.AzureLogStore", pick(s, Map.of()), s);
    }
    assertEquals("io.delta.storage.GCSLogStore", pick("gs", Map.of()));
    assertEquals("io.delta.storage.HDFSLogStore", pick("hdfs", Map.of()));
    assertEquals("io.delta.storage.HDFSLogStore", pick("viewfs", Map.of()));
    assertEquals(HardLinkLocalLogStore.class.getName(), pick("file", Map.of()));
    assertEquals(HardLinkLocalLogStore.class.getName(), pick(null, Map.of()));
  }

  @Test
  void perSchemeKeyWinsOverClassKeyAndSparkNamesMap() {
    Map<String, String> conf = Map.of(
        "spark.delta.logStore.s3a.impl", "io.delta.storage.S3DynamoDBLogStore",
        "spark.delta.logStore.class", "org.apache.spark.sql.delta.storage.HDFSLogStore");
    assertEquals("io.delta.storage.S3DynamoDBLogStore", pick("s3a", conf));
    assertEquals("io.delta.storage.HDFSLogStore", pick("gs", conf));
    assertEquals("io.delta.storage.LocalLogStore",
        pick("file", Map.of("spark.delta.logStore.file.impl", "org.apache.spark.sql.delta.storage.LocalLogStore")));
  }

  @Test
  void s3ConditionalWritesAsTheOperatorSays() {
    String key = io.filecommit.conf.FileCommitConf.S3_CONDITIONAL_WRITES.key();
    assertEquals(S3ConditionalLogStore.class.getName(), pick("s3a", Map.of(key, "auto")));
    assertEquals(S3ConditionalLogStore.Required.class.getName(), pick("s3a", Map.of(key, "TRUE")));
    assertEquals("io.delta.storage.S3SingleDriverLogStore", pick("s3", Map.of(key, "false")));
    assertEquals("io.delta.storage.S3DynamoDBLogStore",
        pick("s3a", Map.of(key, "true", "spark.delta.logStore.s3a.impl", "io.delta.storage.S3DynamoDBLogStore")));
    FileCommitException e = assertThrows(FileCommitException.class, () -> pick("s3a", Map.of(key, "maybe")));
    assertEquals("FILECOMMIT_LOGSTORE_UNAVAILABLE", e.getCondition());
    assertInstanceOf(S3ConditionalLogStore.Required.class,
        LogStores.instance(S3ConditionalLogStore.Required.class.getName(), new Configuration()));
  }

  @Test
  void instancesAreSharedAndRealDeltaStorageClasses() {
    Configuration conf = new Configuration();
    LogStore a = LogStores.instance("io.delta.storage.S3SingleDriverLogStore", conf);
    assertSame(a, LogStores.instance("io.delta.storage.S3SingleDriverLogStore", conf));
    assertInstanceOf(io.delta.storage.S3SingleDriverLogStore.class, a);
    assertInstanceOf(io.delta.storage.AzureLogStore.class, LogStores.instance("io.delta.storage.AzureLogStore", conf));
    assertInstanceOf(io.delta.storage.HDFSLogStore.class, LogStores.instance("io.delta.storage.HDFSLogStore", conf));
  }

  @Test
  void absentClassIsRefusedByName() {
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> LogStores.instance("io.delta.storage.S3DynamoDBLogStore", new Configuration()));
    assertTrue(e.getMessage().contains("io.delta.storage.S3DynamoDBLogStore"), e.getMessage());
    assertTrue(e.getMessage().contains("delta-storage-s3-dynamodb"), e.getMessage());
    assertThrows(FileCommitException.class, () -> LogStores.instance("java.lang.String", new Configuration()));
  }

  @Test
  void localPutIfAbsentHasExactlyOneWinner(@TempDir java.nio.file.Path dir) throws Exception {
    Configuration conf = new Configuration();
    LogStore store = new HardLinkLocalLogStore(conf);
    Path target = new Path(dir.toUri().toString(), "00000000000000000001.json");
    int writers = 8;
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    List<Future<Boolean>> results = new ArrayList<>();
    for (int i = 0; i < writers; i++) {
      String line = "{\"writer\":" + i + "}";
      // Separate instances: the atomicity must not rest on a JVM lock.
      LogStore own = new HardLinkLocalLogStore(conf);
      results.add(pool.submit(() -> {
        try {
          own.write(target, List.of(line).iterator(), false, conf);
          return true;
        } catch (FileAlreadyExistsException e) {
          return false;
        }
      }));
    }
    int winners = 0;
    for (Future<Boolean> f : results) {
      winners += f.get() ? 1 : 0;
    }
    pool.shutdown();
    assertEquals(1, winners);
    String content = Files.readString(dir.resolve("00000000000000000001.json"), StandardCharsets.UTF_8);
    assertTrue(content.matches("\\{\"writer\":\\d\\}\n"), content);
    try (io.delta.storage.CloseableIterator<String> lines = store.read(target, conf)) {
      assertEquals(content.trim(), lines.next());
      assertFalse(lines.hasNext());
    }
    try (var files = Files.list(dir)) {
      assertEquals(0, files.filter(p -> p.getFileName().toString().endsWith(".tmp")).count(),
          "no temporary file is left behind");
    }
    store.write(target, List.of("x").iterator(), true, conf);
    assertEquals("x\n", Files.readString(dir.resolve("00000000000000000001.json")));
  }

  /** A file system that refuses hard links the way {@code how} says; counts the links tried. */
  static final class RefusingStore extends HardLinkLocalLogStore {
    private final java.util.function.BiFunction<java.nio.file.Path, java.nio.file.Path, Throwable> how;
    int links;

    RefusingStore(java.util.function.BiFunction<java.nio.file.Path, java.nio.file.Path, Throwable> how) {
      super(new Configuration());
      this.how = how;
    }

    @Override
    protected void link(java.nio.file.Path target, java.nio.file.Path existing) throws java.io.IOException {
      links++;
      Throwable t = how.apply(target, existing);
      if (t instanceof java.io.IOException io) {
        throw io;
      }
      if (t instanceof RuntimeException r) {
        throw r;
      }
      if (t instanceof Error e) {
        throw e;
      }
      super.link(target, existing);
    }
  }

  private static List<String> logNames(java.nio.file.Path log) throws java.io.IOException {
    try (var names = Files.list(log)) {
      return names.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static void put(LogStore store, java.nio.file.Path file, String line) throws java.io.IOException {
    store.write(new Path(file.toUri()), List.of(line).iterator(), false, new Configuration());
  }

  @Test
  void aRefusedLinkFallsBackToAnExclusiveCreateOnce(@TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path log = Files.createDirectories(dir.resolve("_delta_log"));
    java.nio.file.Path v0 = log.resolve("00000000000000000000.json");
    for (Throwable refusal : List.<Throwable>of(
        new java.nio.file.FileSystemException("x", "y", "Operation not permitted"), // EPERM
        new java.nio.file.FileSystemException("x", "y", "Invalid cross-device link"), // EXDEV
        new java.nio.file.AccessDeniedException("x"),
        new UnsupportedOperationException("no hard links"))) {
      Files.deleteIfExists(v0);
      RefusingStore store = new RefusingStore((t, e) -> refusal);
      put(store, v0, "{\"v\":0}");
      assertEquals("{\"v\":0}\n", Files.readString(v0), refusal.toString());
      assertThrows(FileAlreadyExistsException.class, () -> put(store, v0, "{\"other\":1}"), refusal.toString());
      assertEquals("{\"v\":0}\n", Files.readString(v0), "never overwritten");
      assertEquals(List.of("00000000000000000000.json"), logNames(log), "no temporary file left");
    }
  }

  @Test
  void aLinkThatLandedButReportedARefusalIsNotWrittenTwice(@TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path log = Files.createDirectories(dir.resolve("_delta_log"));
    java.nio.file.Path v0 = log.resolve("00000000000000000000.json");
    RefusingStore store = new RefusingStore((target, existing) -> {
      try {
        Files.createLink(target, existing);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      return new java.nio.file.FileSystemException(target.toString(), null, "Input/output error");
    });
    put(store, v0, "{\"v\":0}"); // ours: decided by the bytes now under the name
    assertEquals("{\"v\":0}\n", Files.readString(v0));
    assertEquals(List.of("00000000000000000000.json"), logNames(log));
  }

  @Test
  void aRefusedLinkWhileAnotherWriterTookTheVersionIsALostRace(@TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path log = Files.createDirectories(dir.resolve("_delta_log"));
    java.nio.file.Path v0 = log.resolve("00000000000000000000.json");
    RefusingStore store = new RefusingStore((target, existing) -> {
      try {
        Files.writeString(target, "{\"theirs\":1}\n"); // another process, between our steps
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      return new java.nio.file.FileSystemException(target.toString(), null, "Operation not permitted");
    });
    assertThrows(FileAlreadyExistsException.class, () -> put(store, v0, "{\"ours\":1}"));
    assertEquals("{\"theirs\":1}\n", Files.readString(v0), "theirs stays");
    assertEquals(List.of("00000000000000000000.json"), logNames(log));
  }

  @Test
  void anErrorWhilePublishingLeavesNoTemporaryFile(@TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path log = Files.createDirectories(dir.resolve("_delta_log"));
    java.nio.file.Path v0 = log.resolve("00000000000000000000.json");
    RefusingStore store = new RefusingStore((t, e) -> new OutOfMemoryError("injected"));
    assertThrows(OutOfMemoryError.class, () -> put(store, v0, "{}"));
    assertEquals(List.of(), logNames(log), "neither the commit nor its temporary file");
  }
}
