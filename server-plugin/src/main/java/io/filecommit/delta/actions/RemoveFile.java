package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Map;

/**
 * Delta {@code remove} action: a data file that leaves the table (protocol "Add File and Remove
 * File"; Delta's {@code RemoveFile}).
 *
 * @param path relative, URI-encoded path, equal to the path of the {@code add} it removes
 * @param deletionTimestamp when the file was removed, ms since the Unix epoch
 * @param dataChange true when the removal changes the table's data
 * @param extendedFileMetadata true when {@code partitionValues} and {@code size} are present
 * @param partitionValues partition values of the removed file
 * @param size size in bytes, or {@code null} when unknown
 * @param deletionVector the deletion vector of the removed (path, DV) pair, or null
 * @param baseRowId the removed file's {@code baseRowId} (protocol "Row Tracking"), or null
 * @param defaultRowCommitVersion the removed file's {@code defaultRowCommitVersion}, or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"path", "partitionValues", "deletionTimestamp", "dataChange", "extendedFileMetadata", "size",
    "deletionVector", "baseRowId", "defaultRowCommitVersion"})
public record RemoveFile(
    String path,
    long deletionTimestamp,
    @JsonProperty("dataChange") boolean dataChange,
    boolean extendedFileMetadata,
    @JsonInclude(JsonInclude.Include.ALWAYS) Map<String, String> partitionValues,
    Long size,
    DeletionVectorDescriptor deletionVector,
    Long baseRowId,
    Long defaultRowCommitVersion)
    implements FileAction {

  /**
   * Normalizes the partition values into an unmodifiable serializable copy.
   *
   * @param path relative, URI-encoded path, equal to the path of the {@code add} it removes
   * @param deletionTimestamp when the file was removed, ms since the Unix epoch
   * @param dataChange true when the removal changes the table's data
   * @param extendedFileMetadata true when {@code partitionValues} and {@code size} are present
   * @param partitionValues partition values of the removed file; null becomes empty
   * @param size size in bytes, or null when unknown
   * @param deletionVector the deletion vector of the removed (path, DV) pair, or null
   * @param baseRowId the removed file's {@code baseRowId} (protocol "Row Tracking"), or null
   * @param defaultRowCommitVersion the removed file's {@code defaultRowCommitVersion}, or null
   */
  public RemoveFile {
    partitionValues = FileAction.copyOf(partitionValues);
  }

  /**
   * A RemoveFile of a file without deletion vector.
   *
   * @param path relative, URI-encoded path, equal to the path of the {@code add} it removes
   * @param deletionTimestamp when the file was removed, ms since the Unix epoch
   * @param dataChange true when the removal changes the table's data
   * @param extendedFileMetadata true when {@code partitionValues} and {@code size} are present
   * @param partitionValues partition values of the removed file
   * @param size size in bytes, or null when unknown
   */
  public RemoveFile(String path, long deletionTimestamp, boolean dataChange, boolean extendedFileMetadata,
      Map<String, String> partitionValues, Long size) {
    this(path, deletionTimestamp, dataChange, extendedFileMetadata, partitionValues, size, null, null, null);
  }

  @Override
  public String actionName() {
    return "remove";
  }
}
