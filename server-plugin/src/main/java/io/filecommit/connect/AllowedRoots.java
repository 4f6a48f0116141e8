package io.filecommit.connect;

import io.filecommit.conf.FileCommitConf;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Where remote clients may write: the server configuration {@link FileCommitConf#ALLOWED_ROOTS} (comma-separated URIs,
 * e.g. {@code file:/data,s3a://bucket/tables}). Shared by table and sink commands; applied by the
 * plugin before anything is touched.
 *
 * <ul>
 *   <li>Unset: any absolute path is accepted (single-user servers, the embedded local server); a
 *       relative path is refused, since it would resolve against the server's working directory.
 *   <li>Set: a relative path is resolved against the first root; the path is qualified with its
 *       file system, normalized ({@code ..} removed), and on the local file system resolved
 *       through symbolic links (the deepest existing ancestor's real path); it must then be one
 *       of the roots (resolved the same way) or below one, else it is refused.
 *   <li>Object stores ({@code s3a://bucket/prefix}): the bucket and the prefix must match a root
 *       of the same scheme ({@code s3://bucket/prefix} is another root, refused unless listed;
 *       {@code prefix2} is not below {@code prefix}); {@code ..} is normalized away first; a
 *       percent-encoded separator ({@code %2F}, {@code %5C}) is refused, since readers that
 *       decode object keys would see a different path.
 * </ul>
 *
 * The value is read from the server's static Spark configuration (the SparkContext's), never from
 * a session's runtime conf, so a client cannot widen it.
 */
public final class AllowedRoots {

  private AllowedRoots() {}

  /**
   * Parses the configured value.
   *
   * @param value the conf value, null or blank when unset
   * @return the roots, empty when unset
   */
  public static List<String> parse(String value) {
    return io.filecommit.delta.storage.TableLocation.parseRoots(value);
  }

  /**
   * Resolves and checks a command's path.
   *
   * @param path the path the client sent
   * @param roots the allowed roots (empty: no restriction but no relative paths)
   * @param conf Hadoop configuration (file systems, default FS, mount tables): the one that then
   *     opens the file system that writes and deletes, so the check sees the path as the write does
   * @return the path to use: the qualified, normalized (and for local paths, real) path
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_RELATIVE_PATH} for a
   *     relative path without roots, {@code FILECOMMIT_PATH_NOT_ALLOWED} for a path outside every
   *     root; both name the path
   * @throws io.filecommit.errors.FileCommitException {@code INVALID_EMPTY_LOCATION} for a blank path
   */
  public static String resolve(String path, List<String> roots, Configuration conf) {
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    Path p = new Path(path);
    if (!p.isAbsolute() && p.toUri().getScheme() == null) {
      if (roots.isEmpty()) {
        throw ErrorClass.FILECOMMIT_RELATIVE_PATH.error("Relative path '" + path + "' is refused: the server would "
            + "resolve it against its own working directory; send an absolute path, or configure " + FileCommitConf.ALLOWED_ROOTS.key()
            + " to resolve relative paths against its first root", Map.of("path", path));
      }
      p = new Path(new Path(roots.get(0)), path);
    }
    if (roots.isEmpty()) {
      return path;
    }
    String scheme = schemeOf(p, conf);
    if (!"file".equals(scheme) && ENCODED_SEPARATOR.matcher(path).find()) {
      // An object key holds "%2F" as it is, but readers that decode keys (delta-rs does) see a separator.
      throw notAllowed(path, p.toString(), roots);
    }
    // Only the roots of the path's own scheme: s3://b/t is not s3a://b/t unless listed, and a scheme
    // without a file system here is refused like any path outside the roots.
    List<String> sameScheme = roots.stream().filter(r -> scheme.equals(schemeOf(new Path(r), conf))).toList();
    if (sameScheme.isEmpty()) {
      throw notAllowed(path, p.toString(), roots);
    }
    String resolved = canonical(p, conf);
    for (String root : sameScheme) {
      String r = canonical(new Path(root), conf);
      if (resolved.equals(r) || resolved.startsWith(r.endsWith("/") ? r : r + "/")) {
        return resolved;
      }
    }
    throw notAllowed(path, resolved, roots);
  }

  /** Percent-encoded "/" or "\\" in a path string. */
  private static final java.util.regex.Pattern ENCODED_SEPARATOR = java.util.regex.Pattern.compile("%(2[fF]|5[cC])");

  private static io.filecommit.errors.FileCommitException notAllowed(String path, String resolved, List<String> roots) {
    return ErrorClass.FILECOMMIT_PATH_NOT_ALLOWED.error("Path '" + path + "' (resolved to " + resolved
        + ") is outside the roots this server allows (" + FileCommitConf.ALLOWED_ROOTS.key() + " = " + String.join(",", roots) + ")",
        Map.of("path", path, "resolved", resolved));
  }

  /** The path's URI scheme, lower case; the default file system's for a path without one. */
  private static String schemeOf(Path p, Configuration conf) {
    String s = p.toUri().getScheme();
    if (s == null) {
      s = FileSystem.getDefaultUri(conf).getScheme();
    }
    return s == null ? "file" : s.toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * The path a command may use: {@link #resolve} with the server's {@link io.filecommit.conf.FileCommitConf#ALLOWED_ROOTS} from the static
   * Spark configuration (blank paths pass through to the command's own check), through the
   * session's Hadoop conf ({@code DeltaLogCache.sessionHadoopConf}): the conf the table's log, its
   * readers, writers and deletes open their file system with. Writers add the command's options,
   * which may differ from it only in keys no file system reads ({@code ClientSettings}), so the
   * path checked and the path written are on the same file system.
   *
   * @param path the path the client sent
   * @param session the command's session
   * @return the path to use
   * @throws io.filecommit.errors.FileCommitException {@code CANNOT_MODIFY_STATIC_CONFIG} for a
   *     session that changed a server-owned setting, and what {@link #resolve} throws
   */
  public static String allowedPath(String path, org.apache.spark.sql.classic.SparkSession session) {
    if (path == null || path.isBlank()) {
      return path;
    }
    List<String> roots = io.filecommit.delta.storage.TableLocation.allowedRoots(session);
    return resolve(path, roots, io.filecommit.delta.DeltaLogCache.sessionHadoopConf(session));
  }

  /**
   * The path a command may use ({@link #allowedPath(String, org.apache.spark.sql.classic.SparkSession)})
   * once the session's principal is found to hold {@code needed} on it ({@code
   * security.Access.checkPath}, against the path's qualified form): the one check of roots and
   * grants every path door makes.
   *
   * @param path the path the client sent
   * @param session the command's session
   * @param needed the privilege the operation needs
   * @return the path to use
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_PERMISSION_DENIED} when the
   *     principal lacks the privilege, and what {@link #allowedPath(String,
   *     org.apache.spark.sql.classic.SparkSession)} throws
   */
  public static String allowedPath(String path, org.apache.spark.sql.classic.SparkSession session,
      io.filecommit.security.Privilege needed) {
    String resolved = allowedPath(path, session);
    if (resolved != null && !resolved.isBlank() && io.filecommit.security.Principals.of(session).isPresent()) {
      io.filecommit.security.Access.checkPath(session, needed, grantForm(resolved, session));
    }
    return resolved;
  }

  /**
   * The form of a resolved path that grants name and checks compare: {@link #resolve}'s result
   * when roots are set (already qualified and real), else the path qualified and normalized the
   * same way.
   *
   * @param resolved a path {@link #allowedPath(String, org.apache.spark.sql.classic.SparkSession)} returned
   * @param session the session
   * @return the qualified path, without a trailing {@code /}
   */
  public static String grantForm(String resolved, org.apache.spark.sql.classic.SparkSession session) {
    if (!io.filecommit.delta.storage.TableLocation.allowedRoots(session).isEmpty()) {
      return resolved;
    }
    return canonical(new Path(resolved), io.filecommit.delta.DeltaLogCache.sessionHadoopConf(session));
  }

  /** Qualified, normalized, and (local file system) symlink-free form of a path. */
  static String canonical(Path p, Configuration conf) {
    try {
      FileSystem fs = p.getFileSystem(conf);
      Path q = fs.makeQualified(p);
      URI uri = q.toUri().normalize();
      if ("file".equals(uri.getScheme())) {
        java.nio.file.Path local = java.nio.file.Paths.get(uri).normalize();
        java.nio.file.Path existing = local;
        while (existing != null && !Files.exists(existing)) {
          existing = existing.getParent();
        }
        if (existing != null) {
          local = existing.toRealPath().resolve(existing.relativize(local));
        }
        return new Path(local.toUri()).toString().replaceAll("/+$", "");
      }
      return new Path(uri).toString().replaceAll("/+$", "");
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot resolve path " + p, e);
    }
  }
}
