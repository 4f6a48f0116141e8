package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import io.delta.kernel.Table;
import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.MapValue;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.CheckpointAlreadyExistsException;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.exceptions.UnsupportedTableFeatureException;
import io.delta.kernel.internal.SnapshotImpl;
import io.delta.kernel.internal.checkpoints.CheckpointMetaData;
import io.delta.kernel.internal.checkpoints.Checkpointer;
import io.delta.kernel.internal.replay.CreateCheckpointIterator;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.storage.LogStore;
import io.filecommit.actions.AddFile;
import io.filecommit.actions.DeletionVector;
import io.filecommit.delta.storage.LogStores;
import io.filecommit.errors.ErrorClass;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
import org.apache.spark.sql.classic.SparkSession;

/**
 * The {@code _delta_log} of one table: snapshots read by Delta Kernel, commits published by
 * put-if-absent through a delta-storage {@link LogStore}, checkpoints written by Kernel (protocol
 * "Delta Log Entries", "Checkpoints", "Last Checkpoint File"; reference table-formats.md "Delta log").
 *
 * <p>Reading: Kernel's {@code Table.getLatestSnapshot} resolves the log segment of the latest
 * version (classic, multi-part and v2 checkpoints, {@code _last_checkpoint}, log compaction
 * files), its protocol and metadata; active files come from Kernel's scan (only when asked).
 * Kernel 4.4's public {@code Snapshot} has no accessor for the protocol's feature lists, the
 * metadata's id/createdTime or the latest {@code txn} version, so this class, and only this class,
 * reads those three through Kernel's {@code SnapshotImpl} (and checkpoints the tables Kernel's
 * public checkpoint refuses, see {@link #checkpoint}).
 *
 * <p>Writing: a commit is {@code LogStore.write(path, lines, overwrite=false)}; a
 * {@code FileAlreadyExistsException} means another writer took the version. The LogStore is chosen
 * by {@link LogStores} from the path's scheme.
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
   * @param sparkConf lookup of Spark conf keys ({@code spark.delta.logStore.*}), null when unset
   * @throws UncheckedIOException if the file system cannot be reached
   * @throws IllegalArgumentException if the configured LogStore class cannot be used
   */
  public DeltaLog(Path tablePath, Configuration conf, Function<String, String> sparkConf) {
    try {
      this.fs = tablePath.getFileSystem(conf);
      this.tablePath = fs.makeQualified(tablePath);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot open the file system of " + tablePath, e);
    }
    this.logPath = new Path(this.tablePath, "_delta_log");
    this.conf = conf;
    String scheme = this.tablePath.toUri().getScheme();
    String logStoreClass = LogStores.className(scheme, sparkConf);
    this.logStore = LogStores.instance(logStoreClass, conf);
    Configuration engineConf = new Configuration(conf);
    engineConf.set(String.format(KERNEL_LOGSTORE_KEY, scheme == null ? "file" : scheme), logStoreClass);
    this.engine = DefaultEngine.create(engineConf);
  }

  /**
   * The log of the table at {@code path}, configured from the session (Hadoop conf and the
   * {@code spark.delta.logStore.*} keys).
   *
   * @param session the Spark session
   * @param path table root
   * @return the log
   */
  public static DeltaLog forTable(SparkSession session, String path) {
    return new DeltaLog(new Path(path), session.sessionState().newHadoopConf(),
        key -> session.conf().getOption(key).getOrElse(() -> null));
  }

  /** The qualified table root. */
  public Path tablePath() {
    return tablePath;
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
   * The row indexes (0-based positions in the data file) a deletion vector marks deleted, read by
   * Delta Kernel (protocol "Deletion Vector Format"; inline, UUID-relative and absolute DVs).
   *
   * @param dv the descriptor of an active file
   * @return deleted row indexes, ascending
   * @throws UncheckedIOException or Kernel's exception when the DV file cannot be read
   */
  public long[] deletedRowIndexes(DeletionVector dv) {
    io.delta.kernel.internal.actions.DeletionVectorDescriptor descriptor =
        new io.delta.kernel.internal.actions.DeletionVectorDescriptor(dv.storageType(), dv.pathOrInlineDv(),
            java.util.Optional.ofNullable(dv.offset()), dv.sizeInBytes(), dv.cardinality());
    return io.delta.kernel.internal.deletionvectors.DeletionVectorUtils
        .loadNewDvAndBitmap(engine, tablePath.toString(), descriptor)._2.toArray();
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

  /** The LogStore that publishes this table's commits. */
  public LogStore logStore() {
    return logStore;
  }

  /** Name of commit file {@code version}: {@code %020d.json}. */
  public static String commitFileName(long version) {
    return String.format("%020d.json", version);
  }

  /**
   * Versions of the JSON commits present in the log, ascending (after log clean-up they need not
   * start at 0).
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
    try (io.delta.storage.CloseableIterator<String> lines = logStore.read(file, conf)) {
      while (lines.hasNext()) {
        String line = lines.next();
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
   * The latest snapshot, as Delta Kernel reads it.
   *
   * @return the snapshot; {@link Snapshot#empty()} when there is no table
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_UNSUPPORTED_FEATURES_FOR_READ}
   *     when Kernel cannot read the table's protocol, naming the features
   */
  public Snapshot snapshot() {
    String key = tablePath.toString();
    Cached c = CACHE.get(key);
    if (c != null && c.isLatest(this)) {
      return c.toSnapshot(this);
    }
    io.delta.kernel.Snapshot ks;
    try {
      ks = Table.forPath(engine, tablePath.toString()).getLatestSnapshot(engine);
    } catch (TableNotFoundException e) {
      CACHE.remove(key);
      return Snapshot.empty();
    } catch (UnsupportedTableFeatureException e) {
      throw ErrorClass.DELTA_UNSUPPORTED_FEATURES_FOR_READ.error(
          "Cannot read the Delta table at " + tablePath + ": it needs reader feature(s) " + e.getUnsupportedFeatures()
              + " that filecommit does not support", Map.of("unsupported", String.valueOf(e.getUnsupportedFeatures())));
    }
    SnapshotImpl impl = (SnapshotImpl) ks;
    io.delta.kernel.internal.actions.Protocol kp = impl.getProtocol();
    Protocol protocol = new Protocol(kp.getMinReaderVersion(), kp.getMinWriterVersion(),
        kp.supportsReaderFeatures() ? kp.getReaderFeatures() : null,
        kp.supportsWriterFeatures() ? kp.getWriterFeatures() : null);
    io.delta.kernel.internal.actions.Metadata km = impl.getMetadata();
    Metadata metadata = new Metadata(km.getId(), km.getName().orElse(null), km.getDescription().orElse(null),
        km.getSchemaString(), ks.getPartitionColumnNames(), ks.getTableProperties(),
        km.getCreatedTime().orElse(null));
    long version = ks.getVersion();
    Cached fresh = new Cached(version, commitMtime(version), protocol, metadata, ks, Map.of());
    if (fresh.mtime() >= 0) {
      CACHE.put(key, fresh);
    }
    return fresh.toSnapshot(this);
  }

  /**
   * Tells the snapshot cache that this process committed {@code version} on top of {@code
   * readVersion}'s successor chain: when the cached state is {@code version - 1}, the cache moves
   * to {@code version} (with the new protocol/metadata, if any, and the commit's txns) without a
   * Kernel reload; otherwise the entry is dropped and the next snapshot asks Kernel.
   *
   * @param version the version just committed
   * @param protocol the protocol it set, or null
   * @param metadata the metadata it set, or null
   * @param txns appId -> version of its {@code txn} actions
   */
  public void committed(long version, Protocol protocol, Metadata metadata, Map<String, Long> txns) {
    String key = tablePath.toString();
    Cached c = CACHE.get(key);
    long mtime = commitMtime(version);
    if (c == null || c.version() != version - 1 || mtime < 0) {
      CACHE.remove(key);
      return;
    }
    Map<String, Long> own = new java.util.HashMap<>(c.ownTxns());
    own.putAll(txns);
    CACHE.replace(key, c, new Cached(version, mtime, protocol != null ? protocol : c.protocol(),
        metadata != null ? metadata : c.metadata(), c.kernel(), Map.copyOf(own)));
  }

  /** Modification time of commit {@code version}'s file, or -1 when it does not exist. */
  private long commitMtime(long version) {
    try {
      return fs.getFileStatus(new Path(logPath, commitFileName(version))).getModificationTime();
    } catch (FileNotFoundException e) {
      return -1;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + logPath, e);
    }
  }

  /**
   * Latest state per table root, kept across writes in this server (Delta's own writer keeps a
   * DeltaLog cache the same way). It is used only while it provably is the latest: its commit file
   * still exists with the same modification time and the next version's file does not exist (two
   * file-status calls instead of a log listing and a checkpoint read). Commits of this process move
   * it forward ({@link #committed}); anything else makes the next snapshot ask Kernel.
   */
  private static final java.util.concurrent.ConcurrentHashMap<String, Cached> CACHE =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * One cache entry.
   *
   * @param version latest version
   * @param mtime modification time of its commit file, ms
   * @param protocol protocol at {@code version}
   * @param metadata metadata at {@code version}
   * @param kernel Kernel's snapshot at some version {@code <= version}
   * @param ownTxns txn versions this process committed after {@code kernel}'s version
   */
  private record Cached(long version, long mtime, Protocol protocol, Metadata metadata,
      io.delta.kernel.Snapshot kernel, Map<String, Long> ownTxns) {
    boolean isLatest(DeltaLog log) {
      return log.commitMtime(version) == mtime && log.commitMtime(version + 1) < 0;
    }

    Snapshot toSnapshot(DeltaLog log) {
      boolean exact = kernel.getVersion() == version;
      return new Snapshot(version, protocol, metadata,
          () -> log.activeFiles(exact ? kernel : log.kernelSnapshotAt(version)),
          appId -> ownTxns.containsKey(appId) ? java.util.Optional.of(ownTxns.get(appId))
              : ((SnapshotImpl) kernel).getLatestTransactionVersion(log.engine, appId),
          () -> exact ? kernel.getTimestamp(log.engine) : log.commitTimestamp(version));
    }
  }

  private io.delta.kernel.Snapshot kernelSnapshotAt(long version) {
    try {
      return Table.forPath(engine, tablePath.toString()).getSnapshotAsOfVersion(engine, version);
    } catch (TableNotFoundException e) {
      throw new UncheckedIOException(new FileNotFoundException("No Delta table at " + tablePath));
    }
  }

  /** The commit timestamp of a version from its commitInfo (in-commit timestamp when present). */
  private long commitTimestamp(long version) {
    for (JsonNode a : readCommit(version)) {
      if (a.has("commitInfo")) {
        JsonNode ci = a.get("commitInfo");
        return ci.has("inCommitTimestamp") ? ci.get("inCommitTimestamp").asLong() : ci.path("timestamp").asLong();
      }
    }
    return commitMtime(version);
  }

  /**
   * The active files of a Kernel snapshot, from Kernel's scan of the log (no data is read), with
   * their statistics (row-level changes count rows and write deletion vectors from {@code numRecords}).
   */
  private List<AddFile> activeFiles(io.delta.kernel.Snapshot ks) {
    List<AddFile> files = new ArrayList<>();
    try (CloseableIterator<FilteredColumnarBatch> batches = ks.getScanBuilder().build().getScanFiles(engine, true)) {
      while (batches.hasNext()) {
        try (CloseableIterator<Row> rows = batches.next().getRows()) {
          while (rows.hasNext()) {
            Row scanFile = rows.next();
            files.add(toAddFile(scanFile.getStruct(scanFile.getSchema().indexOf("add"))));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the active files of " + tablePath, e);
    }
    return files;
  }

  private static AddFile toAddFile(Row add) {
    int pv = add.getSchema().indexOf("partitionValues");
    int tags = add.getSchema().indexOf("tags");
    int dv = add.getSchema().indexOf("deletionVector");
    int stats = add.getSchema().indexOf("stats");
    return new AddFile(
        add.getString(add.getSchema().indexOf("path")),
        toMap(add.isNullAt(pv) ? null : add.getMap(pv)),
        add.getLong(add.getSchema().indexOf("size")),
        add.getLong(add.getSchema().indexOf("modificationTime")),
        add.getBoolean(add.getSchema().indexOf("dataChange")),
        stats < 0 || add.isNullAt(stats) ? null : add.getString(stats),
        toMap(tags < 0 || add.isNullAt(tags) ? null : add.getMap(tags)),
        dv < 0 || add.isNullAt(dv) ? null : toDeletionVector(add.getStruct(dv)));
  }

  private static DeletionVector toDeletionVector(Row dv) {
    int offset = dv.getSchema().indexOf("offset");
    return new DeletionVector(
        dv.getString(dv.getSchema().indexOf("storageType")),
        dv.getString(dv.getSchema().indexOf("pathOrInlineDv")),
        dv.isNullAt(offset) ? null : dv.getInt(offset),
        dv.getInt(dv.getSchema().indexOf("sizeInBytes")),
        dv.getLong(dv.getSchema().indexOf("cardinality")));
  }

  private static Map<String, String> toMap(MapValue m) {
    Map<String, String> out = new LinkedHashMap<>();
    if (m == null) {
      return out;
    }
    ColumnVector keys = m.getKeys();
    ColumnVector values = m.getValues();
    for (int i = 0; i < m.getSize(); i++) {
      out.put(keys.getString(i), values.isNullAt(i) ? null : values.getString(i));
    }
    return out;
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
    Path target = new Path(logPath, commitFileName(version));
    try {
      fs.mkdirs(logPath);
      logStore.write(target, lines.iterator(), false, conf);
      return true;
    } catch (FileAlreadyExistsException | org.apache.hadoop.fs.FileAlreadyExistsException e) {
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write Delta commit " + target, e);
    }
  }

  /**
   * Writes a checkpoint of {@code version} and {@code _last_checkpoint} (protocol "Checkpoints",
   * "Last Checkpoint File") with Kernel's public {@code Table.checkpoint}. Kernel refuses that for
   * tables whose write-time rules it cannot enforce itself (CHECK constraints, invariants, generated
   * columns) although a checkpoint only restates the log; for those, and only those, the same
   * Kernel pieces are called directly (its checkpoint iterator through the engine's public Parquet
   * writer, then its {@code _last_checkpoint} writer) — the rules are ours to enforce on writes.
   * A checkpoint that already exists is fine.
   *
   * @param version a committed version
   * @return true when written, false when it existed
   * @throws IOException when writing fails
   * @throws RuntimeException (Kernel's) when Kernel cannot read the table at that version
   */
  public boolean checkpoint(long version) throws IOException {
    boolean written = writeCheckpoint(version);
    if (written) {
      fixLastCheckpointSize(version);
    }
    return written;
  }

  /**
   * Rewrites {@code _last_checkpoint} of {@code version} with {@code size} = the number of actions
   * in the checkpoint (protocol "Last Checkpoint File": "the number of actions that are stored in
   * the checkpoint"), counted from the Parquet footer (one row per action) — Kernel 4.4 writes
   * another count there. Only when the file still names {@code version}; best effort.
   */
  private void fixLastCheckpointSize(long version) {
    Path last = new Path(logPath, "_last_checkpoint");
    Path file = new Path(logPath, String.format("%020d.checkpoint.parquet", version));
    try {
      JsonNode current;
      try (io.delta.storage.CloseableIterator<String> lines = logStore.read(last, conf)) {
        current = lines.hasNext() ? ActionJson.MAPPER.readTree(lines.next()) : null;
      }
      if (current == null || current.path("version").asLong(-1) != version || !fs.exists(file)) {
        return;
      }
      long rows = 0;
      try (org.apache.parquet.hadoop.ParquetFileReader reader = org.apache.parquet.hadoop.ParquetFileReader.open(
          org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(file, conf))) {
        rows = reader.getRecordCount();
      }
      if (current.path("size").asLong(-1) == rows) {
        return;
      }
      com.fasterxml.jackson.databind.node.ObjectNode fixed = ((com.fasterxml.jackson.databind.node.ObjectNode) current).deepCopy();
      fixed.put("size", rows);
      logStore.write(last, List.of(ActionJson.MAPPER.writeValueAsString(fixed)).iterator(), true, conf);
    } catch (IOException | RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(DeltaLog.class).warn("filecommit: _last_checkpoint size of " + tablePath
          + " left as written: " + e);
    }
  }

  private boolean writeCheckpoint(long version) throws IOException {
    Table table = Table.forPath(engine, tablePath.toString());
    try {
      table.checkpoint(engine, version);
      return true;
    } catch (CheckpointAlreadyExistsException e) {
      return false;
    } catch (TableNotFoundException e) {
      throw new FileNotFoundException("No Delta table at " + tablePath + ": " + e.getMessage());
    } catch (UnsupportedTableFeatureException e) {
      if (!OWN_RULES.containsAll(e.getUnsupportedFeatures())) {
        throw e;
      }
    }
    SnapshotImpl snapshot;
    try {
      snapshot = (SnapshotImpl) table.getSnapshotAsOfVersion(engine, version);
    } catch (TableNotFoundException e) {
      throw new FileNotFoundException("No Delta table at " + tablePath + ": " + e.getMessage());
    }
    Path file = new Path(logPath, String.format("%020d.checkpoint.parquet", version));
    long adds;
    try (CreateCheckpointIterator actions = snapshot.getCreateCheckpointIterator(engine)) {
      engine.getParquetHandler().writeParquetFileAtomically(file.toString(), actions);
      adds = actions.getNumberOfAddActions();
    } catch (FileAlreadyExistsException e) {
      return false;
    }
    new Checkpointer(snapshot.getLogPath()).writeLastCheckpointFile(
        engine, new CheckpointMetaData(version, adds, Optional.empty()));
    return true;
  }

  /** Writer features Kernel will not checkpoint but whose rules filecommit enforces. */
  private static final java.util.Set<String> OWN_RULES = java.util.Set.of("checkConstraints", "invariants", "generatedColumns");

  /**
   * Whether the table root holds a Spark file-sink log ({@code _spark_metadata}): such a directory
   * is a batch-id sink, not a place for a Delta table. Any other content that no Delta commit lists
   * (leftovers, foreign files) does not stop a new table, as in Delta.
   *
   * @return true if {@code <table>/_spark_metadata} exists
   * @throws UncheckedIOException on file-system errors
   */
  public boolean isFileSinkDirectory() {
    try {
      return fs.exists(new Path(tablePath, "_spark_metadata"));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + tablePath, e);
    }
  }


}
