package io.filecommit.security;

import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The check every door makes before it reads or writes: does the session's principal hold a
 * privilege on a path (a grant on that path or a prefix of it) or on a catalog table (a grant on
 * the table's name, or on a prefix of its location)? Unity Catalog's model: privileges checked at
 * the time of the operation, ownership including every other privilege.
 *
 * <ul>
 *   <li>Without authentication ({@link Principals#of} empty) every check passes: the allowed roots
 *       alone confine the clients, as before.
 *   <li>An admin ({@link Principal#admin()}) holds every privilege (inside the allowed roots, which
 *       the callers check first).
 *   <li>Anyone else needs a grant ({@link Grants}) to itself or one of its groups.
 * </ul>
 *
 * A refusal is {@code FILECOMMIT_PERMISSION_DENIED} with parameters {@code principal}, {@code
 * privilege} and {@code object}, raised before anything is read or written.
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
    Optional<Principal> principal = Principals.of(session);
    if (principal.isPresent() && !principal.get().admin()) {
      checkPath(principal.get(), Grants.of(session), needed, path);
    }
  }

  /**
   * Checks a privilege on a path for a principal.
   *
   * @param principal the verified principal
   * @param grants the server's grants
   * @param needed the privilege
   * @param path the resolved path
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_PERMISSION_DENIED}
   */
  public static void checkPath(Principal principal, Grants grants, Privilege needed, String path) {
    if (!principal.admin() && !grants.holdsPath(principal, needed, path)) {
      throw denied(principal, needed, "path " + path, path);
    }
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
    Optional<Principal> principal = Principals.of(session);
    if (principal.isPresent() && !principal.get().admin()) {
      checkTable(principal.get(), Grants.of(session), needed, table, location);
    }
  }

  /**
   * Checks a privilege on a catalog table for a principal: a grant on its name or on a prefix of
   * its location.
   *
   * @param principal the verified principal
   * @param grants the server's grants
   * @param needed the privilege
   * @param table the qualified name
   * @param location the resolved location, or null
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_PERMISSION_DENIED}
   */
  public static void checkTable(Principal principal, Grants grants, Privilege needed, String table, String location) {
    if (!principal.admin() && !grants.holdsTable(principal, needed, table, location)) {
      throw denied(principal, needed, "table " + table, table);
    }
  }

  /**
   * Checks that the session may change grants (GRANT / REVOKE): an admin, or any caller of a
   * server without authentication (which has no principals to grant to, and trusts every client).
   *
   * @param session the session
   * @param statement what is refused, e.g. {@code GRANT}
   * @param object the statement's object, for the error
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_PERMISSION_DENIED} with
   *     privilege {@code ADMIN}
   */
  public static void checkAdmin(SparkSession session, String statement, String object) {
    Optional<Principal> principal = Principals.of(session);
    if (principal.isPresent() && !principal.get().admin()) {
      throw ErrorClass.FILECOMMIT_PERMISSION_DENIED.error("Principal '" + principal.get().name() + "' may not run "
          + statement + ": only an admin of this server may change grants", Map.of("principal",
          principal.get().name(), "privilege", "ADMIN", "object", object));
    }
  }

  private static FileCommitException denied(Principal principal, Privilege needed, String what, String object) {
    return ErrorClass.FILECOMMIT_PERMISSION_DENIED.error("Principal '" + principal.name() + "' does not hold "
        + needed + " on " + what + " (a grant of " + needed + " or above on it, or on a path above it, to the principal "
        + "or one of its groups is needed; SHOW GRANTS lists the grants); nothing was read or written",
        Map.of("principal", principal.name(), "privilege", needed.name(), "object", object));
  }
}
