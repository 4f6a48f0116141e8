package io.filecommit.delta;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Set;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * Whether a cached log state is still the latest: commit {@code v}'s file still has the cached
 * modification time, and no later commit exists (Delta's {@code DeltaLog.update} lists the log from
 * the cached version for the same answer, protocol "Delta Log Entries").
 *
 * <p>On an object store ({@link #objectStore}) the answer comes from ONE listing of {@code
 * _delta_log} (one LIST request per 1,000 entries, so a log that checkpoints and cleans up stays at
 * one): a status probe of a commit that does not exist yet costs a HEAD plus a LIST there (S3A
 * looks for a directory of that name too), so the two probes would cost three requests. On other
 * file systems two status calls are cheaper than listing the directory.
 */
public final class LogProbe {
  /** URI schemes whose directories are key prefixes (no mkdirs needed, a missing file's probe lists). */
  private static final Set<String> OBJECT_STORES = Set.of("s3", "s3a", "s3n", "gs", "wasb", "wasbs", "oss", "cos", "cosn");

  /**
   * The cached modification time of a commit this server has just published on an object store,
   * not yet seen in a listing (a {@code PUT}'s answer carries no time, and a {@code HEAD} for it
   * would cost a request per commit): the next {@link #check} accepts the commit's file at any
   * time, as the file this server's put-if-absent created.
   */
  static final long PUBLISHED_HERE = Long.MAX_VALUE;

  private LogProbe() {}

  /**
   * {@return whether {@code fs} is an object store: directories are only key prefixes}
   *
   * @param fs a file system
   */
  public static boolean objectStore(FileSystem fs) {
    String scheme = fs.getUri().getScheme();
    return scheme != null && OBJECT_STORES.contains(scheme.toLowerCase(Locale.ROOT));
  }

  /**
   * The metadata of the state this server cached for the table, when it is at {@code version} or
   * later (a commit of this server moves the cache to its version: {@link DeltaLog#committed}).
   * Not checked against the log: for decisions that tolerate a state one commit old (whether to
   * compact after a write), never for a commit.
   *
   * @param log the table's log
   * @param version the oldest version acceptable
   * @return the cached metadata, or null when none is cached at or after {@code version}
   */
  public static io.filecommit.delta.actions.Metadata cachedMetadata(DeltaLog log, long version) {
    SnapshotCache.Entry c = SnapshotCache.INSTANCE.get(log.tablePath().toString());
    return c != null && c.version() >= version ? c.metadata() : null;
  }

  /**
   * Makes a directory unless the file system is an object store, which has none to make (creating
   * a file there needs no parent; S3A's {@code mkdirs} would probe every parent with requests).
   *
   * @param fs the file system
   * @param dir the directory
   * @throws IOException when the file system fails
   */
  public static void makeDirectory(FileSystem fs, org.apache.hadoop.fs.Path dir) throws IOException {
    if (!objectStore(fs)) {
      fs.mkdirs(dir);
    }
  }

  /**
   * Whether commit {@code version} still has modification time {@code mtime} and is the latest.
   *
   * @param log the table's log
   * @param version the cached version
   * @param mtime its commit file's cached modification time, ms since epoch
   * @return {@code {unchanged, latest}}: {@code unchanged} when the commit's file has {@code mtime};
   *     {@code latest} (meaningful only when unchanged) when no commit after it exists
   * @throws io.filecommit.errors.FileCommitException as {@link DeltaLog#snapshot} for a storage failure
   */
  static boolean[] check(DeltaLog log, long version, long mtime) {
    if (!objectStore(log.fs())) {
      boolean unchanged = log.commitMtime(version) == mtime;
      return new boolean[] {unchanged, unchanged && log.commitMtime(version + 1) < 0};
    }
    String own = DeltaLog.commitFileName(version);
    long found = -1;
    boolean newer = false;
    try {
      RemoteIterator<LocatedFileStatus> it = log.fs().listFiles(log.logPath(), false);
      while (it.hasNext()) {
        LocatedFileStatus st = it.next();
        String name = st.getPath().getName();
        if (name.equals(own)) {
          found = st.getModificationTime();
        } else if (name.length() == own.length() && name.endsWith(".json") && name.compareTo(own) > 0
            && name.chars().limit(20).allMatch(Character::isDigit)) {
          newer = true;
          break; // keys are listed in order: the own commit came before
        }
      }
    } catch (java.io.FileNotFoundException e) {
      return new boolean[] {false, false};
    } catch (IOException e) {
      throw log.readFailure(new UncheckedIOException(e));
    }
    // A listing's times have milliseconds, a HEAD's (where the cached time came from) whole seconds.
    return new boolean[] {found >= 0 && (mtime == PUBLISHED_HERE || found / 1000 == mtime / 1000), !newer};
  }
}
