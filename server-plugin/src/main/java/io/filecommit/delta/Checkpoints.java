package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.Table;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.filecommit.delta.actions.Actions;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.List;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;

/**
 * Writes checkpoints of a table (protocol "Checkpoints", "Last Checkpoint File") with the pieces of
 * Delta Kernel's {@code Table.checkpoint} ({@link KernelInternals#writeCheckpoint}): its checkpoint
 * iterator and Parquet writer, without its check that Kernel itself could enforce the table's
 * write-time rules (CHECK constraints, invariants, generated columns: filecommit enforces them on
 * its writes, and a checkpoint only restates the log), and without the tombstones of files the
 * checkpoint lists as added again ({@link CheckpointTombstones}; Kernel 4.4 keeps them). Tables
 * with {@code delta.checkpointPolicy = v2} get UUID-named V2 checkpoints with sidecars instead
 * ({@link V2Checkpoints}), as Delta writes them.
 */
final class Checkpoints {
  private Checkpoints() {}

  /**
   * Writes a checkpoint of {@code version} and {@code _last_checkpoint}. A checkpoint that already
   * exists is fine.
   *
   * @param log the table's log
   * @param version a committed version
   * @return true when written, false when it existed
   * @throws IOException when writing fails
   * @throws RuntimeException (Kernel's) when Kernel cannot read the table at that version
   */
  static boolean write(DeltaLog log, long version) throws IOException {
    io.delta.kernel.Snapshot snapshot = kernelSnapshot(log, version);
    if (V2Checkpoints.applies(KernelInternals.protocol(snapshot), snapshot.getTableProperties())) {
      return V2Checkpoints.write(log, snapshot, version, V2Checkpoints.ACTIONS_PER_SIDECAR) != null;
    }
    boolean written = KernelInternals.writeCheckpoint(log.engine(), snapshot, checkpointFile(log, version), version);
    if (written) {
      fixLastCheckpointSize(log, version);
    }
    return written;
  }

  private static io.delta.kernel.Snapshot kernelSnapshot(DeltaLog log, long version) throws IOException {
    Table table = Table.forPath(log.engine(), log.tablePath().toString());
    try {
      return table.getSnapshotAsOfVersion(log.engine(), version);
    } catch (TableNotFoundException e) {
      throw new FileNotFoundException("No Delta table at " + log.tablePath() + ": " + e.getMessage());
    }
  }

  private static Path checkpointFile(DeltaLog log, long version) {
    return new Path(log.logPath(), String.format("%020d.checkpoint.parquet", version));
  }

  /**
   * Rewrites {@code _last_checkpoint} of {@code version} with {@code size} = the number of actions
   * in the checkpoint (protocol "Last Checkpoint File": "the number of actions that are stored in
   * the checkpoint"), counted from the Parquet footer (one row per action) — Kernel 4.4 writes
   * another count there. Only when the file still names {@code version}; best effort.
   */
  private static void fixLastCheckpointSize(DeltaLog log, long version) {
    Path last = new Path(log.logPath(), "_last_checkpoint");
    Path file = checkpointFile(log, version);
    try {
      JsonNode current;
      try (io.delta.storage.CloseableIterator<String> lines = log.logStore().read(last, log.conf())) {
        current = lines.hasNext() ? Actions.MAPPER.readTree(lines.next()) : null;
      }
      if (current == null || current.path("version").asLong(-1) != version || !log.fs().exists(file)) {
        return;
      }
      long rows;
      try (ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromPath(file, log.conf()))) {
        rows = reader.getRecordCount();
      }
      if (current.path("size").asLong(-1) == rows) {
        return;
      }
      ObjectNode fixed = ((ObjectNode) current).deepCopy();
      fixed.put("size", rows);
      log.logStore().write(last, List.of(Actions.MAPPER.writeValueAsString(fixed)).iterator(), true, log.conf());
    } catch (IOException | RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(Checkpoints.class).warn("filecommit: _last_checkpoint size of "
          + log.tablePath() + " left as written: " + e);
    }
  }

  /**
   * Deletes the log files that expired under the table's {@code delta.logRetentionDuration} when
   * {@code delta.enableExpiredLogCleanup} is on (protocol "Metadata Cleanup", with Kernel's {@code
   * MetadataCleanup}): first, when files are about to expire and the newest checkpoint is a
   * UUID-named V2 checkpoint, a classic-named one of the same version ({@link
   * V2Checkpoints#writeCompatibility}, as Delta's metadata cleanup writes it); then commits and
   * checkpoints older than the retention that a later complete checkpoint covers, then the sidecar files no remaining checkpoint references ({@link
   * SidecarCleanup}). Nothing is deleted on a table that protects its checkpoints ({@code
   * delta.requireCheckpointProtectionBeforeVersion} set), since that needs history truncated as a
   * whole, nor when the retention does not parse.
   *
   * @param log the table's log
   * @param md the table's metadata at the latest version
   * @return the number of log and sidecar files deleted
   * @throws IOException when listing or deleting fails
   */
  static long cleanupExpiredLogs(DeltaLog log, io.filecommit.delta.actions.Metadata md) throws IOException {
    if (md == null || !TableConfig.ENABLE_EXPIRED_LOG_CLEANUP.fromMetadata(md)
        || md.configuration().containsKey(CHECKPOINT_PROTECTION_VERSION)) {
      return 0;
    }
    long retentionMs;
    try {
      retentionMs = TableConfig.intervalMs(TableConfig.LOG_RETENTION.fromMetadata(md));
    } catch (IllegalArgumentException e) {
      return 0;
    }
    if (retentionMs < 0) {
      return 0;
    }
    long now = System.currentTimeMillis();
    long compat = V2Checkpoints.compatibilityNeeded(log, now - retentionMs);
    if (compat >= 0) {
      V2Checkpoints.writeCompatibility(log, kernelSnapshot(log, compat), compat);
    }
    long deleted = KernelInternals.cleanupExpiredLogs(log.engine(), log.tablePath().toString(), retentionMs);
    deleted += SidecarCleanup.deleteUnreferenced(log, SidecarCleanup.cutOff(now, retentionMs));
    if (deleted > 0) {
      log.invalidateCache();
    }
    return deleted;
  }

  /** Table property of the checkpointProtection feature: versions below it keep their history. */
  private static final String CHECKPOINT_PROTECTION_VERSION = "delta.requireCheckpointProtectionBeforeVersion";
}
