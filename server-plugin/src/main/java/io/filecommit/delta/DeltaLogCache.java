package io.filecommit.delta;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;

/**
 * The {@link DeltaLog}s of {@link DeltaLog#forTable}, kept as Delta's {@code DeltaLog.forTable}
 * keeps its logs: per table path and the session's SQL conf (Spark copies every SQL conf entry into
 * the Hadoop conf a session makes, so two sessions whose confs differ get their own log and file
 * system settings). Only the entries that can reach a log's file system, LogStore or Kernel engine
 * are its key ({@link #logKey}): not Spark's SQL settings ({@code spark.sql.*}, read by Spark
 * itself, never from a Hadoop conf; those a client may change) and not entries equal to the server's Hadoop conf, so a client
 * that changes such a setting before every command keeps using the logs it had and cannot evict
 * other clients' logs. A log holds no table state (that is {@link SnapshotCache}'s), only its file
 * system, LogStore and Kernel engine. Also keeps each distinct session SQL conf's Hadoop conf
 * ({@link #sessionHadoopConf}) with its {@link ClientSettings} verdict: a session that changed a
 * server-owned setting gets no Hadoop conf, so no log, read, write or delete. Each kind at most
 * {@value #MAX_ENTRIES}, least recently used first out.
 */
public final class DeltaLogCache {
  /** Entries of each kind kept at most. */
  static final int MAX_ENTRIES = 64;

  /** The process-wide cache. */
  static final DeltaLogCache INSTANCE = new DeltaLogCache();

  private record Key(String path, scala.collection.immutable.Map<String, String> logConf) {}

  private final Lru<Key, DeltaLog> logs = new Lru<>();
  private final Lru<scala.collection.immutable.Map<String, String>, SessionHadoop> confs = new Lru<>();

  /** A session SQL conf's Hadoop conf, or (conf null) the keys it may not have ({@link ClientSettings}). */
  private record SessionHadoop(Configuration conf, List<String> refused) {}

  /**
   * The log of {@code path} for a session whose SQL conf is {@code sessionConf}, made by {@code
   * open} (outside the cache's lock) when there is none yet.
   */
  DeltaLog get(String path, scala.collection.immutable.Map<String, String> sessionConf, Configuration server,
      Supplier<DeltaLog> open) {
    return logs.get(new Key(path, logKey(sessionConf, server)), open);
  }

  /**
   * The part of a session's SQL conf that can change a log: entries whose value is not the server's
   * Hadoop conf value, except Spark SQL settings a client may change ({@code spark.sql.*} with
   * {@link ClientSettings#mayChange}; {@code spark.sql.catalog.*} stays in the key, so its check
   * in {@link #sessionHadoopConf} still runs for a session that set it).
   *
   * @param sessionConf the session's SQL conf entries
   * @param server the server's Hadoop conf
   * @return those entries, sorted by key
   */
  static scala.collection.immutable.Map<String, String> logKey(scala.collection.immutable.Map<String, String> sessionConf,
      Configuration server) {
    java.util.TreeMap<String, String> kept = new java.util.TreeMap<>();
    scala.jdk.javaapi.CollectionConverters.asJava(sessionConf).forEach((k, v) -> {
      boolean harmlessSql = k.startsWith("spark.sql.") && ClientSettings.mayChange(k);
      if (!harmlessSql && !java.util.Objects.equals(v, server.getRaw(k))) {
        kept.put(k, v);
      }
    });
    return scala.collection.immutable.Map.from(scala.jdk.javaapi.CollectionConverters.asScala(kept));
  }

  /**
   * The session's Hadoop conf (Spark's {@code SessionState.newHadoopConf}: a copy of the server's
   * Hadoop conf with every session SQL conf entry set), made once per distinct session SQL conf and
   * shared (copying the server's whole Hadoop conf costs about a millisecond): callers copy it
   * ({@code new Configuration(conf)}) before setting anything. Made from the very map that is the
   * cache key and was checked, so a conf changed meanwhile cannot slip in.
   *
   * @param session the Spark session
   * @return the shared conf
   * @throws io.filecommit.errors.FileCommitException {@code CANNOT_MODIFY_STATIC_CONFIG} naming the
   *     first key (parameter {@code key}) when the session set a key {@link ClientSettings} keeps
   *     for the server to a value not the server's; the verdict is kept with the conf, so it costs
   *     one map lookup per call
   */
  public static Configuration sessionHadoopConf(org.apache.spark.sql.classic.SparkSession session) {
    scala.collection.immutable.Map<String, String> sqlConf = session.sessionState().conf().getAllConfs();
    SessionHadoop made = INSTANCE.confs.get(sqlConf, () -> {
      org.apache.spark.SparkContext sc = session.sparkContext();
      Map<String, String> entries = scala.jdk.javaapi.CollectionConverters.asJava(sqlConf);
      List<String> refused = ClientSettings.refused(entries,
          ClientSettings.serverValues(sc.getConf(), sc.hadoopConfiguration()));
      if (!refused.isEmpty()) {
        return new SessionHadoop(null, refused);
      }
      Configuration conf = new Configuration(sc.hadoopConfiguration());
      io.filecommit.delta.storage.ObjectStoreDefaults.apply(conf);
      entries.forEach((k, v) -> {
        if (v != null) {
          conf.set(k, v);
        }
      });
      return new SessionHadoop(conf, List.of());
    });
    if (made.conf() == null) {
      throw ClientSettings.refusal(made.refused(), "session setting");
    }
    return made.conf();
  }

  /**
   * A private copy of {@link #sessionHadoopConf} with a writer's options set, as Spark's {@code
   * SessionState.newHadoopConfWithOptions} makes it (null values and the {@code path} / {@code
   * paths} options left out), for one job to change as it likes.
   *
   * @param session the Spark session
   * @param options data source options (e.g. Parquet writer settings)
   * @return a new conf
   * @throws io.filecommit.errors.FileCommitException {@code CANNOT_MODIFY_STATIC_CONFIG} as {@link
   *     #sessionHadoopConf} and {@link #setOptions} throw it
   */
  public static Configuration sessionHadoopConfWithOptions(org.apache.spark.sql.classic.SparkSession session,
      Map<String, String> options) {
    Configuration shared = sessionHadoopConf(session);
    checkOptions(shared, options);
    return setOptions(new Configuration(shared), options);
  }

  /**
   * Sets a writer's options on a private conf as Spark's {@code SessionState
   * .newHadoopConfWithOptions} does (null values and the {@code path} / {@code paths} options left
   * out): for a conf that is already a copy, e.g. a Hadoop {@code Job}'s. Options go through {@link
   * #checkOptions} first.
   *
   * @param conf a conf this caller owns, made from {@link #sessionHadoopConf}
   * @param options data source options
   * @return {@code conf}
   * @throws io.filecommit.errors.FileCommitException {@code CANNOT_MODIFY_STATIC_CONFIG} (nothing set)
   */
  public static Configuration setOptions(Configuration conf, Map<String, String> options) {
    checkOptions(conf, options);
    options.forEach((k, v) -> {
      if (v != null && !k.equals("path") && !k.equals("paths")) {
        conf.set(k, v);
      }
    });
    return conf;
  }

  /**
   * Refuses writer options that {@link ClientSettings} keeps for the server, unless their value is
   * already {@code conf}'s (a session conf that passed {@link #sessionHadoopConf} holds the server's
   * value of every such key).
   *
   * @param conf the session's Hadoop conf (or a copy of it)
   * @param options data source options ({@code path} / {@code paths} are not copied, so not checked)
   * @throws io.filecommit.errors.FileCommitException {@code CANNOT_MODIFY_STATIC_CONFIG} naming the
   *     first refused option (parameter {@code key})
   */
  public static void checkOptions(Configuration conf, Map<String, String> options) {
    if (options.isEmpty()) {
      return;
    }
    Map<String, String> copied = new java.util.HashMap<>(options);
    copied.remove("path");
    copied.remove("paths");
    List<String> refused = ClientSettings.refused(copied, conf::getRaw);
    if (!refused.isEmpty()) {
      throw ClientSettings.refusal(refused, "write option");
    }
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
