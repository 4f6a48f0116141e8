package io.filecommit.delta;

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

  private static final Set<String> BOOLEANS = Set.of(RANDOMIZE_FILE_PREFIXES, APPEND_ONLY, ENABLE_CDF);
  private static final Set<String> KNOWN =
      Set.of(RANDOMIZE_FILE_PREFIXES, RANDOM_PREFIX_LENGTH, NUM_INDEXED_COLS, APPEND_ONLY, ENABLE_CDF);

  private TableProperties() {}

  /**
   * Checks table properties before anything is written.
   *
   * @param props the properties
   * @throws IllegalArgumentException naming the key and value of an unknown {@code delta.*} key or
   *     an invalid value
   */
  public static void validate(Map<String, String> props) {
    for (Map.Entry<String, String> e : props.entrySet()) {
      String key = e.getKey();
      String value = e.getValue();
      if (!key.startsWith("delta.")) {
        continue;
      }
      if (!KNOWN.contains(key)) {
        throw new IllegalArgumentException(
            "Unknown Delta table property '" + key + "' (value '" + value + "'); supported: " + new TreeSet<>(KNOWN));
      }
      if (BOOLEANS.contains(key)) {
        String v = value == null ? "" : value.toLowerCase(Locale.ROOT);
        if (!v.equals("true") && !v.equals("false")) {
          throw new IllegalArgumentException("Table property " + key + " must be 'true' or 'false', got '" + value + "'");
        }
      } else {
        int n;
        try {
          n = Integer.parseInt(value);
        } catch (NumberFormatException ex) {
          throw new IllegalArgumentException("Table property " + key + " must be an integer, got '" + value + "'");
        }
        if (key.equals(RANDOM_PREFIX_LENGTH) && n <= 0 || key.equals(NUM_INDEXED_COLS) && n < -1) {
          throw new IllegalArgumentException("Table property " + key + " is out of range: '" + value + "'");
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

  /** The protocol a table with these properties needs: writer 4 with change data feed, else 2. */
  public static Protocol requiredProtocol(Map<String, String> props) {
    return isTrue(props, ENABLE_CDF) ? new Protocol(1, 4) : Protocol.DEFAULT;
  }
}
