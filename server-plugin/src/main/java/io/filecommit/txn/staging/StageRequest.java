package io.filecommit.txn.staging;

import io.filecommit.delta.actions.FileAction;
import io.filecommit.txn.CommitStager;
import io.filecommit.txn.ConflictChecker;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import java.util.List;

/**
 * A request to stage a command's commit instead of publishing it (see {@link StagedCommit}): the
 * {@link CommitStager} a command hands its transaction ({@link OptimisticTransaction#stageInstead}),
 * which stores the commit in the {@link StagingStore}.
 *
 * @param expiresAfterMs how long the staged commit may be published, ms after it is staged (> 0);
 *     after that the server deletes its files
 * @param foreignFiles whether the staged files were written by another process: abort and expiry
 *     then delete none of them
 */
public record StageRequest(long expiresAfterMs, boolean foreignFiles) implements CommitStager {
  /**
   * A request for files the server writes itself.
   *
   * @param expiresAfterMs how long the staged commit may be published, ms after it is staged (> 0)
   */
  public StageRequest(long expiresAfterMs) {
    this(expiresAfterMs, false);
  }

  /**
   * Checks the expiry.
   *
   * @param expiresAfterMs how long the staged commit may be published, ms after it is staged
   * @param foreignFiles whether the staged files were written by another process
   * @throws IllegalArgumentException when {@code expiresAfterMs <= 0}
   */
  public StageRequest {
    if (expiresAfterMs <= 0) {
      throw new IllegalArgumentException("expiresAfterMs must be > 0, got " + expiresAfterMs);
    }
  }

  /**
   * Stores the commit as a staged commit under {@code _delta_log/_staged} ({@link StagingStore}),
   * after checking the table's bound of pending staged commits ({@link PendingStagedCommits}).
   *
   * @param txn the transaction about to commit
   * @param reads what it read and removes
   * @param operation what the commit does
   * @param actions its file actions
   * @return the staged commit, with a new id
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_TOO_MANY_STAGED_COMMITS},
   *     {@code FILECOMMIT_LOG_READ_FAILED} when the pending ones cannot be counted, {@code
   *     FILECOMMIT_LOG_WRITE_FAILED} when the record cannot be written (nothing is staged)
   */
  @Override
  public StagedCommit stage(OptimisticTransaction txn, ConflictChecker.ReadState reads, Operation operation,
      List<? extends FileAction> actions) {
    PendingStagedCommits.checkRoom(txn.deltaLog());
    StagedCommit staged = StagedCommit.of(txn, this, reads, operation, actions);
    StagingStore.write(txn.deltaLog(), staged);
    return staged;
  }
}
