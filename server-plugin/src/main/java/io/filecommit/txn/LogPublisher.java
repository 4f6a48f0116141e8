package io.filecommit.txn;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.VersionChecksums;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.List;
import java.util.Map;

/**
 * Publishes one commit attempt of a transaction and reads its outcome from the log, never from the
 * store's exception (as Delta's {@code OptimisticTransaction.doCommit} with {@code
 * detectIdempotentSelfCommit}): after any failure of the store's write (any Throwable, Errors such
 * as {@code OutOfMemoryError} included) the version tried is read back — holding the
 * transaction's {@code commitInfo.txnId} it is ours, absent it is tried again (at most {@link
 * #MAX_WRITE_RETRIES} times), held by another writer its actions go to the conflict rules. When the
 * log cannot be read the outcome is unknown ({@code FILECOMMIT_COMMIT_STATE_UNKNOWN}) and the
 * transaction must keep every file it wrote. An interrupt (a cancelled command) is held while a
 * version is published and decided, and restored afterwards.
 */
final class LogPublisher {
  /** Times one version is tried again while the store fails and the version stays absent. */
  static final int MAX_WRITE_RETRIES = 3;
  /** Times the log is read before a commit's outcome is declared unknown. */
  static final int MAX_READ_ATTEMPTS = 3;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LogPublisher.class);

  private final DeltaLog deltaLog;
  private final String txnId;
  private final String table;
  private boolean outcomeUnknown;

  /**
   * @param deltaLog the table's log
   * @param txnId the transaction's {@code commitInfo.txnId}
   * @param table table root, for messages
   */
  LogPublisher(DeltaLog deltaLog, String txnId, String table) {
    this.deltaLog = deltaLog;
    this.txnId = txnId;
    this.table = table;
  }

  /** Whether an attempt's outcome could not be read from the log: every written file must stay. */
  boolean outcomeUnknown() {
    return outcomeUnknown;
  }

  /**
   * Publishes one attempt and decides its outcome from the log.
   *
   * @param version the version to create
   * @param lines the commit's actions
   * @return null when the commit is ours (written, or found holding our {@code txnId} after the
   *     store failed); else the actions of the other writer's commit that holds the version
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOG_WRITE_FAILED} when the
   *     store keeps failing and the version stays absent (nothing committed); {@code
   *     FILECOMMIT_COMMIT_STATE_UNKNOWN} when the version cannot be read (files must be kept)
   */
  List<Action> publish(long version, List<Action> lines) {
    // A cancelled command's interrupt must not cut a publish in half (interruptible I/O would fail
    // the write and every retry): it is held while the version is decided and restored afterwards.
    boolean interrupted = Thread.interrupted();
    try {
      Throwable failure = null;
      for (int tries = 0; ; tries++) {
        try {
          deltaLog.writeCommit(version, lines);
          VersionChecksums.committed(deltaLog, version, lines);
          return null;
        } catch (FileAlreadyExistsException | org.apache.hadoop.fs.FileAlreadyExistsException e) {
          failure = null;
        } catch (Throwable e) {
          // Any Throwable, Errors included (out of memory, stack overflow): the write may have
          // landed, only the log can tell.
          failure = e;
        }
        interrupted |= Thread.interrupted();
        List<Action> present = readOutcome(version, failure);
        if (present != null) {
          if (isOurs(present)) {
            LOG.warn("filecommit: the store reported a failure for commit " + version + " of " + table
                + ", but the log holds this transaction's commit (txnId " + txnId + "): committed", failure);
            VersionChecksums.committed(deltaLog, version, present);
            return null;
          }
          return present;
        }
        if (tries + 1 >= MAX_WRITE_RETRIES) {
          throw ErrorClass.FILECOMMIT_LOG_WRITE_FAILED.error("The store failed to publish commit " + version + " of "
              + table + " " + (tries + 1) + " times and the log shows it did not land; nothing was committed: "
              + failure, failure, Map.of("version", Long.toString(version), "table", table));
        }
        pause(tries);
        interrupted |= Thread.interrupted();
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Reads commit {@code version} after a failed or refused write.
   *
   * @return its actions, or null when the version does not exist
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_COMMIT_STATE_UNKNOWN} after
   *     {@link #MAX_READ_ATTEMPTS} failed reads (any Throwable); the transaction then keeps every
   *     written file
   */
  List<Action> readOutcome(long version, Throwable writeFailure) {
    Throwable last = null;
    boolean interrupted = false;
    try {
      for (int i = 0; i < MAX_READ_ATTEMPTS; i++) {
        try {
          return deltaLog.readCommitIfExists(version).orElse(null);
        } catch (Throwable e) {
          last = e;
          interrupted |= Thread.interrupted();
          pause(i);
          interrupted |= Thread.interrupted();
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    outcomeUnknown = true;
    Throwable cause = writeFailure != null ? writeFailure : last;
    throw ErrorClass.FILECOMMIT_COMMIT_STATE_UNKNOWN.error("Cannot tell whether commit " + version + " of " + table
        + " landed: the store failed (" + (writeFailure == null ? "the version was taken" : writeFailure)
        + ") and reading the version back failed (" + last + "). Every written file was kept; call again with the "
        + "same txn to converge", cause, Map.of("version", Long.toString(version), "table", table, "txnId", txnId));
  }

  /** Whether a commit's commitInfo carries this transaction's id. */
  private boolean isOurs(List<Action> commit) {
    for (Action a : commit) {
      if (a instanceof CommitInfo ci) {
        return txnId.equals(ci.txnId());
      }
    }
    return false;
  }

  /** Short pause before trying the store again: 20, 40, 80 ms. */
  static void pause(int attempt) {
    try {
      Thread.sleep(20L << Math.min(attempt, 4));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Short randomized pause after the 4th lost race in a row, at most ~50 ms, so hot tables settle. */
  static void backoff(int lost) {
    if (lost < 4) {
      return;
    }
    long ms = Math.min(50, 1L << Math.min(lost - 3, 6));
    try {
      Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextLong(ms / 2, ms + 1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
