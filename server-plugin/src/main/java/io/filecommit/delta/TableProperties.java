package io.filecommit.delta;

import io.filecommit.errors.ErrorClass;
import io.filecommit.commit.ParquetStats;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code delta.*} table properties this writer understands and enforces (reference
 * table-formats.md "Delta log" and "Data file names and places"). Other {@code delta.*} keys are
 * refused so that a misspelt property never silently does nothing; keys outside {@code delta.} are
 * stored as given.
 */
public final class TableProperties {
  /** Writes files under random directory prefixes instead of partition directories. */
  public static final String RANDOMIZE_FILE_PREFIXES = "delta.randomizeFilePrefixes";
  /** Length of the random prefix, default 2. */
  public static final String RANDOM_PREFIX_LENGTH = "delta.randomPrefixLength";
  /** Leaf columns with per-file statistics, default 32; -1 for all. */
  public static final String NUM_INDEXED_COLS = "delta.dataSkippingNumIndexedCols";
  /** Refuses removes (overwrite) when true. */
  public static final String APPEND_ONLY = "delta.appendOnly";
  /** Change data feed; needs writer version 4. */
  public static final String ENABLE_CDF = "delta.enableChangeDataFeed";

  /** Commits between checkpoints, default 10 (protocol "Checkpoints"; Delta's default). */
  public static final String CHECKPOINT_INTERVAL = "delta.checkpointInterval";
  /** Default of {@link #CHECKPOINT_INTERVAL}. */
  public static final int DEFAULT_CHECKPOINT_INTERVAL = 10;
  /** In-commit timestamps (writer feature inCommitTimestamp). */
  public static final String IN_COMMIT_TIMESTAMPS = TableFeatures.IN_COMMIT_TIMESTAMPS;
  /** Isolation level of writes: {@code Serializable} or {@code WriteSerializable} (default). */
  public static final String ISOLATION_LEVEL = "delta.isolationLevel";
  /** How long log entries are kept (an interval string such as {@code interval 30 days}). */
  public static final String LOG_RETENTION = "delta.logRetentionDuration";
  /** How long removed files are kept for VACUUM (an interval string). */
  public static final String DELETED_FILE_RETENTION = "delta.deletedFileRetentionDuration";

  private static final Set<String> BOOLEANS = Set.of(RANDOMIZE_FILE_PREFIXES, APPEND_ONLY, ENABLE_CDF, IN_COMMIT_TIMESTAMPS);
  private static final Set<String> INTERVALS = Set.of(LOG_RETENTION, DELETED_FILE_RETENTION);
  private static final Set<String> KNOWN = Set.of(RANDOMIZE_FILE_PREFIXES, RANDOM_PREFIX_LENGTH, NUM_INDEXED_COLS,
      APPEND_ONLY, ENABLE_CDF, CHECKPOINT_INTERVAL, IN_COMMIT_TIMESTAMPS, LOG_RETENTION, DELETED_FILE_RETENTION,
      ISOLATION_LEVEL);

  private TableProperties() {}

  /**
   * Checks table properties a user sets, before anything is written. Properties a table already
   * has (set by another writer) are not checked here: they are the table's, and the feature gate
   * ({@link TableFeatures}) decides whether we can honour them. {@code delta.constraints.<name>}
   * keys are checked against the schema by {@link Constraints}.
   *
   * @param props the properties
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) naming the key and value of an unknown {@code delta.*} key or
   *     an invalid value
   */
  public static void validate(Map<String, String> props) {
    for (Map.Entry<String, String> e : props.entrySet()) {
      String key = e.getKey();
      String value = e.getValue();
      if (!key.startsWith("delta.")) {
        continue;
      }
      if (key.startsWith(TableFeatures.CONSTRAINT_PREFIX)) {
        if (key.length() == TableFeatures.CONSTRAINT_PREFIX.length() || value == null || value.isBlank()) {
          throw ErrorClass.DELTA_NON_BOOLEAN_CHECK_CONSTRAINT.error("CHECK constraint '" + key + "' needs a name and a SQL expression, got '" + value + "'");
        }
        continue;
      }
      if (!KNOWN.contains(key)) {
        throw ErrorClass.DELTA_UNKNOWN_CONFIGURATION.error(
            "Unknown Delta table property '" + key + "' (value '" + value + "'); supported: " + new TreeSet<>(KNOWN));
      }
      if (BOOLEANS.contains(key)) {
        String v = value == null ? "" : value.toLowerCase(Locale.ROOT);
        if (!v.equals("true") && !v.equals("false")) {
          throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Table property " + key + " must be 'true' or 'false', got '" + value + "'");
        }
      } else if (key.equals(ISOLATION_LEVEL)) {
        if (!"Serializable".equals(value) && !"WriteSerializable".equals(value)) {
          throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Table property " + key + " must be 'Serializable' or 'WriteSerializable', got '" + value + "'");
        }
      } else if (INTERVALS.contains(key)) {
        if (value == null || !value.trim().toLowerCase(Locale.ROOT).startsWith("interval ")) {
          throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Table property " + key + " must be an interval such as 'interval 30 days', got '" + value + "'");
        }
      } else {
        int n;
        try {
          n = Integer.parseInt(value);
        } catch (NumberFormatException ex) {
          throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Table property " + key + " must be an integer, got '" + value + "'");
        }
        if ((key.equals(RANDOM_PREFIX_LENGTH) || key.equals(CHECKPOINT_INTERVAL)) && n <= 0
            || key.equals(NUM_INDEXED_COLS) && n < -1) {
          throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Table property " + key + " is out of range: '" + value + "'");
        }
      }
    }
  }

  /** Whether a boolean property is set to true (case-insensitive). */
  public static boolean isTrue(Map<String, String> props, String key) {
    return "true".equalsIgnoreCase(props.get(key));
  }

  /** The random prefix length in force, or null when prefixes are off. */
  public static Integer randomPrefixLength(Map<String, String> props) {
    if (!isTrue(props, RANDOMIZE_FILE_PREFIXES)) {
      return null;
    }
    return Integer.parseInt(props.getOrDefault(RANDOM_PREFIX_LENGTH, "2"));
  }

  /** The number of leaf columns with statistics. */
  public static int numIndexedCols(Map<String, String> props) {
    String v = props.get(NUM_INDEXED_COLS);
    return v == null ? ParquetStats.DEFAULT_NUM_INDEXED_COLS : Integer.parseInt(v);
  }

  /** Commits between checkpoints ({@value #DEFAULT_CHECKPOINT_INTERVAL} unless set). */
  public static int checkpointInterval(Map<String, String> props) {
    String v = props.get(CHECKPOINT_INTERVAL);
    try {
      return v == null ? DEFAULT_CHECKPOINT_INTERVAL : Math.max(1, Integer.parseInt(v.trim()));
    } catch (NumberFormatException e) {
      return DEFAULT_CHECKPOINT_INTERVAL;
    }
  }
}
