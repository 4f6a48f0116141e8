package io.filecommit.connect;

import io.filecommit.conf.FileCommitConf;
import io.filecommit.delta.ClientSettings;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.security.Access;
import io.filecommit.security.Privilege;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The server's shared mode: with the static setting {@link FileCommitConf#SERVER_SHARED} ({@code false} by default,
 * read from the server's {@code SparkConf}, never from a session) the server refuses every plan,
 * command or RPC whose effect filecommit cannot confine to the caller's grants, before it runs,
 * with {@code FILECOMMIT_SHARED_MODE_REFUSED} (parameters {@code what}, {@code detail}). This class
 * holds the setting, the data source allowlist and the path rules shared by the gRPC interceptor
 * ({@link SharedModeInterceptor}: RPCs and the Spark Connect proto plan) and the analyzer check of
 * SQL plans ({@code catalog.SharedModeCheck}).
 *
 * <p>Spark 4.3.0 has no restricted mode of its own that does this (its {@code SQLConf} has no
 * switch for {@code reflect}, script transforms, UDFs or data source allowlists;
 * {@code spark.sql.runSQLOnFiles} is a session setting a client may set back), so the checks are
 * filecommit's.
 */
public final class SharedMode {

  /**
   * Data sources a shared server serves (lower case): filecommit's and Delta's, Spark's built-in
   * file formats (confined to the caller's grants by path), and sources that touch no storage.
   * Anything else (e.g. {@code jdbc}, a class name) is refused before Spark looks it up, since
   * the lookup loads classes and the source may reach any system.
   */
  public static final Set<String> SOURCES = Set.of("delta", "filecommit", "parquet", "csv", "json", "text",
      "orc", "avro", "xml", "binaryfile", "rate", "rate-micro-batch", "memory", "noop");

  /** The built-in file formats among {@link #SOURCES}: their paths are checked against the grants. */
  public static final Set<String> FILE_FORMATS = Set.of("parquet", "csv", "json", "text", "orc", "avro", "xml",
      "binaryfile");

  private SharedMode() {}

  /** {@return whether this server runs in shared mode (its static {@code SparkConf})} */
  public static boolean enabled() {
    SparkEnv env = SparkEnv.get();
    return env != null && enabled(env.conf());
  }

  /**
   * Whether a server configuration turns shared mode on.
   *
   * @param conf the server's Spark configuration
   * @return {@code true} when {@link FileCommitConf#SERVER_SHARED} is {@code true} (case-insensitive)
   */
  public static boolean enabled(SparkConf conf) {
    return "true".equalsIgnoreCase(FileCommitConf.SERVER_SHARED.raw(conf).trim());
  }

  /**
   * The refusal.
   *
   * @param what what was refused, an upper-case tag ({@code PYTHON_UDF}, {@code REFLECT}, ...)
   * @param detail the refused name, path or key
   * @return {@code FILECOMMIT_SHARED_MODE_REFUSED} naming both
   */
  public static FileCommitException refused(String what, String detail) {
    return ErrorClass.FILECOMMIT_SHARED_MODE_REFUSED.error("This server is shared (" + FileCommitConf.SERVER_SHARED.key() + "=true): "
        + what + " is refused (" + detail + "); nothing of it ran",
        Map.of("what", what, "detail", String.valueOf(detail)));
  }

  /**
   * The data source a read or write names, once it is allowed.
   *
   * @param format the format the client sent (blank: the session's {@code spark.sql.sources.default})
   * @param session the request's session
   * @return the format, lower case
   * @throws FileCommitException {@code FILECOMMIT_SHARED_MODE_REFUSED} ({@code DATA_SOURCE}) for a
   *     source outside {@link #SOURCES}
   */
  public static String checkSource(String format, SparkSession session) {
    String f = format == null || format.isBlank() ? session.sessionState().conf().defaultDataSourceName() : format;
    String lower = f.trim().toLowerCase(Locale.ROOT);
    if (!SOURCES.contains(lower)) {
      throw refused("DATA_SOURCE", f);
    }
    return lower;
  }

  /**
   * Refuses options that reach Hadoop (the rule of {@link ClientSettings#mayChange}: a dotted key
   * outside Spark's and Parquet's value-only settings), e.g. {@code fs.s3a.endpoint}.
   *
   * @param options a read's or write's options
   * @throws FileCommitException {@code FILECOMMIT_SHARED_MODE_REFUSED} ({@code HADOOP_OPTION})
   */
  public static void checkOptions(Map<String, String> options) {
    for (String key : options.keySet()) {
      String k = key.startsWith("spark.hadoop.") ? key.substring("spark.hadoop.".length()) : key;
      if (!ClientSettings.mayChange(k) || key.startsWith("spark.hadoop.")) {
        throw refused("HADOOP_OPTION", key);
      }
    }
  }

  /**
   * Checks a raw file path a read or write names: no {@code _delta_log} component (reads of a
   * table's log, checkpoints and staged commits through a file source), no glob alternation or
   * escape ({@code { } [ ] \}, which Hadoop's glob expands beyond the path checked), inside the
   * allowed roots ({@link AllowedRoots#allowedPath}) and covered by the caller's grant ({@link
   * Access#checkPath}).
   *
   * @param session the request's session
   * @param needed {@code READ} or {@code WRITE}
   * @param path the path the client sent
   * @return the resolved path
   * @throws FileCommitException {@code FILECOMMIT_SHARED_MODE_REFUSED} ({@code DELTA_LOG_READ},
   *     {@code PATH_GLOB}), {@code FILECOMMIT_PATH_NOT_ALLOWED}, {@code FILECOMMIT_PERMISSION_DENIED}
   */
  public static String checkPath(SparkSession session, Privilege needed, String path) {
    if (path == null || path.isBlank()) {
      throw refused("FILE_" + needed.name(), String.valueOf(path));
    }
    for (String part : path.split("[/\\\\]")) {
      if (part.equalsIgnoreCase("_delta_log")) {
        throw refused("DELTA_LOG_READ", path);
      }
    }
    if (path.matches(".*[{}\\[\\]\\\\].*")) {
      throw refused("PATH_GLOB", path);
    }
    String resolved = AllowedRoots.allowedPath(path, session);
    if (resolved.contains("/_delta_log")) {
      throw refused("DELTA_LOG_READ", path); // a symbolic link into a log
    }
    Access.checkPath(session, needed, resolved);
    return resolved;
  }
}
