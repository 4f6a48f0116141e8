package io.filecommit.txn;

import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.RemoveFile;
import java.util.List;

/**
 * What a table command committed, as the contract's {@code CommitSummary} and file actions report
 * it.
 *
 * @param version committed version, or the current version when {@code committed} is false
 * @param committed false when nothing was committed (ignore on an existing table, an applied
 *     {@code txn}, a change that matched nothing)
 * @param tablePath fully qualified table root
 * @param addFiles the added data files
 * @param removeFiles the removed files
 * @param cdcFiles the added change-data files
 * @param numOutputRows rows in the added data files
 * @param numOutputBytes bytes of the added data files
 * @param durationMs wall time of the command, ms
 * @param attempts commit attempts
 * @param rowMetrics rows deleted, updated, inserted and copied by a row-level change ({@link
 *     RowMetrics#NONE} for other commands)
 * @param staged the staged commit when the command was staged instead of committed (then {@code
 *     version} is the read version and nothing is in the log yet), else null
 */
public record CommandResult(
    long version,
    boolean committed,
    String tablePath,
    List<AddFile> addFiles,
    List<RemoveFile> removeFiles,
    List<AddCDCFile> cdcFiles,
    long numOutputRows,
    long numOutputBytes,
    long durationMs,
    int attempts,
    RowMetrics rowMetrics,
    CommitStager.Staged staged) {

  /**
   * A result without a staged commit.
   *
   * @param version committed version, or the current version when {@code committed} is false
   * @param committed false when nothing was committed
   * @param tablePath fully qualified table root
   * @param addFiles the added data files
   * @param removeFiles the removed files
   * @param cdcFiles the added change-data files
   * @param numOutputRows rows in the added data files
   * @param numOutputBytes bytes of the added data files
   * @param durationMs wall time of the command, ms
   * @param attempts commit attempts
   * @param rowMetrics row counts of a row-level change ({@link RowMetrics#NONE} for other commands)
   */
  public CommandResult(long version, boolean committed, String tablePath, List<AddFile> addFiles,
      List<RemoveFile> removeFiles, List<AddCDCFile> cdcFiles, long numOutputRows, long numOutputBytes, long durationMs,
      int attempts, RowMetrics rowMetrics) {
    this(version, committed, tablePath, addFiles, removeFiles, cdcFiles, numOutputRows, numOutputBytes, durationMs,
        attempts, rowMetrics, null);
  }

  /**
   * The result of a command that committed nothing.
   *
   * @param version the table's current version
   * @param table the table root
   * @param start when the command started, ms since the epoch
   * @param attempts commit attempts made (0 when none)
   * @return a result with {@code committed=false} and no actions
   */
  public static CommandResult nothingCommitted(long version, String table, long start, int attempts) {
    return new CommandResult(version, false, table, List.of(), List.of(), List.of(), 0, 0,
        System.currentTimeMillis() - start, attempts, RowMetrics.NONE);
  }

  /**
   * {rows, bytes} of added files: rows from the statistics' {@code numRecords} (0 for a file
   * without a trustworthy count), bytes from {@code size}.
   *
   * @param adds the added files
   * @return a two-element array: rows, then bytes
   */
  public static long[] rowsAndBytes(List<AddFile> adds) {
    long rows = 0;
    long bytes = 0;
    for (AddFile a : adds) {
      rows += a.numPhysicalRecords().orElse(0);
      bytes += a.size();
    }
    return new long[] {rows, bytes};
  }
}
