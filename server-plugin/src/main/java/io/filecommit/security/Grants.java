package io.filecommit.security;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import io.filecommit.conf.FileCommitConf;
import org.apache.spark.SparkConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server's grants, cached so that a check costs a map lookup and a few string comparisons: the
 * grants of a {@link GrantStore}, read again at most every {@link FileCommitConf#AUTH_GRANTS_REFRESH_MS}
 * ms (default 2000) by the first check after that interval (the other checks meanwhile
 * use the grants already read). A GRANT or REVOKE on this server is seen at once by its next check;
 * one on another server sharing the database is seen within the refresh interval plus one read of
 * the table. A refresh that fails keeps the grants last read (logged); a first read that fails
 * refuses every check ({@code IllegalStateException}), never allows one.
 *
 * <p>The store ({@link #of(SparkSession)}): with a {@code jdbc:postgresql:} metastore URL ({@code
 * spark.hadoop.javax.jdo.option.ConnectionURL}, as {@code filecommit.session.metastore_conf} sets
 * it) the table {@link JdbcGrantStore#TABLE} in that database; else, with {@link FileCommitConf#AUTH_GRANTS_FILE}, that
 * JSON file ({@link FileGrantStore}); else memory. All three are the server's static Spark conf,
 * which no client can change.
 */
public final class Grants {
  /** Spark conf key of the metastore's JDBC URL (Hive's {@code javax.jdo.option.ConnectionURL}). */
  static final String METASTORE_URL = "spark.hadoop.javax.jdo.option.ConnectionURL";

  private static final Logger LOG = LoggerFactory.getLogger(Grants.class);
  private static final Map<String, Grants> SERVERS = new ConcurrentHashMap<>();

  private final GrantStore store;
  private final long refreshNanos;
  private final ReentrantLock refreshing = new ReentrantLock();
  private volatile View view;

  /** Grants read at one time, by grantee. */
  private record View(Map<String, List<Grant>> byGrantee, List<Grant> all, long readAt, long fileModified) {}

  /**
   * Grants over a store.
   *
   * @param store where the grants are kept
   * @param refreshMs how long a read of the store is used (ms, >= 0; 0 reads at every check)
   * @throws IllegalStateException when the store cannot be read
   */
  public Grants(GrantStore store, long refreshMs) {
    if (refreshMs < 0) {
      throw new IllegalArgumentException(FileCommitConf.AUTH_GRANTS_REFRESH_MS.key() + " must be >= 0, got " + refreshMs);
    }
    this.store = store;
    this.refreshNanos = refreshMs * 1_000_000L;
    this.view = read();
  }

  /**
   * The grants of the server a session belongs to, from the server's static configuration (see
   * the class comment); one instance per configuration and JVM.
   *
   * @param session a session of this server
   * @return the server's grants
   * @throws IllegalStateException when the store cannot be read the first time
   */
  public static Grants of(org.apache.spark.sql.SparkSession session) {
    SparkConf conf = session.sparkContext().conf();
    String url = conf.get(METASTORE_URL, "");
    String file = String.valueOf(FileCommitConf.AUTH_GRANTS_FILE.raw(conf)).replace("null", "");
    long refresh = Long.parseLong(FileCommitConf.AUTH_GRANTS_REFRESH_MS.raw(conf).trim());
    boolean jdbc = url.startsWith("jdbc:postgresql:");
    String key = (jdbc ? "jdbc|" + url : "file|" + file) + "|" + refresh;
    return SERVERS.computeIfAbsent(key, k -> new Grants(jdbc
        ? new JdbcGrantStore(url, conf.get("spark.hadoop.javax.jdo.option.ConnectionUserName", null),
            conf.get("spark.hadoop.javax.jdo.option.ConnectionPassword", null))
        : file.isBlank() ? GrantStore.inMemory() : new FileGrantStore(java.nio.file.Path.of(file)), refresh));
  }

  /** {@return where the grants are kept, for messages} */
  public String describe() {
    return store.describe();
  }

  private View read() {
    long modified = store instanceof FileGrantStore f ? f.modified() : 0L;
    Set<Grant> grants = store.load();
    Map<String, List<Grant>> by = new HashMap<>();
    for (Grant g : grants) {
      by.computeIfAbsent(g.grantee(), k -> new ArrayList<>()).add(g);
    }
    by.replaceAll((k, v) -> List.copyOf(v));
    return new View(Map.copyOf(by), List.copyOf(grants), System.nanoTime(), modified);
  }

  /** The grants to check against: the cached read, read again by one caller once it is too old. */
  private View current() {
    View v = view;
    if (System.nanoTime() - v.readAt < refreshNanos || !refreshing.tryLock()) {
      return v;
    }
    try {
      v = view;
      if (System.nanoTime() - v.readAt < refreshNanos) {
        return v;
      }
      if (store instanceof FileGrantStore f && f.modified() == v.fileModified) {
        view = new View(v.byGrantee, v.all, System.nanoTime(), v.fileModified);
      } else {
        view = read();
      }
    } catch (RuntimeException e) {
      LOG.warn("Cannot read the grants from {}; the grants read before stay in force: {}", store.describe(),
          e.toString());
      view = new View(v.byGrantee, v.all, System.nanoTime(), v.fileModified);
    } finally {
      refreshing.unlock();
    }
    return view;
  }

  /**
   * Whether a principal (or one of its groups) holds a privilege on a path: a grant of that
   * privilege or a higher one on the path or a prefix of it.
   *
   * @param principal the principal
   * @param needed the privilege
   * @param path a resolved path
   * @return true when a grant covers it
   */
  public boolean holdsPath(Principal principal, Privilege needed, String path) {
    return holds(principal, needed, null, path);
  }

  /**
   * Whether a principal holds a privilege on a table: a grant on its name, or on a prefix of its
   * location.
   *
   * @param principal the principal
   * @param needed the privilege
   * @param table the qualified table name, or null
   * @param location the table's resolved location, or null
   * @return true when a grant covers it
   */
  public boolean holdsTable(Principal principal, Privilege needed, String table, String location) {
    return holds(principal, needed, table, location);
  }

  private boolean holds(Principal principal, Privilege needed, String table, String path) {
    View v = current();
    if (holds(v.byGrantee.get(principal.name()), needed, table, path)) {
      return true;
    }
    for (String group : principal.groups()) {
      if (holds(v.byGrantee.get(group), needed, table, path)) {
        return true;
      }
    }
    return false;
  }

  private static boolean holds(List<Grant> grants, Privilege needed, String table, String path) {
    if (grants == null) {
      return false;
    }
    for (Grant g : grants) {
      if (g.privilege().includes(needed) && (table != null && g.names(table) || path != null && g.covers(path))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Stores a grant; this server's next check sees it.
   *
   * @param grant the grant
   */
  public void grant(Grant grant) {
    store.add(grant);
    view = read();
  }

  /**
   * Removes a grant; this server's next check no longer sees it.
   *
   * @param grant the grant
   * @return whether it was stored
   */
  public boolean revoke(Grant grant) {
    boolean removed = store.remove(grant);
    view = read();
    return removed;
  }

  /**
   * Every grant, as the store has them now (read afresh).
   *
   * @return the grants
   */
  public List<Grant> all() {
    view = read();
    return view.all;
  }
}
