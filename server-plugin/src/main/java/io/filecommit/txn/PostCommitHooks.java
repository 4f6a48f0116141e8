package io.filecommit.txn;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work after a commit landed (Delta's {@code PostCommitHook}s): the snapshot cache moves to the new
 * version, and a checkpoint is written when the version is a multiple of {@code
 * delta.checkpointInterval} (protocol "Checkpoints"), after which expired log files are cleaned up
 * (protocol "Metadata Cleanup"; {@code DeltaLog.cleanupExpiredLogs}). The commit has landed already, so nothing
 * here may turn it into a reported failure or delete a file: every failure is logged and
 * swallowed (readers fall back to the JSON commits; the next snapshot asks Kernel).
 */
final class PostCommitHooks {
  private static final Logger LOG = LoggerFactory.getLogger(PostCommitHooks.class);

  private PostCommitHooks() {}

  /**
   * Runs the hooks of a landed commit.
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
      rethrowIfFatal(e);
      LOG.warn("filecommit: snapshot cache of " + log.tablePath() + " not moved to version " + version + ": " + e);
      try {
        log.invalidateCache();
      } catch (RuntimeException ignored) {
        // the next snapshot asks Kernel anyway when the cache is not provably current
      }
    }
    int interval = TableConfig.CHECKPOINT_INTERVAL.fromMetadata(metadata);
    if (version > 0 && version % interval == 0) {
      try {
        if (log.checkpoint(version)) {
          log.cleanupExpiredLogs(metadata);
        }
      } catch (Throwable e) {
        rethrowIfFatal(e);
        LOG.warn("filecommit: checkpoint of " + log.tablePath() + " at version " + version + " skipped: " + e, e);
      }
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
