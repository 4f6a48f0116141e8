package io.filecommit.txn.staging;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.LogFiles;
import io.filecommit.delta.LogProbe;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.txn.WinningCommitSummary;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where staged commits live until they are published, aborted or expire: {@code
 * _delta_log/_staged/} of their table, a folder Delta readers and writers never list (they list
 * {@code _delta_log} for versioned files only; protocol "Delta Log Entries"), so a staged commit
 * survives a server restart and any server of the same storage can publish it.
 *
 * <p>Files per staged commit {@code <id>}: {@code <id>.json} the record ({@link StagedCommit});
 * {@code <id>.claim}, the one decision between publishing and aborting it ({@link StagingClaims}:
 * created only if absent by the first publish or abort; a publish that succeeds keeps it, the log
 * holds the version); {@code <id>.publishing.<token>} only while a publish runs that found another
 * publish's claim. Records of older servers' protocol ({@code <id>.published}, {@code
 * <id>.aborted[.<token>]}) are still read: they end a record as before. Files are deleted only
 * when an abort holds the claim, no publish marker is listed after it and no version of the log
 * references the staged commit (the invariant that referenced files are never deleted). A publish
 * whose outcome could not be read keeps its claim, and with it the files, until the log shows it.
 *
 * <p>Records this server stored or read are kept in memory for a while ({@link #load} with {@code
 * cached}): a record never changes once written, and the claim, not the record, says whether it
 * may still be published, so a publish on the server that staged it reads nothing from the
 * staging folder.
 *
 * <p>Over 400 lines: the record layout and both sides of the publish / abort race above are one
 * protocol, read together.
 */
public final class StagingStore {
  /** The folder under {@code _delta_log} that holds staged commits. */
  public static final String DIR = "_staged";
  /** How long an abort's tombstone is kept so that a late publish is refused by name, ms. */
  static final long TOMBSTONE_MS = 7L * 24 * 3600 * 1000;
  private static final Logger LOG = LoggerFactory.getLogger(StagingStore.class);
  private static final String EXPIRED = StagingClaims.EXPIRED;

  private StagingStore() {}

  private static Path dir(DeltaLog log) {
    return new Path(log.logPath(), DIR);
  }

  static Path file(DeltaLog log, String id, String suffix) {
    return new Path(dir(log), id + suffix);
  }

  /**
   * Stores a staged commit (written to a hidden file, then renamed into place; on an object store
   * one {@code PUT} of the record itself).
   *
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOG_WRITE_FAILED} when the
   *     record cannot be written (nothing is staged)
   */
  static void write(DeltaLog log, StagedCommit commit) {
    FileSystem fs = log.fs();
    // An object store shows a PUT whole or not at all: the record is written in place, one request.
    boolean direct = LogProbe.objectStore(fs);
    Path tmp = direct ? file(log, commit.id(), ".json") : new Path(dir(log), "." + commit.id() + ".json.tmp");
    try {
      LogProbe.makeDirectory(fs, dir(log));
      try (OutputStream out = fs.create(tmp, false)) {
        for (String line : commit.toLines()) {
          out.write(line.getBytes(StandardCharsets.UTF_8));
          out.write('\n');
        }
      }
      if (!direct && !fs.rename(tmp, file(log, commit.id(), ".json"))) {
        throw new IOException("rename of " + tmp + " failed");
      }
    } catch (IOException e) {
      deleteQuietly(log, tmp);
      throw ErrorClass.FILECOMMIT_LOG_WRITE_FAILED.error("Cannot store the staged commit of " + log.tablePath()
          + ": " + e, e, Map.of("table", log.tablePath().toString()));
    }
    remember(log, commit);
    // After the record exists: a sweep listing from now on sees it, one listing before is told of it.
    StagingSweeper.watch(log, commit.expirationTime());
  }

  /**
   * Loads a staged commit from storage ({@link #load(DeltaLog, String, boolean)} without the cache).
   *
   * @param log the table's log
   * @param id the staged commit's id
   * @return the staged commit
   * @throws io.filecommit.errors.FileCommitException as {@link #load(DeltaLog, String, boolean)}
   */
  public static StagedCommit load(DeltaLog log, String id) {
    return load(log, id, false);
  }

  /**
   * Loads a staged commit.
   *
   * @param log the table's log
   * @param id the staged commit's id
   * @param cached whether a record this server stored or read in the last {@link #CACHE_MS} ms may
   *     be returned without reading it (for a publish, whose claim decides whether it may go on)
   * @return the staged commit
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_ABORTED} when
   *     it was aborted, {@code FILECOMMIT_STAGED_COMMIT_EXPIRED} when it expired and was swept,
   *     {@code FILECOMMIT_STAGED_COMMIT_NOT_FOUND} when there is no such staged commit (or {@code
   *     id} is not an id)
   */
  public static StagedCommit load(DeltaLog log, String id, boolean cached) {
    if (!StagedCommit.isValidId(id)) {
      throw ErrorClass.FILECOMMIT_STAGED_COMMIT_NOT_FOUND.error("'" + id + "' is not a staged commit id (a UUID)",
          Map.of("stagedId", String.valueOf(id)));
    }
    long now = System.currentTimeMillis();
    if (cached) {
      Cached c = RECORDS.get(key(log, id));
      if (c != null && now - c.at() < CACHE_MS && !c.commit().expiredAt(now)) {
        return c.commit();
      }
    }
    try {
      List<String> lines = readLines(log, file(log, id, ".json"));
      if (lines != null && !lines.isEmpty()) {
        StagedCommit commit = StagedCommit.parse(lines);
        remember(log, commit);
        return commit;
      }
      forget(log, id);
      boolean aborted = false;
      for (FileStatus st : ended(log, id)) {
        String name = st.getPath().getName();
        List<String> content = readLines(log, st.getPath());
        String kind = content == null || content.isEmpty() ? null : content.get(0).trim();
        if (name.endsWith(StagingClaims.SUFFIX) && StagingClaims.PUBLISH.equals(kind)) {
          continue; // published, and its record swept after it expired
        }
        if (EXPIRED.equals(kind)) {
          throw ErrorClass.FILECOMMIT_STAGED_COMMIT_EXPIRED.error("Staged commit " + id + " of " + log.tablePath()
              + " expired and its files were deleted; it cannot be published", Map.of("stagedId", id));
        }
        aborted |= content != null;
      }
      if (aborted) {
        throw ErrorClass.FILECOMMIT_STAGED_COMMIT_ABORTED.error("Staged commit " + id + " of " + log.tablePath()
            + " was aborted and its files deleted; it cannot be published", Map.of("stagedId", id));
      }
    } catch (IOException e) {
      throw log.readFailure(e);
    }
    throw ErrorClass.FILECOMMIT_STAGED_COMMIT_NOT_FOUND.error("No staged commit " + id + " on " + log.tablePath()
        + " (never staged there, or published or expired and cleaned up)", Map.of("stagedId", id));
  }

  /**
   * Aborts a staged commit: deletes the files the server wrote for it and its record, keeping its
   * claim as a tombstone so that a later publish is refused by name ({@link StagingClaims#abort}).
   *
   * @param log the table's log
   * @param commit the staged commit
   * @return the number of files deleted
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_PUBLISHED}
   *     when a version holds it, {@code FILECOMMIT_STAGED_COMMIT_BUSY} when a publish of it is
   *     running (or its outcome is unknown)
   */
  public static int abort(DeltaLog log, StagedCommit commit) {
    return StagingClaims.abort(log, commit, false);
  }

  /**
   * Searches the versions after a staged commit's read version for a commit that published it
   * (its id in {@code commitInfo}, or any of its written files added).
   *
   * @return the version, or empty when no version holds it
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_BUSY} when
   *     some of those versions were cleaned from the log (the search cannot prove absence)
   */
  static Optional<Long> findInLog(DeltaLog log, StagedCommit commit) {
    List<LogFiles.Commit> commits = LogFiles.listCommits(log);
    Map<Long, LogFiles.Commit> present = new HashMap<>();
    commits.forEach(c -> present.put(c.version(), c));
    long latest = commits.isEmpty() ? -1 : commits.get(commits.size() - 1).version();
    Set<String> written = new HashSet<>(commit.writtenFiles());
    for (long v = commit.readVersion() + 1; v <= latest; v++) {
      if (!present.containsKey(v)) {
        throw ErrorClass.FILECOMMIT_STAGED_COMMIT_BUSY.error("Cannot prove that staged commit " + commit.id()
            + " is in no version of " + log.tablePath() + ": version " + v + " was cleaned from the log; its files "
            + "are kept", Map.of("stagedId", commit.id()));
      }
      List<Action> actions = LogFiles.read(log, present.get(v));
      if (WinningCommitSummary.of(v, actions).stagedCommitIds().contains(commit.id())) {
        return Optional.of(v);
      }
      for (Action a : actions) {
        String path = a instanceof AddFile f ? f.path() : a instanceof AddCDCFile c ? c.path() : null;
        if (path != null && written.contains(path)) {
          return Optional.of(v);
        }
      }
    }
    return Optional.empty();
  }


  /**
   * Aborts the table's expired staged commits and drops the records of expired published ones and
   * old tombstones, at most once per {@link StagingSweeper#SWEEP_INTERVAL_MS} per table. Best
   * effort: failures are logged, never thrown.
   *
   * @param log the table's log
   * @param now the time, ms since the epoch
   * @return ids of the staged commits aborted
   */
  public static List<String> sweepIfDue(DeltaLog log, long now) {
    return StagingSweeper.sweepIfDue(log, now, false);
  }

  /**
   * Sweeps as {@link #sweepIfDue} only when a record this server stored or saw is due, or the
   * table's last listing is {@link StagingSweeper#RESWEEP_MS} old (the background thread's rule):
   * for a publish, which would otherwise list the staging folder and read every record.
   *
   * @param log the table's log
   * @param now the time, ms since the epoch
   * @return ids of the staged commits aborted
   */
  public static List<String> sweepWhenDue(DeltaLog log, long now) {
    return StagingSweeper.sweepIfDue(log, now, true);
  }

  /**
   * Sweeps now (see {@link #sweepIfDue}).
   *
   * @param log the table's log
   * @param now the time, ms since the epoch
   * @return ids of the staged commits aborted
   */
  public static List<String> sweep(DeltaLog log, long now) {
    return sweepPlanned(log, now).aborted();
  }

  /**
   * What one sweep did and found.
   *
   * @param aborted ids of the staged commits it aborted
   * @param nextDue when the next record it saw expires, ms since the epoch ({@code Long.MAX_VALUE}
   *     when none is left; {@code now} when the listing failed)
   * @param recordsLeft whether staged commit records are left after it
   */
  record Swept(List<String> aborted, long nextDue, boolean recordsLeft) {}

  /** Sweeps now, from one listing of the staging directory; see {@link #sweep}. */
  static Swept sweepPlanned(DeltaLog log, long now) {
    List<String> aborted = new ArrayList<>();
    FileStatus[] entries;
    try {
      entries = entries(log);
    } catch (IOException e) {
      LOG.warn("filecommit: cannot list staged commits of " + log.tablePath(), e);
      return new Swept(aborted, now, true);
    }
    Set<String> names = new HashSet<>();
    for (FileStatus st : entries) {
      names.add(st.getPath().getName());
    }
    long nextDue = Long.MAX_VALUE;
    boolean left = false;
    for (FileStatus st : entries) {
      String name = st.getPath().getName();
      try {
        boolean old = now - st.getModificationTime() > TOMBSTONE_MS;
        if (name.contains(".aborted") && old) {
          log.fs().delete(st.getPath(), false);
        } else if (name.endsWith(StagingClaims.SUFFIX) && old
            && !names.contains(name.substring(0, name.length() - StagingClaims.SUFFIX.length()) + ".json")) {
          log.fs().delete(st.getPath(), false); // the tombstone of an abort, or a published record's claim
        } else if (name.endsWith(".json") && !name.startsWith(".")) {
          left = true;
          String id = name.substring(0, name.length() - ".json".length());
          List<String> lines = readLines(log, st);
          if (lines == null || lines.isEmpty()) {
            continue;
          }
          StagedCommit.Header header = StagedCommit.parseHeader(lines.get(0));
          if (!header.expiredAt(now)) {
            nextDue = Math.min(nextDue, header.expirationTime());
            continue;
          }
          if (names.contains(id + ".published")) { // an older server's marker
            log.fs().delete(st.getPath(), false);
            log.fs().delete(file(log, id, ".published"), false);
            continue;
          }
          StagedCommit commit = StagedCommit.parse(lines);
          if (names.contains(id + StagingClaims.SUFFIX)) {
            StagingClaims.Claim claim = StagingClaims.read(log, id);
            if (claim != null && claim.publish()) {
              if (findInLog(log, commit).isEmpty()) {
                nextDue = Math.min(nextDue, now); // running, or its outcome unknown: the files stay
                continue;
              }
              log.fs().delete(st.getPath(), false);
              log.fs().delete(StagingClaims.path(log, id), false);
              forget(log, id);
              continue;
            }
          }
          int n = StagingClaims.abort(log, commit, true);
          aborted.add(id);
          LOG.info("filecommit: staged commit " + id + " of " + log.tablePath() + " expired; deleted " + n + " files");
        }
      } catch (IOException | RuntimeException e) {
        if (!(e instanceof FileCommitException)) {
          LOG.warn("filecommit: sweeping staged commit file " + st.getPath() + " failed", e);
        }
        nextDue = Math.min(nextDue, now); // try again at the next round
      }
    }
    return new Swept(aborted, nextDue, left);
  }

  /**
   * The staging directory's entries, empty when it does not exist: one listing (an existence probe
   * first would cost an object store a HEAD and a LIST more).
   */
  static FileStatus[] entries(DeltaLog log) throws IOException {
    try {
      return log.fs().listStatus(dir(log));
    } catch (java.io.FileNotFoundException e) {
      return new FileStatus[0];
    }
  }

  /**
   * The stored records of the table's staged commits that are not aborted (published ones until
   * they expire included), each as its lines ({@link StagedCommit#parse}); each read with the
   * length the listing gave (one {@code GET} per record on an object store).
   *
   * @param log the table's log
   * @return each record's lines
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOG_READ_FAILED} when they
   *     cannot be listed or read (VACUUM must then not run)
   */
  static List<List<String>> records(DeltaLog log) {
    List<List<String>> out = new ArrayList<>();
    try {
      for (FileStatus st : entries(log)) {
        String name = st.getPath().getName();
        if (name.endsWith(".json") && !name.startsWith(".")) {
          List<String> lines = readLines(log, st);
          if (lines != null && !lines.isEmpty()) {
            out.add(lines);
          }
        }
      }
    } catch (IOException e) {
      throw log.readFailure(e);
    }
    return out;
  }

  /**
   * The files that end staged commit {@code id}: its claim, and older servers' {@code .published}
   * marker and {@code .aborted} tombstones.
   */
  private static FileStatus[] ended(DeltaLog log, String id) throws IOException {
    try {
      return log.fs().listStatus(dir(log), p -> p.getName().startsWith(id + ".aborted")
          || p.getName().equals(id + StagingClaims.SUFFIX));
    } catch (java.io.FileNotFoundException e) {
      return new FileStatus[0];
    }
  }

  /** The lines of a file, or null when it does not exist. */
  private static List<String> readLines(DeltaLog log, Path path) throws IOException {
    try {
      return lines(log.fs().open(path));
    } catch (java.io.FileNotFoundException e) {
      return null;
    }
  }

  /** The lines of a listed file (opened with the listing's length), or null when it is gone. */
  private static List<String> readLines(DeltaLog log, FileStatus st) throws IOException {
    try {
      return lines(LogFiles.open(log.fs(), st));
    } catch (java.io.FileNotFoundException e) {
      return null;
    }
  }

  private static List<String> lines(java.io.InputStream in) throws IOException {
    List<String> lines = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (!line.isBlank()) {
          lines.add(line);
        }
      }
    }
    return lines;
  }

  /** How long a record stays in {@link #RECORDS}, ms. */
  static final long CACHE_MS = 10 * 60_000;

  private record Cached(StagedCommit commit, long at) {}

  /** Records this server stored or read, by table and id (at most 1,000, least recently used out). */
  private static final Map<String, Cached> RECORDS = java.util.Collections.synchronizedMap(
      new java.util.LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Cached> eldest) {
          return size() > 1000;
        }
      });

  private static String key(DeltaLog log, String id) {
    return log.tablePath() + "#" + id;
  }

  private static void remember(DeltaLog log, StagedCommit commit) {
    RECORDS.put(key(log, commit.id()), new Cached(commit, System.currentTimeMillis()));
  }

  static void forget(DeltaLog log, String id) {
    RECORDS.remove(key(log, id));
  }

  static void deleteQuietly(DeltaLog log, Path p) {
    try {
      log.fs().delete(p, false);
    } catch (IOException e) {
      LOG.warn("filecommit: cannot delete " + p, e);
    }
  }
}
