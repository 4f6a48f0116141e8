package io.filecommit.delta;

import io.filecommit.delta.actions.Metadata;
import java.util.Optional;

/**
 * The hidden data-file columns that keep stable row IDs and row commit versions through rewrites
 * (protocol "Row Tracking", materialized Row IDs and Row Commit Versions; Delta's {@code
 * MaterializedRowId} / {@code MaterializedRowCommitVersion}). They are not in the table schema;
 * their names are in the table configuration. A NULL (or absent column) means the row's default
 * generated value: {@code baseRowId} + the row's index in the file, and the file's {@code
 * defaultRowCommitVersion}.
 *
 * @param rowId the materialized row ID column (long)
 * @param rowCommitVersion the materialized row commit version column (long)
 */
public record MaterializedRowTracking(String rowId, String rowCommitVersion) {
  /** Table configuration key naming the materialized row ID column. */
  public static final String ROW_ID_KEY = "delta.rowTracking.materializedRowIdColumnName";
  /** Table configuration key naming the materialized row commit version column. */
  public static final String ROW_COMMIT_VERSION_KEY = "delta.rowTracking.materializedRowCommitVersionColumnName";

  /**
   * The materialized columns of a table whose row tracking is enabled ({@code
   * delta.enableRowTracking=true}, both names set): only then do writers preserve row IDs.
   *
   * @param md the table's metadata, or null
   * @return the column names, empty when row tracking is not enabled
   */
  public static Optional<MaterializedRowTracking> of(Metadata md) {
    if (md == null || !TableConfig.ENABLE_ROW_TRACKING.fromMetadata(md)) {
      return Optional.empty();
    }
    String id = md.configuration().get(ROW_ID_KEY);
    String version = md.configuration().get(ROW_COMMIT_VERSION_KEY);
    return id == null || version == null ? Optional.empty() : Optional.of(new MaterializedRowTracking(id, version));
  }

  /**
   * Whether a column name is one of the two.
   *
   * @param name a column name
   * @return true for {@link #rowId} or {@link #rowCommitVersion}
   */
  public boolean isColumn(String name) {
    return rowId.equals(name) || rowCommitVersion.equals(name);
  }
}
