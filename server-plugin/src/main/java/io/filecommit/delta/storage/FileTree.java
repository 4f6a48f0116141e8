package io.filecommit.delta.storage;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
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
 */
public final class FileTree {
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
    return !dir.getPath().getName().equals("_delta_log");
  }

  /**
   * Visits every file (not directory) under {@code root}, depth first.
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
    Deque<Path> dirs = new ArrayDeque<>();
    dirs.push(root);
    while (!dirs.isEmpty()) {
      Path dir = dirs.pop();
      try {
        RemoteIterator<FileStatus> it = fs.listStatusIterator(dir);
        while (it.hasNext()) {
          FileStatus st = it.next();
          if (st.isDirectory()) {
            if (descend.test(st)) {
              dirs.push(st.getPath());
            }
          } else {
            visit.accept(st);
          }
        }
      } catch (FileNotFoundException gone) {
        // deleted while listed: nothing of it to visit
      }
    }
  }
}
