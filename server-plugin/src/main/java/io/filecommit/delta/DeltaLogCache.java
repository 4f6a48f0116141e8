package io.filecommit.delta;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;

/**
 * The {@link DeltaLog}s of {@link DeltaLog#forTable}, kept as Delta's {@code DeltaLog.forTable}
 * keeps its logs: per table path and the session's SQL conf (Spark copies every SQL conf entry into
 * the Hadoop conf a session makes, so two sessions whose confs differ get their own log and file
 * system settings). A log holds no table state (that is {@link SnapshotCache}'s), only its file
 * system, LogStore and Kernel engine. Also keeps each distinct session SQL conf's Hadoop conf
 * ({@link #sessionHadoopConf}). Each kind at most {@value #MAX_ENTRIES}, least recently used first out.
 */
public final class DeltaLogCache {
  /** Entries of each kind kept at most. */
  static final int MAX_ENTRIES = 64;

  /** The process-wide cache. */
  static final DeltaLogCache INSTANCE = new DeltaLogCache();

  private record Key(String path, scala.collection.immutable.Map<String, String> sessionConf) {}

  private final Lru<Key, DeltaLog> logs = new Lru<>();
  private final Lru<scala.collection.immutable.Map<String, String>, Configuration> confs = new Lru<>();

  /**
   * The log of {@code path} for a session whose SQL conf is {@code sessionConf}, made by {@code
   * open} (outside the cache's lock) when there is none yet.
   */
  DeltaLog get(String path, scala.collection.immutable.Map<String, String> sessionConf, Supplier<DeltaLog> open) {
    return logs.get(new Key(path, sessionConf), open);
  }

  /**
   * The session's Hadoop conf (Spark's {@code SessionState.newHadoopConf}), made once per distinct
   * session SQL conf and shared (copying the server's whole Hadoop conf costs about a millisecond):
   * callers copy it ({@code new Configuration(conf)}) before setting anything.
   *
   * @param session the Spark session
   * @return the shared conf
   */
  public static Configuration sessionHadoopConf(org.apache.spark.sql.classic.SparkSession session) {
    return INSTANCE.confs.get(session.sessionState().conf().getAllConfs(), () -> session.sessionState().newHadoopConf());
  }

  /**
   * A private copy of {@link #sessionHadoopConf} with a writer's options set, as Spark's {@code
   * SessionState.newHadoopConfWithOptions} makes it (null values and the {@code path} / {@code
   * paths} options left out), for one job to change as it likes.
   *
   * @param session the Spark session
   * @param options data source options (e.g. Parquet writer settings)
   * @return a new conf
   */
  public static Configuration sessionHadoopConfWithOptions(org.apache.spark.sql.classic.SparkSession session,
      Map<String, String> options) {
    return setOptions(new Configuration(sessionHadoopConf(session)), options);
  }

  /**
   * Sets a writer's options on a private conf as Spark's {@code SessionState
   * .newHadoopConfWithOptions} does (null values and the {@code path} / {@code paths} options left
   * out): for a conf that is already a copy, e.g. a Hadoop {@code Job}'s.
   *
   * @param conf a conf this caller owns
   * @param options data source options
   * @return {@code conf}
   */
  public static Configuration setOptions(Configuration conf, Map<String, String> options) {
    options.forEach((k, v) -> {
      if (v != null && !k.equals("path") && !k.equals("paths")) {
        conf.set(k, v);
      }
    });
    return conf;
  }

  /** Logs held now. */
  int size() {
    return logs.size();
  }

  /** A bounded least-recently-used map whose values are made outside its lock, once kept. */
  private static final class Lru<K, V> {
    private final LinkedHashMap<K, V> map = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > MAX_ENTRIES;
      }
    };

    V get(K key, Supplier<V> make) {
      synchronized (this) {
        V cached = map.get(key);
        if (cached != null) {
          return cached;
        }
      }
      V made = make.get();
      synchronized (this) {
        return map.computeIfAbsent(key, k -> made);
      }
    }

    synchronized int size() {
      return map.size();
    }
  }
}
