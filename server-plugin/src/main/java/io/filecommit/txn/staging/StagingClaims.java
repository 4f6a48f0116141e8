package io.filecommit.txn.staging;

import io.filecommit.delta.DeltaLog;
import io.filecommit.errors.ErrorClass;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The one decision about a staged commit: its claim {@code _delta_log/_staged/<id>.claim}, created
 * only if absent through the table's LogStore (the put-if-absent that publishes commits: one
 * conditional {@code PUT} on S3, a hard link on a local disk, a rename on HDFS), by the first
 * publish ({@code publish}) or abort ({@code aborted}, {@code expired} for the expiry sweep) that
 * comes. Content: the kind, then the token of the command that created it.
 *
 * <p>A publish whose claim landed knows that no abort ran or will run: no read is needed after it,
 * so the claim replaces the former pair of a {@code publishing} marker and a listing for
 * tombstones. A publish that succeeds keeps its claim (the log holds the version: a later publish
 * or abort that finds a {@code publish} claim searches the log); one that fails for sure deletes
 * it; one whose outcome is unknown keeps it, and with it the files. A publish that finds another
 * publish's claim (two publishes at once, or a publish after one with an unknown outcome) cannot
 * rely on it, since that publish may fail and release it: it writes its own marker {@code
 * <id>.publishing.<token>} and reads the claim again; an abort whose claim landed lists the staging
 * folder for such markers before it deletes anything (so of the two, one sees the other; as
 * Delta's protocol has no staged commits, this follows the put-if-absent rule of protocol "Delta
 * Log Entries").
 */
final class StagingClaims {
  /** The kind of a publish's claim. */
  static final String PUBLISH = "publish";
  /** The kind of an abort's claim. */
  static final String ABORTED = "aborted";
  /** The kind of the expiry sweep's claim. */
  static final String EXPIRED = "expired";
  /** The suffix of a claim's name. */
  static final String SUFFIX = ".claim";
  /** The infix of a publish's marker name ({@code <id>.publishing.<token>}). */
  static final String MARKER = ".publishing.";

  private StagingClaims() {}

  /**
   * A claim as stored.
   *
   * @param kind {@link #PUBLISH}, {@link #ABORTED} or {@link #EXPIRED}
   * @param token the token of the command that created it
   */
  record Claim(String kind, String token) {
    boolean publish() {
      return PUBLISH.equals(kind);
    }
  }

  /** {@return the path of staged commit {@code id}'s claim} */
  static Path path(DeltaLog log, String id) {
    return new Path(new Path(log.logPath(), StagingStore.DIR), id + SUFFIX);
  }

  /**
   * Creates the claim of {@code id} if there is none.
   *
   * @return true when this call created it; false when a claim exists
   * @throws IOException when the store fails; the claim may or may not exist (read it back)
   */
  static boolean create(DeltaLog log, String id, String kind, String token) throws IOException {
    try {
      log.logStore().write(path(log, id), List.of(kind, token).iterator(), false, log.conf());
      return true;
    } catch (java.nio.file.FileAlreadyExistsException | org.apache.hadoop.fs.FileAlreadyExistsException e) {
      return false;
    }
  }

  /**
   * Creates the claim of {@code id}, reading it back when the create's answer was lost.
   *
   * @return null when this call holds the claim; else the claim found (never null then, unless
   *     it vanished between the create and the read: then {@link Claim} with a null kind)
   * @throws IOException when neither the create nor the read back answers
   */
  static Claim take(DeltaLog log, String id, String kind, String token) throws IOException {
    try {
      if (create(log, id, kind, token)) {
        return null;
      }
    } catch (IOException e) {
      Claim back;
      try {
        back = read(log, id);
      } catch (IOException again) {
        e.addSuppressed(again);
        throw e;
      }
      if (back == null) {
        throw e; // provably not created: nothing to release
      }
      return token.equals(back.token()) ? null : back;
    }
    Claim found = read(log, id);
    return found != null ? found : new Claim(null, null);
  }

  /**
   * The claim of {@code id}.
   *
   * @return the claim, or null when there is none
   * @throws IOException when it cannot be read
   */
  static Claim read(DeltaLog log, String id) throws IOException {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(log.fs().open(path(log, id)),
        StandardCharsets.UTF_8))) {
      String kind = r.readLine();
      String token = r.readLine();
      return new Claim(kind == null ? "" : kind.trim(), token == null ? "" : token.trim());
    } catch (java.io.FileNotFoundException e) {
      return null;
    }
  }

  /**
   * Deletes the claim of {@code id} that this command created (a publish that failed for sure, an
   * abort that backs off).
   */
  static void release(DeltaLog log, String id) {
    try {
      log.fs().delete(path(log, id), false);
    } catch (IOException e) {
      org.slf4j.LoggerFactory.getLogger(StagingClaims.class).warn("filecommit: cannot release the claim of "
          + "staged commit " + id + " of " + log.tablePath() + "; it keeps the staged files until it expires", e);
    }
  }

  /**
   * What a running publish holds ({@link #beginPublish}).
   *
   * @param claimed ids whose claim this publish created
   * @param markers the markers it wrote next to another publish's claim
   * @param publishedIn the version that already holds all the staged commits (then nothing is
   *     held), or -1
   */
  record Hold(List<String> claimed, List<Path> markers, long publishedIn) {}

  /**
   * Claims the staged commits for a publish ({@link StagingClaims}): one put-if-absent per staged
   * commit, and nothing more when each lands. A staged commit claimed by another publish is looked
   * for in the log (published: all of them in one version -> {@link Hold#publishedIn}); else this
   * publish writes its own marker and reads the claim again.
   *
   * @return what the publish holds, for {@link #endPublish}
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_ABORTED} /
   *     {@code FILECOMMIT_STAGED_COMMIT_EXPIRED} (an abort or the expiry sweep holds one), {@code
   *     FILECOMMIT_STAGED_COMMIT_PUBLISHED} (some, not all, already published), {@code
   *     FILECOMMIT_LOG_WRITE_FAILED}; nothing is held then
   */
  static Hold beginPublish(DeltaLog log, List<StagedCommit> staged) {
    String token = UUID.randomUUID().toString();
    List<String> claimed = new ArrayList<>();
    List<Path> markers = new ArrayList<>();
    try {
      List<StagedCommit> shared = new ArrayList<>();
      for (StagedCommit c : staged) {
        Claim found = take(log, c.id(), PUBLISH, token);
        if (found == null) {
          claimed.add(c.id());
        } else if (found.kind() == null || found.publish()) {
          shared.add(c);
        } else {
          throw refused(log, c.id(), found);
        }
      }
      if (shared.isEmpty()) {
        return new Hold(claimed, markers, -1);
      }
      Set<Long> versions = new HashSet<>();
      for (StagedCommit c : shared) {
        StagingStore.findInLog(log, c).ifPresent(versions::add);
      }
      if (!versions.isEmpty()) {
        if (versions.size() == 1 && claimed.isEmpty()) {
          return new Hold(List.of(), List.of(), versions.iterator().next());
        }
        throw ErrorClass.FILECOMMIT_STAGED_COMMIT_PUBLISHED.error("Some of the staged commits "
            + staged.stream().map(StagedCommit::id).toList() + " of " + log.tablePath() + " were already published (in "
            + "versions " + versions + "); nothing was committed", Map.of("versions", versions.toString()));
      }
      // Another publish holds the claim and may still fail and release it: this one's own marker
      // first, then the claim again (an abort that claims after that lists the marker).
      for (StagedCommit c : shared) {
        Path m = StagingStore.file(log, c.id(), MARKER + token);
        log.fs().create(m, false).close();
        markers.add(m);
      }
      for (StagedCommit c : shared) {
        Claim again = read(log, c.id());
        if (again != null && !again.publish()) {
          throw refused(log, c.id(), again);
        }
      }
      return new Hold(claimed, markers, -1);
    } catch (Throwable e) {
      endPublish(log, new Hold(claimed, markers, -1), -1);
      if (e instanceof RuntimeException r) {
        throw r;
      }
      if (e instanceof Error r) {
        throw r;
      }
      throw ErrorClass.FILECOMMIT_LOG_WRITE_FAILED.error("Cannot claim the publish of "
          + staged.stream().map(StagedCommit::id).toList() + ": " + e, e, Map.of("table", log.tablePath().toString()));
    }
  }

  private static RuntimeException refused(DeltaLog log, String id, Claim claim) {
    if (EXPIRED.equals(claim.kind())) {
      return ErrorClass.FILECOMMIT_STAGED_COMMIT_EXPIRED.error("Staged commit " + id + " of " + log.tablePath()
          + " expired and its files were deleted; it cannot be published", Map.of("stagedId", id));
    }
    return ErrorClass.FILECOMMIT_STAGED_COMMIT_ABORTED.error("Staged commit " + id + " of " + log.tablePath()
        + " is being aborted or was aborted; nothing was committed", Map.of("stagedId", id));
  }

  /**
   * Ends a publish: a version holds the staged commits -> the claims stay (they are the record
   * that it was published) and the markers go; none does -> claims and markers go. Not called
   * when the outcome is unknown: the claims then keep the files.
   *
   * @param version the version that holds the staged commits, or -1 when none does
   */
  static void endPublish(DeltaLog log, Hold hold, long version) {
    if (version < 0) {
      hold.claimed().forEach(id -> release(log, id));
    }
    hold.markers().forEach(m -> StagingStore.deleteQuietly(log, m));
  }

  /**
   * Aborts a staged commit: deletes the files the server wrote for it and its record, keeping its
   * claim as a tombstone so that a later publish is refused by name.
   *
   * @param log the table's log
   * @param commit the staged commit
   * @return the number of files deleted
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_PUBLISHED}
   *     when a version holds it, {@code FILECOMMIT_STAGED_COMMIT_BUSY} when a publish of it is
   *     running (or its outcome is unknown)
   */
  static int abort(DeltaLog log, StagedCommit commit, boolean expired) {
    String id = commit.id();
    FileSystem fs = log.fs();
    try {
      Claim found = take(log, id, expired ? EXPIRED : ABORTED,
          UUID.randomUUID().toString());
      boolean created = found == null;
      if (found != null && (found.kind() == null || found.publish())) {
        Optional<Long> published = StagingStore.findInLog(log, commit);
        if (published.isPresent()) {
          throw publishedError(log, id, published.get());
        }
        throw busy(log, id);
      }
      // This abort holds the claim (or finishes an abort that held it): no publish starts now.
      try {
        for (FileStatus st : StagingStore.entries(log)) {
          if (st.getPath().getName().startsWith(id + MARKER)) {
            throw busy(log, id);
          }
        }
        Optional<Long> published = StagingStore.findInLog(log, commit);
        if (published.isPresent()) {
          throw publishedError(log, id, published.get());
        }
      } catch (IOException | RuntimeException e) {
        if (created) {
          release(log, id);
        }
        throw e;
      }
      int deleted = 0;
      for (Path f : StagedFiles.resolveAll(log, commit.writtenFiles())) {
        if (fs.delete(f, false)) {
          deleted++;
        }
      }
      fs.delete(StagingStore.file(log, id, ".json"), false);
      StagingStore.forget(log, id);
      return deleted;
    } catch (IOException e) {
      throw log.readFailure(e);
    }
  }

  private static RuntimeException busy(DeltaLog log, String id) {
    return ErrorClass.FILECOMMIT_STAGED_COMMIT_BUSY.error("Staged commit " + id + " of " + log.tablePath()
        + " is being published (or a publish of it ended with an unknown outcome); it was not aborted",
        Map.of("stagedId", id));
  }

  private static RuntimeException publishedError(DeltaLog log, String id, long version) {
    return ErrorClass.FILECOMMIT_STAGED_COMMIT_PUBLISHED.error("Staged commit " + id + " of " + log.tablePath()
        + " was published in version " + version + "; it cannot be aborted",
        Map.of("stagedId", id, "version", Long.toString(version)));
  }
}
