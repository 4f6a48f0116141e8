package io.filecommit.delta;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The {@link DeltaLog}s of {@link DeltaLog#forTable}, kept as Delta's {@code DeltaLog.forTable}
 * keeps its logs: per table path and the session's SQL conf (Spark copies every SQL conf entry into
 * the Hadoop conf a session makes, so two sessions whose confs differ get their own log and file
 * system settings). At most {@value #MAX_ENTRIES} logs, least recently used first out. A log holds
 * no table state (that is {@link SnapshotCache}'s), only its file system, LogStore and Kernel engine.
 * Also keeps each distinct session SQL conf's Hadoop conf ({@link #sessionHadoopConf}).
 */
public final class DeltaLogCache {
  /** Logs kept at most. */
  static final int MAX_ENTRIES = 64;

  /** The process-wide cache. */
  static final DeltaLogCache INSTANCE = new DeltaLogCache();

  private record Key(String path, scala.collection.immutable.Map<String, String> sessionConf) {}

  private final LinkedHashMap<Key, DeltaLog> logs = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Key, DeltaLog> eldest) {
      return size() > MAX_ENTRIES;
    }
  };

  /**
   * The log of {@code path} for a session whose SQL conf is {@code sessionConf}, made by {@code
   * open} (outside the cache's lock) when there is none yet.
   */
  DeltaLog get(String path, scala.collection.immutable.Map<String, String> sessionConf, Supplier<DeltaLog> open) {
    Key key = new Key(path, sessionConf);
    synchronized (this) {
      DeltaLog cached = logs.get(key);
      if (cached != null) {
        return cached;
      }
    }
    DeltaLog log = open.get();
    synchronized (this) {
      return logs.computeIfAbsent(key, k -> log);
    }
  }

  private final LinkedHashMap<scala.collection.immutable.Map<String, String>, org.apache.hadoop.conf.Configuration>
      confs = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(
            Map.Entry<scala.collection.immutable.Map<String, String>, org.apache.hadoop.conf.Configuration> eldest) {
          return size() > MAX_ENTRIES;
        }
      };

  /**
   * The Hadoop conf of sessions whose SQL conf is {@code sessionConf}, made by {@code make} (Spark's
   * {@code SessionState.newHadoopConf}) once per distinct SQL conf. Shared: callers copy it before
   * changing anything.
   */
  org.apache.hadoop.conf.Configuration hadoopConf(scala.collection.immutable.Map<String, String> sessionConf,
      Supplier<org.apache.hadoop.conf.Configuration> make) {
    synchronized (this) {
      org.apache.hadoop.conf.Configuration cached = confs.get(sessionConf);
      if (cached != null) {
        return cached;
      }
    }
    org.apache.hadoop.conf.Configuration conf = make.get();
    synchronized (this) {
      return confs.computeIfAbsent(sessionConf, k -> conf);
    }
  }

  /**
   * The session's Hadoop conf (Spark's {@code SessionState.newHadoopConf}), made once per distinct
   * session SQL conf and shared (copying the server's whole Hadoop conf costs about a millisecond):
   * callers copy it ({@code new Configuration(conf)}) before setting anything.
   *
   * @param session the Spark session
   * @return the shared conf
   */
  public static org.apache.hadoop.conf.Configuration sessionHadoopConf(org.apache.spark.sql.classic.SparkSession session) {
    return INSTANCE.hadoopConf(session.sessionState().conf().getAllConfs(), () -> session.sessionState().newHadoopConf());
  }

  /** Logs held now. */
  synchronized int size() {
    return logs.size();
  }
}
