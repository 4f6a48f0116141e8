package io.filecommit.delta.storage;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * The files under a table directory, listed one directory at a time with Hadoop's {@link
 * FileSystem#listStatusIterator}, as Delta's {@code DeltaFileOperations.recursiveListDirs} lists a
 * table for VACUUM. Two reasons not to use {@link FileSystem#listFiles}{@code (root, true)}: its
 * {@code LocatedFileStatus} reads every file's permissions, which on the local file system without
 * Hadoop's native library starts an {@code ls} process per file; and a file that another writer
 * deletes between the listing and that read fails the whole listing. Here a file or directory that
 * disappears while the tree is listed is simply not visited (other writers' aborts, VACUUM).
 *
 * <p>A table owns its directory tree and nothing else: a directory below the walk's root whose
 * listing holds a {@code _delta_log} (protocol "Delta Table Specification": the log of another
 * table rooted there) or a {@code _spark_metadata} (the log of a Spark file sink, Spark's {@code
 * FileStreamSink.metadataDir}) belongs to that other table or sink. None of its entries is visited
 * and none of its directories entered, whatever {@code descend} says; no extra listing is needed,
 * the directory's own listing decides. A directory named {@code _spark_metadata} is never entered.
 */
public final class FileTree {
  /** The directory name of a Delta table's log (protocol "Delta Table Specification"). */
  public static final String DELTA_LOG = "_delta_log";
  /** The directory name of a Spark file sink's log (Spark's {@code FileStreamSink.metadataDir}). */
  public static final String SINK_LOG = "_spark_metadata";
  private static final Set<String> OWNER_LOGS = Set.of(DELTA_LOG, SINK_LOG);

  private FileTree() {}

  /**
   * Whether a directory is not a {@code _delta_log}: the {@code descend} rule for listing a table's
   * data and change data files (protocol "Delta Table Specification": the log lives in {@code
   * _delta_log} under the table root).
   *
   * @param dir a directory's status
   * @return false for a directory named {@code _delta_log}
   */
  public static boolean notDeltaLog(FileStatus dir) {
    return !dir.getPath().getName().equals(DELTA_LOG);
  }

  /**
   * Visits every file (not directory) under {@code root}, depth first, except in directories that
   * belong to another table or sink (see the class comment).
   *
   * @param fs the file system of {@code root}
   * @param root the directory to list; when it does not exist nothing is visited
   * @param descend which directories below {@code root} to enter (e.g. not {@code _delta_log})
   * @param visit called once per file with its status (path, length in bytes, modification time in
   *     ms since epoch)
   * @throws IOException when listing fails for another reason than a vanished file or directory
   */
  public static void walk(FileSystem fs, Path root, Predicate<FileStatus> descend, Consumer<FileStatus> visit)
      throws IOException {
    walk(fs, root, descend, visit, owned -> { });
  }

  /**
   * The first directory strictly below {@code root} that holds a {@code _delta_log} or {@code
   * _spark_metadata} entry (the root of another table or sink), or null when there is none. Lists
   * each directory once (the root's own {@code _delta_log} is not entered); a missing root has none.
   *
   * @param fs the file system of {@code root}
   * @param root the directory to look under
   * @return such a directory's path, or null
   * @throws IOException when listing fails for another reason than a vanished file or directory
   */
  public static Path firstOwnedBelow(FileSystem fs, Path root) throws IOException {
    List<Path> owned = new ArrayList<>();
    walk(fs, root, d -> owned.isEmpty() && notDeltaLog(d), f -> { }, owned::add);
    return owned.isEmpty() ? null : owned.get(0);
  }

  private static void walk(FileSystem fs, Path root, Predicate<FileStatus> descend, Consumer<FileStatus> visit,
      Consumer<Path> owned) throws IOException {
    Deque<Path> dirs = new ArrayDeque<>();
    dirs.push(root);
    List<FileStatus> entries = new ArrayList<>();
    boolean atRoot = true;
    while (!dirs.isEmpty()) {
      Path dir = dirs.pop();
      entries.clear();
      boolean ownedByOther = false;
      try {
        RemoteIterator<FileStatus> it = fs.listStatusIterator(dir);
        while (it.hasNext()) {
          FileStatus st = it.next();
          entries.add(st);
          ownedByOther |= OWNER_LOGS.contains(st.getPath().getName());
        }
      } catch (FileNotFoundException gone) {
        atRoot = false;
        continue; // deleted while listed: nothing of it to visit
      }
      if (ownedByOther && !atRoot) {
        owned.accept(dir);
        continue;
      }
      atRoot = false;
      for (FileStatus st : entries) {
        if (!st.isDirectory()) {
          visit.accept(st);
        } else if (!st.getPath().getName().equals(SINK_LOG) && descend.test(st)) {
          dirs.push(st.getPath());
        }
      }
    }
  }
}
