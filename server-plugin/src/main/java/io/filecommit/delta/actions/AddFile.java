package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Map;

/**
 * Delta {@code add} action: a data file that is part of the table (protocol "Add File and Remove
 * File"; Delta's {@code AddFile}).
 *
 * @param path relative, URI-encoded path of the file under the table root
 * @param partitionValues partition column -> string value ({@code null} for SQL NULL); {@code {}} if
 *     unpartitioned; always written
 * @param size file size in bytes
 * @param modificationTime last modification time of the file, ms since the Unix epoch
 * @param dataChange true for data written by a write command
 * @param stats statistics JSON ({@code numRecords}, {@code minValues}, {@code maxValues},
 *     {@code nullCount}) or {@code null} when not collected
 * @param tags free-form string tags, never null (left out of the log when empty)
 * @param deletionVector the file's deletion vector, or null
 * @param baseRowId the first fresh row ID of the file (protocol "Row Tracking": a row's default
 *     row ID is this plus its physical index in the file), or null
 * @param defaultRowCommitVersion the version that first committed this file (protocol "Row
 *     Tracking"), or null
 * @param clusteringProvider the clustering that laid out the file ({@code liquid}; protocol
 *     "Clustered Table"), or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"path", "partitionValues", "size", "modificationTime", "dataChange", "stats", "tags", "deletionVector", "baseRowId",
    "defaultRowCommitVersion", "clusteringProvider"})
public record AddFile(
    String path,
    @JsonInclude(JsonInclude.Include.ALWAYS) Map<String, String> partitionValues,
    long size,
    long modificationTime,
    @JsonProperty("dataChange") boolean dataChange,
    String stats,
    @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> tags,
    DeletionVectorDescriptor deletionVector,
    Long baseRowId,
    Long defaultRowCommitVersion,
    String clusteringProvider)
    implements FileAction {

  /**
   * Normalizes the maps into unmodifiable serializable copies.
   *
   * @param path relative, URI-encoded path of the file under the table root
   * @param partitionValues partition column -> string value; null becomes empty
   * @param size file size in bytes
   * @param modificationTime ms since the Unix epoch
   * @param dataChange true for data written by a write command
   * @param stats statistics JSON, or null
   * @param tags free-form string tags; null becomes empty
   * @param deletionVector the file's deletion vector, or null
   * @param baseRowId the first fresh row ID, or null
   * @param defaultRowCommitVersion the version that first committed the file, or null
   * @param clusteringProvider {@code liquid} for a clustered file, or null
   */
  public AddFile {
    partitionValues = FileAction.copyOf(partitionValues);
    tags = FileAction.copyOf(tags);
  }

  /**
   * An AddFile without deletion vector.
   *
   * @param path relative, URI-encoded path of the file under the table root
   * @param partitionValues partition column -> string value
   * @param size file size in bytes
   * @param modificationTime ms since the Unix epoch
   * @param dataChange true for data written by a write command
   * @param stats statistics JSON, or null
   * @param tags free-form string tags
   * @see #AddFile(String, Map, long, long, boolean, String, Map, DeletionVectorDescriptor)
   */
  public AddFile(String path, Map<String, String> partitionValues, long size, long modificationTime,
      boolean dataChange, String stats, Map<String, String> tags) {
    this(path, partitionValues, size, modificationTime, dataChange, stats, tags, null);
  }

  /**
   * An AddFile without row tracking fields or clustering provider.
   *
   * @param path relative, URI-encoded path of the file under the table root
   * @param partitionValues partition column -> string value
   * @param size file size in bytes
   * @param modificationTime ms since the Unix epoch
   * @param dataChange true for data written by a write command
   * @param stats statistics JSON, or null
   * @param tags free-form string tags
   * @param deletionVector the file's deletion vector, or null
   */
  public AddFile(String path, Map<String, String> partitionValues, long size, long modificationTime,
      boolean dataChange, String stats, Map<String, String> tags, DeletionVectorDescriptor deletionVector) {
    this(path, partitionValues, size, modificationTime, dataChange, stats, tags, deletionVector, null, null, null);
  }

  /**
   * A copy with the row tracking fields set (protocol "Row Tracking").
   *
   * @param newBaseRowId the first fresh row ID, or null
   * @param newDefaultRowCommitVersion the version that first committed the file, or null
   * @return the copy
   */
  public AddFile withRowTracking(Long newBaseRowId, Long newDefaultRowCommitVersion) {
    return new AddFile(path, partitionValues, size, modificationTime, dataChange, stats, tags, deletionVector,
        newBaseRowId, newDefaultRowCommitVersion, clusteringProvider);
  }

  /**
   * A copy with a clustering provider (protocol "Clustered Table").
   *
   * @param provider the clustering implementation that laid the file out, e.g. {@code liquid}
   * @return the copy
   */
  public AddFile withClusteringProvider(String provider) {
    return new AddFile(path, partitionValues, size, modificationTime, dataChange, stats, tags, deletionVector,
        baseRowId, defaultRowCommitVersion, provider);
  }

  /**
   * A copy with another {@code dataChange} flag (row tracking fields and clustering provider kept).
   *
   * @param newDataChange the flag
   * @return the copy
   */
  public AddFile withDataChange(boolean newDataChange) {
    return new AddFile(path, partitionValues, size, modificationTime, newDataChange, stats, tags, deletionVector,
        baseRowId, defaultRowCommitVersion, clusteringProvider);
  }

  @Override
  public String actionName() {
    return "add";
  }

  /**
   * The {@code remove} action that takes this file out of the table.
   *
   * @param deletionTimestamp ms since the Unix epoch
   * @return a RemoveFile with extended file metadata (partition values and size), this file's
   *     deletion vector, if any (protocol "Deletion Vectors": a remove names the (path, DV) pair),
   *     and its row tracking fields (protocol "Row Tracking")
   */
  public RemoveFile toRemove(long deletionTimestamp) {
    return new RemoveFile(path, deletionTimestamp, true, true, partitionValues, size, deletionVector, baseRowId,
        defaultRowCommitVersion);
  }

  /**
   * The number of rows physically stored in the file: {@code numRecords} of its statistics
   * (protocol "Per-file Statistics"; with a deletion vector it still counts the deleted rows),
   * parsed as JSON. Empty when the file has no statistics or {@code numRecords} is absent, null, not
   * an integer or negative: such a count is not to be trusted.
   *
   * @return the row count, or empty
   */
  public java.util.OptionalLong numPhysicalRecords() {
    if (stats == null) {
      return java.util.OptionalLong.empty();
    }
    try {
      com.fasterxml.jackson.databind.JsonNode n = Actions.MAPPER.readTree(stats).get("numRecords");
      return n != null && n.isIntegralNumber() && n.canConvertToLong() && n.asLong() >= 0
          ? java.util.OptionalLong.of(n.asLong()) : java.util.OptionalLong.empty();
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      return java.util.OptionalLong.empty();
    }
  }

  /**
   * The number of live rows: {@link #numPhysicalRecords()} minus the deletion vector's cardinality.
   * Empty when the count is not to be trusted.
   *
   * @return the live row count, or empty
   */
  public java.util.OptionalLong numLogicalRecords() {
    java.util.OptionalLong n = numPhysicalRecords();
    return n.isEmpty() ? n : java.util.OptionalLong.of(n.getAsLong()
        - (deletionVector == null ? 0 : deletionVector.cardinality()));
  }

  /**
   * A copy with another deletion vector and statistics (the same physical file).
   *
   * @param dv the new deletion vector, or null
   * @param newStats the statistics JSON that goes with it
   * @return the copy, with {@code dataChange=true}, the row tracking fields kept (protocol "Row
   *     Tracking": a recommitted file keeps them)
   */
  public AddFile withDeletionVector(DeletionVectorDescriptor dv, String newStats) {
    return new AddFile(path, partitionValues, size, modificationTime, true, newStats, tags, dv, baseRowId,
        defaultRowCommitVersion, clusteringProvider);
  }
}
