package io.filecommit.txn;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this server is writing under each table right now, so that VACUUM of that table on this
 * server never deletes the files of a write that has not committed yet, whatever their age (Delta's
 * {@code VacuumCommand} relies on the retention alone: "files of writes in flight are younger than
 * the retention"; protocol "Delta Table Specification" on files not yet in the log).
 *
 * <p>A command that produces files under a table (a write's Spark job or driver-side write, a
 * row-level change's rewritten files and deletion vectors, OPTIMIZE, RESTORE's re-added files)
 * opens a {@link Registration} before its first file exists, with its start time (ms since epoch)
 * and, where known, the file-name tokens its files carry ({@link Registration#protectToken}) or the
 * exact paths it will reference ({@link Registration#protectPaths}). Registrations are closed when
 * the command ends ({@link Scope}, opened per command by the Connect plugin and closed in a {@code
 * finally}): by then the files are in a version (valid for VACUUM), staged (protected by the staging
 * store) or deleted by the abort.
 *
 * <p><b>The rule VACUUM follows</b> ({@link VacuumView}): a VACUUM of table T takes its view
 * <em>before</em> it reads T's snapshot; the view holds every registration on T that is open then
 * and every one opened while the view is open (closed ones stay in it). A candidate file is
 * deleted only if, under T's lock at the moment of its deletion, no registration of the view (a)
 * lists its path, (b) has a token its file name contains, or (c) started less than {@link
 * #CLOCK_SLACK_MS} after the file's modification time (mtime {@code >= start - slack}). Because a
 * registration is made under the same lock before the writer checks or writes anything, either the
 * registration precedes VACUUM's check of the file (the file is kept) or VACUUM's delete precedes
 * the registration (the writer's own existence check, e.g. RESTORE's, then sees the file missing).
 * A write that committed before the view was taken is in the snapshot VACUUM reads. Writes on other
 * servers are not known here: for them only the retention (and its floor) protects.
 *
 * <p>Bounded: at most {@link #MAX_OPEN} registrations are open at once (each command holds a few;
 * more means a leak, and the next registration fails with {@link IllegalStateException}); a table's
 * entry is dropped when it has no open registration and no VACUUM. Thread-safe.
 */
public final class InFlightWrites {
  /** Clock difference tolerated between this driver and the storage that stamps file times, ms. */
  public static final long CLOCK_SLACK_MS = 10 * 60_000L;
  /** Most registrations open at once on this server. */
  public static final int MAX_OPEN = 100_000;

  private static final ConcurrentHashMap<String, Table> TABLES = new ConcurrentHashMap<>();
  private static final ThreadLocal<Scope> SCOPE = new ThreadLocal<>();
  private static int open;

  private InFlightWrites() {}

  /** One table's open registrations and running VACUUM views; its monitor is the table's lock. */
  private static final class Table {
    final String key;
    final Set<Registration> registrations = new LinkedHashSet<>();
    final Set<VacuumView> vacuums = new HashSet<>();
    boolean dropped;

    Table(String key) {
      this.key = key;
    }

    /** Drops this entry when nothing uses it; caller holds the lock. */
    void dropIfUnused() {
      if (registrations.isEmpty() && vacuums.isEmpty()) {
        dropped = true;
        TABLES.remove(key, this);
      }
    }
  }

  /** Runs {@code action} under the lock of a live entry for {@code table}. */
  private static <T> T withTable(String table, java.util.function.Function<Table, T> action) {
    while (true) {
      Table t = TABLES.computeIfAbsent(table, Table::new);
      synchronized (t) {
        if (!t.dropped) {
          return action.apply(t);
        }
      }
    }
  }

  /**
   * Opens a registration for a write under {@code table}, starting now; it is closed with the
   * current thread's {@link Scope} (and may be closed earlier with {@link Registration#close}).
   *
   * @param table the table root, qualified with its file system ({@code DeltaLog.tablePath()})
   * @return the registration; when the thread has no open scope (code run outside a command, such as
   *     unit tests of a command), an unregistered one that protects nothing
   * @throws IllegalStateException when {@link #MAX_OPEN} registrations are open
   */
  public static Registration register(String table) {
    Scope scope = SCOPE.get();
    if (scope == null) {
      return new Registration(null, System.currentTimeMillis());
    }
    Registration r = open(table, System.currentTimeMillis());
    scope.registrations.add(r);
    return r;
  }

  /**
   * Opens a registration for a write under {@code table} that the caller closes itself.
   *
   * @param table the table root, qualified
   * @param startMs when the write started, ms since epoch (files it writes are not older)
   * @return the open registration
   * @throws IllegalStateException when {@link #MAX_OPEN} registrations are open
   */
  public static Registration open(String table, long startMs) {
    synchronized (InFlightWrites.class) {
      if (open >= MAX_OPEN) {
        throw new IllegalStateException(MAX_OPEN + " writes are registered as in flight on this server: "
            + "registrations are leaking");
      }
      open++;
    }
    return withTable(table, t -> {
      Registration r = new Registration(t, startMs);
      t.registrations.add(r);
      t.vacuums.forEach(v -> v.seen.add(r));
      return r;
    });
  }

  /**
   * Starts the view of a VACUUM of {@code table}; take it before reading the table's snapshot.
   *
   * @param table the table root, qualified
   * @return the view; close it when the VACUUM ends
   */
  public static VacuumView vacuumStarting(String table) {
    return withTable(table, t -> {
      VacuumView v = new VacuumView(t);
      v.seen.addAll(t.registrations);
      t.vacuums.add(v);
      return v;
    });
  }

  /**
   * Open registrations on a table, for tests and diagnostics.
   *
   * @param table the table's root as registered
   * @return how many registrations are open
   */
  public static int openOn(String table) {
    Table t = TABLES.get(table);
    if (t == null) {
      return 0;
    }
    synchronized (t) {
      return t.registrations.size();
    }
  }

  /**
   * Opens the scope of one command on the current thread: registrations made by {@link #register}
   * on this thread until it is closed are closed with it. A scope opened inside another is a no-op.
   *
   * @return the scope, to close in a {@code finally} (try-with-resources)
   */
  public static Scope openScope() {
    if (SCOPE.get() != null) {
      return new Scope(false);
    }
    Scope s = new Scope(true);
    SCOPE.set(s);
    return s;
  }

  /** The registrations of one command (see {@link #openScope}). */
  public static final class Scope implements AutoCloseable {
    private final boolean outer;
    private final List<Registration> registrations = new ArrayList<>();

    private Scope(boolean outer) {
      this.outer = outer;
    }

    /** Closes every registration of the command; never throws. */
    @Override
    public void close() {
      if (!outer) {
        return;
      }
      SCOPE.remove();
      registrations.forEach(Registration::close);
      registrations.clear();
    }
  }

  /** One write in flight under one table (see the class comment). */
  public static final class Registration implements AutoCloseable {
    private final Table table;
    private final long startMs;
    private final Set<String> tokens = new HashSet<>();
    private final Set<String> paths = new HashSet<>();
    private boolean closed;

    private Registration(Table table, long startMs) {
      this.table = table;
      this.startMs = startMs;
      this.closed = table == null;
    }

    /** {@return when the write started, ms since epoch} */
    public long startMs() {
      return startMs;
    }

    /**
     * Protects every file whose name contains {@code token} (a committer's job token, a command's
     * deletion-vector token), whatever its modification time.
     *
     * @param token a non-empty string unique to this write's file names
     * @return this registration
     */
    public Registration protectToken(String token) {
      if (token == null || token.isEmpty()) {
        throw new IllegalArgumentException("empty token");
      }
      if (table != null) {
        synchronized (table) {
          tokens.add(token);
        }
      }
      return this;
    }

    /**
     * Protects these files (absolute paths, qualified as VACUUM lists them: {@code
     * FileSystem.makeQualified(path).toString()}), whatever their modification time.
     *
     * @param files the paths
     * @return this registration
     */
    public Registration protectPaths(Collection<String> files) {
      if (table != null) {
        synchronized (table) {
          paths.addAll(files);
        }
      }
      return this;
    }

    /** Whether this registration protects the file; caller holds the table's lock. */
    boolean protects(String path, String name, long modificationTime) {
      if (modificationTime >= startMs - CLOCK_SLACK_MS || paths.contains(path)) {
        return true;
      }
      for (String t : tokens) {
        if (name.contains(t)) {
          return true;
        }
      }
      return false;
    }

    /** Ends the registration (VACUUM views that saw it keep honouring it); idempotent. */
    @Override
    public void close() {
      if (table == null) {
        return;
      }
      synchronized (table) {
        if (closed) {
          return;
        }
        closed = true;
        table.registrations.remove(this);
        table.dropIfUnused();
      }
      synchronized (InFlightWrites.class) {
        open--;
      }
    }
  }

  /** A file deletion VACUUM performs under the table's lock. */
  @FunctionalInterface
  public interface Deletion {
    /**
     * Deletes the file.
     *
     * @throws IOException when the file system fails
     */
    void run() throws IOException;
  }

  /** The writes one VACUUM must respect (see the class comment). */
  public static final class VacuumView implements AutoCloseable {
    private final Table table;
    private final Set<Registration> seen = new LinkedHashSet<>();
    private boolean closed;

    private VacuumView(Table table) {
      this.table = table;
    }

    /**
     * Whether a write this view saw protects the file.
     *
     * @param path the file's qualified absolute path
     * @param modificationTime its modification time, ms since epoch
     * @return true when it must not be deleted now
     */
    public boolean protects(String path, long modificationTime) {
      String name = path.substring(path.lastIndexOf('/') + 1);
      synchronized (table) {
        for (Registration r : seen) {
          if (r.protects(path, name, modificationTime)) {
            return true;
          }
        }
        return false;
      }
    }

    /**
     * Deletes the file unless a write this view saw protects it, atomically with respect to new
     * registrations on the table.
     *
     * @param path the file's qualified absolute path
     * @param modificationTime its modification time, ms since epoch
     * @param deletion deletes it
     * @return whether it was deleted (false: protected, kept)
     * @throws IOException from the deletion
     */
    public boolean deleteUnlessProtected(String path, long modificationTime, Deletion deletion) throws IOException {
      synchronized (table) {
        if (protects(path, modificationTime)) {
          return false;
        }
        deletion.run();
        return true;
      }
    }

    /** Ends the view; idempotent. */
    @Override
    public void close() {
      synchronized (table) {
        if (closed) {
          return;
        }
        closed = true;
        table.vacuums.remove(this);
        table.dropIfUnused();
      }
    }
  }
}
