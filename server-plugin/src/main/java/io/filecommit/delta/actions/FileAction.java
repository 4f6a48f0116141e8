package io.filecommit.delta.actions;

import java.io.Serializable;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A file action of the Delta log (protocol "Add File and Remove File", "Add CDC File").
 *
 * <p>Instances cross from executors to the driver inside a Spark {@code TaskCommitMessage}, so every
 * implementation is {@link Serializable} with serializable fields only. {@code path} is relative to
 * the table root and URI-encoded exactly as written in the log.
 */
public sealed interface FileAction extends Action, Serializable permits AddFile, RemoveFile, AddCDCFile {

  /** {@return the path relative to the table root, URI-encoded as in the log (e.g. {@code a=x%252Fy/part-...})} */
  String path();

  /** {@return partition column -> value as string; a {@code null} value is SQL NULL; never null itself} */
  Map<String, String> partitionValues();

  /** {@return whether the action changes the table's data (false for change-data files)} */
  boolean dataChange();

  /**
   * Copies a partition-value map into an unmodifiable, serializable, insertion-ordered map that
   * allows null values.
   *
   * @param values the map to copy; null is treated as empty
   * @return an unmodifiable copy
   */
  static Map<String, String> copyOf(Map<String, String> values) {
    return values == null
        ? Collections.emptyMap()
        : Collections.unmodifiableMap(new LinkedHashMap<>(values));
  }
}
