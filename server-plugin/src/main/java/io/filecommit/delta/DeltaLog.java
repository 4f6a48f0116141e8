package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.actions.AddFile;
import java.io.BufferedReader;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;

/**
 * The {@code _delta_log} directory of one table: reading snapshots by replaying JSON commits and
 * writing a commit file only if it is absent (protocol "Delta Log Entries"; reference
 * table-formats.md "Delta log").
 *
 * <p>Put-if-absent: on the local file system the commit is written to a hidden temporary file and
 * published with a hard link, which fails atomically when the version exists; on other file systems
 * with {@code FileContext.rename(tmp, target, NONE)}, which is atomic on HDFS. Checkpoints are not
 * read: a table whose JSON commits do not start at version 0 is refused.
 */
public final class DeltaLog {
  private static final Pattern COMMIT = Pattern.compile("^(\\d{20})\\.json$");

  private final Path tablePath;
  private final Path logPath;
  private final Configuration conf;
  private final FileSystem fs;

  /**
   * Opens the log of a table (nothing is created).
   *
   * @param tablePath table root; qualified with its file system
   * @param conf Hadoop configuration
   * @throws UncheckedIOException if the file system cannot be reached
   */
  public DeltaLog(Path tablePath, Configuration conf) {
    try {
      this.fs = tablePath.getFileSystem(conf);
      this.tablePath = fs.makeQualified(tablePath);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot open the file system of " + tablePath, e);
    }
    this.logPath = new Path(this.tablePath, "_delta_log");
    this.conf = conf;
  }

  /** The qualified table root. */
  public Path tablePath() {
    return tablePath;
  }

  /** {@code <table>/_delta_log}. */
  public Path logPath() {
    return logPath;
  }

  /** The table's file system. */
  public FileSystem fs() {
    return fs;
  }

  /** The Hadoop configuration this log was opened with. */
  public Configuration conf() {
    return conf;
  }

  /** Name of commit file {@code version}: {@code %020d.json}. */
  public static String commitFileName(long version) {
    return String.format("%020d.json", version);
  }

  /**
   * Versions of all JSON commits, ascending.
   *
   * @return versions, empty when there is no log
   * @throws UncheckedIOException on file-system errors
   */
  public List<Long> listVersions() {
    List<Long> versions = new ArrayList<>();
    try {
      if (!fs.exists(logPath)) {
        return versions;
      }
      for (FileStatus st : fs.listStatus(logPath)) {
        Matcher m = COMMIT.matcher(st.getPath().getName());
        if (m.matches()) {
          versions.add(Long.parseLong(m.group(1)));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + logPath, e);
    }
    versions.sort(null);
    return versions;
  }

  /**
   * Reads the actions of one commit, each as {@code {"<name>": {...}}}.
   *
   * @param version the version
   * @return the parsed lines
   * @throws UncheckedIOException if the file is missing or unreadable
   */
  public List<JsonNode> readCommit(long version) {
    Path file = new Path(logPath, commitFileName(version));
    List<JsonNode> actions = new ArrayList<>();
    try (FSDataInputStream in = fs.open(file);
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (!line.isBlank()) {
          actions.add(ActionJson.MAPPER.readTree(line));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta commit " + file, e);
    }
    return actions;
  }

  /**
   * The latest snapshot, replaying every JSON commit from version 0.
   *
   * @return the snapshot; version -1 when there is no commit
   * @throws UnsupportedOperationException when commits do not start at 0 (checkpoint-only history)
   *     or are not contiguous
   */
  public Snapshot snapshot() {
    List<Long> versions = listVersions();
    if (versions.isEmpty()) {
      return new Snapshot(-1, null, null, Map.of());
    }
    for (int i = 0; i < versions.size(); i++) {
      if (versions.get(i) != i) {
        throw new UnsupportedOperationException(
            "Delta log at " + logPath + " is not a contiguous sequence of JSON commits from version 0 (found "
                + versions.get(i) + " at position " + i + "); tables whose history needs checkpoints are not supported");
      }
    }
    Protocol protocol = null;
    Metadata metadata = null;
    Map<String, AddFile> files = new LinkedHashMap<>();
    for (long v : versions) {
      for (JsonNode action : readCommit(v)) {
        if (action.has("protocol")) {
          protocol = ActionJson.parseProtocol(action.get("protocol"));
        } else if (action.has("metaData")) {
          metadata = ActionJson.parseMetadata(action.get("metaData"));
        } else if (action.has("add")) {
          AddFile add = ActionJson.parseAdd(action.get("add"));
          files.put(add.path(), add);
        } else if (action.has("remove")) {
          files.remove(action.get("remove").path("path").asText());
        }
      }
    }
    long version = versions.get(versions.size() - 1);
    if (protocol == null || metadata == null) {
      throw new IllegalStateException("Delta log at " + logPath + " has no protocol or metaData up to version " + version);
    }
    return new Snapshot(version, protocol, metadata, files);
  }

  /**
   * Writes commit {@code version} with the given action lines, only if no such commit exists.
   *
   * @param version the version to create
   * @param lines one JSON action per line
   * @return true if written, false if the version already exists (another writer won)
   * @throws UncheckedIOException on other file-system errors
   */
  public boolean writeCommitIfAbsent(long version, List<String> lines) {
    String content = String.join("\n", lines) + "\n";
    byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
    Path target = new Path(logPath, commitFileName(version));
    Path tmp = new Path(logPath, "." + commitFileName(version) + "." + UUID.randomUUID() + ".tmp");
    try {
      fs.mkdirs(logPath);
      if ("file".equals(tablePath.toUri().getScheme())) {
        return putIfAbsentLocal(new java.io.File(tmp.toUri()).toPath(), new java.io.File(target.toUri()).toPath(), bytes);
      }
      try (OutputStream out = fs.create(tmp, false)) {
        out.write(bytes);
      }
      try {
        FileContext.getFileContext(tablePath.toUri(), conf).rename(tmp, target, Options.Rename.NONE);
        return true;
      } catch (org.apache.hadoop.fs.FileAlreadyExistsException e) {
        return false;
      } finally {
        fs.delete(tmp, false);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write Delta commit " + target, e);
    }
  }

  private static boolean putIfAbsentLocal(java.nio.file.Path tmp, java.nio.file.Path target, byte[] bytes)
      throws IOException {
    Files.write(tmp, bytes, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    try {
      Files.createLink(target, tmp);
      return true;
    } catch (FileAlreadyExistsException e) {
      return false;
    } catch (UnsupportedOperationException e) {
      // No hard links here: exclusive create is still atomic, the content follows at once.
      try (OutputStream out = Files.newOutputStream(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        out.write(bytes);
        return true;
      } catch (FileAlreadyExistsException e2) {
        return false;
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /**
   * Whether the table root exists and holds anything other than an empty {@code _delta_log}.
   *
   * @return true if the directory has entries
   * @throws UncheckedIOException on file-system errors
   */
  public boolean tablePathHasContent() {
    try {
      if (!fs.exists(tablePath)) {
        return false;
      }
      FileStatus root = fs.getFileStatus(tablePath);
      if (!root.isDirectory()) {
        return true;
      }
      for (FileStatus st : fs.listStatus(tablePath)) {
        if (!st.getPath().getName().equals("_delta_log")) {
          return true;
        }
      }
      return false;
    } catch (FileNotFoundException e) {
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + tablePath, e);
    }
  }

}
