package io.filecommit.files;

import io.filecommit.delta.PartitionPaths;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.FileAction;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The action of a file a write task added (Delta's {@code DelayedCommitProtocol.buildActionFromAddedFile};
 * protocol "Add File and Remove File", "Add CDC File"): {@code __is_cdc} is removed from the
 * partition values; {@code __is_cdc=true} gives an AddCDCFile, anything else an AddFile with {@code
 * dataChange=true} and its statistics JSON. The path in the action is the relative path, URI-encoded
 * ({@code PartitionPaths.toLogPath}).
 */
final class AddedFileActions {
  private AddedFileActions() {}

  /** The statistics JSON of a data file, computed only for an AddFile. */
  interface Stats {
    /**
     * {@return the statistics JSON (protocol "Per-file Statistics")}
     *
     * @throws IOException when the footer cannot be read
     */
    String json() throws IOException;
  }

  /**
   * The action of one added file.
   *
   * @param f (partition values as parsed from the directory, {@code __is_cdc} included; relative
   *     path, unescaped)
   * @param length the file's length in bytes
   * @param modificationTime the file's modification time, ms since the epoch
   * @param stats its statistics, asked only for an AddFile
   * @return the AddFile or AddCDCFile
   * @throws IOException when the statistics cannot be read
   */
  static FileAction of(Map.Entry<Map<String, String>, String> f, long length, long modificationTime, Stats stats)
      throws IOException {
    Map<String, String> partitionValues = new LinkedHashMap<>(f.getKey());
    String isCdc = partitionValues.remove(DelayedCommitProtocol.CDC_PARTITION_COL);
    String logPath = PartitionPaths.toLogPath(f.getValue());
    if ("true".equals(isCdc)) {
      return new AddCDCFile(logPath, partitionValues, length, Map.of());
    }
    return new AddFile(logPath, partitionValues, length, modificationTime, true, stats.json(), Map.of());
  }
}
