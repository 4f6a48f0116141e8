package io.filecommit.actions;

import java.util.Map;

/**
 * Delta {@code add} action: a data file that becomes part of the table (protocol "Add File and
 * Remove File"; seed DelayedCommitProtocol "commitTask").
 *
 * @param path relative, URI-encoded path of the file under the table root
 * @param partitionValues partition column -> string value ({@code null} for SQL NULL); {@code {}} if
 *     unpartitioned
 * @param size file size in bytes
 * @param modificationTime last modification time of the file, ms since the Unix epoch
 * @param dataChange true for data written by a write command
 * @param stats statistics JSON ({@code numRecords}, {@code minValues}, {@code maxValues},
 *     {@code nullCount}) or {@code null} when not collected
 * @param tags free-form string tags, never null (may be empty)
 * @param deletionVector the file's deletion vector, or null (files filecommit writes have none)
 */
public record AddFile(
    String path,
    Map<String, String> partitionValues,
    long size,
    long modificationTime,
    boolean dataChange,
    String stats,
    Map<String, String> tags,
    DeletionVector deletionVector)
    implements FileAction {

  /** Normalizes the maps into unmodifiable serializable copies. */
  public AddFile {
    partitionValues = FileAction.copyOf(partitionValues);
    tags = FileAction.copyOf(tags);
  }

  /**
   * An AddFile without deletion vector (every file filecommit writes).
   *
   * @see #AddFile(String, Map, long, long, boolean, String, Map, DeletionVector)
   */
  public AddFile(String path, Map<String, String> partitionValues, long size, long modificationTime,
      boolean dataChange, String stats, Map<String, String> tags) {
    this(path, partitionValues, size, modificationTime, dataChange, stats, tags, null);
  }

  /**
   * The {@code remove} action that takes this file out of the table.
   *
   * @param deletionTimestamp ms since the Unix epoch
   * @return a RemoveFile with extended file metadata (partition values and size) and this file's
   *     deletion vector, if any (protocol "Deletion Vectors": a remove names the (path, DV) pair)
   */
  public RemoveFile toRemove(long deletionTimestamp) {
    return new RemoveFile(path, deletionTimestamp, true, true, partitionValues, size, deletionVector);
  }
}
