package io.filecommit.delta.storage;

import org.apache.hadoop.conf.Configuration;

/**
 * Hadoop settings the server gives its object-store connector unless the operator set them: S3A's
 * {@value #S3A_PERFORMANCE_FLAGS} = {@value #S3A_FLAGS} (Hadoop 3.4+, "S3A performance flags" in
 * Hadoop's S3A documentation). With {@code create} a file's create sends no HEAD and LIST first
 * (checks that no file or directory of that name exists); with {@code mkdir} a directory's make
 * does not probe its parents. Every file the server creates has a name no other file has (data
 * files, deletion vectors, staged commits, markers and checksums carry a UUID or a version this
 * server just committed), and new commits are S3's conditional {@code PUT}, whose refusal does not
 * depend on these checks, so nothing relies on them.
 *
 * <p>Set on the server's Hadoop conf when the server starts (before any S3A file system exists:
 * S3A reads the setting once per file system instance, which Hadoop caches per bucket).
 */
public final class ObjectStoreDefaults {
  /** S3A's list of checks to skip (Hadoop's {@code Constants.FS_S3A_PERFORMANCE_FLAGS}). */
  public static final String S3A_PERFORMANCE_FLAGS = "fs.s3a.performance.flags";
  /** The server's default of {@link #S3A_PERFORMANCE_FLAGS}. */
  public static final String S3A_FLAGS = "create,mkdir";

  private ObjectStoreDefaults() {}

  /**
   * Sets the defaults on {@code conf} where the operator left them unset.
   *
   * @param conf the server's Hadoop conf (changed in place)
   */
  public static void apply(Configuration conf) {
    conf.setIfUnset(S3A_PERFORMANCE_FLAGS, S3A_FLAGS);
  }
}
