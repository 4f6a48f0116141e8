package io.filecommit.delta;

import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.ErrorClass;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One {@code delta.*} table property: its key, default, parser and the check of a value a user sets
 * (as Delta's {@code DeltaConfig} / Kernel's {@code TableConfig}). The registry of these entries is the
 * only place that names a property; other {@code delta.*} keys a user sets are refused, so a
 * misspelt property never silently does nothing. Keys outside {@code delta.} are stored as given.
 *
 * <p>Reading is lenient (a value another writer left that does not parse reads as the default);
 * user-set values are checked strictly by {@link #validate}.
 *
 * @param <T> the value type
 */
public final class TableConfig<T> {
  private static final List<TableConfig<?>> REGISTRY = new ArrayList<>();

  /** Writes files under random directory prefixes instead of partition directories. */
  public static final TableConfig<Boolean> RANDOMIZE_FILE_PREFIXES = bool("delta.randomizeFilePrefixes", true);
  /** Length of the random prefix. */
  public static final TableConfig<Integer> RANDOM_PREFIX_LENGTH = positiveInt("delta.randomPrefixLength", 2);
  /** Leaf columns with per-file statistics; -1 for all (protocol "Per-file Statistics"). */
  public static final TableConfig<Integer> DATA_SKIPPING_NUM_INDEXED_COLS = register(new TableConfig<>(
      "delta.dataSkippingNumIndexedCols", 32, v -> Integer.parseInt(v.trim()), v -> v >= -1, null, "an integer >= -1",
      true));
  /** Refuses removes of data (protocol "Append-only Tables"). */
  public static final TableConfig<Boolean> APPEND_ONLY = bool("delta.appendOnly", true);
  /** Change data feed (protocol "Change Data Files"); needs writer feature changeDataFeed. */
  public static final TableConfig<Boolean> ENABLE_CHANGE_DATA_FEED = bool("delta.enableChangeDataFeed", true);
  /** Commits between checkpoints (protocol "Checkpoints"; Delta's default 10). */
  public static final TableConfig<Integer> CHECKPOINT_INTERVAL = positiveInt("delta.checkpointInterval", 10);
  /** In-commit timestamps (writer feature inCommitTimestamp); only when a table is created. */
  public static final TableConfig<Boolean> IN_COMMIT_TIMESTAMPS = bool("delta.enableInCommitTimestamps", true);
  /** Isolation level of writes: {@code Serializable} or {@code WriteSerializable}. */
  public static final TableConfig<String> ISOLATION_LEVEL = register(new TableConfig<>("delta.isolationLevel",
      IsolationLevel.WRITE_SERIALIZABLE, v -> v.trim().equalsIgnoreCase(IsolationLevel.SERIALIZABLE)
          ? IsolationLevel.SERIALIZABLE : IsolationLevel.WRITE_SERIALIZABLE, v -> true,
      raw -> IsolationLevel.SERIALIZABLE.equals(raw) || IsolationLevel.WRITE_SERIALIZABLE.equals(raw),
      "'Serializable' or 'WriteSerializable'", true));
  /** How long log entries are kept, an interval string such as {@code interval 30 days}. */
  public static final TableConfig<String> LOG_RETENTION = interval("delta.logRetentionDuration", "interval 30 days");
  /**
   * Whether expired log files are deleted after a checkpoint (protocol "Metadata Cleanup"; Delta's
   * default true).
   */
  public static final TableConfig<Boolean> ENABLE_EXPIRED_LOG_CLEANUP = register(new TableConfig<>(
      "delta.enableExpiredLogCleanup", true, v -> !v.trim().equalsIgnoreCase("false"), v -> true,
      raw -> raw.equalsIgnoreCase("true") || raw.equalsIgnoreCase("false"), "'true' or 'false'", true));
  /**
   * Whether a column's type may be widened (protocol "Type Widening"); setting it to {@code true}
   * adds the {@code typeWidening} reader and writer features, as Delta does.
   */
  public static final TableConfig<Boolean> ENABLE_TYPE_WIDENING = bool("delta.enableTypeWidening", true);
  /** How long removed files are kept for VACUUM, an interval string. */
  public static final TableConfig<String> DELETED_FILE_RETENTION =
      interval("delta.deletedFileRetentionDuration", "interval 1 week");
  /**
   * Whether writers may add deletion vectors (protocol "Deletion Vectors"); setting it to {@code
   * true} adds the {@code deletionVectors} reader and writer features (table features protocol
   * 3 / 7), as Delta does.
   */
  public static final TableConfig<Boolean> ENABLE_DELETION_VECTORS = bool("delta.enableDeletionVectors", true);
  /**
   * Auto compaction after every write (Delta's {@code DeltaConfigs.AUTO_COMPACT}, {@code
   * delta.autoOptimize.autoCompact}): {@code true} or {@code false}; other values are refused with
   * Delta's {@code DELTA_INVALID_AUTO_COMPACT_TYPE}.
   */
  public static final TableConfig<Boolean> AUTO_COMPACT = bool("delta.autoOptimize.autoCompact", true);
  /**
   * Target size of files OPTIMIZE writes, bytes: a byte string such as {@code 134217728}, {@code
   * 128mb} or {@code 1g} (Spark's {@code JavaUtils.byteStringAsBytes}; a bare number is bytes), > 0.
   * Unset: the server's {@code spark.filecommit.optimize.maxFileSize}.
   */
  public static final TableConfig<Long> TARGET_FILE_SIZE = register(new TableConfig<>("delta.targetFileSize", -1L,
      TableConfig::byteSize, v -> v > 0, null, "a positive size in bytes such as '134217728' or '128mb'", true));
  /**
   * Column mapping mode: {@code none}, {@code name} or {@code id} (protocol "Column Mapping"); a
   * new table may take any, an existing one only moves from {@code none} to {@code name}.
   */
  public static final TableConfig<String> COLUMN_MAPPING_MODE = register(new TableConfig<>("delta.columnMapping.mode",
      "none", v -> v.trim().toLowerCase(Locale.ROOT), v -> v.equals("none") || v.equals("name") || v.equals("id"),
      null, "'none', 'name' or 'id'", true));

  /**
   * Row tracking (protocol "Row Tracking"): {@code true} on a new table adds the {@code rowTracking}
   * and {@code domainMetadata} writer features and names the materialized columns, as Delta does.
   */
  public static final TableConfig<Boolean> ENABLE_ROW_TRACKING = bool("delta.enableRowTracking", true);
  /** Row tracking suspended (protocol "Row Tracking"): writers assign no row IDs; set by Delta only. */
  public static final TableConfig<Boolean> ROW_TRACKING_SUSPENDED = bool("delta.rowTrackingSuspended", false);

  /** Prefix of a CHECK constraint's key: {@code delta.constraints.<name>} (protocol "CHECK Constraints"). */
  public static final String CONSTRAINT_PREFIX = "delta.constraints.";

  private final String key;
  private final T defaultValue;
  private final Function<String, T> parser;
  private final Predicate<T> valid;
  private final Predicate<String> rawCheck;
  private final String expected;
  private final boolean userSettable;

  private TableConfig(String key, T defaultValue, Function<String, T> parser, Predicate<T> valid,
      Predicate<String> rawCheck, String expected, boolean userSettable) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.parser = parser;
    this.valid = valid;
    this.rawCheck = rawCheck;
    this.expected = expected;
    this.userSettable = userSettable;
  }

  private static <T> TableConfig<T> register(TableConfig<T> c) {
    REGISTRY.add(c);
    return c;
  }

  private static TableConfig<Boolean> bool(String key, boolean userSettable) {
    return register(new TableConfig<>(key, false, v -> v.trim().equalsIgnoreCase("true"), v -> true,
        raw -> raw.equalsIgnoreCase("true") || raw.equalsIgnoreCase("false"), "'true' or 'false'", userSettable));
  }

  private static TableConfig<Integer> positiveInt(String key, int defaultValue) {
    return register(new TableConfig<>(key, defaultValue, v -> Integer.parseInt(v.trim()), v -> v > 0, null,
        "a positive integer", true));
  }

  private static TableConfig<String> interval(String key, String defaultValue) {
    return register(new TableConfig<>(key, defaultValue, String::trim, TableConfig::validInterval, null,
        "a non-negative interval without months such as 'interval 30 days'", true));
  }

  /** Delta's {@code DeltaConfigs.isValidIntervalConfigValue}: parses, no months, not negative. */
  private static boolean validInterval(String v) {
    try {
      return v.toLowerCase(Locale.ROOT).startsWith("interval ") && intervalMs(v) >= 0;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * Checks that a table's {@code delta.logRetentionDuration} is at least its {@code
   * delta.deletedFileRetentionDuration} when a commit sets either (Delta's {@code
   * DeltaConfigs.validateTombstoneAndLogRetentionDurationCompatibility}: a remove must stay in the
   * log as long as VACUUM may need it).
   *
   * <p>A {@code delta.deletedFileRetentionDuration} the commit sets must also be at least the
   * server's retention floor ({@code spark.filecommit.retention.minimum}); a value already in the
   * table (written by another tool) is left alone.
   *
   * @param changed the properties a commit sets
   * @param configuration the table's whole configuration after the commit
   * @param floorMs the server's retention floor, ms
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_ILLEGAL_OPTION} naming both values;
   *     {@code FILECOMMIT_RETENTION_BELOW_MINIMUM} (parameters {@code value}, {@code minimumHours})
   */
  public static void validateRetentions(Map<String, String> changed, Map<String, String> configuration, long floorMs) {
    if (!changed.containsKey(LOG_RETENTION.key) && !changed.containsKey(DELETED_FILE_RETENTION.key)) {
      return;
    }
    String log = LOG_RETENTION.fromConfiguration(configuration);
    String tombstones = DELETED_FILE_RETENTION.fromConfiguration(configuration);
    if (changed.containsKey(DELETED_FILE_RETENTION.key) && intervalMs(tombstones) < floorMs) {
      throw ErrorClass.FILECOMMIT_RETENTION_BELOW_MINIMUM.error("Table property " + DELETED_FILE_RETENTION.key
          + " ('" + tombstones + "') is below this server's retention floor of " + (floorMs / 3_600_000.0)
          + " hours (spark.filecommit.retention.minimum): VACUUM could delete files that writes in flight or "
          + "readers still need", Map.of("value", tombstones, "minimumHours", Double.toString(floorMs / 3_600_000.0)));
    }
    if (intervalMs(log) < intervalMs(tombstones)) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Table property " + LOG_RETENTION.key + " ('" + log
          + "') needs to be greater than or equal to " + DELETED_FILE_RETENTION.key + " ('" + tombstones + "')");
    }
  }

  /**
   * Milliseconds of a Delta interval property ({@code interval 1 week}, {@code interval 36 hours}),
   * parsed by Spark's {@code IntervalUtils.stringToInterval} as Delta's {@code
   * DeltaConfigs.getMilliSeconds} does (days as 24 h; months are not allowed there).
   *
   * @param value the property's value
   * @return the interval in ms
   * @throws IllegalArgumentException when it does not parse or has months
   */
  public static long intervalMs(String value) {
    org.apache.spark.unsafe.types.CalendarInterval ci = org.apache.spark.sql.catalyst.util.IntervalUtils
        .stringToInterval(org.apache.spark.unsafe.types.UTF8String.fromString(value));
    if (ci == null || ci.months != 0) {
      throw new IllegalArgumentException("Not an interval without months: '" + value + "'");
    }
    return ci.days * 86_400_000L + ci.microseconds / 1000;
  }

  /**
   * Bytes of a size string ({@code 1024}, {@code 128mb}, {@code 1g}; Spark's {@code
   * JavaUtils.byteStringAsBytes}, a bare number is bytes).
   *
   * @param value the string
   * @return the size in bytes
   * @throws NumberFormatException when it does not parse
   */
  public static long byteSize(String value) {
    return org.apache.spark.network.util.JavaUtils.byteStringAsBytes(value.trim());
  }

  /** {@return the property key} */
  public String key() {
    return key;
  }

  /** {@return the value when the property is absent} */
  public T defaultValue() {
    return defaultValue;
  }

  /**
   * The value in a table configuration: parsed, or the default when absent or unparsable.
   *
   * @param configuration a {@code metaData.configuration} map (null: empty)
   * @return the value
   */
  public T fromConfiguration(Map<String, String> configuration) {
    String raw = configuration == null ? null : configuration.get(key);
    if (raw == null) {
      return defaultValue;
    }
    try {
      T v = parser.apply(raw);
      return valid.test(v) ? v : defaultValue;
    } catch (RuntimeException e) {
      return defaultValue;
    }
  }

  /**
   * The value in a table's metadata.
   *
   * @param md the table's metadata, or null (no table yet)
   * @return the parsed value, or the default when absent, unparsable or {@code md} is null
   */
  public T fromMetadata(Metadata md) {
    return fromConfiguration(md == null ? null : md.configuration());
  }

  /** What is wrong with an unacceptable user value, for the message. */
  private String problem(String raw) {
    if (defaultValue instanceof Integer && raw != null) {
      try {
        Integer.parseInt(raw.trim());
        return "is out of range: '" + raw + "' (must be " + expected + ")";
      } catch (NumberFormatException e) {
        return "must be an integer, got '" + raw + "'";
      }
    }
    return "must be " + expected + ", got '" + raw + "'";
  }

  /** Whether a raw user value is acceptable (before parsing). */
  boolean accepts(String raw) {
    if (rawCheck != null) {
      return rawCheck.test(raw);
    }
    try {
      return valid.test(parser.apply(raw));
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * The entries of a new configuration whose value differs from the old one (new keys included;
   * removed keys are not listed), in the new configuration's order.
   *
   * @param before the current table configuration (empty for a new table)
   * @param after the configuration about to be committed
   * @return the changed entries, a new map
   */
  public static Map<String, String> changed(Map<String, String> before, Map<String, String> after) {
    Map<String, String> changed = new java.util.LinkedHashMap<>();
    after.forEach((k, v) -> {
      if (!java.util.Objects.equals(before.get(k), v)) {
        changed.put(k, v);
      }
    });
    return changed;
  }

  /**
   * Checks table properties a user sets, before anything is written. Properties a table already
   * has (set by another writer) are not checked here: they are the table's, and the feature gate
   * ({@link TableFeatures}) decides whether we can honour them. {@code delta.constraints.<name>}
   * keys must have a name and an expression; their expressions are checked against the schema by
   * the constraints package.
   *
   * @param props the properties being set
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_UNKNOWN_CONFIGURATION} for a
   *     {@code delta.*} key that is not registered or not user-settable, {@code DELTA_ILLEGAL_OPTION}
   *     for an invalid value, {@code DELTA_NON_BOOLEAN_CHECK_CONSTRAINT} for a constraint without
   *     name or expression; each names the key and value
   */
  public static void validate(Map<String, String> props) {
    for (Map.Entry<String, String> e : props.entrySet()) {
      String key = e.getKey();
      String value = e.getValue();
      if (!key.startsWith("delta.")) {
        continue;
      }
      if (key.startsWith(CONSTRAINT_PREFIX)) {
        if (key.length() == CONSTRAINT_PREFIX.length() || value == null || value.isBlank()) {
          throw ErrorClass.DELTA_NON_BOOLEAN_CHECK_CONSTRAINT.error(
              "CHECK constraint '" + key + "' needs a name and a SQL expression, got '" + value + "'");
        }
        continue;
      }
      TableConfig<?> config = REGISTRY.stream().filter(c -> c.userSettable && c.key.equals(key)).findFirst()
          .orElseThrow(() -> ErrorClass.DELTA_UNKNOWN_CONFIGURATION.error("Unknown Delta table property '" + key
              + "' (value '" + value + "'); supported: " + userSettableKeys()));
      if (config == AUTO_COMPACT && (value == null || !config.accepts(value))) {
        throw ErrorClass.DELTA_INVALID_AUTO_COMPACT_TYPE.error("Invalid auto-compact type: '" + value
            + "' for table property " + key + ". Allowed values are: true, false", Map.of("value", String.valueOf(value),
            "allowed", "true, false"));
      }
      if (value == null || !config.accepts(value)) {
        throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Table property " + key + " " + config.problem(value));
      }
    }
  }

  private static TreeSet<String> userSettableKeys() {
    TreeSet<String> keys = new TreeSet<>();
    REGISTRY.stream().filter(c -> c.userSettable).forEach(c -> keys.add(c.key));
    return keys;
  }

  /** The isolation levels of {@link #ISOLATION_LEVEL} (protocol "Conflict detection"; Delta's IsolationLevel). */
  public static final class IsolationLevel {
    /** Every concurrent data change conflicts with what the transaction read. */
    public static final String SERIALIZABLE = "Serializable";
    /** The default: blind appends do not conflict with a transaction that only reads. */
    public static final String WRITE_SERIALIZABLE = "WriteSerializable";

    private IsolationLevel() {}
  }

  @Override
  public String toString() {
    return key;
  }
}
