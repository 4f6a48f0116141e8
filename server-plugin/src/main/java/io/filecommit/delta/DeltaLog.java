package io.filecommit.delta;

import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.storage.LogStore;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.storage.LogStores;
import io.filecommit.errors.ErrorClass;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The {@code _delta_log} of one table (protocol "Delta Log Entries"; Delta's {@code DeltaLog}): commit files published
 * put-if-absent through a delta-storage {@link LogStore} chosen by {@link LogStores}, read back as typed actions, and
 * the latest {@link Snapshot} as Delta Kernel reads it (classic, multi-part and v2 checkpoints, {@code
 * _last_checkpoint}, log compaction files). Snapshots are {@link SnapshotManagement}'s (Delta's {@code
 * SnapshotManagement}), whose bounded process-wide {@link SnapshotCache} spares a Kernel reload while the cached
 * version provably is the latest; checkpoints and log clean-up are {@link Checkpoints}'.
 *
 * <p>Over 400 lines: the whole surface of a table's log that commands use (snapshots, commit reads,
 * publishing, checkpoints), most of it short delegations that state their contracts.
 */
public final class DeltaLog {
  private static final Pattern COMMIT = Pattern.compile("^(\\d{20})\\.json$");
  /** Key of Kernel's per-scheme LogStore class in the Hadoop conf. */
  private static final String KERNEL_LOGSTORE_KEY = "io.delta.kernel.logStore.%s.impl";

  private final Path tablePath;
  private final Path logPath;
  private final Configuration conf;
  private final FileSystem fs;
  private final LogStore logStore;
  private final Engine engine;
  private final SnapshotManagement snapshots;

  /**
   * Opens the log of a table with the default LogStore of its scheme (nothing is created).
   *
   * @param tablePath table root; qualified with its file system
   * @param conf Hadoop configuration
   * @throws UncheckedIOException if the file system cannot be reached
   */
  public DeltaLog(Path tablePath, Configuration conf) {
    this(tablePath, conf, key -> null);
  }

  /**
   * Opens the log of a table (nothing is created).
   *
   * @param tablePath table root; qualified with its file system
   * @param conf Hadoop configuration
   * @param serverConf lookup of the server's Spark conf keys ({@code spark.delta.logStore.*}),
   *     null when unset
   * @throws UncheckedIOException if the file system cannot be reached
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOGSTORE_UNAVAILABLE} if the
   *     configured LogStore class cannot be used
   */
  public DeltaLog(Path tablePath, Configuration conf, Function<String, String> serverConf) {
    try {
      this.fs = tablePath.getFileSystem(conf);
      this.tablePath = fs.makeQualified(tablePath);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot open the file system of " + tablePath, e);
    }
    this.logPath = new Path(this.tablePath, "_delta_log");
    this.conf = conf;
    String scheme = this.tablePath.toUri().getScheme();
    String logStoreClass = LogStores.className(scheme, serverConf);
    this.logStore = LogStores.instance(logStoreClass, conf);
    Configuration engineConf = new Configuration(conf);
    engineConf.set(String.format(KERNEL_LOGSTORE_KEY, scheme == null ? "file" : scheme), logStoreClass);
    io.filecommit.delta.storage.LocalPermissions.use(engineConf, fs);
    this.engine = DefaultEngine.create(engineConf);
    this.snapshots = new SnapshotManagement(this);
  }

  /**
   * {@return the log of the table at {@code path}: the session's Hadoop conf, and the LogStore named by the
   * server's static Spark conf ({@code spark.delta.logStore.*} of the SparkContext, never a
   * session's runtime conf: how commits are published is the server's decision)}
   *
   * <p>Logs are kept per table path and the session SQL conf entries that can change them
   * ({@link DeltaLogCache}): building one
   * copies the server's whole Hadoop configuration twice, which every small write would pay.
   *
   * @param session the Spark session
   * @param path table root
   */
  public static DeltaLog forTable(org.apache.spark.sql.classic.SparkSession session, String path) {
    return DeltaLogCache.INSTANCE.get(path, session.sessionState().conf().getAllConfs(),
        session.sparkContext().hadoopConfiguration(), () -> {
      org.apache.spark.SparkConf serverConf = session.sparkContext().getConf();
      return new DeltaLog(new Path(path), DeltaLogCache.sessionHadoopConf(session),
          k -> serverConf.getOption(k).getOrElse(() -> null));
    });
  }

  /** {@return the qualified table root} */
  public Path tablePath() {
    return tablePath;
  }

  /** {@return {@code <table>/_delta_log}} */
  public Path logPath() {
    return logPath;
  }

  /** {@return the table's file system} */
  public FileSystem fs() {
    return fs;
  }

  /** {@return the Hadoop configuration this log was opened with} */
  public Configuration conf() {
    return conf;
  }

  /** {@return the LogStore that publishes this table's commits} */
  public LogStore logStore() {
    return logStore;
  }

  /** {@return Delta Kernel's engine for this table (Spark's Hadoop conf, this table's LogStore)} */
  public Engine engine() {
    return engine;
  }

  /**
   * The file-system path of a file named in the log (protocol "Add File and Remove File": a
   * URI-encoded path, relative to the table root or absolute).
   *
   * @param logPath the {@code path} of an add/remove/cdc action
   * @return the absolute path
   * @throws IllegalArgumentException when {@code logPath} is not a valid URI
   */
  public Path absolutePath(String logPath) {
    Path p = new Path(java.net.URI.create(logPath));
    return p.isAbsolute() || p.toUri().getScheme() != null ? p : new Path(tablePath, p);
  }

  /**
   * {@return the name of commit file {@code version}: {@code %020d.json}}
   * @param version a version
   */
  public static String commitFileName(long version) {
    return String.format("%020d.json", version);
  }

  /**
   * {@return the path of commit file {@code version}}
   * @param version a version
   */
  public Path commitFile(long version) {
    return new Path(logPath, commitFileName(version));
  }

  /**
   * Versions of the JSON commits present in the log, ascending (after log clean-up they need not start at 0).
   *
   * @return versions, empty when there is no log
   * @throws UncheckedIOException on file-system errors
   */
  public List<Long> listVersions() {
    List<Long> versions = new ArrayList<>();
    try {
      for (FileStatus st : fs.listStatus(logPath)) {
        Matcher m = COMMIT.matcher(st.getPath().getName());
        if (m.matches()) {
          versions.add(Long.parseLong(m.group(1)));
        }
      }
    } catch (FileNotFoundException e) {
      return versions; // no log: listed without an existence probe first (a HEAD and a LIST on S3)
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + logPath, e);
    }
    versions.sort(null);
    return versions;
  }

  /**
   * Reads the actions of one commit.
   *
   * @param version the version
   * @return the actions, in file order (action types filecommit does not model left out)
   * @throws UncheckedIOException if the file is missing or unreadable
   */
  public List<Action> readCommit(long version) {
    try {
      return read(commitFile(version));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta commit " + commitFile(version), e);
    }
  }

  /**
   * Reads one commit if it exists, as a writer does to learn the outcome of a commit attempt.
   * Existence is asked of the LogStore's own listing ({@code listFrom}), so a store that publishes
   * in several steps (S3 with DynamoDB) completes a commit it had recorded before answering.
   *
   * @param version the version
   * @return its actions, or empty when the version does not exist
   * @throws IOException when the log cannot be listed or the commit cannot be read
   */
  public Optional<List<Action>> readCommitIfExists(long version) throws IOException {
    Path file = commitFile(version);
    if (LogStores.publishesAtomically(logStore)) {
      // A commit that can be opened is complete and one that cannot does not exist: no listing.
      try {
        return Optional.of(read(file));
      } catch (FileNotFoundException e) {
        return Optional.empty();
      }
    }
    boolean exists = false;
    try {
      java.util.Iterator<FileStatus> listed = logStore.listFrom(file, conf);
      while (listed.hasNext()) {
        String name = listed.next().getPath().getName();
        if (name.equals(file.getName())) {
          exists = true;
          break;
        }
        if (name.compareTo(file.getName()) > 0) {
          break;
        }
      }
    } catch (FileNotFoundException e) {
      return Optional.empty();
    }
    return exists ? Optional.of(read(file)) : Optional.empty();
  }

  List<Action> read(Path file) throws IOException {
    List<Action> actions = new ArrayList<>();
    try (io.delta.storage.CloseableIterator<String> lines = logStore.read(file, conf)) {
      while (lines.hasNext()) {
        String line = lines.next();
        if (!line.isBlank()) {
          Action a = Actions.parse(line);
          if (a != null) {
            actions.add(a);
          }
        }
      }
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
    return actions;
  }

  /**
   * Publishes commit {@code version} only if no such commit exists (put-if-absent, protocol "Delta
   * Log Entries"). The log directory is created first when missing ({@link LogProbe#makeDirectory}).
   *
   * @param version the version to create
   * @param actions the commit's actions, one JSON line each, in order
   * @throws java.nio.file.FileAlreadyExistsException (or Hadoop's) when the version exists
   * @throws IOException when the store fails; the commit may or may not have landed
   */
  public void writeCommit(long version, List<? extends Action> actions) throws IOException {
    LogProbe.makeDirectory(fs, logPath);
    // Each line serialized as the store consumes it: a commit of 100,000 files never holds its JSON whole.
    java.util.Iterator<String> lines = actions.stream().map(a -> Actions.toJson(a)).iterator();
    logStore.write(commitFile(version), lines, false, conf);
    snapshots.wrote(version, actions);
  }

  /**
   * The latest snapshot, as Delta Kernel reads it (or the cache, while it provably is the latest:
   * its commit file still has the same modification time and the next version's does not exist).
   *
   * @return the snapshot; {@link Snapshot#empty()} when there is no table
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_UNSUPPORTED_FEATURES_FOR_READ}
   *     when Kernel cannot read the table's protocol, naming the features; {@code
   *     FILECOMMIT_LOG_READ_FAILED} on a storage failure ({@link #readFailure})
   */
  public Snapshot snapshot() {
    return snapshots.latest();
  }

  /**
   * On an object store whose commits are conditional PUTs ({@code S3ConditionalLogStore}, its
   * bucket known to honour the condition), the state of the commit this server published last, while it is the
   * latest commit this server knows of, with no request (no LIST of {@code _delta_log}): the
   * snapshot a blind append may start from. A blind append reads no table data; when another
   * writer has moved the table meanwhile, the conditional PUT of the next version is refused and
   * the commit's conflict checks read the winning commits (protocol "Optimistic Concurrency
   * Control"), as delta-rs does with a loaded table. A protocol or metadata change among them then
   * fails the commit as a concurrent change ({@code DELTA_PROTOCOL_CHANGED}, {@code
   * DELTA_METADATA_CHANGED}) although it may have landed before the append started, so the caller
   * starts over from {@link #snapshot()} on those.
   *
   * @return the snapshot, or empty (another file system, commits not known to be conditional
   *     PUTs, nothing cached, or the cached state is not this server's own last commit): use
   *     {@link #snapshot()}
   */
  public java.util.Optional<Snapshot> ownLatestCommit() {
    return snapshots.ownLatestCommit();
  }

  /**
   * The snapshot of an earlier version, read by Delta Kernel from the nearest checkpoint (time
   * travel; Delta's {@code DeltaLog.getSnapshotAt}). Not cached.
   *
   * @param version a version between the earliest recreatable one and the latest
   * @return the snapshot at {@code version}
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_TABLE_NOT_FOUND} without a table,
   *     {@code DELTA_UNSUPPORTED_FEATURES_FOR_READ} as {@link #snapshot()}; Kernel's exception when
   *     the version cannot be recreated
   */
  public Snapshot snapshotAsOfVersion(long version) {
    return snapshots.asOfVersion(version);
  }

  /**
   * Tells the snapshot cache that this process committed {@code version}: a cached state of {@code version - 1} moves
   * to it (new protocol/metadata, if any, and the commit's txns) without a Kernel reload; a state further behind, or
   * already past it, is kept (the next snapshot rolls it forward, as Delta's incremental {@code DeltaLog.update}):
   * dropping it would make every concurrent committer reload the whole table through Kernel.
   *
   * @param version the version just committed
   * @param protocol the protocol it set, or null
   * @param metadata the metadata it set, or null
   * @param txns appId -> version of its {@code txn} actions
   * @throws UncheckedIOException when the commit file's status cannot be read
   */
  public void committed(long version, Protocol protocol, Metadata metadata, Map<String, Long> txns) {
    snapshots.committed(version, protocol, metadata, txns);
  }

  /**
   * The newest version this server knows to be in the log (its snapshot cache, checked with one file status: the commit
   * file is still the one cached), or -1; a committer's first attempt goes after it, judging the commits between it and
   * its read version as winners of lost races.
   *
   * @param after a version the caller knows (its snapshot's); a cached one not after it is not checked
   * @return a version after {@code after} whose commit exists, or -1
   */
  public long latestKnownVersion(long after) {
    return snapshots.latestKnownVersion(after);
  }

  /** Forgets the cached state of this table (the next snapshot asks Kernel). */
  public void invalidateCache() {
    snapshots.invalidate();
  }

  /** Modification time of commit {@code version}'s file, or -1 when it does not exist. */
  long commitMtime(long version) {
    try {
      return fs.getFileStatus(commitFile(version)).getModificationTime();
    } catch (FileNotFoundException e) {
      return -1;
    } catch (IOException e) {
      throw readFailure(e);
    }
  }

  /**
   * The typed error of a storage failure while reading the log (Kernel wraps I/O failures in its
   * own runtime exceptions); anything that is not an I/O failure is returned as it is.
   *
   * @param e what reading threw
   * @return {@code FILECOMMIT_LOG_READ_FAILED} when an {@link IOException} is in the cause chain
   */
  public RuntimeException readFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof io.filecommit.errors.FileCommitException typed) {
        return typed;
      }
      if (t instanceof IOException) {
        return ErrorClass.FILECOMMIT_LOG_READ_FAILED.error("Cannot read the log of the Delta table at " + tablePath
            + " (storage failure: " + t + "); nothing was written, retry the command", e,
            Map.of("table", tablePath.toString()));
      }
    }
    return e instanceof RuntimeException r ? r : new IllegalStateException(e);
  }

  /**
   * Writes a checkpoint of {@code version} and {@code _last_checkpoint} (protocol "Checkpoints").
   *
   * @param version a committed version
   * @return true when written, false when it existed
   * @throws IOException when writing fails
   */
  public boolean checkpoint(long version) throws IOException {
    return Checkpoints.write(this, version);
  }

  /**
   * Deletes the log files that expired under the table's {@code delta.logRetentionDuration} when {@code
   * delta.enableExpiredLogCleanup} is on (protocol "Metadata Cleanup", with Kernel's {@code MetadataCleanup}): commits
   * and checkpoints older than the retention that a later complete checkpoint covers. Nothing is deleted on a table
   * that protects its checkpoints ({@code delta.requireCheckpointProtectionBeforeVersion} set), since that needs
   * history truncated as a whole, nor when the retention does not parse.
   *
   * @param md the table's metadata at the latest version
   * @return the number of log files deleted
   * @throws IOException when listing or deleting fails
   */
  public long cleanupExpiredLogs(io.filecommit.delta.actions.Metadata md) throws IOException {
    return Checkpoints.cleanupExpiredLogs(this, md);
  }
}
