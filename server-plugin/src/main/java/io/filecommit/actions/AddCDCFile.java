package io.filecommit.actions;

import java.util.Map;

/**
 * Delta {@code cdc} action: a change-data file under {@code _change_data/} (protocol "Add CDC File";
 * seed DelayedCommitProtocol "buildActionFromAddedFile"). Its rows carry {@code _change_type}.
 *
 * @param path relative, URI-encoded path (starts with {@code _change_data/})
 * @param partitionValues partition values without the virtual {@code __is_cdc} column
 * @param size file size in bytes
 * @param tags free-form string tags, never null
 */
public record AddCDCFile(String path, Map<String, String> partitionValues, long size, Map<String, String> tags)
    implements FileAction {

  /** Normalizes the maps into unmodifiable serializable copies. */
  public AddCDCFile {
    partitionValues = FileAction.copyOf(partitionValues);
    tags = FileAction.copyOf(tags);
  }

  /** Always false: change data files never change the table's data (protocol "Add CDC File"). */
  @Override
  public boolean dataChange() {
    return false;
  }
}
