package io.filecommit.delta;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils;

/**
 * Hive-style partition directories and log path encoding (Spark's {@code ExternalCatalogUtils.escapePathName} and
 * {@code PartitioningUtils.parsePathFragment}; protocol "Add File and Remove File" for log paths).
 *
 * <p>Escaping itself is Spark's {@code ExternalCatalogUtils.escapePathName}/{@code
 * unescapePathName}, so directories are exactly the ones Spark and Delta write.
 */
public final class PartitionPaths {
  /** Directory name of a null or empty partition value. */
  public static final String DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__";

  private PartitionPaths() {}

  /**
   * Builds the relative partition directory {@code k1=v1/k2=v2} for ordered values.
   *
   * @param values partition column -> value; null or empty values become
   *     {@code __HIVE_DEFAULT_PARTITION__}
   * @return the relative directory, "" when {@code values} is empty
   */
  public static String partitionDir(Map<String, String> values) {
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<String, String> e : values.entrySet()) {
      if (sb.length() > 0) {
        sb.append('/');
      }
      String v = e.getValue();
      sb.append(escape(e.getKey())).append('=')
          .append(v == null || v.isEmpty() ? DEFAULT_PARTITION_NAME : escape(v));
    }
    return sb.toString();
  }

  /**
   * Parses a relative partition directory back into ordered values (the inverse of {@link
   * #partitionDir}): segments split at the first {@code =}, key and value unescaped,
   * {@code __HIVE_DEFAULT_PARTITION__} -> null. Values stay strings.
   *
   * @param dir relative directory such as {@code origin=EWR/month=1}
   * @return column -> value in directory order
   * @throws IllegalArgumentException when a segment is not of the form {@code key=value}
   */
  public static Map<String, String> parsePartitions(String dir) {
    Map<String, String> values = new LinkedHashMap<>();
    if (dir == null || dir.isEmpty()) {
      return values;
    }
    for (String segment : dir.split("/")) {
      if (segment.isEmpty()) {
        continue;
      }
      int eq = segment.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(
            "Not a partition directory segment (expected key=value): '" + segment + "' in '" + dir + "'");
      }
      String key = unescape(segment.substring(0, eq));
      String raw = segment.substring(eq + 1);
      values.put(key, DEFAULT_PARTITION_NAME.equals(raw) ? null : unescape(raw));
    }
    return values;
  }

  /**
   * Spark's path-name escaping of one key or value.
   *
   * @param s a partition column name or value
   * @return {@code s} with the characters Spark escapes as {@code %XX}
   */
  public static String escape(String s) {
    return ExternalCatalogUtils.escapePathName(s);
  }

  /**
   * Spark's path-name unescaping of one key or value.
   *
   * @param s an escaped name or value, as in a directory name
   * @return {@code s} with every {@code %XX} decoded
   */
  public static String unescape(String s) {
    return ExternalCatalogUtils.unescapePathName(s);
  }

  /**
   * URI-encodes a relative file-system path the way the Delta log stores it ({@code %} -> {@code
   * %25}, space -> {@code %20}; {@code /} kept), so an escaped partition directory is escaped twice.
   *
   * @param relativePath relative path as on the file system
   * @return the path as written in {@code add.path}
   * @throws IllegalArgumentException if the path cannot be represented as a URI path
   */
  public static String toLogPath(String relativePath) {
    try {
      return new URI(null, null, relativePath, null).toString();
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("Cannot encode relative path '" + relativePath + "'", e);
    }
  }

  /**
   * Decodes a log path back to the relative file-system path (inverse of {@link #toLogPath}).
   *
   * @param logPath path as written in the log
   * @return the decoded relative path
   * @throws IllegalArgumentException if {@code logPath} is not a valid URI
   */
  public static String fromLogPath(String logPath) {
    try {
      return new URI(logPath).getPath();
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("Invalid path in the Delta log: '" + logPath + "'", e);
    }
  }

  /**
   * Joins non-empty relative path parts with {@code /}.
   *
   * @param parts relative path parts; empty ones are skipped
   * @return the joined relative path, "" when every part is empty
   */
  public static String join(List<String> parts) {
    StringBuilder sb = new StringBuilder();
    for (String p : parts) {
      if (p == null || p.isEmpty()) {
        continue;
      }
      if (sb.length() > 0) {
        sb.append('/');
      }
      sb.append(p);
    }
    return sb.toString();
  }
}
