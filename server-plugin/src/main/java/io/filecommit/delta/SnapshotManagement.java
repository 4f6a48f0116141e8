package io.filecommit.delta;

import io.delta.kernel.Table;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.exceptions.UnsupportedTableFeatureException;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.ErrorClass;
import java.io.FileNotFoundException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The snapshots of one table's log (Delta's {@code SnapshotManagement}, protocol "Action
 * Reconciliation"): the latest one and earlier versions as Delta Kernel reads them, and the
 * process-wide {@link SnapshotCache} kept in step with this server's commits. The latest snapshot
 * comes from the cache while {@link LogProbe#check} proves its version the latest, rolled forward
 * over other writers' commits ({@link SnapshotCache#rollForward}) when it can be, else from Kernel.
 * Active files, {@code txn} versions and commit timestamps are read only when a command asks.
 * {@link DeltaLog}'s snapshot methods, which state the contracts, delegate here.
 */
final class SnapshotManagement {
  private final DeltaLog log;
  private final Engine engine;
  private final String key;

  /**
   * The snapshots of a log.
   *
   * @param log the table's log (its table root is the cache key)
   */
  SnapshotManagement(DeltaLog log) {
    this.log = log;
    this.engine = log.engine();
    this.key = log.tablePath().toString();
  }

  /** The latest snapshot ({@link DeltaLog#snapshot()}): the cache while it provably is the latest, else Kernel. */
  Snapshot latest() {
    SnapshotCache.Entry c = SnapshotCache.INSTANCE.get(key);
    boolean[] probe = c == null ? new boolean[2] : LogProbe.check(log, c.version(), c.mtime());
    if (probe[0] && probe[1]) {
      return toSnapshot(c);
    } else if (probe[0]) {
      SnapshotCache.Entry forward = SnapshotCache.rollForward(log, c);
      if (forward != null) {
        SnapshotCache.INSTANCE.replace(key, c, forward);
        return toSnapshot(forward);
      }
    }
    io.delta.kernel.Snapshot ks;
    try {
      ks = Table.forPath(engine, key).getLatestSnapshot(engine);
    } catch (TableNotFoundException e) {
      SnapshotCache.INSTANCE.remove(key);
      return Snapshot.empty();
    } catch (UnsupportedTableFeatureException e) {
      throw unsupportedForRead(e);
    } catch (RuntimeException e) {
      throw log.readFailure(e);
    }
    long version = ks.getVersion();
    SnapshotCache.Entry fresh = new SnapshotCache.Entry(version, log.commitMtime(version), KernelInternals.protocol(ks),
        KernelInternals.metadata(ks), ks, Map.of());
    if (fresh.mtime() >= 0) {
      SnapshotCache.INSTANCE.put(key, fresh);
    }
    return toSnapshot(fresh);
  }

  /**
   * The cached state of the commit this server published last on an object store whose commits
   * are conditional PUTs, not checked against the log ({@link DeltaLog#ownLatestCommit}); empty
   * when the cache holds anything else or commits are not known to be conditional.
   */
  Optional<Snapshot> ownLatestCommit() {
    if (!(log.logStore() instanceof io.filecommit.delta.storage.S3ConditionalLogStore s)
        || !s.knownConditional(log.logPath())) {
      return Optional.empty(); // without a refused PUT to tell of another writer's commit, list
    }
    SnapshotCache.Entry c = SnapshotCache.INSTANCE.get(key);
    return c != null && c.mtime() == LogProbe.PUBLISHED_HERE ? Optional.of(toSnapshot(c)) : Optional.empty();
  }

  /** The snapshot of an earlier version ({@link DeltaLog#snapshotAsOfVersion}), from Kernel, not cached. */
  Snapshot asOfVersion(long version) {
    return kernelRead(() -> Table.forPath(engine, key).getSnapshotAsOfVersion(engine, version));
  }

  private Snapshot kernelRead(Supplier<io.delta.kernel.Snapshot> read) {
    io.delta.kernel.Snapshot ks;
    try {
      ks = read.get();
    } catch (TableNotFoundException e) {
      throw ErrorClass.DELTA_TABLE_NOT_FOUND.error("No Delta table at " + log.tablePath(), Map.of("table", key));
    } catch (UnsupportedTableFeatureException e) {
      throw unsupportedForRead(e);
    }
    long version = ks.getVersion();
    return new Snapshot(version, KernelInternals.protocol(ks), KernelInternals.metadata(ks),
        () -> {
          try {
            return ScanFiles.activeFiles(ks, engine, key);
          } catch (RuntimeException e) {
            throw log.readFailure(e);
          }
        },
        appId -> KernelInternals.latestTransactionVersion(ks, engine, appId), () -> ks.getTimestamp(engine));
  }

  private RuntimeException unsupportedForRead(UnsupportedTableFeatureException e) {
    return ErrorClass.DELTA_UNSUPPORTED_FEATURES_FOR_READ.error(
        "Cannot read the Delta table at " + log.tablePath() + ": it needs reader feature(s) "
            + e.getUnsupportedFeatures() + " that filecommit does not support", Map.of("unsupported", String.valueOf(e.getUnsupportedFeatures())));
  }

  private Snapshot toSnapshot(SnapshotCache.Entry c) {
    io.delta.kernel.Snapshot kernel = c.kernel();
    long version = c.version();
    boolean exact = kernel.getVersion() == version;
    return new Snapshot(version, c.protocol(), c.metadata(), () -> {
          try {
            return ScanFiles.activeFiles(exact ? kernel : kernelSnapshotAt(version), engine, key);
          } catch (RuntimeException e) {
            throw log.readFailure(e);
          }
        },
        appId -> c.ownTxns().containsKey(appId) ? Optional.of(c.ownTxns().get(appId))
            : KernelInternals.latestTransactionVersion(kernel, engine, appId),
        () -> exact ? kernel.getTimestamp(engine) : commitTimestamp(version));
  }

  /**
   * Moves the cache to a version this process committed ({@link DeltaLog#committed}): from the version just before
   * it, with the commit's protocol, metadata and txns; an entry further behind or already past it is kept; on an
   * object store the commit's time is {@link LogProbe#PUBLISHED_HERE} (no status request).
   */
  void committed(long version, Protocol protocol, Metadata metadata, Map<String, Long> txns) {
    SnapshotCache.Entry c = SnapshotCache.INSTANCE.get(key);
    long mtime = LogProbe.objectStore(log.fs()) ? LogProbe.PUBLISHED_HERE : log.commitMtime(version);
    if (c == null || mtime < 0) {
      SnapshotCache.INSTANCE.remove(key);
    } else if (c.version() == version - 1) {
      Map<String, Long> own = new HashMap<>(c.ownTxns());
      own.putAll(txns);
      SnapshotCache.INSTANCE.replace(key, c, new SnapshotCache.Entry(version, mtime,
          protocol != null ? protocol : c.protocol(), metadata != null ? metadata : c.metadata(), c.kernel(),
          Map.copyOf(own)));
    }
  }

  /**
   * The cached version after {@code after} whose commit file is still the cached one, or -1 ({@link
   * DeltaLog#latestKnownVersion}).
   */
  long latestKnownVersion(long after) {
    SnapshotCache.Entry c = SnapshotCache.INSTANCE.get(key);
    return c != null && c.version() > after && log.commitMtime(c.version()) == c.mtime() ? c.version() : -1;
  }

  /** Forgets the cached state of the table. */
  void invalidate() {
    SnapshotCache.INSTANCE.remove(key);
  }

  private io.delta.kernel.Snapshot kernelSnapshotAt(long version) {
    try {
      return Table.forPath(engine, key).getSnapshotAsOfVersion(engine, version);
    } catch (TableNotFoundException e) {
      throw new UncheckedIOException(new FileNotFoundException("No Delta table at " + log.tablePath()));
    }
  }

  /**
   * Notes the commit timestamp of a version this server just wrote (its commitInfo's in-commit
   * timestamp, else its timestamp), so the next transaction's in-commit timestamp needs no read of
   * the commit (protocol "In-Commit Timestamps": strictly greater than the previous commit's).
   */
  void wrote(long version, List<? extends Action> actions) {
    for (Action a : actions) {
      if (a instanceof CommitInfo ci) {
        synchronized (WRITTEN_TIMESTAMPS) {
          WRITTEN_TIMESTAMPS.put(version + "@" + key, ci.effectiveTimestamp());
        }
        return;
      }
    }
  }

  /** (version@table) -> commit timestamp of commits this server wrote, the latest few hundred. */
  private static final Map<String, Long> WRITTEN_TIMESTAMPS = new java.util.LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
      return size() > 1024;
    }
  };

  /** The commit timestamp of a version from its commitInfo (in-commit timestamp when present). */
  private long commitTimestamp(long version) {
    synchronized (WRITTEN_TIMESTAMPS) {
      Long written = WRITTEN_TIMESTAMPS.get(version + "@" + key);
      if (written != null) {
        return written;
      }
    }
    for (Action a : log.readCommit(version)) {
      if (a instanceof CommitInfo ci) {
        return ci.effectiveTimestamp();
      }
    }
    return log.commitMtime(version);
  }
}
