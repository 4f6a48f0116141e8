package io.filecommit.actions;

import java.util.Map;

/**
 * Delta {@code remove} action: a data file that leaves the table, e.g. on overwrite (protocol "Add
 * File and Remove File").
 *
 * @param path relative, URI-encoded path, equal to the path of the {@code add} it removes
 * @param deletionTimestamp when the file was removed, ms since the Unix epoch
 * @param dataChange true when the removal changes the table's data
 * @param extendedFileMetadata true when {@code partitionValues} and {@code size} are present
 * @param partitionValues partition values of the removed file
 * @param size size in bytes, or {@code null} when unknown
 * @param deletionVector the deletion vector of the removed (path, DV) pair, or null
 */
public record RemoveFile(
    String path,
    long deletionTimestamp,
    boolean dataChange,
    boolean extendedFileMetadata,
    Map<String, String> partitionValues,
    Long size,
    DeletionVector deletionVector)
    implements FileAction {

  /** Normalizes the partition values into an unmodifiable serializable copy. */
  public RemoveFile {
    partitionValues = FileAction.copyOf(partitionValues);
  }

  /** A RemoveFile of a file without deletion vector. */
  public RemoveFile(String path, long deletionTimestamp, boolean dataChange, boolean extendedFileMetadata,
      Map<String, String> partitionValues, Long size) {
    this(path, deletionTimestamp, dataChange, extendedFileMetadata, partitionValues, size, null);
  }
}
