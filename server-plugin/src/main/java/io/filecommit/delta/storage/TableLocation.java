package io.filecommit.delta.storage;

import io.filecommit.conf.FileCommitConf;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Where a new table or batch-id sink may be created: a table owns its directory tree, and nothing
 * else. Protocol "Delta Table Specification" roots a table at the directory holding its {@code
 * _delta_log}, and every file below that directory is the table's to list (VACUUM, the abort sweep);
 * Spark's {@code FileStreamSink} roots a sink at the directory holding its {@code _spark_metadata}.
 * So a new table or sink is refused when its directory
 *
 * <ul>
 *   <li>lies inside another table or sink: an ancestor holds {@code _delta_log} or {@code
 *       _spark_metadata};
 *   <li>holds another table or sink: a directory below it holds either (one listing per directory,
 *       {@link FileTree#firstOwnedBelow}; a new table's directory is normally empty or missing);
 *       for a sink also a {@code _delta_log} of its own, for a table a {@code _spark_metadata};
 *   <li>is one of the server's allowed roots ({@link FileCommitConf#ALLOWED_ROOTS}) itself, which would make
 *       every later table under that root a nested one.
 * </ul>
 *
 * Checked only when a table's first version or a sink's first batch is decided, before any file is
 * written: never on the hot path of appends.
 */
public final class TableLocation {

  private TableLocation() {}

  /**
   * The allowed roots from the server's static Spark conf ({@link FileCommitConf#ALLOWED_ROOTS}).
   *
   * @param session the command's session (its SparkContext's conf is read, never the session's)
   * @return the roots, empty when unset
   */
  public static List<String> allowedRoots(org.apache.spark.sql.classic.SparkSession session) {
    return parseRoots(FileCommitConf.ALLOWED_ROOTS.raw(session.sparkContext().getConf()));
  }

  /**
   * Parses a value of {@link FileCommitConf#ALLOWED_ROOTS}: comma-separated URIs, blanks dropped.
   *
   * @param value the conf value, null or blank when unset
   * @return the roots, empty when unset
   */
  public static List<String> parseRoots(String value) {
    if (value == null || value.isBlank()) {
      return List.of();
    }
    return Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  /**
   * Refuses a directory that cannot hold a new table or sink (see the class comment).
   *
   * @param fs the file system of {@code dir}
   * @param dir the new table's or sink's root directory
   * @param sink true for a batch-id sink, false for a Delta table
   * @param allowedRoots the server's allowed roots (empty: none)
   * @throws FileCommitException {@code FILECOMMIT_TABLE_LOCATION_OVERLAP} naming the directory
   *     and the table, sink or root it overlaps (parameters {@code path}, {@code other})
   * @throws UncheckedIOException when the file system cannot be listed
   */
  public static void checkNew(FileSystem fs, Path dir, boolean sink, List<String> allowedRoots) {
    String kind = sink ? "sink" : "table";
    try {
      // Without a trailing "/": the parents below are the directory's, not the directory itself.
      Path root = new Path(fs.makeQualified(dir).toString().replaceAll("(?<!:)/+$", ""));
      for (String allowed : allowedRoots) {
        if (sameDirectory(fs, root, new Path(allowed))) {
          throw overlap(kind, root, allowed, "is the allowed root " + allowed + " itself ("
              + FileCommitConf.ALLOWED_ROOTS.key() + "); create it in a directory below the root");
        }
      }
      for (Path p = root.getParent(); p != null; p = p.getParent()) {
        for (String log : List.of(FileTree.DELTA_LOG, FileTree.SINK_LOG)) {
          if (fs.exists(new Path(p, log))) {
            throw overlap(kind, root, p.toString(), "lies inside the " + owner(log) + " at " + p);
          }
        }
      }
      String own = sink ? FileTree.DELTA_LOG : FileTree.SINK_LOG;
      if (fs.exists(new Path(root, own))) {
        throw overlap(kind, root, root.toString(), "already holds a " + owner(own) + " (" + own + ")");
      }
      Path below = FileTree.firstOwnedBelow(fs, root);
      if (below != null) {
        throw overlap(kind, root, below.toString(), "holds another table or sink at " + below);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + dir + " to check where a new " + kind + " goes", e);
    }
  }

  /**
   * Checks and claims the directory of a new Delta table, before any of its files is written:
   * {@link #checkNew} with the server's allowed roots; then a directory that already holds files
   * but no {@code _delta_log} is refused, as Delta's {@code CreateDeltaTableCommand} refuses a
   * non-empty location that is no table (someone's Parquet files, which a later VACUUM would
   * delete; hidden {@code .} / {@code _} entries do not count); then {@code _delta_log} is created,
   * so that files of a first write killed before its commit lie in a table's directory and its
   * retry is not refused.
   *
   * @param session the command's session
   * @param fs the file system of {@code dir}
   * @param dir the table root
   * @return removes the {@code _delta_log} it created while still empty, and the table directory
   *     when this call created it and it is empty: for the transaction's abort ({@code
   *     OptimisticTransaction.onAbort}), so that a failed first write leaves nothing
   * @throws FileCommitException {@code FILECOMMIT_TABLE_LOCATION_OVERLAP} (see {@link #checkNew}),
   *     {@code DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION} naming the directory and a file in it
   *     (parameters {@code path}, {@code file})
   */
  public static Runnable claimNewTable(org.apache.spark.sql.classic.SparkSession session, FileSystem fs, Path dir) {
    return claim(session, fs, dir, false);
  }

  /**
   * Claims the directory of a table made in place from the files already in it (Delta's {@code
   * ConvertToDeltaCommand}): {@link #claimNewTable} without its refusal of a directory that holds
   * files, since those files become the table's.
   *
   * @param session the command's session
   * @param fs the file system of {@code dir}
   * @param dir the table root, an existing directory
   * @return as {@link #claimNewTable}: removes the {@code _delta_log} it created while still empty
   * @throws FileCommitException {@code FILECOMMIT_TABLE_LOCATION_OVERLAP} (see {@link #checkNew})
   */
  public static Runnable claimConvertedTable(org.apache.spark.sql.classic.SparkSession session, FileSystem fs,
      Path dir) {
    return claim(session, fs, dir, true);
  }

  private static Runnable claim(org.apache.spark.sql.classic.SparkSession session, FileSystem fs, Path dir,
      boolean keepFiles) {
    checkNew(fs, dir, false, allowedRoots(session));
    Path log = new Path(dir, FileTree.DELTA_LOG);
    boolean dirExisted;
    try {
      if (fs.exists(log)) {
        return () -> { };
      }
      dirExisted = fs.exists(dir);
      if (dirExisted && !keepFiles) {
        for (org.apache.hadoop.fs.FileStatus f : fs.listStatus(dir)) {
          String name = f.getPath().getName();
          if (!name.startsWith(".") && !name.startsWith("_")) {
            throw ErrorClass.DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION.error("Cannot create a table at " + dir
                + ": the location is not empty (it holds " + name + ") and is not a Delta table; nothing was written",
                Map.of("path", dir.toString(), "file", name));
          }
        }
      }
      fs.mkdirs(log);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + dir + " to check where a new table goes", e);
    }
    return () -> {
      try {
        org.apache.hadoop.fs.FileStatus[] left = fs.listStatus(log);
        if (left.length == 0) {
          fs.delete(log, false);
          if (!dirExisted && fs.listStatus(dir).length == 0) {
            fs.delete(dir, false);
          }
        }
      } catch (IOException e) {
        // best effort: an empty _delta_log is a table's directory with no version yet
      }
    };
  }

  private static String owner(String log) {
    return FileTree.DELTA_LOG.equals(log) ? "Delta table" : "file sink";
  }

  private static FileCommitException overlap(String kind, Path root, String other, String why) {
    return ErrorClass.FILECOMMIT_TABLE_LOCATION_OVERLAP.error("Cannot create a " + kind + " at " + root + ": it "
        + why + ". A table or sink owns its whole directory tree (VACUUM and aborts list it), so tables and sinks "
        + "must not nest; nothing was written", Map.of("path", root.toString(), "other", other));
  }

  /** Whether two paths name one directory: equal once qualified, or (local) the same existing file. */
  private static boolean sameDirectory(FileSystem fs, Path a, Path b) throws IOException {
    Path qb;
    try {
      qb = fs.makeQualified(b);
    } catch (IllegalArgumentException otherFileSystem) {
      return false;
    }
    if (!"file".equals(a.toUri().getScheme()) || !"file".equals(qb.toUri().getScheme())) {
      return strip(a).equals(strip(qb));
    }
    java.nio.file.Path la = java.nio.file.Paths.get(a.toUri()).normalize();
    java.nio.file.Path lb = java.nio.file.Paths.get(qb.toUri()).normalize();
    if (la.equals(lb)) {
      return true;
    }
    return Files.exists(la) && Files.exists(lb) && Files.isSameFile(la, lb);
  }

  private static String strip(Path p) {
    return p.toUri().normalize().toString().replaceAll("/+$", "");
  }
}
