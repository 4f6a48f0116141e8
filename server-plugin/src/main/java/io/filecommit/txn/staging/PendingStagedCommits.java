package io.filecommit.txn.staging;

import io.filecommit.conf.FileCommitConf;
import io.filecommit.delta.DeltaLog;
import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;

/**
 * The pending staged commits of a table ({@link StagingStore}'s records that are neither published
 * nor aborted) and their bound per table, {@link FileCommitConf#STAGING_MAX_PENDING}: staging
 * stores a record per staged commit under {@code _delta_log/_staged}, so one client staging
 * without end would fill the table's log folder and every listing of it.
 */
public final class PendingStagedCommits {
  private PendingStagedCommits() {}

  /**
   * Refuses a new staged commit on a table that holds {@link FileCommitConf#STAGING_MAX_PENDING}
   * pending ones already (a record without a claim, {@link StagingClaims}): one
   * listing of {@code _delta_log/_staged}. Called before the record is written, so the command
   * aborts and deletes its files.
   *
   * @param log the table's log
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_TOO_MANY_STAGED_COMMITS}
   *     naming the table, the count and the bound (parameters {@code table}, {@code pending},
   *     {@code maxPending}, {@code key}); {@code FILECOMMIT_LOG_READ_FAILED} when it cannot be listed
   */
  static void checkRoom(DeltaLog log) {
    long max = FileCommitConf.STAGING_MAX_PENDING.longValue();
    if (max <= 0) {
      return;
    }
    int pending = count(log);
    if (pending >= max) {
      throw ErrorClass.FILECOMMIT_TOO_MANY_STAGED_COMMITS.error("Cannot stage another commit on " + log.tablePath()
          + ": it holds " + pending + " pending staged commits, the server's bound ("
          + FileCommitConf.STAGING_MAX_PENDING.key() + "=" + max + "); publish or abort some, or wait for them to "
          + "expire; nothing was staged", Map.of("table", log.tablePath().toString(),
          "pending", Integer.toString(pending), "maxPending", Long.toString(max),
          "key", FileCommitConf.STAGING_MAX_PENDING.key()));
    }
  }

  /**
   * How many staged commits of the table are pending: a record without a claim (nor an older
   * server's {@code published} marker or tombstone; expired ones until the sweep aborts them
   * included). One listing.
   *
   * @param log the table's log
   * @return the count
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOG_READ_FAILED} when the
   *     staged folder cannot be listed
   */
  public static int count(DeltaLog log) {
    Set<String> records = new HashSet<>();
    Set<String> ended = new HashSet<>();
    try {
      for (FileStatus st : StagingStore.entries(log)) {
        String name = st.getPath().getName();
        if (name.startsWith(".")) {
          continue;
        }
        int dot = name.indexOf('.');
        String id = dot < 0 ? name : name.substring(0, dot);
        if (name.endsWith(".json") && dot == name.length() - 5) {
          records.add(id);
        } else if (name.endsWith(StagingClaims.SUFFIX) || name.endsWith(".published") || name.contains(".aborted")) {
          ended.add(id);
        }
      }
    } catch (IOException e) {
      throw log.readFailure(e);
    }
    records.removeAll(ended);
    return records.size();
  }
}
