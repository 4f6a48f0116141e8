package io.filecommit.txn.staging;

import io.filecommit.delta.DeltaLog;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the staged commits of a table are swept ({@link StagingStore#sweep}): by a staging command
 * at most once per {@link #SWEEP_INTERVAL_MS} per table, and by a background daemon thread that
 * visits the tables staged to in this server's life, so that expired staged commits lose their
 * files even when no client comes back to them.
 *
 * <p>The background thread lists a table's staging directory only when something there is due: the
 * earliest expiration time (ms since the epoch) of the records its last sweep saw or this server
 * wrote since, or at the latest {@link #RESWEEP_MS} after that sweep (records other servers staged
 * meanwhile). A table without pending records is dropped. On an object store every listing is a
 * billed {@code LIST} request; a table with a staged commit that expires in a week is not listed
 * every minute. (Delta has no staged commits; this follows the expiry rule of the staged commit
 * record, in the manner of Delta's {@code VacuumCommand} retention: nothing before it is due.)
 */
final class StagingSweeper {
  /** How often a table's expired staged commits are swept, at most, ms. */
  static final long SWEEP_INTERVAL_MS = 60_000;
  /** The longest the background thread leaves a watched table unlisted, ms. */
  static final long RESWEEP_MS = 15 * 60_000;
  private static final Logger LOG = LoggerFactory.getLogger(StagingSweeper.class);

  /**
   * A watched table: when it is next due, when it was last listed (or first watched) and when this
   * server last stored a record of it (0: never), ms since the epoch.
   */
  private record Watched(DeltaLog log, long due, long since, long stored) {}

  private static final Map<String, Watched> WATCHED = new ConcurrentHashMap<>();
  private static final Map<String, Long> LAST_SWEEP = new ConcurrentHashMap<>();
  private static volatile ScheduledExecutorService sweeper;

  private StagingSweeper() {}

  /**
   * Adds a table to the background sweeper (at most 10,000 tables) and makes it due at {@code due}
   * at the latest.
   *
   * @param log the table's log
   * @param due when one of its records expires, ms since the epoch ({@code Long.MAX_VALUE}: only
   *     watch)
   */
  static void watch(DeltaLog log, long due) {
    String key = log.tablePath().toString();
    long now = System.currentTimeMillis();
    if (WATCHED.size() < 10_000 || WATCHED.containsKey(key)) {
      WATCHED.merge(key, new Watched(log, due, now, due == Long.MAX_VALUE ? 0 : now),
          (a, b) -> new Watched(a.log(), Math.min(a.due(), b.due()), a.since(), Math.max(a.stored(), b.stored())));
    }
    if (sweeper == null) {
      synchronized (StagingSweeper.class) {
        if (sweeper == null) {
          ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "filecommit-staging-sweeper");
            t.setDaemon(true);
            return t;
          });
          s.scheduleWithFixedDelay(StagingSweeper::sweepWatched, SWEEP_INTERVAL_MS, SWEEP_INTERVAL_MS,
              TimeUnit.MILLISECONDS);
          sweeper = s;
        }
      }
    }
  }

  /**
   * Sweeps the table unless a sweep of it ran less than {@link #SWEEP_INTERVAL_MS} ago (or, with
   * {@code onlyWhenDue}, it is watched and nothing is due: the earliest expiry of the records its
   * last listing saw or this server stored since is later, and that listing is less than {@link
   * #RESWEEP_MS} old), and watches it.
   *
   * @param log the table's log
   * @param now the time, ms since the epoch
   * @param onlyWhenDue whether to follow the background thread's rule (a publish: no listing
   *     while nothing is due)
   * @return ids of the staged commits aborted
   */
  static List<String> sweepIfDue(DeltaLog log, long now, boolean onlyWhenDue) {
    String key = log.tablePath().toString();
    Watched w = WATCHED.get(key);
    watch(log, Long.MAX_VALUE);
    Long last = LAST_SWEEP.get(key);
    if (last != null && now - last < SWEEP_INTERVAL_MS) {
      return List.of();
    }
    if (onlyWhenDue && w != null && w.due() > now && now - w.since() < RESWEEP_MS) {
      // Watched, and nothing it saw or stored is due: the background thread's rule, no listing.
      return List.of();
    }
    return sweepNow(key, log, now).aborted();
  }

  private static StagingStore.Swept sweepNow(String key, DeltaLog log, long now) {
    if (LAST_SWEEP.size() > 10_000) {
      LAST_SWEEP.clear();
    }
    LAST_SWEEP.put(key, now);
    long listed = System.currentTimeMillis();
    StagingStore.Swept swept = StagingStore.sweepPlanned(log, now);
    WATCHED.computeIfPresent(key, (k, w) -> {
      // A record stored while the listing ran may be missing from it: its due time is kept.
      boolean storedSince = w.stored() >= listed;
      if (!swept.recordsLeft() && !storedSince) {
        return null;
      }
      long due = Math.min(swept.nextDue(), now + RESWEEP_MS);
      return new Watched(w.log(), storedSince ? Math.min(due, w.due()) : due, now, w.stored());
    });
    return swept;
  }

  /** One round of the background thread: the watched tables that are due. */
  static void sweepWatched() {
    long now = System.currentTimeMillis();
    for (Map.Entry<String, Watched> e : WATCHED.entrySet()) {
      Watched w = e.getValue();
      Long last = LAST_SWEEP.get(e.getKey());
      boolean due = w.due() <= now || now - w.since() >= RESWEEP_MS;
      if (!due || (last != null && now - last < SWEEP_INTERVAL_MS)) {
        continue;
      }
      try {
        sweepNow(e.getKey(), w.log(), now);
      } catch (RuntimeException ex) {
        LOG.warn("filecommit: background sweep of staged commits of " + e.getKey() + " failed", ex);
      }
    }
  }
}
