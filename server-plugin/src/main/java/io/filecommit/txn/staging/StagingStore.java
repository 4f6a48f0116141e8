package io.filecommit.txn.staging;

import io.filecommit.delta.DeltaLog;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
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
 * {@code <id>.publishing.<token>} while a publish runs; {@code <id>.published} (content: the
 * version) once published; {@code <id>.aborted.<token>} for each abort that runs or ran (its own
 * tombstone; {@code <id>.aborted} from older servers counts too). A publish writes its {@code
 * publishing} marker and then looks for any tombstone; an abort writes its tombstone and then
 * looks for {@code publishing} / {@code published} markers, and for the staged commit in every
 * version since its read version: of two that meet, at least one sees the other and backs off (an
 * abort that backs off deletes only its own tombstone, never the one another abort relies on), so
 * files are deleted only when no version references them and no publish can make one (the
 * invariant that referenced files are never deleted). A publish whose outcome could not be read
 * keeps its marker, and with it the files, for good.
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
  private static final String ABORTED = "aborted";
  private static final String EXPIRED = "expired";

  private StagingStore() {}

  private static Path dir(DeltaLog log) {
    return new Path(log.logPath(), DIR);
  }

  private static Path file(DeltaLog log, String id, String suffix) {
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
    // After the record exists: a sweep listing from now on sees it, one listing before is told of it.
    StagingSweeper.watch(log, commit.expirationTime());
  }

  /**
   * Loads a staged commit.
   *
   * @param log the table's log
   * @param id the staged commit's id
   * @return the staged commit
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_ABORTED} when
   *     it was aborted, {@code FILECOMMIT_STAGED_COMMIT_NOT_FOUND} when there is no such staged
   *     commit (or {@code id} is not an id)
   */
  public static StagedCommit load(DeltaLog log, String id) {
    if (!StagedCommit.isValidId(id)) {
      throw ErrorClass.FILECOMMIT_STAGED_COMMIT_NOT_FOUND.error("'" + id + "' is not a staged commit id (a UUID)",
          Map.of("stagedId", String.valueOf(id)));
    }
    try {
      List<String> lines = readLines(log, file(log, id, ".json"));
      if (lines != null && !lines.isEmpty()) {
        return StagedCommit.parse(lines);
      }
      boolean aborted = false;
      for (FileStatus st : tombstones(log, id)) {
        List<String> tombstone = readLines(log, st.getPath());
        if (tombstone != null && !tombstone.isEmpty() && EXPIRED.equals(tombstone.get(0).trim())) {
          throw ErrorClass.FILECOMMIT_STAGED_COMMIT_EXPIRED.error("Staged commit " + id + " of " + log.tablePath()
              + " expired and its files were deleted; it cannot be published", Map.of("stagedId", id));
        }
        aborted |= tombstone != null;
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
   * The version that published a staged commit, when it was published.
   *
   * @param log the table's log
   * @param id the staged commit's id
   * @return the version from its {@code published} marker, or empty
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOG_READ_FAILED} on storage errors
   */
  public static Optional<Long> publishedVersion(DeltaLog log, String id) {
    try {
      List<String> lines = readLines(log, file(log, id, ".published"));
      return lines == null || lines.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(lines.get(0).trim()));
    } catch (IOException | NumberFormatException e) {
      throw log.readFailure(e);
    }
  }

  /**
   * Marks a publish of {@code ids} as running, unless one of them was aborted.
   *
   * @return the markers, for {@link #endPublish}
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_ABORTED}
   */
  static List<Path> beginPublish(DeltaLog log, List<String> ids) {
    String token = UUID.randomUUID().toString();
    List<Path> markers = new ArrayList<>();
    try {
      for (String id : ids) {
        Path m = file(log, id, ".publishing." + token);
        log.fs().create(m, false).close();
        markers.add(m);
      }
      for (String id : ids) {
        if (tombstones(log, id).length > 0) {
          markers.forEach(m -> deleteQuietly(log, m));
          throw ErrorClass.FILECOMMIT_STAGED_COMMIT_ABORTED.error("Staged commit " + id + " of " + log.tablePath()
              + " is being aborted or was aborted; nothing was committed", Map.of("stagedId", id));
        }
      }
    } catch (IOException e) {
      markers.forEach(m -> deleteQuietly(log, m));
      throw ErrorClass.FILECOMMIT_LOG_WRITE_FAILED.error("Cannot mark the publish of " + ids + ": " + e, e,
          Map.of("table", log.tablePath().toString()));
    }
    return markers;
  }

  /**
   * Ends a publish: records the version that published {@code ids} (when one did) and removes the
   * publish's markers. Not called when the outcome is unknown: the markers then keep the files.
   *
   * @param version the version that holds the staged commits, or -1 when none does
   */
  static void endPublish(DeltaLog log, List<Path> markers, List<String> ids, long version) {
    if (version >= 0) {
      for (String id : ids) {
        try (OutputStream out = log.fs().create(file(log, id, ".published"), true)) {
          out.write(Long.toString(version).getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
          // The log holds the answer; the marker only saves a search of it.
          LOG.warn("filecommit: cannot record that staged commit " + id + " was published in version " + version, e);
        }
      }
    }
    markers.forEach(m -> deleteQuietly(log, m));
  }

  /**
   * Aborts a staged commit: deletes the files the server wrote for it and its record, keeping a
   * tombstone so that a later publish is refused by name.
   *
   * @param log the table's log
   * @param commit the staged commit
   * @return the number of files deleted
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_PUBLISHED}
   *     when a version holds it, {@code FILECOMMIT_STAGED_COMMIT_BUSY} when a publish of it is
   *     running (or its outcome is unknown)
   */
  public static int abort(DeltaLog log, StagedCommit commit) {
    return abort(log, commit, false);
  }

  private static int abort(DeltaLog log, StagedCommit commit, boolean expired) {
    String id = commit.id();
    FileSystem fs = log.fs();
    Path tombstone = file(log, id, ".aborted." + UUID.randomUUID());
    try {
      try (OutputStream out = fs.create(tombstone, true)) {
        out.write((expired ? EXPIRED : ABORTED).getBytes(StandardCharsets.UTF_8));
      }
      for (FileStatus st : fs.listStatus(dir(log))) {
        if (st.getPath().getName().startsWith(id + ".publishing.")) {
          deleteQuietly(log, tombstone);
          throw ErrorClass.FILECOMMIT_STAGED_COMMIT_BUSY.error("Staged commit " + id + " of " + log.tablePath()
              + " is being published (or a publish of it ended with an unknown outcome); it was not aborted",
              Map.of("stagedId", id));
        }
      }
      Optional<Long> published = publishedVersion(log, id);
      if (published.isEmpty()) {
        try {
          published = findInLog(log, commit);
        } catch (RuntimeException e) {
          deleteQuietly(log, tombstone);
          throw e;
        }
      }
      if (published.isPresent()) {
        deleteQuietly(log, tombstone);
        endPublish(log, List.of(), List.of(id), published.get());
        throw ErrorClass.FILECOMMIT_STAGED_COMMIT_PUBLISHED.error("Staged commit " + id + " of " + log.tablePath()
            + " was published in version " + published.get() + "; it cannot be aborted",
            Map.of("stagedId", id, "version", Long.toString(published.get())));
      }
      int deleted = 0;
      for (Path f : StagedFiles.resolveAll(log, commit.writtenFiles())) {
        if (fs.delete(f, false)) {
          deleted++;
        }
      }
      fs.delete(file(log, id, ".json"), false);
      return deleted;
    } catch (IOException e) {
      throw log.readFailure(e);
    }
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
    List<Long> versions = log.listVersions();
    long latest = versions.isEmpty() ? -1 : versions.get(versions.size() - 1);
    Set<Long> present = new HashSet<>(versions);
    Set<String> written = new HashSet<>(commit.writtenFiles());
    for (long v = commit.readVersion() + 1; v <= latest; v++) {
      if (!present.contains(v)) {
        throw ErrorClass.FILECOMMIT_STAGED_COMMIT_BUSY.error("Cannot prove that staged commit " + commit.id()
            + " is in no version of " + log.tablePath() + ": version " + v + " was cleaned from the log; its files "
            + "are kept", Map.of("stagedId", commit.id()));
      }
      List<Action> actions = log.readCommit(v);
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
    return StagingSweeper.sweepIfDue(log, now);
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
    long nextDue = Long.MAX_VALUE;
    boolean left = false;
    for (FileStatus st : entries) {
      String name = st.getPath().getName();
      try {
        if (name.contains(".aborted") && now - st.getModificationTime() > TOMBSTONE_MS) {
          log.fs().delete(st.getPath(), false);
        } else if (name.endsWith(".json") && !name.startsWith(".")) {
          left = true;
          String id = name.substring(0, name.length() - ".json".length());
          List<String> lines = readLines(log, st.getPath());
          if (lines == null || lines.isEmpty()) {
            continue;
          }
          StagedCommit.Header header = StagedCommit.parseHeader(lines.get(0));
          if (!header.expiredAt(now)) {
            nextDue = Math.min(nextDue, header.expirationTime());
            continue;
          }
          if (publishedVersion(log, id).isPresent()) {
            log.fs().delete(st.getPath(), false);
            log.fs().delete(file(log, id, ".published"), false);
            continue;
          }
          int n = abort(log, StagedCommit.parse(lines), true);
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
   * they expire included), each as its lines ({@link StagedCommit#parse}).
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
          List<String> lines = readLines(log, st.getPath());
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

  /** The tombstones of staged commit {@code id}: one per abort that runs or ran. */
  private static FileStatus[] tombstones(DeltaLog log, String id) throws IOException {
    try {
      return log.fs().listStatus(dir(log), p -> p.getName().startsWith(id + ".aborted"));
    } catch (java.io.FileNotFoundException e) {
      return new FileStatus[0];
    }
  }

  /** The lines of a file, or null when it does not exist. */
  private static List<String> readLines(DeltaLog log, Path path) throws IOException {
    List<String> lines = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(log.fs().open(path), StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (!line.isBlank()) {
          lines.add(line);
        }
      }
    } catch (java.io.FileNotFoundException e) {
      return null;
    }
    return lines;
  }

  private static void deleteQuietly(DeltaLog log, Path p) {
    try {
      log.fs().delete(p, false);
    } catch (IOException e) {
      LOG.warn("filecommit: cannot delete " + p, e);
    }
  }
}
