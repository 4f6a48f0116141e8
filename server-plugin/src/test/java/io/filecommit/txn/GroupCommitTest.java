package io.filecommit.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.SetTransaction;
import io.filecommit.errors.FileCommitException;
import io.filecommit.testing.SparkTestSession;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Grouping rules of {@link GroupCommit}: who is grouped, what a group commits, who fails alone. */
class GroupCommitTest {
  private static final Operation.Write APPEND = new Operation.Write("Append", List.of(), null, 1, 1, 1, 0, 0);
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

  private void createTable() {
    OptimisticTransaction txn = new OptimisticTransaction(spark, log());
    txn.updateMetadata(new Metadata(UUID.randomUUID().toString(), null, null, SCHEMA.json(), List.of(), Map.of(), 0L));
    assertEquals(0, txn.commit(List.of(), APPEND));
  }

  private static AddFile add(String path) {
    return new AddFile(path, Map.of(), 1, 1, true, null, Map.of());
  }

  /** A member that appends {@code file}, with the txn {@code app -> version} when app is not null. */
  private GroupCommit.Member member(String file, String app, long version) {
    OptimisticTransaction txn = new OptimisticTransaction(spark, log());
    Map<String, Long> txns = app == null ? Map.of() : Map.of(app, version);
    if (app != null) {
      txn.setTransaction(new TransactionId(app, version));
    }
    ConflictChecker.ReadState state = new ConflictChecker.ReadState(false, false, List.of(), Set.of(), Set.of(), txns,
        "WriteSerializable");
    return new GroupCommit.Member(txn, List.of(add(file)), APPEND, state);
  }

  private static List<String> adds(List<Action> commit) {
    return commit.stream().filter(a -> a instanceof AddFile).map(a -> ((AddFile) a).path()).sorted().toList();
  }

  private static CommitInfo info(List<Action> commit) {
    return (CommitInfo) commit.stream().filter(a -> a instanceof CommitInfo).findFirst().orElseThrow();
  }

  @Test
  void takeIsFifoBoundedAndNeverGroupsOneAppIdTwice() {
    createTable();
    GroupCommit.Member a1 = member("a1", "a", 1);
    GroupCommit.Member a2 = member("a2", "a", 2);
    GroupCommit.Member n1 = member("n1", null, 0);
    GroupCommit.Member b1 = member("b1", "b", 1);
    GroupCommit.Member n2 = member("n2", null, 0);
    ArrayDeque<GroupCommit.Member> queue = new ArrayDeque<>(List.of(a1, a2, n1, b1, n2));
    assertEquals(List.of(a1, n1, b1), GroupCommit.take(queue, 3), "bounded at 3, app a once");
    assertEquals(List.of(a2, n2), List.copyOf(queue), "the skipped member keeps its place");
    assertEquals(List.of(a2, n2), GroupCommit.take(queue, 3));
    assertTrue(queue.isEmpty());
  }

  @Test
  void aMemberFailingItsChecksIsAnsweredAloneAndTheRestCommitAsOneVersion() {
    createTable();
    GroupCommit.Member conflicting = member("x.parquet", "x", 7);
    GroupCommit.Member plain = member("p.parquet", null, 0);
    GroupCommit.Member other = member("y.parquet", "y", 1);
    GroupCommit.Member duplicate = member("z.parquet", "z", 1);
    // Version 1, by another writer: app x at 5 (< 7: a conflict), app z at 1 (the same write).
    OptimisticTransaction winner = new OptimisticTransaction(spark, log());
    winner.setTransaction(new TransactionId("x", 5));
    winner.setTransaction(new TransactionId("z", 1));
    assertEquals(1, winner.commit(List.of(add("w.parquet")), APPEND));

    GroupCommit.publish(List.of(conflicting, plain, other, duplicate));

    assertTrue(conflicting.error instanceof FileCommitException);
    assertEquals("DELTA_CONCURRENT_TRANSACTION", ((FileCommitException) conflicting.error).getCondition());
    assertFalse(conflicting.committed);
    assertNull(duplicate.error);
    assertFalse(duplicate.committed, "its txn already landed");
    assertEquals(1, duplicate.version);
    for (GroupCommit.Member m : List.of(plain, other)) {
      assertNull(m.error);
      assertTrue(m.committed);
      assertEquals(2, m.version);
    }
    List<Action> v2 = log().readCommit(2);
    assertEquals(List.of("p.parquet", "y.parquet"), adds(v2), "only the members that passed");
    assertEquals(List.of("y"), v2.stream().filter(a -> a instanceof SetTransaction)
        .map(a -> ((SetTransaction) a).appId()).toList());
    CommitInfo ci = info(v2);
    assertEquals("WRITE", ci.operation());
    assertEquals(Boolean.TRUE, ci.isBlindAppend());
    assertEquals("2", ci.operationMetrics().get("numFiles"));
    String grouped = (String) ci.operationParameters().get(GroupCommit.GROUPED_PARAMETER);
    assertTrue(grouped.contains(plain.txn.txnId) && grouped.contains(other.txn.txnId), grouped);
    assertEquals(List.of(0L, 1L, 2L), log().listVersions());
  }

  @Test
  void queuedAppendsAreGroupedInArrivalOrderUpToTheBound() throws Exception {
    createTable();
    String table = log().tablePath().toString();
    GroupCommit gc = GroupCommit.forTable(table, 50, 3);
    gc.hold();
    ExecutorService pool = Executors.newFixedThreadPool(7);
    List<Future<Long>> results = new ArrayList<>();
    try {
      for (int i = 0; i < 7; i++) {
        OptimisticTransaction txn = new OptimisticTransaction(spark, log());
        String file = "f" + i + ".parquet";
        int queuedBefore = i;
        results.add(pool.submit(() -> txn.commit(List.of(add(file)), APPEND)));
        long deadline = System.currentTimeMillis() + 10_000;
        while (gc.queued() <= queuedBefore && System.currentTimeMillis() < deadline) {
          Thread.sleep(5);
        }
      }
      assertEquals(7, gc.queued());
      gc.release();
      Map<Long, List<String>> byVersion = new HashMap<>();
      for (int i = 0; i < 7; i++) {
        byVersion.computeIfAbsent(results.get(i).get(30, TimeUnit.SECONDS), v -> new ArrayList<>()).add("f" + i + ".parquet");
      }
      assertEquals(Map.of(1L, List.of("f0.parquet", "f1.parquet", "f2.parquet"),
          2L, List.of("f3.parquet", "f4.parquet", "f5.parquet"), 3L, List.of("f6.parquet")), byVersion);
      for (Map.Entry<Long, List<String>> e : byVersion.entrySet()) {
        assertEquals(e.getValue(), adds(log().readCommit(e.getKey())), "each version holds its members' files");
      }
      assertEquals(List.of(0L, 1L, 2L, 3L), log().listVersions());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void maxWaitZeroTurnsGroupingOff() throws Exception {
    createTable();
    SparkEnv.get().conf().set(io.filecommit.conf.FileCommitConf.GROUP_COMMIT_MAX_WAIT_MS.key(), "0");
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Long>> results = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        OptimisticTransaction txn = new OptimisticTransaction(spark, log());
        String file = "g" + i + ".parquet";
        results.add(pool.submit(() -> txn.commit(List.of(add(file)), APPEND)));
      }
      Set<Long> versions = new java.util.HashSet<>();
      for (Future<Long> f : results) {
        versions.add(f.get(30, TimeUnit.SECONDS));
      }
      assertEquals(Set.of(1L, 2L, 3L, 4L), versions, "one version per write");
      for (long v = 1; v <= 4; v++) {
        List<Action> commit = log().readCommit(v);
        assertEquals(1, adds(commit).size());
        assertNull(info(commit).operationParameters().get(GroupCommit.GROUPED_PARAMETER));
      }
    } finally {
      SparkEnv.get().conf().remove(io.filecommit.conf.FileCommitConf.GROUP_COMMIT_MAX_WAIT_MS.key());
      pool.shutdownNow();
    }
  }

  /** The table's log through the faulty store of {@link CommitOutcomeTest}. */
  private DeltaLog faultyLog() {
    return new DeltaLog(new org.apache.hadoop.fs.Path(tmp.toUri()), new Configuration(),
        key -> key.equals("spark.delta.logStore.file.impl") ? CommitOutcomeTest.FaultyLogStore.class.getName() : null);
  }

  private GroupCommit.Member memberOn(DeltaLog log, String file) {
    ConflictChecker.ReadState state = new ConflictChecker.ReadState(false, false, List.of(), Set.of(), Set.of(), Map.of(),
        "WriteSerializable");
    return new GroupCommit.Member(new OptimisticTransaction(spark, log), List.of(add(file)), APPEND, state);
  }

  private void assertNoTemporaryFiles() throws java.io.IOException {
    // The checksum files are written by post-commit work in the background, through a temporary file of their own.
    assertTrue(PostCommitHooks.awaitIdle(log().tablePath().toString(), 30_000), "post-commit work still running");
    try (var files = java.nio.file.Files.list(tmp.resolve("_delta_log"))) {
      assertEquals(List.of(), files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList());
    }
  }

  @Test
  void anErrorDuringTheGroupsPublishIsDecidedFromTheLogForEveryMember() throws Exception {
    createTable();
    try {
      for (String when : List.of("after", "before")) {
        DeltaLog log = faultyLog();
        GroupCommit.Member a = memberOn(log, when + "-a.parquet");
        GroupCommit.Member b = memberOn(log, when + "-b.parquet");
        (when.equals("after") ? CommitOutcomeTest.ERROR_AFTER : CommitOutcomeTest.ERROR_BEFORE).set(1);
        GroupCommit.publish(List.of(a, b));
        long v = when.equals("after") ? 1 : 2;
        for (GroupCommit.Member m : List.of(a, b)) {
          assertNull(m.error, when + ": " + m.error);
          assertTrue(m.committed, when);
          assertEquals(v, m.version);
          assertFalse(m.outcomeUnknown);
        }
        assertEquals(List.of(when + "-a.parquet", when + "-b.parquet"), adds(log().readCommit(v)));
      }
      assertEquals(List.of(0L, 1L, 2L), log().listVersions());
      assertNoTemporaryFiles();
    } finally {
      CommitOutcomeTest.ERROR_AFTER.set(0);
      CommitOutcomeTest.ERROR_BEFORE.set(0);
    }
  }

  @Test
  void anErrorOfTheLeadersOwnCommitIsItsAnswerNotALostOutcome() {
    createTable();
    DeltaLog log = faultyLog();
    OptimisticTransaction leader = new OptimisticTransaction(spark, log);
    java.util.concurrent.atomic.AtomicInteger cleanups = new java.util.concurrent.atomic.AtomicInteger();
    leader.onAbort(cleanups::incrementAndGet);
    CommitOutcomeTest.ERROR_AFTER.set(1);
    try {
      assertEquals(1, leader.commit(List.of(add("l.parquet")), APPEND), "a grouped append, decided from the log");
      assertTrue(leader.committed());
      leader.abort();
      assertEquals(0, cleanups.get());
      assertEquals(List.of("l.parquet"), adds(log().readCommit(1)));
    } finally {
      CommitOutcomeTest.ERROR_AFTER.set(0);
    }
  }

  @Test
  void anInterruptedLeaderPublishesItsGroupAndLeavesNoTemporaryFile() throws Exception {
    createTable();
    DeltaLog log = faultyLog();
    GroupCommit.Member a = memberOn(log, "a.parquet");
    GroupCommit.Member b = memberOn(log, "b.parquet");
    GroupCommit.Member c = memberOn(log, "c.parquet");
    CommitOutcomeTest.INTERRUPT.set(1); // the client of the leader cancels while its group publishes
    try {
      GroupCommit.publish(List.of(a, b, c));
      assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept for the leader's command");
    } finally {
      Thread.interrupted();
      CommitOutcomeTest.INTERRUPT.set(0);
    }
    for (GroupCommit.Member m : List.of(a, b, c)) {
      assertNull(m.error, String.valueOf(m.error));
      assertTrue(m.committed);
      assertEquals(1, m.version);
    }
    assertEquals(List.of("a.parquet", "b.parquet", "c.parquet"), adds(log().readCommit(1)));
    assertNoTemporaryFiles();
  }

  @Test
  void theInCommitTimestampFollowsTheMembersPublishedNotTheFirstOne() {
    createTable();
    GroupCommit.Member before = member("old.parquet", null, 0); // read version 0: no in-commit timestamps
    // Version 1, by another writer (Delta can enable them on an existing table): in-commit timestamps on.
    io.filecommit.delta.Snapshot s0 = log().snapshot();
    long ts = System.currentTimeMillis();
    Map<String, String> conf = new HashMap<>(s0.metadata().configuration());
    conf.put("delta.enableInCommitTimestamps", "true");
    conf.put("delta.inCommitTimestampEnablementVersion", "1");
    conf.put("delta.inCommitTimestampEnablementTimestamp", Long.toString(ts));
    Metadata md = s0.metadata().withConfiguration(conf);
    io.filecommit.delta.actions.Protocol pr = io.filecommit.delta.TableFeatures.required(s0.protocol(), md);
    try {
      log().writeCommit(1, List.of(new CommitInfo(ts, ts, "SET TBLPROPERTIES", Map.of(), 0L, "WriteSerializable",
          false, null, "test", UUID.randomUUID().toString()), pr, md));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    GroupCommit.Member after = member("new.parquet", null, 0); // read version 1
    assertEquals(1, after.readVersion);

    GroupCommit.publish(List.of(before, after));

    assertTrue(before.error instanceof FileCommitException, String.valueOf(before.error));
    assertTrue(Set.of("DELTA_PROTOCOL_CHANGED", "DELTA_METADATA_CHANGED")
        .contains(((FileCommitException) before.error).getCondition()), String.valueOf(before.error));
    assertTrue(after.committed);
    assertEquals(2, after.version);
    CommitInfo v2 = info(log().readCommit(2));
    assertTrue(v2.inCommitTimestamp() != null && v2.inCommitTimestamp() > ts,
        "the table has in-commit timestamps since version 1: " + v2);
    assertTrue(log().readCommit(2).get(0) instanceof CommitInfo, "commitInfo first");
  }

  /** Version 1 by another writer, written straight to the log (this server's cache does not know it). */
  private void foreignVersionOne(String app, long version) {
    long ts = System.currentTimeMillis();
    try {
      log().writeCommit(1, List.of(new CommitInfo(ts, ts, "WRITE", Map.of(), 0L, "WriteSerializable", true, null,
          "test", UUID.randomUUID().toString()), new SetTransaction(app, version, ts), add("w.parquet")));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void aGroupGoesAfterThePreviousGroupsVersionAndStillJudgesEveryVersionItsMembersDidNotRead() {
    createTable();
    GroupCommit.Member conflicting = member("x.parquet", "x", 7);
    GroupCommit.Member plain = member("p.parquet", null, 0);
    GroupCommit.Member single = member("s.parquet", null, 0);
    foreignVersionOne("x", 5); // x at 5 < 7: a conflict for that member
    assertEquals(-1, log().latestKnownVersion(0), "the cache does not know version 1");

    GroupCommit.publish(List.of(conflicting, plain), 1);

    assertEquals("DELTA_CONCURRENT_TRANSACTION", ((FileCommitException) conflicting.error).getCondition(),
        "version 1 was read from the log and judged");
    assertTrue(plain.committed);
    assertEquals(2, plain.version);
    assertEquals(1, plain.attempts, "the first attempt went after version 1: no lost race");
    assertEquals(List.of("p.parquet"), adds(log().readCommit(2)));

    GroupCommit.publish(List.of(single), 2); // a group of one (CommitLoop), read version 0
    assertTrue(single.committed);
    assertEquals(3, single.version);
    assertEquals(1, single.attempts, "after version 2 at once");
  }

  @Test
  void aPreviousVersionTheLogDoesNotHoldIsNotGoneAfter() throws Exception {
    createTable();
    GroupCommit.Member a = member("a.parquet", null, 0);
    GroupCommit.Member b = member("b.parquet", "b", 1);
    GroupCommit.Member alone = member("c.parquet", null, 0);

    GroupCommit.publish(List.of(a, b), 3); // a previous group "at 3", but the log ends at version 0 (made anew)

    for (GroupCommit.Member m : List.of(a, b)) {
      assertNull(m.error);
      assertTrue(m.committed);
      assertEquals(1, m.version, "no gap");
    }
    GroupCommit.publish(List.of(alone), 5); // a group of one (CommitLoop) alike
    assertNull(alone.error);
    assertEquals(2, alone.version);
    assertTrue(log().readCommitIfExists(4).isEmpty() && log().readCommitIfExists(6).isEmpty());
  }
}
