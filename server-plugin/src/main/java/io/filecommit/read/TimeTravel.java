package io.filecommit.read;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.errors.ErrorClass;
import java.sql.Timestamp;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.spark.sql.classic.SparkSession;

/**
 * Time travel options (Delta's {@code DeltaTimeTravelSpec}): {@code versionAsOf} reads that version;
 * {@code timestampAsOf} reads the latest version committed at or before that time (Delta's {@code
 * DeltaHistoryManager.getActiveCommitAtTime}, over {@link CommitTimestamps}: in-commit timestamps
 * where present). Out-of-range requests fail with Delta's classes.
 */
final class TimeTravel {
  private TimeTravel() {}

  /**
   * The snapshot a read's options ask for.
   *
   * @param session the session (time zone of timestamp strings)
   * @param log the table's log
   * @param latest the latest snapshot
   * @param options lower-cased option keys
   * @param timestamps the commit timestamps, computed only when a timestamp is given
   * @return the snapshot
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_ONEOF_IN_TIMETRAVEL} for both
   *     options, {@code DELTA_ILLEGAL_OPTION} / {@code DELTA_TIMESTAMP_INVALID} for an unparsable value, {@code DELTA_VERSION_NOT_FOUND}
   *     for a version that is not (or no longer) in the log, {@code
   *     DELTA_TIMESTAMP_GREATER_THAN_COMMIT} / {@code DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION}
   *     for a time after the latest / before the earliest commit
   */
  static Snapshot snapshot(SparkSession session, DeltaLog log, Snapshot latest, Map<String, String> options,
      Supplier<TreeMap<Long, Long>> timestamps) {
    String v = options.get("versionasof");
    String t = options.get("timestampasof");
    if (v != null && t != null) {
      throw ErrorClass.DELTA_ONEOF_IN_TIMETRAVEL.error("Please either provide 'timestampAsOf' or 'versionAsOf' for "
          + "time travel, not both");
    }
    if (v != null) {
      return atVersion(log, latest, version(v, "versionAsOf"));
    }
    if (t != null) {
      long ms = timestampMs(session, t, "timestampAsOf");
      TreeMap<Long, Long> ts = timestamps.get();
      if (ms > ts.lastEntry().getValue()) {
        throw afterLatest(ms, ts.lastEntry().getValue(), log);
      }
      Long at = null;
      for (Map.Entry<Long, Long> e : ts.entrySet()) {
        if (e.getValue() <= ms) {
          at = e.getKey();
        }
      }
      if (at == null) {
        throw beforeEarliest(ms, ts.firstEntry().getValue(), log);
      }
      return atVersion(log, latest, at);
    }
    return latest;
  }

  private static Snapshot atVersion(DeltaLog log, Snapshot latest, long version) {
    if (version == latest.version()) {
      return latest;
    }
    if (version < 0 || version > latest.version()) {
      throw notFound(log, version, latest.version());
    }
    try {
      return log.snapshotAsOfVersion(version);
    } catch (io.filecommit.errors.FileCommitException e) {
      throw e;
    } catch (RuntimeException e) {
      // Kernel cannot recreate it: its commits were cleaned up and no checkpoint is at or before it.
      throw notFound(log, version, latest.version());
    }
  }

  private static RuntimeException notFound(DeltaLog log, long version, long latest) {
    return ErrorClass.DELTA_VERSION_NOT_FOUND.error("Cannot time travel Delta table " + log.tablePath() + " to version "
        + version + ". Available versions: up to " + latest + " (older ones only while their commits or a checkpoint "
        + "at or before them are in the log)", Map.of("userVersion", String.valueOf(version),
        "latest", String.valueOf(latest)));
  }

  static RuntimeException afterLatest(long ms, long latestMs, DeltaLog log) {
    return ErrorClass.DELTA_TIMESTAMP_GREATER_THAN_COMMIT.error("The provided timestamp (" + new Timestamp(ms)
        + ") is after the latest version available to the table " + log.tablePath() + " (" + new Timestamp(latestMs)
        + "). Please use a timestamp before or at " + new Timestamp(latestMs) + ".",
        Map.of("providedTimestamp", String.valueOf(new Timestamp(ms)), "lastCommitTimestamp",
            String.valueOf(new Timestamp(latestMs))));
  }

  static RuntimeException beforeEarliest(long ms, long earliestMs, DeltaLog log) {
    return ErrorClass.DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION.error("The provided timestamp (" + new Timestamp(ms)
        + ") is before the earliest version available to the table " + log.tablePath() + " (" + new Timestamp(earliestMs)
        + "). Please use a timestamp after " + new Timestamp(earliestMs) + ".",
        Map.of("userTimestamp", String.valueOf(new Timestamp(ms)), "commitTs", String.valueOf(new Timestamp(earliestMs))));
  }

  /** A non-negative version option. */
  static long version(String raw, String option) {
    try {
      long v = Long.parseLong(raw.trim());
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Invalid value '" + raw + "' for option '" + option
        + "': must be a version (an integer >= 0)", Map.of("input", raw, "name", option));
  }

  /** A timestamp option in ms since the epoch (timestamp or date string, session time zone). */
  static long timestampMs(SparkSession session, String raw, String option) {
    Long micros = FileCommitDataSource.parseMicros(session, raw);
    if (micros == null) {
      throw ErrorClass.DELTA_TIMESTAMP_INVALID.error("Invalid value '" + raw + "' for option '" + option
          + "': must be a timestamp such as '2024-01-31 12:00:00' or a date", Map.of("input", raw, "name", option));
    }
    return Math.floorDiv(micros, 1000L);
  }
}
