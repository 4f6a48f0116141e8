package io.filecommit.security;

import java.util.Locale;

/**
 * One grant: a privilege a principal or group holds on an object (Unity Catalog's {@code GRANT
 * privilege ON securable TO principal}).
 *
 * @param grantee a principal or group name, as the authenticator names them (case-sensitive)
 * @param type what kind of object: a path prefix or a catalog table
 * @param object for {@link ObjectType#PATH}, a resolved URI ({@code AllowedRoots.resolve}: qualified,
 *     normalized, no trailing {@code /}) covering itself and everything below it; for {@link
 *     ObjectType#TABLE}, a qualified table name {@code catalog.database.table}, lower case
 * @param privilege the privilege held (it includes the ones before it, {@link Privilege#includes})
 */
public record Grant(String grantee, ObjectType type, String object, Privilege privilege) {
  /** The kinds of object a grant is on (Unity Catalog's securables: an external location, a table). */
  public enum ObjectType {
    /** A path prefix: the path itself and every path below it. */
    PATH,
    /** A table of the server's catalog, by its qualified name. */
    TABLE
  }

  /**
   * Checks and normalizes the parts: a table name is lower-cased, a path loses trailing slashes.
   *
   * @param grantee the principal or group
   * @param type the kind of object
   * @param object the path or the qualified table name
   * @param privilege the privilege
   *
   * @throws IllegalArgumentException for a blank grantee or object, or a null type or privilege
   */
  public Grant {
    if (grantee == null || grantee.isBlank()) {
      throw new IllegalArgumentException("A grant needs a grantee, got '" + grantee + "'");
    }
    if (type == null || privilege == null) {
      throw new IllegalArgumentException("A grant needs an object type and a privilege");
    }
    if (object == null || object.isBlank()) {
      throw new IllegalArgumentException("A grant needs an object, got '" + object + "'");
    }
    object = type == ObjectType.TABLE ? object.toLowerCase(Locale.ROOT) : trimSlashes(object);
  }

  /**
   * Whether this grant's object covers a path: the path is the grant's path or below it (a whole
   * path segment: {@code /a/b} covers {@code /a/b/c}, not {@code /a/bc}).
   *
   * @param path a resolved path (as {@link #object} of a path grant)
   * @return true for a path grant covering it
   */
  public boolean covers(String path) {
    if (type != ObjectType.PATH || path == null) {
      return false;
    }
    String p = trimSlashes(path);
    return p.equals(object) || p.startsWith(object.endsWith("/") ? object : object + "/");
  }

  /**
   * Whether this grant's object is a table name.
   *
   * @param table a qualified table name (any case)
   * @return true for a table grant on that name
   */
  public boolean names(String table) {
    return type == ObjectType.TABLE && table != null && object.equals(table.toLowerCase(Locale.ROOT));
  }

  /** A path without trailing {@code /} (but {@code /} itself, and {@code scheme:/} roots, kept whole). */
  static String trimSlashes(String path) {
    String p = path;
    while (p.length() > 1 && p.endsWith("/") && !p.endsWith(":/") && !p.endsWith("://")) {
      p = p.substring(0, p.length() - 1);
    }
    return p;
  }
}
