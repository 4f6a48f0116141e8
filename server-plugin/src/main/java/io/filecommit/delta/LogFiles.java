package io.filecommit.delta;

import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.storage.LogStores;
import java.io.BufferedReader;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;

/**
 * The files of a log as one listing shows them, and their reads with the length that listing gave:
 * Hadoop's {@code FileSystem.openFile(path).withFileStatus(status)} (the builder of Hadoop's
 * "openFile" API, {@code fs.option.openfile.*}), which S3A opens without the {@code HEAD} its plain
 * {@code open} sends before the first {@code GET}. Readers that list the log anyway (VACUUM, the
 * search of a staged commit, the roll-forward of the snapshot cache) read each commit with one
 * request. Kernel's own reads already pass the listed length ({@code fs.option.openfile.length}).
 */
public final class LogFiles {
  private LogFiles() {}

  /**
   * The JSON commits of the log, ascending by version: one listing of {@code _delta_log} (one
   * {@code LIST} request per 1,000 entries on an object store; protocol "Delta Log Entries").
   *
   * @param log the table's log
   * @return each commit's version and file status; empty when there is no log
   * @throws UncheckedIOException on file-system errors
   */
  public static List<Commit> listCommits(DeltaLog log) {
    List<Commit> out = new ArrayList<>();
    try {
      for (FileStatus st : log.fs().listStatus(log.logPath())) {
        String name = st.getPath().getName();
        if (name.length() == 25 && name.endsWith(".json") && name.chars().limit(20).allMatch(Character::isDigit)) {
          out.add(new Commit(Long.parseLong(name.substring(0, 20)), st));
        }
      }
    } catch (FileNotFoundException e) {
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + log.logPath(), e);
    }
    out.sort(java.util.Comparator.comparingLong(Commit::version));
    return out;
  }

  /**
   * One listed commit.
   *
   * @param version its version
   * @param status its file status from the listing (length, modification time)
   */
  public record Commit(long version, FileStatus status) {}

  /**
   * Reads a listed commit: through {@link #open} with its status where the table's LogStore
   * publishes whole files (a file that can be opened is complete), else through the LogStore.
   *
   * @param log the table's log
   * @param commit the listed commit
   * @return its actions, in file order
   * @throws UncheckedIOException when it cannot be read
   */
  public static List<Action> read(DeltaLog log, Commit commit) {
    try {
      if (!LogStores.publishesAtomically(log.logStore())) {
        return log.read(commit.status().getPath());
      }
      List<Action> actions = new ArrayList<>();
      try (BufferedReader r = new BufferedReader(new InputStreamReader(open(log.fs(), commit.status()),
          StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          if (!line.isBlank()) {
            Action a = Actions.parse(line);
            if (a != null) {
              actions.add(a);
            }
          }
        }
      }
      return actions;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta commit " + commit.status().getPath(), e);
    }
  }

  /**
   * Opens a file whose status a listing gave, without asking the store for it again.
   *
   * @param fs its file system
   * @param status its status (path, length)
   * @return the open stream
   * @throws IOException when it cannot be opened ({@link FileNotFoundException} when it is gone)
   */
  public static org.apache.hadoop.fs.FSDataInputStream open(FileSystem fs, FileStatus status) throws IOException {
    try {
      return fs.openFile(status.getPath()).withFileStatus(status)
          .opt("fs.option.openfile.read.policy", "whole-file").build().get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted opening " + status.getPath());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException("Cannot open " + status.getPath(), e.getCause());
    }
  }
}
