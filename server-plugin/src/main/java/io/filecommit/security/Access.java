package io.filecommit.security;

import org.apache.spark.sql.classic.SparkSession;

/**
 * The check every door makes before it reads or writes: does the session's principal hold a
 * privilege on a path (a grant on that path or a prefix of it) or on a catalog table (a grant on
 * the table's name, or on a prefix of its location)? Without authentication ({@link Principals#of}
 * empty) every check passes: the allowed roots alone confine the clients, as before.
 */
public final class Access {
  private Access() {}

  /**
   * Checks a privilege on a path.
   *
   * @param session the command's session
   * @param needed the privilege the operation needs
   * @param path the resolved path (qualified, normalized, inside the allowed roots: {@code
   *     AllowedRoots.resolve})
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_PERMISSION_DENIED} naming
   *     the principal, the privilege and the path
   */
  public static void checkPath(SparkSession session, Privilege needed, String path) {
    // Implemented with the grants store.
  }

  /**
   * Checks a privilege on a catalog table.
   *
   * @param session the command's session
   * @param needed the privilege the operation needs
   * @param table the table's qualified name ({@code catalog.database.table})
   * @param location the table's resolved location
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_PERMISSION_DENIED} naming
   *     the principal, the privilege and the table
   */
  public static void checkTable(SparkSession session, Privilege needed, String table, String location) {
    // Implemented with the grants store.
  }
}
