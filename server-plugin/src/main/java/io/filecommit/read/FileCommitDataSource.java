package io.filecommit.read;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.errors.ErrorClass;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.RelationProvider;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code spark.read.format("filecommit").load(path)}: a Delta table read on the server, with
 * Delta's read options (Delta's {@code DeltaDataSource} / {@code DeltaOptions}):
 *
 * <ul>
 *   <li>none: the latest snapshot;
 *   <li>{@code versionAsOf} (a version) or {@code timestampAsOf} (a timestamp string in the
 *       session time zone, or a date): an earlier snapshot (time travel, {@link TimeTravel});
 *   <li>{@code readChangeFeed} (or {@code readChangeData}) {@code = true} with {@code
 *       startingVersion} / {@code startingTimestamp} and optionally {@code endingVersion} / {@code
 *       endingTimestamp}: the change data feed ({@link ChangeFeed});
 *   <li>{@code history = true}: the table's commits ({@link HistoryRelation}).
 * </ul>
 *
 * <p>Registered through {@code META-INF/services/org.apache.spark.sql.sources.DataSourceRegister};
 * any Spark Connect client reaches it with the standard reader API. The snapshot is fixed when the
 * DataFrame is analysed, as Delta's is. Errors carry Delta's error classes.
 */
public class FileCommitDataSource implements DataSourceRegister, RelationProvider,
    org.apache.spark.sql.connector.catalog.TableProvider {
  /** The short name of the format. */
  public static final String NAME = "filecommit";

  @Override
  public String shortName() {
    return NAME;
  }

  /**
   * The schema Spark asks a table provider for: none (the name {@code delta} is a table provider,
   * as Delta's data source is, so that {@code CREATE TABLE ... USING delta} goes to the catalog;
   * reads and path writes go through this class's V1 interfaces, since {@link #getTable}'s table
   * offers no V2 read or write).
   *
   * @param options the reader's options
   * @return an empty schema
   */
  @Override
  public org.apache.spark.sql.types.StructType inferSchema(
      org.apache.spark.sql.util.CaseInsensitiveStringMap options) {
    return new org.apache.spark.sql.types.StructType();
  }

  /**
   * A placeholder table without V2 capabilities: Spark then falls back to this class's V1 read
   * ({@link #createRelation}) and write.
   *
   * @param schema ignored
   * @param partitioning ignored
   * @param properties ignored
   * @return a table with no capabilities
   */
  @Override
  public org.apache.spark.sql.connector.catalog.Table getTable(org.apache.spark.sql.types.StructType schema,
      org.apache.spark.sql.connector.expressions.Transform[] partitioning, Map<String, String> properties) {
    return new org.apache.spark.sql.connector.catalog.Table() {
      @Override
      public String name() {
        return shortName();
      }

      @Override
      @SuppressWarnings("deprecation")
      public org.apache.spark.sql.types.StructType schema() {
        return schema;
      }

      @Override
      public java.util.Set<org.apache.spark.sql.connector.catalog.TableCapability> capabilities() {
        return java.util.Set.of();
      }
    };
  }

  /**
   * The relation of a table read by path with reader options (the catalog's tables read through it).
   *
   * @param session the session
   * @param path the table root
   * @param options reader options ({@code versionAsOf}, {@code timestampAsOf}, ...)
   * @return the relation
   * @throws io.filecommit.errors.FileCommitException as {@link #createRelation}
   */
  public static BaseRelation relation(SparkSession session, String path, Map<String, String> options) {
    Map<String, String> all = new HashMap<>(options);
    all.put("path", path);
    return open(session.sqlContext(),
        scala.collection.immutable.Map.from(scala.jdk.javaapi.CollectionConverters.asScala(all)));
  }

  /**
   * A read through this class named directly ({@code format("io.filecommit.read.FileCommitDataSource")}):
   * refused, since the checks of the path (allowed roots, the principal's READ) belong to the
   * registered sources that extend it ({@code connect.FileCommitSource}, {@code format("filecommit")}
   * / {@code format("delta")}), which override this method.
   *
   * @param sqlContext the session's context
   * @param parameters the reader's options
   * @return never
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_UNSUPPORTED_OPERATION}
   */
  @Override
  public BaseRelation createRelation(SQLContext sqlContext, scala.collection.immutable.Map<String, String> parameters) {
    throw io.filecommit.errors.ClientExceptions.rethrow(ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION.error("Read Delta tables with format(\"filecommit\") or "
        + "format(\"delta\"), not by the class name " + getClass().getName(),
        Map.of("operation", "format(\"" + getClass().getName() + "\")")));
  }

  /**
   * Resolves a read whose path the caller has checked (allowed roots, the principal's READ).
   *
   * @param sqlContext the session's context
   * @param parameters the reader's options (case-insensitive), {@code path} the table root
   * @return the relation
   * @throws io.filecommit.errors.FileCommitException with Delta's class for a missing table, bad
   *     options, versions or timestamps out of range, unsupported reader features
   */
  protected static BaseRelation open(SQLContext sqlContext, scala.collection.immutable.Map<String, String> parameters) {
    SparkSession session = (SparkSession) sqlContext.sparkSession();
    Map<String, String> options = new HashMap<>();
    scala.jdk.javaapi.CollectionConverters.asJava(parameters).forEach((k, v) -> options.put(k.toLowerCase(Locale.ROOT), v));
    String path = options.get("path");
    if (path == null || path.isBlank()) {
      throw ErrorClass.INVALID_EMPTY_LOCATION.error("A filecommit read needs the table path: load(path)",
          Map.of("location", String.valueOf(path)));
    }
    DeltaLog log = DeltaLog.forTable(session, path);
    Snapshot latest = log.snapshot();
    if (!latest.exists()) {
      throw ErrorClass.DELTA_MISSING_DELTA_TABLE.error(path + " is not a Delta table (no _delta_log commits)",
          Map.of("tableName", path));
    }
    if (flag(options, "history")) {
      return HistoryRelation.of(session, log, timestamps(log, latest));
    }
    if (flag(options, "readchangefeed") || flag(options, "readchangedata")) {
      return changeFeed(session, log, latest, options);
    }
    return SnapshotRead.relation(session, log, TimeTravel.snapshot(session, log, latest, options,
        () -> timestamps(log, latest)));
  }

  private static BaseRelation changeFeed(SparkSession session, DeltaLog log, Snapshot latest,
      Map<String, String> options) {
    TreeMap<Long, Long> ts = timestamps(log, latest);
    long last = latest.version();
    Long start = null;
    if (options.containsKey("startingversion")) {
      start = TimeTravel.version(options.get("startingversion"), "startingVersion");
    } else if (options.containsKey("startingtimestamp")) {
      long t = TimeTravel.timestampMs(session, options.get("startingtimestamp"), "startingTimestamp");
      Map.Entry<Long, Long> at = null;
      for (Map.Entry<Long, Long> e : ts.entrySet()) {
        if (e.getValue() >= t) {
          at = e;
          break;
        }
      }
      if (at == null) {
        throw TimeTravel.afterLatest(t, ts.lastEntry().getValue(), log);
      }
      start = at.getKey();
    }
    if (start == null) {
      throw ErrorClass.DELTA_NO_START_FOR_CDC_READ.error("No startingVersion or startingTimestamp provided for the "
          + "change data feed read of " + log.tablePath());
    }
    long end = last;
    if (options.containsKey("endingversion")) {
      end = Math.min(last, TimeTravel.version(options.get("endingversion"), "endingVersion"));
    } else if (options.containsKey("endingtimestamp")) {
      long t = TimeTravel.timestampMs(session, options.get("endingtimestamp"), "endingTimestamp");
      Long at = null;
      for (Map.Entry<Long, Long> e : ts.entrySet()) {
        if (e.getValue() <= t) {
          at = e.getKey();
        }
      }
      if (at == null) {
        throw TimeTravel.beforeEarliest(t, ts.firstEntry().getValue(), log);
      }
      end = at;
    }
    if (start > last) {
      throw ErrorClass.DELTA_CDC_START_VERSION_AFTER_LATEST.error("Start version " + start + " for the change data feed of "
          + log.tablePath() + " exceeds the latest table version " + last,
          Map.of("start", String.valueOf(start), "latest", String.valueOf(last)));
    }
    if (end < start) {
      throw ErrorClass.DELTA_INVALID_CDC_RANGE.error("CDC range from start " + start + " to end " + end + " of "
          + log.tablePath() + " was invalid. End cannot be before start.", Map.of("start", String.valueOf(start),
          "end", String.valueOf(end)));
    }
    return ChangeFeed.relation(session, log, start, end, ts);
  }

  static TreeMap<Long, Long> timestamps(DeltaLog log, Snapshot latest) {
    boolean ict = TableConfig.IN_COMMIT_TIMESTAMPS.fromMetadata(latest.metadata());
    return CommitTimestamps.of(log, ict);
  }

  private static boolean flag(Map<String, String> options, String key) {
    String v = options.get(key);
    if (v == null) {
      return false;
    }
    if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
      return v.equalsIgnoreCase("true");
    }
    throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Invalid value '" + v + "' for option '" + key + "': must be true or false",
        Map.of("input", v, "name", key));
  }

  /** Parses a timestamp string as Spark casts it to a timestamp in the session time zone, or null. */
  static Long parseMicros(SparkSession session, String text) {
    scala.Option<Object> micros = DateTimeUtils.stringToTimestamp(UTF8String.fromString(text.trim()),
        SnapshotRead.zone(session));
    return micros.isDefined() ? (Long) micros.get() : null;
  }
}
