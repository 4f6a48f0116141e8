package io.filecommit.txn.staging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.FileCommitException;
import io.filecommit.testing.SparkTestSession;
import io.filecommit.txn.CommitOutcomeTest;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Staged commits under faults and races: a publish's outcome is read from the log, a publish
 * commits once however often and from however many threads it is called, and abort or expiry
 * delete a staged commit's files only when no version holds it and no publish of it can land.
 */
class StagingTest {
  private static SparkSession spark;

  @TempDir
  Path tmp;

  private static final StructType SCHEMA = new StructType().add("id", DataTypes.LongType).add("part", DataTypes.StringType);
  private static final Operation APPEND = new Operation.Write("Append", List.of(), null, 1, 1, 1, 0, 0);

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  @AfterEach
  void disarm() {
    CommitOutcomeTest.FAIL_BEFORE.set(0);
    CommitOutcomeTest.LOSE_ANSWER.set(0);
    CommitOutcomeTest.FAIL_READ.set(0);
  }

  private DeltaLog log() {
    return new DeltaLog(new org.apache.hadoop.fs.Path(tmp.toUri()), new Configuration(),
        key -> key.equals("spark.delta.logStore.file.impl") ? CommitOutcomeTest.FaultyLogStore.class.getName() : null);
  }

  private void createTable() {
    OptimisticTransaction t = new OptimisticTransaction(spark, log());
    t.updateMetadata(new Metadata(UUID.randomUUID().toString(), null, null, SCHEMA.json(), List.of("part"), Map.of(), 0L));
    t.commit(List.of(), APPEND);
  }

  /** Stages an append of a new, real file; returns the staged commit. */
  private StagedCommit stageAppend(String name) throws IOException {
    Files.writeString(tmp.resolve(name), "data");
    OptimisticTransaction t = new OptimisticTransaction(spark, log());
    t.stageInstead(new StageRequest(3_600_000));
    t.commit(List.of(new AddFile(name, Map.of("part", "a"), 4, 1, true, null, Map.of())), APPEND);
    assertTrue(t.committed(), "a staged transaction hands its files to the staged commit");
    return (StagedCommit) t.staged();
  }

  private StagedPublish.Outcome publish(StagedCommit... staged) {
    List<StagedCommit> loaded = new ArrayList<>();
    for (StagedCommit s : staged) {
      loaded.add(StagingStore.load(log(), s.id()));
    }
    return StagedPublish.publish(new OptimisticTransaction(spark, log()), loaded, System.currentTimeMillis());
  }

  private long versionsHolding(String path) {
    DeltaLog log = log();
    return log.listVersions().stream().filter(v -> log.readCommit(v).stream()
        .anyMatch(a -> a instanceof AddFile f && f.path().equals(path))).count();
  }

  @Test
  void theStoredFormRoundTrips() throws IOException {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    StagedCommit back = StagingStore.load(log(), s.id());
    assertEquals(s, back);
    assertEquals(List.of("a.parquet"), back.writtenFiles());
    assertEquals(0, back.readVersion());
    assertEquals(List.of(0L), log().listVersions(), "staging publishes nothing");
  }

  @Test
  void aLostAnswerPublishesOnceAndAPublishAgainCommitsNothing() throws IOException {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    CommitOutcomeTest.LOSE_ANSWER.set(1);
    StagedPublish.Outcome first = publish(s);
    assertTrue(first.committed());
    StagedPublish.Outcome again = publish(s);
    assertFalse(again.committed());
    assertEquals(first.version(), again.version());
    assertEquals(1, versionsHolding("a.parquet"));
    FileCommitException e = assertThrows(FileCommitException.class, () -> StagingStore.abort(log(), s));
    assertEquals("FILECOMMIT_STAGED_COMMIT_PUBLISHED", e.getCondition());
    assertTrue(Files.exists(tmp.resolve("a.parquet")));
  }

  @Test
  void racingPublishesOfTheSameStagedCommitCommitOnce() throws Exception {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<StagedPublish.Outcome>> all = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        all.add(pool.submit(() -> publish(s)));
      }
      Set<Long> versions = new java.util.HashSet<>();
      int committed = 0;
      for (Future<StagedPublish.Outcome> f : all) {
        StagedPublish.Outcome o = f.get();
        versions.add(o.version());
        committed += o.committed() ? 1 : 0;
      }
      assertEquals(1, committed);
      assertEquals(1, versions.size(), "every publish answers the version that holds it");
    } finally {
      pool.shutdownNow();
    }
    assertEquals(1, versionsHolding("a.parquet"));
  }

  @Test
  void aGroupOverlappingAPublishedStagedCommitIsRefused() throws IOException {
    createTable();
    StagedCommit a = stageAppend("a.parquet");
    StagedCommit b = stageAppend("b.parquet");
    publish(a);
    // Only the log knows the version: the claim of a is a publish's, the log names a.
    FileCommitException e = assertThrows(FileCommitException.class, () -> publish(a, b));
    assertEquals("FILECOMMIT_STAGED_COMMIT_PUBLISHED", e.getCondition());
    assertEquals(0, versionsHolding("b.parquet"));
    assertEquals(1, versionsHolding("a.parquet"));
  }

  @Test
  void aPublishThatDidNotLandCanBeAbortedAndItsFilesGo() throws IOException {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    CommitOutcomeTest.FAIL_BEFORE.set(100);
    FileCommitException e = assertThrows(FileCommitException.class, () -> publish(s));
    assertEquals("FILECOMMIT_LOG_WRITE_FAILED", e.getCondition());
    CommitOutcomeTest.FAIL_BEFORE.set(0);
    assertEquals(1, StagingStore.abort(log(), s));
    assertFalse(Files.exists(tmp.resolve("a.parquet")));
    FileCommitException late = assertThrows(FileCommitException.class, () -> StagingStore.load(log(), s.id()));
    assertEquals("FILECOMMIT_STAGED_COMMIT_ABORTED", late.getCondition());
  }

  @Test
  void anUnknownPublishOutcomeKeepsTheFilesAgainstAbort() throws IOException {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    CommitOutcomeTest.LOSE_ANSWER.set(1);
    CommitOutcomeTest.FAIL_READ.set(100);
    FileCommitException e = assertThrows(FileCommitException.class, () -> publish(s));
    assertEquals("FILECOMMIT_COMMIT_STATE_UNKNOWN", e.getCondition());
    CommitOutcomeTest.FAIL_READ.set(0);
    // The publish's claim stays; the abort asks the log, which holds the version.
    FileCommitException refused = assertThrows(FileCommitException.class, () -> StagingStore.abort(log(), s));
    assertEquals("FILECOMMIT_STAGED_COMMIT_PUBLISHED", refused.getCondition());
    assertTrue(Files.exists(tmp.resolve("a.parquet")), "the commit landed: its file must stay");
    assertEquals(1, versionsHolding("a.parquet"));
  }

  @Test
  void aPublishMeetingAnAbortBacksOff() throws IOException {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    // An abort that holds the claim: a publish that starts now must not land.
    Files.createDirectories(tmp.resolve("_delta_log/_staged"));
    Files.writeString(tmp.resolve("_delta_log/_staged/" + s.id() + ".claim"), "aborted\nx\n");
    List<StagedCommit> loaded = List.of(s);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> StagedPublish.publish(new OptimisticTransaction(spark, log()), loaded, System.currentTimeMillis()));
    assertEquals("FILECOMMIT_STAGED_COMMIT_ABORTED", e.getCondition());
    assertEquals(0, versionsHolding("a.parquet"));
    // And an abort that finds a publish running backs off, keeping the files.
    Files.delete(tmp.resolve("_delta_log/_staged/" + s.id() + ".claim"));
    Files.writeString(tmp.resolve("_delta_log/_staged/" + s.id() + ".publishing.x"), "");
    FileCommitException busy = assertThrows(FileCommitException.class, () -> StagingStore.abort(log(), s));
    assertEquals("FILECOMMIT_STAGED_COMMIT_BUSY", busy.getCondition());
    assertTrue(Files.exists(tmp.resolve("a.parquet")));
  }

  @Test
  void expiredStagedCommitsAreSweptAndCannotBePublished() throws IOException {
    createTable();
    Files.writeString(tmp.resolve("a.parquet"), "data");
    OptimisticTransaction t = new OptimisticTransaction(spark, log());
    t.stageInstead(new StageRequest(1));
    t.commit(List.of(new AddFile("a.parquet", Map.of("part", "a"), 4, 1, true, null, Map.of())), APPEND);
    StagedCommit s = (StagedCommit) t.staged();
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> StagedPublish.publish(new OptimisticTransaction(spark, log()), List.of(s), System.currentTimeMillis() + 5));
    assertEquals("FILECOMMIT_STAGED_COMMIT_EXPIRED", e.getCondition());
    assertEquals(List.of(s.id()), StagingStore.sweep(log(), System.currentTimeMillis() + 5));
    assertFalse(Files.exists(tmp.resolve("a.parquet")));
    FileCommitException gone = assertThrows(FileCommitException.class, () -> StagingStore.load(log(), s.id()));
    assertEquals("FILECOMMIT_STAGED_COMMIT_EXPIRED", gone.getCondition());
  }

  @Test
  void theBackgroundSweeperListsATableOnlyWhenOneOfItsRecordsIsDue() throws IOException {
    createTable();
    Files.writeString(tmp.resolve("a.parquet"), "data");
    Files.writeString(tmp.resolve("b.parquet"), "data");
    OptimisticTransaction t = new OptimisticTransaction(spark, log());
    t.stageInstead(new StageRequest(3_600_000));
    t.commit(List.of(new AddFile("a.parquet", Map.of("part", "a"), 4, 1, true, null, Map.of())), APPEND);
    StagedCommit a = (StagedCommit) t.staged();
    // Another server stages b.parquet with a commit that has already expired: this server has not
    // listed it, and its own record is due in an hour, so the background round leaves the table alone.
    StagedCommit b = new StagedCommit("other-" + a.id(), a.tablePath(), a.readVersion(), a.createdTime(),
        System.currentTimeMillis() - 1, a.operation(), a.operationParameters(), a.operationMetrics(),
        a.blindAppend(), a.isolationLevel(), a.readWholeTable(), a.readPredicates(), a.readFiles(), a.txns(),
        List.of("b.parquet"), a.protocol(), a.metadata(),
        List.of(new AddFile("b.parquet", Map.of("part", "a"), 4, 1, true, null, Map.of())), "bob");
    Files.writeString(tmp.resolve("_delta_log/_staged/" + b.id() + ".json"), String.join("\n", b.toLines()) + "\n");
    StagingSweeper.sweepWatched();
    assertTrue(Files.exists(tmp.resolve("b.parquet")));
    assertTrue(Files.exists(tmp.resolve("_delta_log/_staged/" + b.id() + ".json")));
    // A staging command's sweep lists the directory: b expires, a stays.
    assertEquals(List.of(b.id()), StagingStore.sweepIfDue(log(), System.currentTimeMillis()));
    assertFalse(Files.exists(tmp.resolve("b.parquet")));
    assertTrue(Files.exists(tmp.resolve("a.parquet")));
  }
}
