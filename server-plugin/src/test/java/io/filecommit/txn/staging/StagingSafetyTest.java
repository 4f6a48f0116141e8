package io.filecommit.txn.staging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.storage.HardLinkLocalLogStore;
import io.filecommit.errors.FileCommitException;
import io.filecommit.testing.SparkTestSession;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Staged commits when aborts and publishes interleave at their worst moments, and when a publish
 * fails with something that is not a filecommit error: each abort keeps its own tombstone, a
 * publish never commits files an abort is deleting, and no failure leaves a staged commit stuck.
 */
class StagingSafetyTest {
  private static SparkSession spark;

  @TempDir
  Path tmp;

  private static final StructType SCHEMA = new StructType().add("id", DataTypes.LongType).add("part", DataTypes.StringType);
  private static final Operation APPEND = new Operation.Write("Append", List.of(), null, 1, 1, 1, 0, 0);

  /** What the file system does before (or after) an operation: {@code (operation, path)}; per test. */
  static volatile BiConsumer<String, org.apache.hadoop.fs.Path> hook = (op, p) -> { };

  /** A failure the log store below throws before writing a commit file, then after one. */
  static final AtomicReference<Throwable> THROW_BEFORE = new AtomicReference<>();
  static final AtomicReference<Throwable> THROW_AFTER = new AtomicReference<>();

  /** The local file system, calling {@link #hook} around creates, deletes and file status look-ups. */
  public static final class HookedFileSystem extends LocalFileSystem {
    @Override
    public FSDataOutputStream create(org.apache.hadoop.fs.Path f, FsPermission permission, boolean overwrite,
        int bufferSize, short replication, long blockSize, Progressable progress) throws IOException {
      FSDataOutputStream out = super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
      hook.accept("created", f);
      return out;
    }

    @Override
    public org.apache.hadoop.fs.FileStatus getFileStatus(org.apache.hadoop.fs.Path f) throws IOException {
      hook.accept("status", f);
      return super.getFileStatus(f);
    }

    @Override
    public boolean delete(org.apache.hadoop.fs.Path f, boolean recursive) throws IOException {
      hook.accept("delete", f);
      return super.delete(f, recursive);
    }
  }

  /** The local log store, throwing {@link #THROW_BEFORE} / {@link #THROW_AFTER} once each around a commit's write. */
  public static final class ThrowingLogStore extends HardLinkLocalLogStore {
    public ThrowingLogStore(Configuration conf) {
      super(conf);
    }

    @Override
    public void write(org.apache.hadoop.fs.Path path, Iterator<String> actions, Boolean overwrite, Configuration conf)
        throws IOException {
      boolean commit = path.getName().matches("\\d{20}\\.json");
      if (commit) {
        throwIfSet(THROW_BEFORE);
      }
      super.write(path, actions, overwrite, conf);
      if (commit) {
        throwIfSet(THROW_AFTER);
      }
    }

    private static void throwIfSet(AtomicReference<Throwable> ref) {
      Throwable t = ref.getAndSet(null);
      if (t instanceof Error e) {
        throw e;
      }
      if (t instanceof RuntimeException e) {
        throw e;
      }
    }
  }

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  @AfterEach
  void disarm() {
    hook = (op, p) -> { };
    THROW_BEFORE.set(null);
    THROW_AFTER.set(null);
  }

  private DeltaLog log() {
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", HookedFileSystem.class.getName());
    conf.setBoolean("fs.file.impl.disable.cache", true);
    return new DeltaLog(new org.apache.hadoop.fs.Path(tmp.toUri()), conf,
        key -> key.equals("spark.delta.logStore.file.impl") ? ThrowingLogStore.class.getName() : null);
  }

  private void createTable() {
    OptimisticTransaction t = new OptimisticTransaction(spark, log());
    t.updateMetadata(new Metadata(UUID.randomUUID().toString(), null, null, SCHEMA.json(), List.of("part"), Map.of(), 0L));
    t.commit(List.of(), APPEND);
  }

  private StagedCommit stageAppend(String name) throws IOException {
    Files.writeString(tmp.resolve(name), "data");
    OptimisticTransaction t = new OptimisticTransaction(spark, log());
    t.stageInstead(new StageRequest(3_600_000));
    t.commit(List.of(new AddFile(name, Map.of("part", "a"), 4, 1, true, null, Map.of())), APPEND);
    return (StagedCommit) t.staged();
  }

  private StagedPublish.Outcome publish(StagedCommit s) {
    return StagedPublish.publish(new OptimisticTransaction(spark, log()), List.of(StagingStore.load(log(), s.id())),
        System.currentTimeMillis());
  }

  private long versionsHolding(String path) {
    DeltaLog log = log();
    return log.listVersions().stream().filter(v -> log.readCommit(v).stream()
        .anyMatch(a -> a instanceof AddFile f && f.path().equals(path))).count();
  }

  private static void await(CountDownLatch latch) {
    try {
      assertTrue(latch.await(60, TimeUnit.SECONDS), "the interleaving did not happen");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Publish P1 holds the claim (its outcome unknown); publish P2 finds it, writes its own marker
   * and pauses; P1's claim is released (as a failed publish releases it); an abort now takes the
   * claim, lists the staging folder, sees P2's marker and backs off, releasing its claim; P2 reads
   * the claim again (none), goes on and commits: the files stay.
   */
  @Test
  void anAbortAfterAReleasedClaimSeesTheMarkerOfAPublishThatReliedOnIt() throws Exception {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    java.nio.file.Path claim = tmp.resolve("_delta_log/_staged/" + s.id() + ".claim");
    Files.writeString(claim, "publish\np1\n");
    CountDownLatch pMarked = new CountDownLatch(1);
    CountDownLatch releaseP = new CountDownLatch(1);
    hook = (op, p) -> {
      if (op.equals("created") && Thread.currentThread().getName().equals("publish")
          && p.getName().contains(".publishing.")) {
        pMarked.countDown();
        await(releaseP);
      }
    };
    CompletableFuture<StagedPublish.Outcome> pub = new CompletableFuture<>();
    Thread p = new Thread(() -> {
      try {
        pub.complete(StagedPublish.publish(new OptimisticTransaction(spark, log()), List.of(s),
            System.currentTimeMillis()));
      } catch (Throwable t) {
        pub.completeExceptionally(t);
      }
    }, "publish");
    p.start();
    await(pMarked);
    Files.delete(claim);
    FileCommitException busy = assertThrows(FileCommitException.class, () -> StagingStore.abort(log(), s));
    assertEquals("FILECOMMIT_STAGED_COMMIT_BUSY", busy.getCondition(), "the abort meets P2's marker");
    assertFalse(Files.exists(claim), "the abort that backed off released its claim");
    releaseP.countDown();
    p.join(120_000);
    assertTrue(pub.get().committed());
    assertTrue(Files.exists(tmp.resolve("a.parquet")));
    assertEquals(1, versionsHolding("a.parquet"));
    FileCommitException published = assertThrows(FileCommitException.class, () -> StagingStore.abort(log(), s));
    assertEquals("FILECOMMIT_STAGED_COMMIT_PUBLISHED", published.getCondition());
  }

  /**
   * An abort holds the claim and is deleting the files; a publish that comes now is refused by
   * the claim before anything else, and a second abort finishes nothing more than the first.
   */
  @Test
  void aPublishMeetingAnAbortsClaimIsRefused() throws Exception {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    CountDownLatch aDeleting = new CountDownLatch(1);
    CountDownLatch releaseA = new CountDownLatch(1);
    hook = (op, p) -> {
      if (op.equals("delete") && Thread.currentThread().getName().equals("abort-a") && p.getName().equals("a.parquet")) {
        aDeleting.countDown();
        await(releaseA);
      }
    };
    CompletableFuture<Integer> abortA = new CompletableFuture<>();
    Thread a = new Thread(() -> {
      try {
        abortA.complete(StagingStore.abort(log(), s));
      } catch (Throwable t) {
        abortA.completeExceptionally(t);
      }
    }, "abort-a");
    a.start();
    await(aDeleting);
    FileCommitException refused = assertThrows(FileCommitException.class,
        () -> StagedPublish.publish(new OptimisticTransaction(spark, log()), List.of(s), System.currentTimeMillis()));
    assertEquals("FILECOMMIT_STAGED_COMMIT_ABORTED", refused.getCondition());
    releaseA.countDown();
    a.join(120_000);
    assertEquals(1, abortA.get(), "abort A deleted the staged file");
    assertFalse(Files.exists(tmp.resolve("a.parquet")));
    assertEquals(0, versionsHolding("a.parquet"), "no version may reference a file an abort deleted");
  }

  @Test
  void twoAbortsThatBothProceedLeaveTheStagedCommitAborted() throws IOException {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    assertEquals(1, StagingStore.abort(log(), s));
    assertEquals(0, StagingStore.abort(log(), s), "a second abort finds nothing left to delete");
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> StagedPublish.publish(new OptimisticTransaction(spark, log()), List.of(s), System.currentTimeMillis()));
    assertEquals("FILECOMMIT_STAGED_COMMIT_ABORTED", e.getCondition());
    FileCommitException gone = assertThrows(FileCommitException.class, () -> StagingStore.load(log(), s.id()));
    assertEquals("FILECOMMIT_STAGED_COMMIT_ABORTED", gone.getCondition());
  }

  @Test
  void aPublishFailingWithAnErrorBeforeItsCommitCanBeAborted() throws IOException {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    // An Error outside the log store's write (which the commit loop decides from the log): here the
    // publish's own check that its files exist, made while it holds its claim.
    hook = (op, p) -> {
      if (op.equals("status") && p.getName().equals("a.parquet")) {
        hook = (o, q) -> { };
        throw new StackOverflowError("injected: while the publish holds its claim");
      }
    };
    assertThrows(StackOverflowError.class, () -> publish(s));
    assertEquals(0, versionsHolding("a.parquet"));
    assertEquals(1, StagingStore.abort(log(), s), "not stuck: the failed publish released its claim");
    assertFalse(Files.exists(tmp.resolve("a.parquet")));
  }

  @Test
  void aPublishWhoseStoreWriteFailsWithAnErrorAfterItsCommitIsDecidedFromTheLog() throws IOException {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    THROW_AFTER.set(new OutOfMemoryError("injected: after the commit file was written"));
    StagedPublish.Outcome first = publish(s);
    assertTrue(first.committed(), "the version landed, so the publish is reported committed");
    assertEquals(1, versionsHolding("a.parquet"), "the version landed");
    FileCommitException e = assertThrows(FileCommitException.class, () -> StagingStore.abort(log(), s));
    assertEquals("FILECOMMIT_STAGED_COMMIT_PUBLISHED", e.getCondition(), "decided from the log, not stuck");
    assertTrue(Files.exists(tmp.resolve("a.parquet")));
    StagedPublish.Outcome again = publish(s);
    assertFalse(again.committed());
    assertEquals(1, versionsHolding("a.parquet"));
  }

  @Test
  void aPublishOfAStagedCommitWhoseFileIsGoneCommitsNothingAndReleasesItsMarker() throws IOException {
    createTable();
    StagedCommit s = stageAppend("a.parquet");
    Files.delete(tmp.resolve("a.parquet"));
    FileCommitException e = assertThrows(FileCommitException.class, () -> publish(s));
    assertEquals("DELTA_FILE_NOT_FOUND", e.getCondition());
    assertEquals(List.of(0L), log().listVersions());
    assertEquals(0, StagingStore.abort(log(), s));
  }
}
