package io.filecommit.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.SetTransaction;
import io.filecommit.delta.storage.LocalPermissions;
import io.filecommit.testing.SparkTestSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-commit shortcuts of the write path: the snapshot cache moving forward over other
 * writers' commits (as Delta's incremental {@code DeltaLog.update}), the per-session log cache of
 * {@code DeltaLog.forTable}, and the in-process permission setting of {@link LocalPermissions}.
 */
class SnapshotFreshnessTest {
  private static final Operation APPEND = new Operation.Write("Append", List.of(), null, 0, 0, 0, 0, 0);
  private static final StructType SCHEMA = new StructType().add("id", DataTypes.LongType);
  private static SparkSession spark;

  @TempDir
  Path tmp;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  private DeltaLog log() {
    return new DeltaLog(new org.apache.hadoop.fs.Path(tmp.toUri()), new Configuration());
  }

  private static AddFile add(String path) {
    return new AddFile(path, Map.of(), 1, 1, true, null, Map.of());
  }

  private long createTable() {
    OptimisticTransaction txn = new OptimisticTransaction(spark, log());
    txn.updateMetadata(new Metadata(UUID.randomUUID().toString(), null, null, SCHEMA.json(), List.of(), Map.of(), 0L));
    return txn.commit(List.of(add("first.parquet")), APPEND);
  }

  /** A commit published by another process: written to the log without this server's cache knowing. */
  private void foreignCommit(long version, Action... actions) throws Exception {
    List<Action> lines = new java.util.ArrayList<>();
    lines.add(new CommitInfo(null, System.currentTimeMillis(), "WRITE", new java.util.LinkedHashMap<>(), version - 1,
        "WriteSerializable", true, null, "other", UUID.randomUUID().toString()));
    lines.addAll(List.of(actions));
    log().writeCommit(version, lines);
  }

  @Test
  void theCacheMovesForwardOverOtherWritersCommits() throws Exception {
    assertEquals(0, createTable());
    assertEquals(0, log().snapshot().version());
    assertEquals(0, log().latestKnownVersion(-1));
    foreignCommit(1, new SetTransaction("other-app", 7, 1L), add("one.parquet"));
    foreignCommit(2, add("two.parquet"));
    Snapshot s = log().snapshot();
    assertEquals(2, s.version());
    assertEquals(Optional.of(7L), s.latestTransactionVersion("other-app"));
    assertEquals(Set.of("first.parquet", "one.parquet", "two.parquet"), s.activeFiles().keySet());
    assertEquals(2, log().latestKnownVersion(-1));
    OptimisticTransaction txn = new OptimisticTransaction(spark, log());
    assertEquals(3, txn.commit(List.of(add("three.parquet")), APPEND));
    assertEquals(1, txn.attempts());
  }

  @Test
  void aCommitLandingAheadOfTheCacheKeepsItForTheNextRollForward() throws Exception {
    assertEquals(0, createTable());
    OptimisticTransaction txn = new OptimisticTransaction(spark, log());
    foreignCommit(1, new SetTransaction("other-app", 7, 1L), add("one.parquet"));
    txn.setTransaction(new TransactionId("mine", 3));
    assertEquals(2, txn.commit(List.of(add("two.parquet")), APPEND));
    assertEquals(0, log().latestKnownVersion(-1), "the entry behind the commit is kept, not dropped");
    Snapshot s = log().snapshot();
    assertEquals(2, s.version());
    assertEquals(Optional.of(7L), s.latestTransactionVersion("other-app"));
    assertEquals(Optional.of(3L), s.latestTransactionVersion("mine"));
    assertEquals(Set.of("first.parquet", "one.parquet", "two.parquet"), s.activeFiles().keySet());
    assertEquals(2, log().latestKnownVersion(-1));
  }

  @Test
  void aForeignMetadataChangeIsReadByKernelNotRolledOver() throws Exception {
    assertEquals(0, createTable());
    Metadata md = log().snapshot().metadata().withConfiguration(Map.of("delta.appendOnly", "true"));
    foreignCommit(1, md);
    Snapshot s = log().snapshot();
    assertEquals(1, s.version());
    assertEquals("true", s.metadata().configuration().get("delta.appendOnly"));
  }

  @Test
  void forTableKeepsOneLogPerPathAndSessionConf() {
    String path = tmp.resolve("t").toString();
    DeltaLog first = DeltaLog.forTable(spark, path);
    assertSame(first, DeltaLog.forTable(spark, path));
    assertNotSame(first, DeltaLog.forTable(spark, tmp.resolve("other").toString()));
    spark.conf().set("parquet.block.size", "1048576");
    try {
      DeltaLog changed = DeltaLog.forTable(spark, path);
      assertNotSame(first, changed, "a session whose conf differs gets its own log");
      assertEquals("1048576", changed.conf().get("parquet.block.size"), "its Hadoop conf has the session's entry");
    } finally {
      spark.conf().unset("parquet.block.size");
    }
    assertSame(first, DeltaLog.forTable(spark, path));
  }

  @Test
  void forTableRefusesASessionThatPicksTheFileSystemWithoutLoadingItsClass() {
    String path = tmp.resolve("t").toString();
    spark.conf().set("fs.file.impl", "does.not.Exist");
    spark.conf().set("fs.file.impl.disable.cache", "true");
    try {
      io.filecommit.errors.FileCommitException e = org.junit.jupiter.api.Assertions.assertThrows(
          io.filecommit.errors.FileCommitException.class, () -> DeltaLog.forTable(spark, path));
      assertEquals("CANNOT_MODIFY_STATIC_CONFIG", e.getCondition());
      assertEquals("fs.file.impl", e.getMessageParameters().get("key"), "the first refused key, sorted");
      assertEquals(null, e.getCause(), "refused by name, not by a failed class load");
    } finally {
      spark.conf().unset("fs.file.impl");
      spark.conf().unset("fs.file.impl.disable.cache");
    }
    assertEquals(path, new java.io.File(DeltaLog.forTable(spark, path).tablePath().toUri()).getPath());
  }

  @Test
  void localPermissionsSetTheBitsHadoopWouldWithoutAProcess() throws Exception {
    Configuration hadoop = new Configuration();
    org.apache.hadoop.fs.Path dir = new org.apache.hadoop.fs.Path(tmp.toUri());
    FileSystem shared = dir.getFileSystem(hadoop);
    Configuration own = new Configuration(hadoop);
    LocalPermissions.use(own, shared);
    FileSystem fast = dir.getFileSystem(own);
    assertEquals(LocalPermissions.class, fast.getClass());
    assertNotSame(fast, dir.getFileSystem(own), "kept out of Hadoop's shared cache");
    try (FSDataOutputStream out = shared.create(new org.apache.hadoop.fs.Path(dir, "hadoop.bin"))) {
      out.write(1);
    }
    try (FSDataOutputStream out = fast.create(new org.apache.hadoop.fs.Path(dir, "fast.bin"))) {
      out.write(1);
    }
    for (String name : List.of("", ".crc")) {
      String h = PosixFilePermissions.toString(Files.getPosixFilePermissions(
          tmp.resolve(name.isEmpty() ? "hadoop.bin" : ".hadoop.bin.crc")));
      String f = PosixFilePermissions.toString(Files.getPosixFilePermissions(
          tmp.resolve(name.isEmpty() ? "fast.bin" : ".fast.bin.crc")));
      assertEquals(h, f, "permissions of the file" + name);
    }
    Configuration configured = new Configuration(hadoop);
    configured.set("fs.file.impl", org.apache.hadoop.fs.RawLocalFileSystem.class.getName());
    LocalPermissions.use(configured, shared);
    assertEquals(org.apache.hadoop.fs.RawLocalFileSystem.class.getName(), configured.get("fs.file.impl"),
        "an operator's file system class is kept");
  }
}
