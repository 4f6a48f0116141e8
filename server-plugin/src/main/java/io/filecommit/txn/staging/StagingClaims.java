package io.filecommit.txn.staging;

import io.filecommit.delta.DeltaLog;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
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
}
