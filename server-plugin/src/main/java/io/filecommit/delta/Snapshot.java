package io.filecommit.delta;

import io.filecommit.actions.AddFile;
import java.util.Collection;
import java.util.Collections;
import java.util.Map;

/**
 * The state of a Delta table at one version: protocol, metadata and the active files (protocol
 * section "Action Reconciliation").
 *
 * @param version the table version, or -1 when the table does not exist yet
 * @param protocol the protocol, null when the table does not exist
 * @param metadata the metadata, null when the table does not exist
 * @param activeFiles active AddFiles by log path
 */
public record Snapshot(long version, Protocol protocol, Metadata metadata, Map<String, AddFile> activeFiles) {

  /** Wraps the active files in an unmodifiable view. */
  public Snapshot {
    activeFiles = Collections.unmodifiableMap(activeFiles);
  }

  /** Whether a table exists at this snapshot (version 0 or later). */
  public boolean exists() {
    return version >= 0;
  }

  /** The active AddFiles. */
  public Collection<AddFile> allFiles() {
    return activeFiles.values();
  }
}
