package io.filecommit.txn.staging;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.KernelInternals;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.WinningCommitSummary;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The files of staged commits, as the rest of the server sees them: what VACUUM must keep because
 * a staged record names them (not because of their age), whether they all still exist when a
 * publish is about to commit them, and how their paths are stored (as the log stores paths:
 * URI-encoded, relative to the table root when under it; protocol "Add File and Remove File" and
 * "Deletion Vector Descriptor Schema"), so that a table path with a space or {@code %} reads back.
 */
public final class StagedFiles {
  private StagedFiles() {}

  /**
   * The stored form of a file's absolute path: the URI-encoded path relative to the table root
   * when it lies under it, else the absolute URI (as Delta writes {@code path} in the log).
   *
   * @param log the table's log
   * @param absolute the file, absolute
   * @return a string {@link #resolve} reads back
   */
  static String logPath(DeltaLog log, Path absolute) {
    FileSystem fs = log.fs();
    java.net.URI root = fs.makeQualified(log.tablePath()).toUri();
    java.net.URI file = fs.makeQualified(absolute).toUri();
    java.net.URI rel = root.relativize(file);
    return rel.isAbsolute() ? file.toString() : rel.toString();
  }

  /**
   * The absolute path of a stored file path ({@link #logPath}'s form). Records written before
   * paths were stored encoded hold decoded absolute paths; those are read as plain paths.
   */
  static Path resolve(DeltaLog log, String stored) {
    try {
      return log.absolutePath(stored);
    } catch (IllegalArgumentException e) {
      return new Path(stored);
    }
  }

  /** The deletion vector file an add names, when it is stored in a file ({@code u} or {@code p}). */
  static Path dvFile(DeltaLog log, DeletionVectorDescriptor dv) {
    if (dv == null || "i".equals(dv.storageType())) {
      return null;
    }
    return new Path(KernelInternals.deletionVectorFile(log.tablePath().toString(), dv));
  }

  /** Every file a staged commit's actions add: data files, their deletion vector files, change data. */
  static Set<Path> addedFiles(DeltaLog log, List<? extends FileAction> actions) {
    Set<Path> out = new LinkedHashSet<>();
    for (FileAction a : actions) {
      if (a instanceof AddFile f) {
        out.add(log.absolutePath(f.path()));
        Path dv = dvFile(log, f.deletionVector());
        if (dv != null) {
          out.add(dv);
        }
      } else if (a instanceof AddCDCFile c) {
        out.add(log.absolutePath(c.path()));
      }
    }
    return out;
  }

  /**
   * Refuses to publish staged commits when a file they add (data, deletion vector, change data)
   * is gone: a commit must never reference a missing file.
   *
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_FILE_NOT_FOUND} naming
   *     the first missing file (nothing committed), {@code FILECOMMIT_LOG_READ_FAILED} on storage
   *     errors
   */
  static void checkExist(DeltaLog log, List<StagedCommit> staged) {
    for (StagedCommit c : staged) {
      for (Path p : addedFiles(log, c.actions())) {
        boolean exists;
        try {
          exists = log.fs().exists(p);
        } catch (IOException e) {
          throw log.readFailure(e);
        }
        if (!exists) {
          throw ErrorClass.DELTA_FILE_NOT_FOUND.error("File " + p + " of staged commit " + c.id() + " of "
              + log.tablePath() + " does not exist (deleted after it was staged); nothing was committed. Abort the "
              + "staged commit and stage the files again", Map.of("path", p.toString(), "stagedId", c.id()));
        }
      }
    }
  }

  /**
   * What VACUUM must keep because of staged commits, whatever the files' age: every file named by
   * a staged record that is not aborted (the files it adds, foreign ones given to {@code
   * stage_files} included, their deletion vector files, its change data, and the files the server
   * wrote for it), and the change data of every version that published staged commits and is
   * newer than {@code cutoff} (a change-data file written when it was staged can be much older
   * than its version; Delta's VACUUM keeps change data by the age of its file, which for other
   * commits is the age of their version).
   *
   * @param log the table's log
   * @param cutoff VACUUM's cutoff, ms since the epoch: versions committed after it are kept
   * @return absolute, qualified paths
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOG_READ_FAILED} when a
   *     record or the log cannot be read (VACUUM must then not run)
   */
  public static Set<Path> protectedFiles(DeltaLog log, long cutoff) {
    Protector p = protector(log, cutoff);
    for (long v : log.listVersions()) {
      p.commit(v, log.readCommit(v));
    }
    return p.files();
  }

  /**
   * {@link #protectedFiles} in two steps, for a caller that reads every commit anyway (VACUUM): the
   * staged records are read now, then the caller hands each commit of the log to {@link
   * Protector#commit}, so the log is listed and read once.
   *
   * @param log the table's log
   * @param cutoff as for {@link #protectedFiles}
   * @return the protector, holding the staged records' files
   * @throws io.filecommit.errors.FileCommitException as {@link #protectedFiles}
   */
  public static Protector protector(DeltaLog log, long cutoff) {
    Protector p = new Protector(log, cutoff);
    for (List<String> lines : StagingStore.records(log)) {
      StagedCommit c = StagedCommit.parse(lines);
      addedFiles(log, c.actions()).forEach(f -> p.out.add(p.fs.makeQualified(f)));
      c.writtenFiles().forEach(f -> p.out.add(p.fs.makeQualified(resolve(log, f))));
    }
    return p;
  }

  /** The files of {@link #protectedFiles}, gathered commit by commit ({@link #protector}). */
  public static final class Protector {
    private final DeltaLog log;
    private final long cutoff;
    private final FileSystem fs;
    private final Set<Path> out = new HashSet<>();

    private Protector(DeltaLog log, long cutoff) {
      this.log = log;
      this.cutoff = cutoff;
      this.fs = log.fs();
    }

    /**
     * Adds the change data of commit {@code v} when it published staged commits after the cutoff.
     *
     * @param v the version
     * @param actions its actions
     */
    public void commit(long v, List<Action> actions) {
      CommitInfo info = actions.stream().filter(a -> a instanceof CommitInfo).map(a -> (CommitInfo) a)
          .findFirst().orElse(null);
      if (WinningCommitSummary.of(v, actions).stagedCommitIds().isEmpty()
          || (info != null && info.effectiveTimestamp() <= cutoff && commitTime(log, v) <= cutoff)) {
        return;
      }
      for (Action a : actions) {
        if (a instanceof AddCDCFile cdc) {
          out.add(fs.makeQualified(log.absolutePath(cdc.path())));
        }
      }
    }

    /** {@return the files to keep: absolute, qualified paths} */
    public Set<Path> files() {
      return out;
    }
  }

  /** The modification time of commit file {@code v}, ms since the epoch (Long.MAX_VALUE when unknown). */
  private static long commitTime(DeltaLog log, long v) {
    try {
      FileStatus st = log.fs().getFileStatus(log.commitFile(v));
      return st.getModificationTime();
    } catch (IOException e) {
      return Long.MAX_VALUE;
    }
  }

  /** Absolute paths of {@code stored} file paths. */
  static List<Path> resolveAll(DeltaLog log, List<String> stored) {
    List<Path> out = new ArrayList<>();
    stored.forEach(f -> out.add(resolve(log, f)));
    return out;
  }
}
