package io.filecommit.delta;

import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.SetTransaction;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The latest state per table root, kept across commands in this server, as Delta's writer keeps
 * its {@code DeltaLog} cache. Bounded, because one server serves many tables: at most
 * {@link #MAX_ENTRIES} tables, least recently used first out, and an entry unused for
 * {@link #IDLE_MS} ms is dropped. An entry is only a shortcut: {@link DeltaLog#snapshot()} uses it
 * only while its commit file is unchanged and the next one absent.
 */
final class SnapshotCache {
  /** Tables kept at most. */
  static final int MAX_ENTRIES = 256;
  /** An entry unused for this long (ms) is dropped. */
  static final long IDLE_MS = 10 * 60 * 1000L;

  /**
   * One entry.
   *
   * @param version latest version
   * @param mtime modification time of its commit file, ms
   * @param protocol protocol at {@code version}
   * @param metadata metadata at {@code version}
   * @param kernel Kernel's snapshot at some version {@code <= version}
   * @param ownTxns txn versions committed after {@code kernel}'s version (by this process, or read
   *     by {@code DeltaLog.rollForward})
   */
  record Entry(long version, long mtime, Protocol protocol, Metadata metadata, io.delta.kernel.Snapshot kernel,
      Map<String, Long> ownTxns) {}

  private record Timed(Entry entry, long lastUsed) {}

  private final int maxEntries;
  private final long idleMs;
  private final LongSupplier clock;
  private final LinkedHashMap<String, Timed> entries = new LinkedHashMap<>(16, 0.75f, true);

  SnapshotCache(int maxEntries, long idleMs, LongSupplier clock) {
    this.maxEntries = maxEntries;
    this.idleMs = idleMs;
    this.clock = clock;
  }

  /** The process-wide cache. */
  static final SnapshotCache INSTANCE = new SnapshotCache(MAX_ENTRIES, IDLE_MS, System::currentTimeMillis);

  /** The entry of a table, or null (absent or idle too long). */
  synchronized Entry get(String table) {
    long now = clock.getAsLong();
    Timed t = entries.get(table);
    if (t == null) {
      return null;
    }
    if (now - t.lastUsed() > idleMs) {
      entries.remove(table);
      return null;
    }
    entries.put(table, new Timed(t.entry(), now));
    return t.entry();
  }

  /** Stores a table's entry, evicting idle and least recently used ones beyond the bound. */
  synchronized void put(String table, Entry entry) {
    long now = clock.getAsLong();
    entries.put(table, new Timed(entry, now));
    entries.values().removeIf(t -> now - t.lastUsed() > idleMs);
    while (entries.size() > maxEntries) {
      String eldest = entries.keySet().iterator().next();
      entries.remove(eldest);
    }
  }

  /** Replaces a table's entry only if it is still {@code expected}. */
  synchronized void replace(String table, Entry expected, Entry entry) {
    Timed t = entries.get(table);
    if (t != null && t.entry() == expected) {
      entries.put(table, new Timed(entry, clock.getAsLong()));
    }
  }

  /** Drops a table's entry. */
  synchronized void remove(String table) {
    entries.remove(table);
  }

  /** Tables held now. */
  synchronized int size() {
    return entries.size();
  }

  /** Most commits {@link #rollForward} reads; further behind, Kernel reloads from a checkpoint. */
  static final int MAX_ROLL_FORWARD = 32;

  /**
   * The cached state moved forward over the commits that followed it (as Delta's incremental {@code
   * DeltaLog.update}): the commits after {@code c.version()} are read in order until the first
   * absent one. Only commits that change no protocol, metadata or domain metadata move the state
   * (their {@code txn} actions are recorded); any of those, or more than {@value #MAX_ROLL_FORWARD}
   * new commits, and Kernel reloads the snapshot (which also checks that a new protocol is readable).
   *
   * @param log the table's log
   * @param c the cached entry, still valid for its own version
   * @return the moved entry, or null: ask Kernel
   */
  static Entry rollForward(DeltaLog log, Entry c) {
    Map<String, Long> txns = new HashMap<>(c.ownTxns());
    long last = c.version();
    for (long v = c.version() + 1; v <= c.version() + MAX_ROLL_FORWARD; v++) {
      List<Action> actions;
      try {
        actions = log.read(log.commitFile(v));
      } catch (FileNotFoundException e) {
        break;
      } catch (IOException | RuntimeException e) {
        return null;
      }
      for (Action a : actions) {
        if (a instanceof Protocol || a instanceof Metadata || a instanceof DomainMetadata) {
          return null;
        }
        if (a instanceof SetTransaction t) {
          txns.put(t.appId(), t.version());
        }
      }
      last = v;
    }
    long mtime = log.commitMtime(last);
    if (last == c.version() || mtime < 0 || log.commitMtime(last + 1) >= 0) {
      return null;
    }
    return new Entry(last, mtime, c.protocol(), c.metadata(), c.kernel(), Map.copyOf(txns));
  }
}
