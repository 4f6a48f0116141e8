package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Map;

/**
 * Delta {@code cdc} action: a change-data file under {@code _change_data/} (protocol "Add CDC
 * File"; Delta's {@code AddCDCFile}). Its rows carry {@code _change_type}.
 *
 * @param path relative, URI-encoded path (starts with {@code _change_data/})
 * @param partitionValues partition values without the virtual {@code __is_cdc} column
 * @param size file size in bytes
 * @param tags free-form string tags, never null (left out of the log when empty)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"path", "partitionValues", "size", "dataChange", "tags"})
public record AddCDCFile(
    String path,
    @JsonInclude(JsonInclude.Include.ALWAYS) Map<String, String> partitionValues,
    long size,
    @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> tags)
    implements FileAction {

  /**
   * Normalizes the maps into unmodifiable serializable copies.
   *
   * @param path relative, URI-encoded path (starts with {@code _change_data/})
   * @param partitionValues partition values; null becomes empty
   * @param size file size in bytes
   * @param tags free-form string tags; null becomes empty
   */
  public AddCDCFile {
    partitionValues = FileAction.copyOf(partitionValues);
    tags = FileAction.copyOf(tags);
  }

  /** Always false: change data files never change the table's data (protocol "Add CDC File"). */
  @Override
  @JsonProperty("dataChange")
  public boolean dataChange() {
    return false;
  }

  @Override
  public String actionName() {
    return "cdc";
  }
}
