package io.filecommit.read;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.CommitInfo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.FileStatus;

/**
 * The timestamps of the commits still in the log, as Delta's {@code DeltaHistoryManager} gives
 * them: the in-commit timestamp where a commit has one (protocol "In-Commit Timestamps"), else the
 * commit file's modification time, made strictly increasing (a commit no later than its
 * predecessor counts as 1 ms after it, Delta's {@code monotonizeCommitTimestamps}).
 */
final class CommitTimestamps {
  private static final Pattern COMMIT = Pattern.compile("^(\\d{20})\\.json$");

  private CommitTimestamps() {}

  /**
   * Version -> timestamp (ms since the epoch) of every JSON commit present.
   *
   * @param log the table's log
   * @param inCommitTimestamps whether to read commits for their in-commit timestamp (the table has
   *     enabled them at some version)
   * @return ascending by version; empty without a log
   * @throws UncheckedIOException when the log cannot be listed or read
   */
  static TreeMap<Long, Long> of(DeltaLog log, boolean inCommitTimestamps) {
    TreeMap<Long, Long> mtimes = new TreeMap<>();
    try {
      if (!log.fs().exists(log.logPath())) {
        return mtimes;
      }
      for (FileStatus st : log.fs().listStatus(log.logPath())) {
        Matcher m = COMMIT.matcher(st.getPath().getName());
        if (m.matches()) {
          mtimes.put(Long.parseLong(m.group(1)), st.getModificationTime());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + log.logPath(), e);
    }
    TreeMap<Long, Long> out = new TreeMap<>();
    long previous = Long.MIN_VALUE;
    for (Map.Entry<Long, Long> e : mtimes.entrySet()) {
      Long ict = inCommitTimestamps ? inCommitTimestamp(log, e.getKey()) : null;
      long ts;
      if (ict != null) {
        ts = ict;
      } else {
        ts = previous != Long.MIN_VALUE && e.getValue() <= previous ? previous + 1 : e.getValue();
      }
      out.put(e.getKey(), ts);
      previous = ts;
    }
    return out;
  }

  private static Long inCommitTimestamp(DeltaLog log, long version) {
    for (Action a : log.readCommit(version)) {
      if (a instanceof CommitInfo ci) {
        return ci.inCommitTimestamp();
      }
    }
    return null;
  }
}
