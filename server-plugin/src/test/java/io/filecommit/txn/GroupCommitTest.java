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
    SparkEnv.get().conf().set(GroupCommit.MAX_WAIT_KEY, "0");
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
      SparkEnv.get().conf().remove(GroupCommit.MAX_WAIT_KEY);
      pool.shutdownNow();
    }
  }
}
