package io.filecommit.txn;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import java.util.List;
import org.apache.spark.sql.classic.SparkSession;

/**
 * Work that runs after a commit landed (Delta's {@code PostCommitHook}, registered with {@code
 * OptimisticTransaction.registerPostCommitHook}). Two kinds run here:
 *
 * <ul>
 *   <li>the hooks of every version ({@link PostCommitHooks#VERSION_HOOKS}: the version checksum
 *       file, the checkpoint with the log clean-up after it), run by whoever published the version
 *       (one commit, or a group commit of several transactions);
 *   <li>the hooks a command registers on its own transaction ({@link
 *       OptimisticTransaction#registerPostCommitHook}, e.g. auto compaction), run once that
 *       transaction's actions have landed, in the command's thread, before it answers.
 * </ul>
 *
 * The commit has landed already, so a hook never turns it into a failure: whatever a hook throws
 * is logged and swallowed ({@link PostCommitHooks#runSafely}); a hook must not delete a file that a
 * version references.
 */
public interface PostCommitHook {
  /** {@return the hook's name, for logs (Delta's {@code PostCommitHook.name})} */
  String name();

  /**
   * Runs the hook.
   *
   * @param committed what landed
   * @throws java.io.IOException when its I/O fails (logged; the commit stands)
   */
  void run(Committed committed) throws java.io.IOException;

  /**
   * A landed commit, as hooks see it.
   *
   * @param session the session of the command that committed (null for the hooks of a version
   *     published on behalf of several transactions, which need none)
   * @param log the table's log
   * @param version the version that landed
   * @param metadata the table's metadata in force after it
   * @param actions the file actions of the transaction that registered the hook (empty for the
   *     hooks of a version)
   */
  record Committed(SparkSession session, DeltaLog log, long version, Metadata metadata,
      List<? extends FileAction> actions) {}
}
