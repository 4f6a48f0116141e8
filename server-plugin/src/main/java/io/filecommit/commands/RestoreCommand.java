package io.filecommit.commands;

import io.filecommit.txn.CommandResult;
import io.filecommit.commands.optimize.OptimizeCommand;
import io.filecommit.delta.Clustering;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.IdentityColumns;
import io.filecommit.delta.KernelInternals;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.read.CommitClock;
import io.filecommit.txn.InFlightWrites;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import java.io.IOException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.classic.SparkSession;

/**
 * RESTORE (Delta's {@code RestoreTableCommand}): one commit that brings the table back to an earlier
 * version. It adds (with {@code dataChange=true} and their deletion vectors) the files of that
 * version the latest one lacks, removes the latest files that version lacks (a file is the pair of
 * path and deletion vector), restores that version's metadata and its liquid clustering columns ({@link
 * Clustering#forRestore}), and keeps the latest protocol (never downgraded) and other domains.
 * Operation {@code RESTORE} with parameters {@code version} / {@code timestamp} and
 * Delta's metrics ({@code numRestoredFiles}, {@code restoredFilesSize}, {@code numRemovedFiles},
 * {@code removedFilesSize}, {@code numOfFilesAfterRestore}, {@code tableSizeAfterRestore}).
 *
 * <p>A version committed longer ago than the table's {@code delta.deletedFileRetentionDuration} is
 * refused ({@code DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION}), as Delta
 * refuses it.
 *
 * <p>Every file to add (and its deletion vector file) must still exist: otherwise nothing is
 * committed ({@code FILECOMMIT_RESTORE_MISSING_FILES}, Delta's {@code restoreMissedDataFilesError}).
 * Those files are registered as in flight ({@link InFlightWrites}) before that check and until the
 * command ends, so a concurrent VACUUM on this server cannot delete them between check and commit.
 * The transaction reads the whole table, so any concurrent data change conflicts with it.
 */
public final class RestoreCommand {
  private RestoreCommand() {}

  /**
   * Restores the table.
   *
   * @param session Spark session (time zone of {@code timestamp})
   * @param path table root
   * @param version the version to restore (>= 0, before the latest), or null
   * @param timestamp a timestamp or date string: the latest version committed at or before it, or null
   * @return the commit and Delta's RESTORE metrics
   * @throws FileCommitException {@code INVALID_EMPTY_LOCATION} (blank path), {@code
   *     DELTA_ONEOF_IN_TIMETRAVEL} (not exactly one of version and timestamp), {@code
   *     DELTA_MISSING_DELTA_TABLE}, {@code DELTA_TIMESTAMP_INVALID},
   *     {@code DELTA_CANNOT_RESTORE_TABLE_VERSION}, {@code DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER},
   *     {@code DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER}, {@code FILECOMMIT_RESTORE_MISSING_FILES},
   *     {@code DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION},
   *     {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE}, conflict classes
   */
  public static OptimizeCommand.Result run(SparkSession session, String path, Long version, String timestamp) {
    long start = System.currentTimeMillis();
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    if ((version == null) == (timestamp == null)) {
      throw ErrorClass.DELTA_ONEOF_IN_TIMETRAVEL.error("RESTORE needs exactly one of version and timestamp, got "
          + "version=" + version + ", timestamp=" + timestamp);
    }
    DeltaLog log = DeltaLog.forTable(session, path);
    OptimisticTransaction txn = new OptimisticTransaction(session, log);
    Snapshot latest = txn.snapshot();
    String table = txn.table();
    if (!latest.exists()) {
      throw DeltaErrors.missingTable(table, "RESTORE");
    }
    TableFeatures.checkWritable(latest.protocol(), latest.metadata(), table);
    long target = version != null ? version : versionAt(session, log, latest, timestamp);
    Snapshot restored = snapshotAt(log, latest, target);
    checkRetention(log, latest, target);
    TableFeatures.checkWritable(latest.protocol(), restored.metadata(), table);
    txn.readWholeTable();

    Set<String> targetKeys = new HashSet<>();
    restored.allFiles().forEach(f -> targetKeys.add(key(f)));
    Set<String> latestKeys = new HashSet<>();
    latest.allFiles().forEach(f -> latestKeys.add(key(f)));
    List<AddFile> adds = new ArrayList<>();
    for (AddFile f : restored.allFiles()) {
      if (!latestKeys.contains(key(f))) {
        adds.add(f.withDataChange(true)); // row tracking fields kept (protocol "Row Tracking": restored rows)
      }
    }
    long now = System.currentTimeMillis();
    List<RemoveFile> removes = new ArrayList<>();
    for (AddFile f : latest.allFiles()) {
      if (!targetKeys.contains(key(f))) {
        removes.add(f.toRemove(now));
      }
    }
    // Registered before the existence check: a VACUUM on this server either deleted a file before
    // (the check fails) or keeps it until this command ends (InFlightWrites).
    InFlightWrites.register(table).protectPaths(restoredPaths(log, adds));
    checkFilesExist(log, adds, target);
    Map<String, String> metrics = new LinkedHashMap<>();
    metrics.put("numRestoredFiles", Integer.toString(adds.size()));
    metrics.put("removedFilesSize", Long.toString(removes.stream().mapToLong(r -> r.size() == null ? 0 : r.size()).sum()));
    metrics.put("numRemovedFiles", Integer.toString(removes.size()));
    metrics.put("restoredFilesSize", Long.toString(adds.stream().mapToLong(AddFile::size).sum()));
    metrics.put("numOfFilesAfterRestore", Integer.toString(restored.allFiles().size()));
    metrics.put("tableSizeAfterRestore", Long.toString(restored.allFiles().stream().mapToLong(AddFile::size).sum()));

    // protocol "Identity Columns": the identity high-water marks never go back (Delta's RESTORE keeps them)
    Metadata md = IdentityColumns.keepHighWaterMarks(restored.metadata(), latest.metadata());
    if (!sameMetadata(md, latest.metadata())) {
      txn.updateMetadata(md);
    }
    // protocol "Clustered Table": the restored version's clustering columns (Delta's RESTORE)
    Clustering.forRestore(log, latest, restored).ifPresent(d -> txn.updateDomainMetadata(d, Set.of()));
    List<FileAction> actions = new ArrayList<>(adds);
    actions.addAll(removes);
    long committed = txn.commit(actions, new Operation.Restore(version, timestamp, metrics));
    long[] totals = CommandResult.rowsAndBytes(adds);
    return new OptimizeCommand.Result(new CommandResult(committed, txn.committed(), table, adds, removes, List.of(),
        totals[0], totals[1], System.currentTimeMillis() - start, txn.attempts(), RowMetrics.NONE), metrics);
  }

  /** A file's identity across versions: its path and its deletion vector. */
  private static String key(AddFile f) {
    DeletionVectorDescriptor dv = f.deletionVector();
    return dv == null ? f.path() : f.path() + "\u0000" + dv.storageType() + dv.pathOrInlineDv() + "@" + dv.offset();
  }

  private static boolean sameMetadata(Metadata a, Metadata b) {
    return Objects.equals(a.schemaString(), b.schemaString()) && a.partitionColumns().equals(b.partitionColumns())
        && a.configuration().equals(b.configuration()) && Objects.equals(a.id(), b.id());
  }

  /** The latest version committed at or before {@code timestamp} (Delta's getActiveCommitAtTime). */
  private static long versionAt(SparkSession session, DeltaLog log, Snapshot latest, String timestamp) {
    Long ms = CommitClock.parseMs(session, timestamp);
    if (ms == null) {
      throw ErrorClass.DELTA_TIMESTAMP_INVALID.error("Invalid RESTORE timestamp '" + timestamp + "': must be a "
          + "timestamp such as '2024-01-31 12:00:00' or a date", Map.of("expr", timestamp));
    }
    TreeMap<Long, Long> ts = CommitClock.timestamps(log, latest);
    if (ts.isEmpty() || ms > ts.lastEntry().getValue()) {
      String last = ts.isEmpty() ? "?" : String.valueOf(new Timestamp(ts.lastEntry().getValue()));
      throw ErrorClass.DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER.error("Cannot restore table " + log.tablePath()
          + " to timestamp (" + new Timestamp(ms) + ") as it is after the latest version available. Please use a "
          + "timestamp before (" + last + ")", Map.of("requestedTimestamp", String.valueOf(new Timestamp(ms)),
          "latestTimestamp", last));
    }
    Long at = null;
    for (Map.Entry<Long, Long> e : ts.entrySet()) {
      if (e.getValue() <= ms) {
        at = e.getKey();
      }
    }
    if (at == null) {
      String first = String.valueOf(new Timestamp(ts.firstEntry().getValue()));
      throw ErrorClass.DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER.error("Cannot restore table " + log.tablePath()
          + " to timestamp (" + new Timestamp(ms) + ") as it is before the earliest version available. Please use a "
          + "timestamp after (" + first + ")", Map.of("requestedTimestamp", String.valueOf(new Timestamp(ms)),
          "earliestTimestamp", first));
    }
    return at;
  }

  /** The snapshot to restore: a version before the latest that the log can still recreate. */
  private static Snapshot snapshotAt(DeltaLog log, Snapshot latest, long version) {
    if (version < 0 || version >= latest.version()) {
      throw cannotRestore(log, version, latest.version(), null);
    }
    try {
      return log.snapshotAsOfVersion(version);
    } catch (RuntimeException e) {
      throw cannotRestore(log, version, latest.version(), e);
    }
  }

  private static FileCommitException cannotRestore(DeltaLog log, long version, long latest, Throwable cause) {
    long earliest = log.listVersions().stream().findFirst().orElse(0L);
    return ErrorClass.DELTA_CANNOT_RESTORE_TABLE_VERSION.error("Cannot restore table " + log.tablePath()
        + " to version " + version + ". Available versions: [" + earliest + ", " + (latest - 1) + "] (versions before "
        + "the latest " + latest + " whose commits or a checkpoint at or before them are in the log)", cause,
        Map.of("version", String.valueOf(version), "startVersion", String.valueOf(earliest),
            "endVersion", String.valueOf(latest - 1)));
  }

  /**
   * Refuses a version committed before {@code now - delta.deletedFileRetentionDuration}: VACUUM may
   * have deleted its files (Delta's {@code getSnapshotAt} with {@code
   * enforceTimeTravelWithinDeletedFileRetention}).
   */
  private static void checkRetention(DeltaLog log, Snapshot latest, long version) {
    String retention = TableConfig.DELETED_FILE_RETENTION.fromMetadata(latest.metadata());
    long retentionMs = TableConfig.intervalMs(retention);
    Long committed = CommitClock.timestamps(log, latest).get(version);
    if (committed != null && committed < System.currentTimeMillis() - retentionMs) {
      String hours = Long.toString(retentionMs / 3_600_000L);
      throw ErrorClass.DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION.error("Cannot restore "
          + log.tablePath() + " to version " + version + ": it was committed at " + new Timestamp(committed)
          + ", beyond " + TableConfig.DELETED_FILE_RETENTION.key() + " (" + retention + ") set on the table",
          Map.of("deletedFileRetention", hours));
    }
  }

  /** Qualified paths of the files to add and of their deletion vector files, as VACUUM lists them. */
  private static List<String> restoredPaths(DeltaLog log, List<AddFile> adds) {
    FileSystem fs = log.fs();
    String root = log.tablePath().toString();
    List<String> paths = new ArrayList<>();
    for (AddFile f : adds) {
      paths.add(fs.makeQualified(log.absolutePath(f.path())).toString());
      if (f.deletionVector() != null && !"i".equals(f.deletionVector().storageType())) {
        paths.add(fs.makeQualified(new Path(KernelInternals.deletionVectorFile(root, f.deletionVector()))).toString());
      }
    }
    return paths;
  }

  /** Fails, naming up to 100, when files to add (or their deletion vector files) no longer exist. */
  private static void checkFilesExist(DeltaLog log, List<AddFile> adds, long version) {
    FileSystem fs = log.fs();
    String root = log.tablePath().toString();
    List<String> missing = new ArrayList<>();
    try {
      for (AddFile f : adds) {
        if (missing.size() >= 100) {
          break;
        }
        if (!fs.exists(log.absolutePath(f.path()))) {
          missing.add(f.path());
        } else if (f.deletionVector() != null && !"i".equals(f.deletionVector().storageType())) {
          Path dv = new Path(KernelInternals.deletionVectorFile(root, f.deletionVector()));
          if (!fs.exists(dv)) {
            missing.add(dv.toString());
          }
        }
      }
    } catch (IOException e) {
      throw log.readFailure(e);
    }
    if (!missing.isEmpty()) {
      throw ErrorClass.FILECOMMIT_RESTORE_MISSING_FILES.error("Cannot restore table " + log.tablePath() + " to version "
          + version + ": some of its data files no longer exist (vacuumed or deleted): " + missing,
          Map.of("version", String.valueOf(version), "files", String.join(",", missing)));
    }
  }
}
