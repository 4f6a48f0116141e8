package io.filecommit.delta;

import io.delta.kernel.Table;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.SetTransaction;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes {@code _delta_log/<version>.crc} after a commit landed (protocol "Version Checksum File";
 * Delta's {@code RecordChecksum} and {@code ChecksumHook}), as post-commit work that the txn
 * package runs before the command answers, or on an object store in the background, one table
 * version after another: a failure is the caller's to log, never the commit's.
 *
 * <p>The checksum of a version is derived from the previous version's (Delta's incremental
 * checksum): at once when this server wrote that one (kept in memory), otherwise the previous file
 * is read, and because another writer's file is never trusted blindly, the result is also computed
 * from the table state at the version (Kernel's log replay): when the derived checksum disagrees
 * with it, the previous file disagrees with the table; that is reported (a warning in the server
 * log and {@link #mismatchesReported()}) and the checksum from the table state is written instead.
 * Without a usable previous file the checksum comes from the table state (its set transactions
 * then unknown and left out, as Delta leaves them out when it cannot track them).
 */
public final class VersionChecksums {
  private static final Logger LOG = LoggerFactory.getLogger(VersionChecksums.class);
  private static final AtomicLong MISMATCHES = new AtomicLong();
  private static final int MAX_TABLES = 1024;

  /** The last checksum this server wrote per table root (version, content). */
  private record Written(long version, VersionChecksum checksum) {}

  private static final Map<String, Written> LAST = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Written> eldest) {
      return size() > MAX_TABLES;
    }
  };

  /**
   * The actions of the commits this server published, per (table root, version), until their
   * checksums are written: checksums are written in the background, so the next versions of a
   * table may be published before the checksum of this one is written.
   */
  private static final int MAX_PUBLISHED = 256;

  private static final Map<String, List<? extends Action>> PUBLISHED = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, List<? extends Action>> eldest) {
      return size() > MAX_PUBLISHED;
    }
  };

  private VersionChecksums() {}

  private static String key(DeltaLog log, long version) {
    return version + "@" + log.tablePath();
  }

  /**
   * Hands over the actions of a commit this server published (its put-if-absent landed, or the
   * log holds this transaction's commit), so {@link #write} computes the checksum without reading
   * the commit back and without probing for an existing checksum file: only the committer of a
   * version writes its checksum.
   *
   * @param log the table's log
   * @param version the version the commit holds
   * @param actions the commit's actions, as written
   */
  public static void committed(DeltaLog log, long version, List<? extends Action> actions) {
    synchronized (PUBLISHED) {
      PUBLISHED.put(key(log, version), actions);
    }
  }

  private static List<? extends Action> takePublished(DeltaLog log, long version) {
    synchronized (PUBLISHED) {
      return PUBLISHED.remove(key(log, version));
    }
  }

  /** {@return how many checksum files of other writers disagreed with the table state, since the server started} */
  public static long mismatchesReported() {
    return MISMATCHES.get();
  }

  /**
   * The path of a version's checksum file.
   *
   * @param log the table's log
   * @param version the version
   * @return {@code _delta_log/<version, 20 digits>.crc}
   */
  public static Path file(DeltaLog log, long version) {
    return new Path(log.logPath(), String.format("%020d.crc", version));
  }

  /**
   * Reads a version's checksum file.
   *
   * @param log the table's log
   * @param version the version
   * @return the checksum, or null when the file is missing, empty or not a complete checksum
   */
  public static VersionChecksum read(DeltaLog log, long version) {
    try (InputStream in = log.fs().open(file(log, version))) {
      VersionChecksum c = Actions.MAPPER.readValue(in, VersionChecksum.class);
      return c != null && c.complete() ? c : null;
    } catch (FileNotFoundException e) {
      return null;
    } catch (IOException | RuntimeException e) {
      LOG.info("filecommit: checksum of version " + version + " of " + log.tablePath() + " not readable: " + e);
      return null;
    }
  }

  /**
   * Writes the checksum file of a version this server just committed, unless it exists (not
   * probed when the commit's actions were handed over by {@link #committed}: this server is then
   * the version's committer, the only writer of its checksum).
   *
   * @param log the table's log
   * @param version the committed version
   * @return the checksum written, or null when the file existed already
   * @throws IOException when the log cannot be read or the file cannot be written
   */
  public static VersionChecksum write(DeltaLog log, long version) throws IOException {
    Path target = file(log, version);
    FileSystem fs = log.fs();
    List<? extends Action> published = takePublished(log, version);
    if (published == null && fs.exists(target)) {
      return null;
    }
    String table = log.tablePath().toString();
    List<? extends Action> commit = published != null ? published : log.readCommit(version);
    Written mine;
    synchronized (LAST) {
      mine = LAST.get(table);
    }
    VersionChecksum result = null;
    if (version == 0) {
      result = new VersionChecksum(null, 0, 0, 1, 1, null, List.of(), List.of(), null, null,
          VersionChecksum.Histogram.empty()).next(commit);
    } else if (mine != null && mine.version() == version - 1) {
      result = mine.checksum().next(commit);
    }
    if (result == null) {
      VersionChecksum state = fromState(log, version, commit);
      VersionChecksum previous = read(log, version - 1);
      VersionChecksum derived = previous == null ? null : previous.next(commit);
      result = state;
      if (derived != null) {
        List<String> bad = derived.mismatches(state);
        if (bad.isEmpty()) {
          result = derived.fileSizeHistogram() == null ? withHistogram(derived, state) : derived;
        } else {
          MISMATCHES.incrementAndGet();
          LOG.warn("filecommit: the checksum file of version " + (version - 1) + " of " + table
              + " disagrees with the table state in " + bad + "; not used: the checksum of version " + version
              + " is computed from the log");
        }
      }
    }
    writeAtomically(fs, target, Actions.MAPPER.writeValueAsString(result) + "\n");
    synchronized (LAST) {
      LAST.put(table, new Written(version, result));
    }
    return result;
  }

  private static VersionChecksum withHistogram(VersionChecksum c, VersionChecksum h) {
    return new VersionChecksum(c.txnId(), c.tableSizeBytes(), c.numFiles(), 1, 1, c.inCommitTimestampOpt(),
        c.setTransactions(), c.domainMetadata(), c.metadata(), c.protocol(), h.fileSizeHistogram());
  }

  /** The checksum from the table state at {@code version}, replayed by Kernel. */
  static VersionChecksum fromState(DeltaLog log, long version, List<? extends Action> commit) {
    io.delta.kernel.Snapshot ks = Table.forPath(log.engine(), log.tablePath().toString())
        .getSnapshotAsOfVersion(log.engine(), version);
    List<AddFile> files = ScanFiles.activeFiles(ks, log.engine(), log.tablePath().toString());
    Protocol p = KernelInternals.protocol(ks);
    Metadata md = KernelInternals.metadata(ks);
    for (Action a : commit) {
      // The commit's own actions are the exact ones (Kernel's copy may lose JSON detail).
      if (a instanceof Protocol np) {
        p = np;
      } else if (a instanceof Metadata nm) {
        md = nm;
      }
    }
    Long ict = null;
    for (Action a : commit) {
      if (a instanceof CommitInfo ci) {
        ict = ci.inCommitTimestamp();
      }
    }
    List<SetTransaction> txns = null;
    return VersionChecksum.of(files, p, md, txns, KernelInternals.activeDomainMetadata(ks), ict);
  }

  /** Writes a new file in one step: on a local file system a hidden temporary file renamed into place (never over
   * another); on an object store one PUT. */
  private static void writeAtomically(FileSystem fileSystem, Path target, String content) throws IOException {
    // Hadoop's local file system would add a ".<name>.crc" sidecar of its own next to the file.
    FileSystem fs = fileSystem instanceof org.apache.hadoop.fs.ChecksumFileSystem c ? c.getRawFileSystem() : fileSystem;
    if (!"file".equals(fs.getUri().getScheme())) {
      // An object store shows a PUT whole or not at all: one request, no temporary object and copy.
      try (OutputStream out = fs.create(target, true)) {
        out.write(content.getBytes(StandardCharsets.UTF_8));
      }
      return;
    }
    Path tmp = new Path(target.getParent(), "." + target.getName() + "." + UUID.randomUUID() + ".tmp");
    try (OutputStream out = fs.create(tmp, false)) {
      out.write(content.getBytes(StandardCharsets.UTF_8));
    }
    boolean moved = false;
    try {
      moved = !fs.exists(target) && fs.rename(tmp, target);
    } finally {
      if (!moved) {
        fs.delete(tmp, false);
      }
    }
  }
}
