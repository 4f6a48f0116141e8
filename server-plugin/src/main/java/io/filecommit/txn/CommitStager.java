package io.filecommit.txn;

import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import java.util.List;

/**
 * Where a transaction's commit goes when it is staged instead of published: handed to the
 * transaction ({@link OptimisticTransaction#stageInstead}), it takes the commit in place of the
 * commit loop, and nothing reaches {@code _delta_log} until a client publishes the staged commit
 * (protocol "Optimistic Concurrency Control": the publish judges it then against every version
 * since its read version). Delta hands its transaction a {@code CommitCoordinatorClient} in the
 * same way, whose {@code commit} may hold a commit as a staged commit file before it is
 * backfilled into the log; Delta has no commit held back for a client to publish or abort. The
 * staging sub-package of this package implements it, keeps the staged commits and publishes them.
 */
public interface CommitStager {
  /**
   * Stores the commit of {@code txn} as a staged commit. Called by {@link
   * OptimisticTransaction#commit} after its own checks (append-only tables, identity high-water
   * marks, no domain metadata) and before any version is written; the transaction then counts as
   * committed and its commit returns the read version.
   *
   * @param txn the transaction: its snapshot (the read version), {@link
   *     OptimisticTransaction#newMetadata} and {@link OptimisticTransaction#newProtocol}
   * @param reads what it read and removes, as the conflict rules judge it at publish
   * @param operation what the commit does ({@code commitInfo} operation, parameters, metrics)
   * @param actions its file actions
   * @return the staged commit
   * @throws io.filecommit.errors.FileCommitException when the commit cannot be staged (nothing is
   *     staged; the command aborts and deletes its files)
   */
  Staged stage(OptimisticTransaction txn, ConflictChecker.ReadState reads, Operation operation,
      List<? extends FileAction> actions);

  /**
   * A staged commit as a command's answer reports it (the contract's {@code StagedCommit}
   * message); Delta's {@code CommitResponse.getCommit} is the like of it for a coordinated
   * commit.
   */
  interface Staged {
    /** {@return its server-issued id (a UUID)} */
    String id();

    /** {@return the version its transaction read (-1 when it creates the table)} */
    long readVersion();

    /** {@return when it was staged, ms since the epoch} */
    long createdTime();

    /** {@return when it expires, ms since the epoch} */
    long expirationTime();

    /** {@return its {@code commitInfo.operation}} */
    String operation();

    /** {@return the verified principal that staged it, or null when the server authenticates no one} */
    String stagedBy();

    /** {@return the protocol it commits, or null} */
    Protocol protocol();

    /** {@return the metadata it commits, or null} */
    Metadata metadata();
  }
}
