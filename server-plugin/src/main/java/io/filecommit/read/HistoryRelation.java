package io.filecommit.read;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.CommitInfo;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.TableScan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The commits of a table, newest first, as Delta's {@code DESCRIBE HISTORY} lists them (Delta's
 * {@code DeltaHistoryManager.getHistory}; protocol "Commit Provenance Information"): one row per
 * JSON commit still in the log with {@code version} (long), {@code timestamp} (timestamp: the
 * commit's timestamp as {@link CommitTimestamps} gives it), {@code operation},
 * {@code userId} / {@code userName} (who committed: the verified principal on a server that
 * authenticates its clients), {@code operationParameters} and {@code operationMetrics} (map of string to string: strings as
 * they are, other JSON values as JSON text), {@code readVersion}, {@code isolationLevel},
 * {@code isBlindAppend}, {@code engineInfo}. A commit without {@code commitInfo} has nulls there.
 */
final class HistoryRelation extends BaseRelation implements TableScan {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final StructType SCHEMA = new StructType()
      .add("version", DataTypes.LongType, false)
      .add("timestamp", DataTypes.TimestampType, true)
      .add("userId", DataTypes.StringType, true)
      .add("userName", DataTypes.StringType, true)
      .add("operation", DataTypes.StringType, true)
      .add("operationParameters", DataTypes.createMapType(DataTypes.StringType, DataTypes.StringType), true)
      .add("operationMetrics", DataTypes.createMapType(DataTypes.StringType, DataTypes.StringType), true)
      .add("readVersion", DataTypes.LongType, true)
      .add("isolationLevel", DataTypes.StringType, true)
      .add("isBlindAppend", DataTypes.BooleanType, true)
      .add("engineInfo", DataTypes.StringType, true);

  private final SparkSession session;
  private final List<Row> rows;

  private HistoryRelation(SparkSession session, List<Row> rows) {
    this.session = session;
    this.rows = rows;
  }

  /**
   * The history of a table, read from its log now.
   *
   * @param session the session
   * @param log the table's log
   * @param timestamps the commits' timestamps
   * @return the relation (newest commit first)
   */
  static HistoryRelation of(SparkSession session, DeltaLog log, TreeMap<Long, Long> timestamps) {
    List<Row> rows = new ArrayList<>();
    for (Map.Entry<Long, Long> e : timestamps.descendingMap().entrySet()) {
      CommitInfo ci = null;
      for (Action a : log.readCommit(e.getKey())) {
        if (a instanceof CommitInfo c) {
          ci = c;
          break;
        }
      }
      rows.add(RowFactory.create(e.getKey(), new Timestamp(e.getValue()),
          ci == null ? null : ci.userId(),
          ci == null ? null : ci.userName(),
          ci == null ? null : ci.operation(),
          ci == null ? null : strings(ci.operationParameters()),
          ci == null ? null : strings(ci.operationMetrics()),
          ci == null ? null : ci.readVersion(),
          ci == null ? null : ci.isolationLevel(),
          ci == null ? null : ci.isBlindAppend(),
          ci == null ? null : ci.engineInfo()));
    }
    return new HistoryRelation(session, rows);
  }

  private static Map<String, String> strings(Map<String, Object> m) {
    if (m == null) {
      return null;
    }
    Map<String, String> out = new LinkedHashMap<>();
    m.forEach((k, v) -> {
      try {
        out.put(k, v == null ? null : v instanceof String s ? s : JSON.writeValueAsString(v));
      } catch (JsonProcessingException ex) {
        out.put(k, String.valueOf(v));
      }
    });
    return out;
  }

  @Override
  public SQLContext sqlContext() {
    return session.sqlContext();
  }

  @Override
  public StructType schema() {
    return SCHEMA;
  }

  @Override
  public RDD<Row> buildScan() {
    List<Row> out = new ArrayList<>();
    for (Row r : rows) {
      Object[] values = new Object[r.length()];
      for (int i = 0; i < values.length; i++) {
        Object v = r.get(i);
        values[i] = v instanceof Map<?, ?> m ? scala.jdk.javaapi.CollectionConverters.asScala(m) : v;
      }
      out.add(RowFactory.create(values));
    }
    return JavaSparkContext.fromSparkContext(session.sparkContext()).parallelize(out, 1).rdd();
  }
}
