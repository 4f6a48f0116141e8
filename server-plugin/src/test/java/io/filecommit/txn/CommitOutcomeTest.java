package io.filecommit.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.storage.HardLinkLocalLogStore;
import io.filecommit.errors.FileCommitException;
import io.filecommit.testing.SparkTestSession;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A commit's outcome is read from the log, never guessed from an exception (Delta's {@code
 * detectIdempotentSelfCommit}): LogStores that fail at each step of a commit, and what the
 * transaction reports and keeps.
 */
public class CommitOutcomeTest {
  private static SparkSession spark;

  @TempDir
  Path tmp;

  /**
   * Commit-file writes that still fail (or lose their answer), for the faulty store below; public
   * for the staging tests, which publish through the same store.
   */
  public static final AtomicInteger FAIL_BEFORE = new AtomicInteger();
  public static final AtomicInteger LOSE_ANSWER = new AtomicInteger();
  static final AtomicInteger ANSWER_EXISTS = new AtomicInteger();
  public static final AtomicInteger FAIL_READ = new AtomicInteger();
  /** Commit writes that throw {@link #ERROR} before writing / after the commit landed. */
  static final AtomicInteger ERROR_BEFORE = new AtomicInteger();
  static final AtomicInteger ERROR_AFTER = new AtomicInteger();
  static volatile java.util.function.Function<String, Error> ERROR = OutOfMemoryError::new;
  /** Commit writes during which the writing thread is interrupted (a cancelled command). */
  static final AtomicInteger INTERRUPT = new AtomicInteger();

  /**
   * The local LogStore with faults: fail before writing, write and then throw (a lost answer),
   * write and then report {@code FileAlreadyExistsException} (a put the store retried after it had
   * landed), or fail reads — each while its counter is positive, for commit files only.
   */
  public static final class FaultyLogStore extends HardLinkLocalLogStore {
    public FaultyLogStore(Configuration conf) {
      super(conf);
    }

    @Override
    public void write(org.apache.hadoop.fs.Path path, Iterator<String> actions, Boolean overwrite, Configuration conf)
        throws IOException {
      boolean commit = path.getName().endsWith(".json");
      if (commit && FAIL_BEFORE.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new IOException("injected: store failed before writing " + path);
      }
      if (commit && ERROR_BEFORE.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw ERROR.apply("injected: before writing " + path);
      }
      if (commit && INTERRUPT.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        Thread.currentThread().interrupt();
      }
      super.write(path, actions, overwrite, conf);
      if (commit && ERROR_AFTER.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw ERROR.apply("injected: after writing " + path);
      }
      if (commit && LOSE_ANSWER.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new IOException("injected: the answer for " + path + " was lost");
      }
      if (commit && ANSWER_EXISTS.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new java.nio.file.FileAlreadyExistsException(path.toString());
      }
    }

    @Override
    public io.delta.storage.CloseableIterator<String> read(org.apache.hadoop.fs.Path path, Configuration conf)
        throws IOException {
      if (path.getName().endsWith(".json") && FAIL_READ.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new IOException("injected: cannot read " + path);
      }
      return super.read(path, conf);
    }
  }

  private static final StructType SCHEMA = new StructType().add("id", DataTypes.LongType).add("part", DataTypes.StringType);
  private static final Operation APPEND = new Operation.Write("Append", List.of(), null, 0, 0, 0, 0, 0);
  private static final Operation OVERWRITE = new Operation.Write("Overwrite", List.of(), null, 0, 0, 0, 0, 0);

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  @AfterEach
  void disarm() {
    FAIL_BEFORE.set(0);
    LOSE_ANSWER.set(0);
    ANSWER_EXISTS.set(0);
    FAIL_READ.set(0);
    ERROR_BEFORE.set(0);
    ERROR_AFTER.set(0);
    INTERRUPT.set(0);
    ERROR = OutOfMemoryError::new;
  }

  private DeltaLog log() {
    return new DeltaLog(new org.apache.hadoop.fs.Path(tmp.toUri()), new Configuration(),
        key -> key.equals("spark.delta.logStore.file.impl") ? FaultyLogStore.class.getName() : null);
  }

  private OptimisticTransaction txn() {
    return new OptimisticTransaction(spark, log());
  }

  private static Metadata metadata() {
    return new Metadata(UUID.randomUUID().toString(), null, null, SCHEMA.json(), List.of("part"), Map.of(), 0L);
  }

  private static AddFile add(String path) {
    return new AddFile(path, Map.of("part", "a"), 1, 1, true, null, Map.of());
  }

  private long createTable() {
    OptimisticTransaction t = txn();
    t.updateMetadata(metadata());
    return t.commit(List.of(add("first.parquet")), APPEND);
  }

  /** A cleanup the transaction runs when it aborts; counts its runs. */
  private static AtomicInteger cleanupOf(OptimisticTransaction t) {
    AtomicInteger runs = new AtomicInteger();
    t.onAbort(runs::incrementAndGet);
    return runs;
  }

  private long versionsWith(String path) {
    return log().listVersions().stream().filter(v -> log().readCommit(v).stream()
        .anyMatch(a -> a instanceof AddFile f && f.path().equals(path))).count();
  }

  @Test
  void aLostAnswerIsFoundInTheLogAndCommitsOnce() {
    createTable();
    OptimisticTransaction overwrite = txn();
    overwrite.readWholeTable();
    AtomicInteger cleanups = cleanupOf(overwrite);
    LOSE_ANSWER.set(1);
    long v = overwrite.commit(List.of(add("o.parquet"), add("first.parquet").toRemove(1)), OVERWRITE);
    assertEquals(1, v);
    assertTrue(overwrite.committed(), "the log holds our txnId: committed");
    overwrite.abort();
    assertEquals(0, cleanups.get(), "the files of a committed version are never deleted");
    assertEquals(List.of(0L, 1L), log().listVersions());
    assertEquals(java.util.Set.of("o.parquet"), log().snapshot().activeFiles().keySet());
  }

  @Test
  void aRetriedPutThatHadLandedIsOurCommitNotAWinner() {
    createTable();
    OptimisticTransaction append = txn();
    ANSWER_EXISTS.set(1);
    assertEquals(1, append.commit(List.of(add("a.parquet")), APPEND));
    assertTrue(append.committed());
    assertEquals(List.of(0L, 1L), log().listVersions(), "not committed again at the next version");
    assertEquals(1, versionsWith("a.parquet"));
  }

  @Test
  void aFailureBeforeWritingIsRetriedAtTheSameVersion() {
    createTable();
    OptimisticTransaction append = txn();
    FAIL_BEFORE.set(2);
    assertEquals(1, append.commit(List.of(add("a.parquet")), APPEND));
    assertTrue(append.committed());
    assertEquals(List.of(0L, 1L), log().listVersions());
  }

  @Test
  void aStoreThatKeepsFailingIsADefiniteFailureAndTheFilesGo() {
    createTable();
    OptimisticTransaction append = txn();
    AtomicInteger cleanups = cleanupOf(append);
    FAIL_BEFORE.set(100);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> append.commit(List.of(add("a.parquet")), APPEND));
    assertEquals("FILECOMMIT_LOG_WRITE_FAILED", e.getCondition());
    assertEquals("58030", e.getSqlState());
    assertFalse(append.committed());
    append.abort();
    assertEquals(1, cleanups.get(), "the log proves nothing references the files: they are deleted");
    assertEquals(List.of(0L), log().listVersions());
  }

  @Test
  void anUnreadableOutcomeIsUnknownAndKeepsEveryFile() {
    createTable();
    OptimisticTransaction append = txn();
    AtomicInteger cleanups = cleanupOf(append);
    LOSE_ANSWER.set(1);
    FAIL_READ.set(100);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> append.commit(List.of(add("a.parquet")), APPEND));
    assertEquals("FILECOMMIT_COMMIT_STATE_UNKNOWN", e.getCondition());
    assertEquals("40003", e.getSqlState());
    append.abort();
    assertEquals(0, cleanups.get(), "the commit may have landed: nothing is deleted");
    FAIL_READ.set(0);
    assertEquals(1, versionsWith("a.parquet"), "it had landed, and its file is referenced");
  }

  @Test
  void theSameTxnRacingOnANewPathCommitsOnce() {
    OptimisticTransaction first = txn();
    OptimisticTransaction second = txn();
    Metadata md = metadata();
    for (OptimisticTransaction t : List.of(first, second)) {
      assertFalse(t.setTransaction(new TransactionId("loader", 1)));
      t.updateMetadata(md);
    }
    assertEquals(0, first.commit(List.of(add("a.parquet")), APPEND));
    assertTrue(first.committed());
    assertEquals(0, second.commit(List.of(add("b.parquet")), APPEND), "the version that holds the txn");
    assertFalse(second.committed(), "the winner that created the table carries the same txn: a duplicate");
    assertEquals(List.of(0L), log().listVersions());
  }

  @Test
  void twoAppendsCreatingTheSameTableWithoutTxnBothLand() {
    OptimisticTransaction first = txn();
    OptimisticTransaction second = txn();
    Metadata md = metadata();
    first.updateMetadata(md);
    second.updateMetadata(md);
    assertEquals(0, first.commit(List.of(add("a.parquet")), APPEND));
    assertEquals(1, second.commit(List.of(add("b.parquet")), APPEND));
    assertTrue(second.committed());
    List<Action> v1 = log().readCommit(1);
    assertTrue(v1.stream().noneMatch(a -> a instanceof Metadata), "ours continued as a blind append");
    assertTrue(v1.stream().anyMatch(a -> a instanceof CommitInfo ci && Boolean.TRUE.equals(ci.isBlindAppend())));
  }

  @Test
  void everyCommitCarriesItsTransactionsId() throws IOException {
    createTable();
    txn().commit(List.of(add("a.parquet")), APPEND);
    String id0 = ((CommitInfo) log().readCommit(0).get(0)).txnId();
    String id1 = ((CommitInfo) log().readCommit(1).get(0)).txnId();
    assertTrue(id0 != null && id1 != null && !id0.equals(id1), id0 + " " + id1);
    // Checksum files are written by post-commit work in the background, through a temporary file of their own.
    assertTrue(PostCommitHooks.awaitIdle(log().tablePath().toString(), 30_000), "post-commit work still running");
    try (var files = Files.list(tmp.resolve("_delta_log"))) {
      assertTrue(files.noneMatch(p -> p.getFileName().toString().endsWith(".tmp")), "no temporary files left");
    }
  }

  private void assertNoTemporaryFiles() throws IOException {
    // Checksum files are written by post-commit work in the background, through a temporary file of their own.
    assertTrue(PostCommitHooks.awaitIdle(log().tablePath().toString(), 30_000), "post-commit work still running");
    try (var files = Files.list(tmp.resolve("_delta_log"))) {
      assertEquals(List.of(), files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList(),
          "no temporary file left in _delta_log");
    }
  }

  @Test
  void anOutOfMemoryErrorAfterTheCommitLandedIsCommittedAndKeepsTheFiles() throws IOException {
    createTable();
    for (Operation op : List.of(APPEND, OVERWRITE)) { // grouped (a blind append) and alone
      String file = (op == APPEND ? "append" : "overwrite") + ".parquet";
      OptimisticTransaction t = txn();
      if (op == OVERWRITE) {
        t.readWholeTable();
      }
      AtomicInteger cleanups = cleanupOf(t);
      ERROR_AFTER.set(1);
      long v = t.commit(List.of(add(file)), op);
      assertTrue(t.committed(), "the log holds our txnId: committed");
      t.abort();
      assertEquals(0, cleanups.get(), "the files of a landed version are never deleted");
      assertEquals(1, versionsWith(file), "committed once, at " + v);
      assertEquals(v, log().listVersions().get(log().listVersions().size() - 1));
    }
    assertNoTemporaryFiles();
  }

  @Test
  void aStackOverflowBeforeWritingIsDecidedFromTheLogAndRetried() {
    createTable();
    ERROR = StackOverflowError::new;
    for (Operation op : List.of(APPEND, OVERWRITE)) {
      String file = (op == APPEND ? "append" : "overwrite") + ".parquet";
      OptimisticTransaction t = txn();
      ERROR_BEFORE.set(1);
      long v = t.commit(List.of(add(file)), op);
      assertTrue(t.committed());
      assertEquals(1, versionsWith(file), "committed once, at " + v);
    }
    assertEquals(List.of(0L, 1L, 2L), log().listVersions());
  }

  @Test
  void anErrorThatKeepsFailingTheStoreIsADefiniteFailure() {
    createTable();
    OptimisticTransaction t = txn();
    AtomicInteger cleanups = cleanupOf(t);
    ERROR_BEFORE.set(100);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> t.commit(List.of(add("a.parquet")), OVERWRITE));
    assertEquals("FILECOMMIT_LOG_WRITE_FAILED", e.getCondition());
    t.abort();
    assertEquals(1, cleanups.get(), "the log proves no version references the files");
    assertEquals(List.of(0L), log().listVersions());
  }

  @Test
  void anErrorAfterTheCommitWithAnUnreadableLogIsUnknownAndKeepsEveryFile() {
    createTable();
    for (Operation op : List.of(APPEND, OVERWRITE)) {
      String file = (op == APPEND ? "append" : "overwrite") + ".parquet";
      OptimisticTransaction t = txn();
      AtomicInteger cleanups = cleanupOf(t);
      ERROR_AFTER.set(1);
      FAIL_READ.set(100);
      FileCommitException e = assertThrows(FileCommitException.class,
          () -> t.commit(List.of(add(file)), op));
      assertEquals("FILECOMMIT_COMMIT_STATE_UNKNOWN", e.getCondition());
      t.abort();
      assertEquals(0, cleanups.get(), "the commit may have landed: nothing is deleted");
      FAIL_READ.set(0);
      assertEquals(1, versionsWith(file), "it had landed, and its file is referenced");
    }
  }

  @Test
  void aCancelledCommitStillDecidesItsVersionAndLeavesNoTemporaryFile() throws IOException {
    createTable();
    OptimisticTransaction t = txn();
    t.readWholeTable();
    INTERRUPT.set(1);
    try {
      assertEquals(1, t.commit(List.of(add("o.parquet")), OVERWRITE));
      assertTrue(t.committed());
      assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept for the command");
    } finally {
      Thread.interrupted();
    }
    assertEquals(1, versionsWith("o.parquet"));
    assertNoTemporaryFiles();
  }
}
