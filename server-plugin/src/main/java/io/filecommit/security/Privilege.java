package io.filecommit.security;

/**
 * What a grant allows on a path prefix or a catalog table. Each privilege includes the ones
 * before it, as Unity Catalog's ownership includes every privilege on the object:
 *
 * <ul>
 *   <li>{@link #READ}: read the table (snapshots, time travel, the change data feed, history) or
 *       the files below the path.
 *   <li>{@link #WRITE}: append, overwrite, DELETE / UPDATE / MERGE, stage, publish, abort and read
 *       staged commits, {@code stage_files}, batch-id sinks (Unity Catalog's MODIFY).
 *   <li>{@link #MAINTAIN}: OPTIMIZE, VACUUM, RESTORE, table properties and constraints.
 *   <li>{@link #OWNER}: create, drop, replace and ALTER the table.
 * </ul>
 */
public enum Privilege {
  /** Read the table or the files below the path. */
  READ,
  /** Change the table's data (includes READ). */
  WRITE,
  /** Maintain the table: OPTIMIZE, VACUUM, RESTORE, properties, constraints (includes WRITE). */
  MAINTAIN,
  /** Create, drop, replace and ALTER the table (includes MAINTAIN). */
  OWNER;

  /**
   * Whether holding this privilege allows what {@code needed} allows.
   *
   * @param needed the privilege an operation needs
   * @return true when this privilege is {@code needed} or above it
   */
  public boolean includes(Privilege needed) {
    return ordinal() >= needed.ordinal();
  }
}
