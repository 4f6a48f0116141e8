package io.filecommit.txn;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.VersionChecksums;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the work after a commit landed ({@link PostCommitHook}s, Delta's {@code
 * runPostCommitHooks}): first the snapshot cache moves to the new version (at once, so the next
 * command's snapshot is current; part of the commit, not a hook), then the hooks of every version
 * ({@link #VERSION_HOOKS}): the version checksum file ({@link VersionChecksums}; protocol "Version
 * Checksum File"; before the command answers, or on an object store in the background after it)
 * and, when the version is a multiple of {@code delta.checkpointInterval}, a checkpoint (protocol
 * "Checkpoints") in the background after the command answered ({@link #inBackground}: one chain
 * per table), followed by the clean-up of expired log files (protocol "Metadata Cleanup"; Delta's {@code DeltaLog.cleanupExpiredLogs}).
 * The hooks a command registered on its transaction run after these ({@link
 * OptimisticTransaction#registerPostCommitHook}). The commit has landed already, so nothing here
 * may turn it into a reported failure or delete a file: every failure, Errors included, is logged
 * and swallowed (the write is reported committed); background failures are logged (readers fall
 * back to the JSON commits; the next snapshot asks Kernel).
 */
final class PostCommitHooks {
  private static final Logger LOG = LoggerFactory.getLogger(PostCommitHooks.class);

  /**
   * The version checksum file. On an object store in the background after the command answered
   * ({@link #inBackground}, in the table's chain: the checksum of version v is written after that
   * of v - 1, from it, and before a checkpoint queued after v): there it is a PUT the writer need not
   * wait for, as the protocol makes the file optional ("Version Checksum File": writers should,
   * readers must not require it); a server stopped before it runs leaves the version without a
   * checksum, and readers replay the log. On other file systems before the command answers (a
   * local write and rename cost little), so a client that lists the log after its answer sees a
   * settled directory; a cancelled command (interrupted thread) skips it there, as its I/O would
   * swallow the interrupt the command must keep.
   */
  static final PostCommitHook CHECKSUM = new PostCommitHook() {
    @Override
    public String name() {
      return "checksum";
    }

    @Override
    public void run(PostCommitHook.Committed c) throws java.io.IOException {
      if (!io.filecommit.delta.LogProbe.objectStore(c.log().fs())) {
        if (!Thread.currentThread().isInterrupted()) {
          VersionChecksums.write(c.log(), c.version());
        }
        return;
      }
      inBackground(c.log(), () -> {
        try {
          VersionChecksums.write(c.log(), c.version());
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException("checksum file of version " + c.version() + " not written", e);
        }
      });
    }
  };

  /**
   * A checkpoint at every {@code delta.checkpointInterval}-th version, then the clean-up of expired
   * log files, in the background after the command answered.
   */
  static final PostCommitHook CHECKPOINT = new PostCommitHook() {
    @Override
    public String name() {
      return "checkpoint";
    }

    @Override
    public void run(PostCommitHook.Committed c) {
      int interval = TableConfig.CHECKPOINT_INTERVAL.fromMetadata(c.metadata());
      if (c.version() > 0 && c.version() % interval == 0) {
        inBackground(c.log(), () -> {
          try {
            if (c.log().checkpoint(c.version())) {
              c.log().cleanupExpiredLogs(c.metadata());
            }
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("checkpoint at version " + c.version() + " skipped", e);
          }
        });
      }
    }
  };

  /** The hooks of every landed version, in order. */
  static final List<PostCommitHook> VERSION_HOOKS = List.of(CHECKSUM, CHECKPOINT);

  private PostCommitHooks() {}

  /**
   * Runs the hooks of a landed version.
   *
   * @param log the table's log
   * @param version the committed version
   * @param protocol the protocol the commit set, or null
   * @param newMetadata the metadata the commit set, or null
   * @param metadata the metadata in force after the commit
   * @param txns appId -> version of the commit's {@code txn} actions
   */
  static void run(DeltaLog log, long version, Protocol protocol, Metadata newMetadata, Metadata metadata,
      Map<String, Long> txns) {
    try {
      log.committed(version, protocol, newMetadata, txns);
    } catch (Throwable e) {
      // Even an Error: the version landed, so the write is reported committed, never aborted.
      notFatalHere(e);
      LOG.warn("filecommit: snapshot cache of " + log.tablePath() + " not moved to version " + version + ": " + e);
      try {
        log.invalidateCache();
      } catch (Throwable ignored) {
        // the next snapshot asks Kernel anyway when the cache is not provably current
      }
    }
    runAll(VERSION_HOOKS, new PostCommitHook.Committed(null, log, version, metadata, List.of()));
  }

  /**
   * Runs hooks of a landed commit in order, each with {@link #runSafely}.
   *
   * @param hooks the hooks
   * @param committed what landed
   */
  static void runAll(java.util.Collection<PostCommitHook> hooks, PostCommitHook.Committed committed) {
    for (PostCommitHook hook : hooks) {
      runSafely(hook, committed);
    }
  }

  /**
   * Runs one hook of a landed commit; whatever it throws is logged, never raised (an interrupt is
   * kept for the caller; the JVM's own failures propagate).
   *
   * @param hook the hook
   * @param committed what landed
   */
  static void runSafely(PostCommitHook hook, PostCommitHook.Committed committed) {
    try {
      hook.run(committed);
    } catch (Throwable e) {
      notFatalHere(e);
      if (e instanceof java.io.InterruptedIOException || e instanceof java.nio.channels.ClosedByInterruptException) {
        Thread.currentThread().interrupt();
      }
      LOG.warn("filecommit: post-commit hook " + hook.name() + " of " + committed.log().tablePath() + " at version "
          + committed.version() + " failed; the commit stands: " + e, e);
    }
  }

  /** Keeps an interrupt for the caller; nothing else thrown after a commit landed fails the write. */
  private static void notFatalHere(Throwable e) {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
  }

  /** One daemon pool for every table's background hooks; per table they run one after another. */
  private static final ExecutorService POOL = Executors.newFixedThreadPool(2, r -> {
    Thread t = new Thread(r, "filecommit-post-commit");
    t.setDaemon(true);
    return t;
  });
  private static final ConcurrentHashMap<String, CompletableFuture<Void>> TAILS = new ConcurrentHashMap<>();

  /**
   * Runs a hook of a landed commit in the background, after the command's answer (Delta runs
   * {@code PostCommitHook}s after the commit; here they leave the writer's hot path): hooks of one
   * table run one at a time in the order they were queued (a per-table chain on a pool of two
   * daemon threads), so a checkpoint of version v, queued after v landed, never races another
   * hook of the table. A hook must catch its own failures; anything it throws is logged.
   *
   * @param log the table's log
   * @param hook the work; must not fail the command, must not delete files a version references
   * @return completes when the hook has run
   */
  static CompletableFuture<Void> inBackground(DeltaLog log, Runnable hook) {
    String key = log.tablePath().toString();
    CompletableFuture<Void>[] mine = new CompletableFuture[1];
    TAILS.compute(key, (k, prev) -> {
      CompletableFuture<Void> before = prev == null ? CompletableFuture.completedFuture(null) : prev;
      mine[0] = before.handle((x, e) -> null).thenRunAsync(() -> {
        try {
          hook.run();
        } catch (Throwable e) {
          rethrowIfFatal(e);
          LOG.warn("filecommit: post-commit hook of " + k + " failed: " + e, e);
        }
      }, POOL);
      return mine[0];
    });
    mine[0].whenComplete((x, e) -> TAILS.remove(key, mine[0]));
    return mine[0];
  }

  /**
   * Waits until no table has background hooks queued or running (tests wait here before deleting
   * a table's directory, which a checksum file being written would otherwise race).
   *
   * @param timeoutMs longest wait, ms
   * @return true when idle, false on timeout
   */
  static boolean awaitAllIdle(long timeoutMs) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!TAILS.isEmpty()) {
      for (String table : List.copyOf(TAILS.keySet())) {
        if (!awaitIdle(table, Math.max(1, deadline - System.currentTimeMillis()))) {
          return false;
        }
      }
      if (System.currentTimeMillis() >= deadline) {
        return TAILS.isEmpty();
      }
    }
    return true;
  }

  /**
   * Waits until the background hooks queued so far for a table have run (for tests and for a
   * caller that needs the checkpoint on disk).
   *
   * @param table the table root, as {@code DeltaLog.tablePath().toString()}
   * @param timeoutMs longest wait, ms
   * @return true when idle, false on timeout
   */
  static boolean awaitIdle(String table, long timeoutMs) {
    CompletableFuture<Void> tail = TAILS.get(table);
    if (tail == null) {
      return true;
    }
    try {
      tail.get(timeoutMs, TimeUnit.MILLISECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (java.util.concurrent.ExecutionException e) {
      return true;
    }
  }

  /** The JVM itself is failing (out of memory, internal error): nothing sensible is left to do here. */
  private static void rethrowIfFatal(Throwable e) {
    if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
      throw (VirtualMachineError) e;
    }
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
  }
}
