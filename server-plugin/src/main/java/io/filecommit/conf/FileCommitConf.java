package io.filecommit.conf;

import io.filecommit.errors.ErrorClass;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;

/**
 * Every {@code spark.filecommit.*} setting, declared once with its key, type, default and scope
 * (as Delta declares its settings in {@code DeltaSQLConf} with {@code
 * buildConf(key).doc(...).createWithDefault(...)}). Classes read their settings through these
 * entries; the documentation's settings table is generated from this file (each entry's Javadoc is
 * its description), and a test fails when the code names a {@code spark.filecommit.*} key that is
 * not declared here.
 *
 * <p>Scopes: {@link Scope#SERVER} settings are read from the server's static Spark configuration
 * ({@code --conf} at start, {@code spark-defaults.conf}), never from a client session; a session
 * that sets one to another value is refused ({@code ClientSettings}). {@link Scope#SESSION}
 * settings may be set by a client for its own session ({@code spark.conf.set}), over the server's
 * value.
 */
public final class FileCommitConf {
  /** Who may set a setting. */
  public enum Scope {
    /** The server's static configuration only. */
    SERVER,
    /** A client's session, over the server's value. */
    SESSION
  }

  private static final List<Entry> ALL = new ArrayList<>();

  /**
   * One setting.
   *
   * @param key the Spark conf key, {@code spark.filecommit.*}
   * @param type what the value is, for the docs: {@code boolean}, {@code time} (Spark time string,
   *     a bare number is ms), {@code size} (bytes, or a size string such as {@code 128m}), {@code
   *     long}, {@code double}, {@code URIs}, or the allowed words ({@code auto|off})
   * @param defaultValue the default as the value would be written, or null when unset by default
   * @param scope who may set it
   */
  public record Entry(String key, String type, String defaultValue, Scope scope) {
    /**
     * The value in a Spark configuration, else the default.
     *
     * @param conf the server's Spark conf (null: none, the default applies)
     * @return the value as written, or null when unset without a default
     */
    public String raw(SparkConf conf) {
      return conf == null ? defaultValue : conf.get(key, defaultValue);
    }

    /** {@return the value in this server's static configuration ({@link SparkEnv}), else the default} */
    public String serverValue() {
      SparkEnv env = SparkEnv.get();
      return raw(env == null ? null : env.conf());
    }

    /**
     * The value of a {@link Scope#SESSION} setting: the session's, else the server's.
     *
     * @param session the command's session
     * @return the value as written, or null when unset without a default
     */
    public String sessionValue(org.apache.spark.sql.SparkSession session) {
      return session.conf().get(key, raw(session.sparkContext().getConf()));
    }

    /**
     * A time setting in ms (Spark's time strings: {@code 24h}, {@code 500ms}; a bare number is ms).
     *
     * @param conf the server's Spark conf
     * @return the time, ms
     * @throws IllegalArgumentException when the value is not a time string (an operator error)
     */
    public long timeMs(SparkConf conf) {
      return conf == null ? org.apache.spark.network.util.JavaUtils.timeStringAsMs(defaultValue)
          : conf.getTimeAsMs(key, defaultValue);
    }

    /**
     * A positive size setting in bytes ({@code 128m}, {@code 1g}, or bytes).
     *
     * @param conf the server's Spark conf
     * @param fallback bytes when the setting is unset and has no default
     * @return the size, bytes
     * @throws IllegalArgumentException when the value is not a positive size (an operator error)
     */
    public long bytes(SparkConf conf, long fallback) {
      String v = raw(conf);
      if (v == null) {
        return fallback;
      }
      long bytes = org.apache.spark.network.util.JavaUtils.byteStringAsBytes(v.trim());
      if (bytes <= 0) {
        throw new IllegalArgumentException("Server setting " + key + " must be a positive size, got '" + v + "'");
      }
      return bytes;
    }

    /**
     * A whole-number setting of this server's static configuration.
     *
     * @return the number
     * @throws io.filecommit.errors.FileCommitException {@code INVALID_CONF_VALUE} naming the key
     *     (parameters {@code key} and Spark's {@code confName}, {@code confValue}) when the value is
     *     not a whole number
     */
    public long longValue() {
      String v = serverValue();
      try {
        return Long.parseLong(v.trim());
      } catch (NumberFormatException | NullPointerException e) {
        throw ErrorClass.INVALID_CONF_VALUE.error("Server setting " + key + " must be a whole number, got '"
            + v + "'", Map.of("key", key, "confName", key, "confValue", String.valueOf(v)));
      }
    }

    /**
     * A number setting.
     *
     * @param conf the server's Spark conf
     * @return the number
     * @throws NumberFormatException when the value is not a number (an operator error)
     */
    public double doubleValue(SparkConf conf) {
      return Double.parseDouble(raw(conf).trim());
    }

    /**
     * A boolean setting: {@code false} (any case) is false, anything else set, or the default
     * {@code true}, is true.
     *
     * @param conf the server's Spark conf
     * @return the flag
     */
    public boolean enabled(SparkConf conf) {
      String v = raw(conf);
      return v == null || !v.trim().equalsIgnoreCase("false");
    }
  }

  private static Entry server(String key, String type, String defaultValue) {
    Entry e = new Entry(key, type, defaultValue, Scope.SERVER);
    ALL.add(e);
    return e;
  }

  private static Entry session(String key, String type, String defaultValue) {
    Entry e = new Entry(key, type, defaultValue, Scope.SESSION);
    ALL.add(e);
    return e;
  }

  private FileCommitConf() {}

  /** {@return every setting, in the order declared here} */
  public static List<Entry> all() {
    return Collections.unmodifiableList(ALL);
  }

  /**
   * The setting with a key.
   *
   * @param key a conf key
   * @return the entry, empty when no setting has that key
   */
  public static Optional<Entry> find(String key) {
    return ALL.stream().filter(e -> e.key().equals(key)).findFirst();
  }

  // Paths and the standard API.

  /**
   * Comma-separated URIs ({@code file:/data,s3a://bucket/tables}) of the roots clients may use;
   * every table or sink path is qualified, normalized and (local file systems) resolved through
   * symlinks, and refused with {@code FILECOMMIT_PATH_NOT_ALLOWED} unless it lies under a root;
   * relative paths resolve against the first root. Unset: any absolute path.
   */
  public static final Entry ALLOWED_ROOTS = server("spark.filecommit.allowedRoots", "URIs", null);

  /**
   * {@code false} leaves every standard-API write ({@code df.write.format("delta").save(path)})
   * on Spark's own command path instead of the plugin's direct write.
   */
  public static final Entry STANDARD_API_DIRECT_WRITE = server("spark.filecommit.standardApi.directWrite", "boolean",
      "true");

  /**
   * filecommit answers to {@code format("delta")} (reads and {@code df.write.format("delta")}
   * writes, the same as {@code format("filecommit")}) unless {@code false}, which leaves the name
   * to others. With delta-spark on the classpath and the setting not {@code false}, the server
   * refuses to start. Unset: on.
   */
  public static final Entry READ_DELTA_FORMAT = server("spark.filecommit.read.deltaFormat", "boolean", null);

  // Staged commits and retention.

  /**
   * The longest (and default) life of a staged commit; after it publishing is refused and the
   * server deletes the staged files. Keep it below the VACUUM retention of the tables.
   */
  public static final Entry STAGING_EXPIRATION = server("spark.filecommit.staging.expiration", "time", "24h");

  /**
   * At most how many staged commits a table holds that are neither published nor aborted; staging
   * one more is refused ({@code FILECOMMIT_TOO_MANY_STAGED_COMMITS}) until some are published,
   * aborted or expire. {@code 0}: no bound.
   */
  public static final Entry STAGING_MAX_PENDING = server("spark.filecommit.staging.maxPending", "long", "1000");

  /**
   * The retention floor: no {@code delta.deletedFileRetentionDuration} and no {@code vacuum}
   * retention below it (a bare number is ms).
   */
  public static final Entry RETENTION_MINIMUM = server("spark.filecommit.retention.minimum", "time", "168h");

  /**
   * {@code false} lets {@code vacuum} use a retention below a table's {@code
   * delta.deletedFileRetentionDuration} (Delta's {@code
   * spark.databricks.delta.retentionDurationCheck.enabled}), never below the retention floor.
   */
  public static final Entry VACUUM_RETENTION_CHECK = server("spark.filecommit.vacuum.retentionCheck.enabled",
      "boolean", "true");

  // OPTIMIZE and auto compaction.

  /**
   * {@code optimize}: files smaller than this are compacted (Delta's {@code
   * spark.databricks.delta.optimize.minFileSize}).
   */
  public static final Entry OPTIMIZE_MIN_FILE_SIZE = server("spark.filecommit.optimize.minFileSize", "size", "1g");

  /**
   * {@code optimize}: the target file size when the call gives none and the table has no {@code
   * delta.targetFileSize} (Delta's {@code spark.databricks.delta.optimize.maxFileSize}).
   */
  public static final Entry OPTIMIZE_MAX_FILE_SIZE = server("spark.filecommit.optimize.maxFileSize", "size", "1g");

  /**
   * {@code optimize} and auto compaction also rewrite files whose deletion vector deletes more than
   * this share of their rows (Delta's {@code optimize.maxDeletedRowsRatio}).
   */
  public static final Entry OPTIMIZE_MAX_DELETED_ROWS_RATIO = server("spark.filecommit.optimize.maxDeletedRowsRatio",
      "double", "0.05");

  /**
   * Auto compaction ({@code delta.autoOptimize.autoCompact=true}): the small files a partition a
   * write added to must hold before it is compacted (Delta's {@code autoCompact.minNumFiles}).
   */
  public static final Entry AUTO_COMPACT_MIN_NUM_FILES = server("spark.filecommit.autoCompact.minNumFiles", "long",
      "50");

  /** Auto compaction: the target file size (Delta's {@code autoCompact.maxFileSize}). */
  public static final Entry AUTO_COMPACT_MAX_FILE_SIZE = server("spark.filecommit.autoCompact.maxFileSize", "size",
      "128m");

  /**
   * Auto compaction: files below this size count as small and are compacted (Delta's {@code
   * autoCompact.minFileSize}). Unset: half of {@code spark.filecommit.autoCompact.maxFileSize}.
   */
  public static final Entry AUTO_COMPACT_MIN_FILE_SIZE = server("spark.filecommit.autoCompact.minFileSize", "size",
      null);

  // Writes.

  /**
   * Group commit of blind appends: appends to one table that reach the server while a commit of it
   * is in flight are published together as one version; a leader waits at most this many ms for
   * more members, and only while the table is busy. {@code 0} turns group commit off.
   */
  public static final Entry GROUP_COMMIT_MAX_WAIT_MS = server("spark.filecommit.groupCommit.maxWaitMs", "long", "2");

  /** The most appends group commit publishes in one version. */
  public static final Entry GROUP_COMMIT_MAX_SIZE = server("spark.filecommit.groupCommit.maxSize", "long", "64");

  /**
   * Writes whose rows came with the command (a Spark Connect local relation, e.g. {@code
   * spark.createDataFrame(rows)}) up to this many rows are written by the driver, without a Spark
   * job (same files, statistics and rules); {@code 0} turns the fast path off.
   */
  public static final Entry SMALL_WRITE_MAX_ROWS = server("spark.filecommit.smallWrite.maxRows", "long", "10000");

  /** The largest estimated size (bytes) of such an input written by the driver. */
  public static final Entry SMALL_WRITE_MAX_BYTES = server("spark.filecommit.smallWrite.maxBytes", "long", "8388608");

  /**
   * {@code auto}: eligible writes use the native Parquet writer; {@code off}: never. A client may
   * set it for its own session, over the server's value.
   */
  public static final Entry WRITER_NATIVE = session("spark.filecommit.writer.native", "auto|off", "auto");

  // Object storage.

  /**
   * S3 commits as conditional writes ({@code If-None-Match: *}): {@code auto} asks each bucket once
   * and falls back to {@code S3SingleDriverLogStore} where the store does not honour it; {@code
   * true} always (no probe, no fallback); {@code false} never ({@code S3SingleDriverLogStore}). An
   * explicit {@code spark.delta.logStore.*} key wins.
   */
  public static final Entry S3_CONDITIONAL_WRITES = server("spark.filecommit.s3.conditionalWrites", "auto|true|false",
      "auto");

  // Sharing a server: who is calling.

  /**
   * How the server authenticates its clients: {@code none} (every request is served, as by a
   * server without authentication), {@code tokens} (a bearer token listed in {@code
   * spark.filecommit.auth.tokensFile}), {@code jwt} (a bearer JWT signed by a key of {@code
   * spark.filecommit.auth.jwt.keyFile}), or {@code tokens,jwt} (either: a bearer token shaped as a
   * JWT is verified as one). Otherwise every request must carry a token of a principal and claim
   * that principal as its user id, or it is refused ({@code UNAUTHENTICATED}).
   */
  public static final Entry AUTH_MODE = server("spark.filecommit.auth.mode", "none|tokens|jwt|tokens,jwt", "none");

  /**
   * The issuer's public keys (mode {@code jwt}): a JWKS file ({@code {"keys": [...]}}, a token's
   * {@code kid} selects its key) or a PEM file of public keys and certificates. RSA and EC keys
   * only; read again when its modification time changes (key rotation).
   */
  public static final Entry AUTH_JWT_KEY_FILE = server("spark.filecommit.auth.jwt.keyFile", "path", null);

  /** The {@code iss} a JWT must carry (mode {@code jwt}); unset: any issuer. */
  public static final Entry AUTH_JWT_ISSUER = server("spark.filecommit.auth.jwt.issuer", "string", null);

  /** The audience a JWT's {@code aud} must contain (mode {@code jwt}); unset: any audience. */
  public static final Entry AUTH_JWT_AUDIENCE = server("spark.filecommit.auth.jwt.audience", "string", null);

  /** The JWT claim naming the principal (mode {@code jwt}), e.g. {@code preferred_username} or {@code email}. */
  public static final Entry AUTH_JWT_USER_CLAIM = server("spark.filecommit.auth.jwt.userClaim", "string", "sub");

  /** The JWT claim listing the principal's groups (mode {@code jwt}): an array of strings, or one string. */
  public static final Entry AUTH_JWT_GROUPS_CLAIM = server("spark.filecommit.auth.jwt.groupsClaim", "string", "groups");

  /** Tolerance, in seconds, of a JWT's {@code exp} and {@code nbf} checks against the server's clock (mode {@code jwt}). */
  public static final Entry AUTH_JWT_CLOCK_SKEW_SECONDS =
      server("spark.filecommit.auth.jwt.clockSkewSeconds", "long", "60");

  /**
   * The tokens file (mode {@code tokens}): JSON {@code {"tokens": [{"sha256": "<hex of the token's
   * SHA-256>", "principal": "alice", "groups": ["team-a"]}]}}; the server stores digests, never
   * tokens. Read at start and again when its modification time changes.
   */
  public static final Entry AUTH_TOKENS_FILE = server("spark.filecommit.auth.tokensFile", "path", null);

  /** Comma-separated principal or group names that administer the server (GRANT / REVOKE, every privilege). */
  public static final Entry AUTH_ADMINS = server("spark.filecommit.auth.admins", "names", null);

  /**
   * {@code true} serves a request without a token as the principal {@code anonymous} (no groups,
   * only its grants) instead of refusing it.
   */
  public static final Entry AUTH_ALLOW_ANONYMOUS = server("spark.filecommit.auth.allowAnonymous", "boolean", "false");

  // Sharing a server: grants.

  /**
   * The JSON file of the grants for a server without a PostgreSQL metastore (with one, grants live
   * in its {@code filecommit_grants} table); the server rewrites it atomically on GRANT / REVOKE.
   * Unset and no PostgreSQL metastore: grants live in memory.
   */
  public static final Entry AUTH_GRANTS_FILE = server("spark.filecommit.auth.grantsFile", "path", null);

  /**
   * At most how many ms a check uses grants read before (how soon another server's GRANT or REVOKE
   * on the shared store is seen); {@code 0} reads the store at every check.
   */
  public static final Entry AUTH_GRANTS_REFRESH_MS = server("spark.filecommit.auth.grantsRefreshMs", "long", "2000");

  // Sharing a server: shared mode.

  /**
   * Shared mode: {@code true} refuses, before they run, the plans and RPCs filecommit cannot
   * confine to the caller's grants (client code, code-calling functions, artifacts, raw files
   * outside the grants, {@code _delta_log} reads, data sources outside an allowlist, catalog
   * switches, Hadoop options) with {@code FILECOMMIT_SHARED_MODE_REFUSED}. Needs the plugin's
   * {@code SharedModeInterceptor} in {@code spark.connect.grpc.interceptor.classes} and its session
   * extension {@code FileCommitExtensions} in {@code spark.sql.extensions}.
   */
  public static final Entry SERVER_SHARED = server("spark.filecommit.server.shared", "boolean", "false");
}
