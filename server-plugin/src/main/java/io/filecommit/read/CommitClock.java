package io.filecommit.read;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import java.util.TreeMap;
import org.apache.spark.sql.classic.SparkSession;

/**
 * Commit times for commands that travel in time (RESTORE): the same commit timestamps and the same
 * timestamp parsing as reads with {@code timestampAsOf} (Delta's {@code DeltaHistoryManager}
 * timestamps; in-commit timestamps where the table has them).
 */
public final class CommitClock {
  private CommitClock() {}

  /**
   * Version -> commit timestamp (ms since the epoch) of every JSON commit still in the log, strictly
   * increasing as Delta's {@code monotonizeCommitTimestamps} makes them.
   *
   * @param log the table's log
   * @param latest its latest snapshot (decides whether in-commit timestamps are read)
   * @return ascending by version; empty without a log
   * @throws java.io.UncheckedIOException when the log cannot be listed or read
   */
  public static TreeMap<Long, Long> timestamps(DeltaLog log, Snapshot latest) {
    return FileCommitDataSource.timestamps(log, latest);
  }

  /**
   * A timestamp or date string, as Spark casts it in the session time zone.
   *
   * @param session the session (its {@code spark.sql.session.timeZone})
   * @param text e.g. {@code 2024-01-31 12:00:00} or {@code 2024-01-31}
   * @return ms since the epoch, or null when it does not parse
   */
  public static Long parseMs(SparkSession session, String text) {
    Long micros = FileCommitDataSource.parseMicros(session, text);
    return micros == null ? null : Math.floorDiv(micros, 1000L);
  }
}
