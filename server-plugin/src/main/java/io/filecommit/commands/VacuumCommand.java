package io.filecommit.commands;

import io.filecommit.conf.FileCommitConf;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.KernelInternals;
import io.filecommit.delta.LogFiles;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.delta.storage.FileTree;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.InFlightWrites;
import io.filecommit.txn.RetentionFloor;
import io.filecommit.txn.staging.StagedFiles;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * VACUUM: deletes the files under a table root that no version inside the retention window
 * references (Delta's {@code VacuumCommand}, protocol "Delta Table Specification" on removed files
 * and tombstones). A file is deleted when it is not valid and its modification time is older than
 * {@code now - retention}; valid are the active files and their deletion vector files, the files
 * (and DV files) of {@code remove} tombstones newer than the retention, and what staged commits
 * hold ({@link StagedFiles#protectedFiles}). Listed are all files under the root except {@code
 * _delta_log}, the directories of other tables or sinks nested below ({@link FileTree}: never
 * entered) and hidden names (starting with {@code _} or {@code .}), with {@code _change_data} and partition
 * directories of partition columns that start with {@code _} listed as Delta lists them.
 *
 * <p>Retention: without one, {@code max(table's delta.deletedFileRetentionDuration, server floor)}
 * ({@link RetentionFloor}; a table another tool gave a lower property still gets the floor). A
 * retention below the floor is always refused; one below the table's property is refused unless the
 * server allows it ({@link FileCommitConf#VACUUM_RETENTION_CHECK}{@code =false}, a static setting; Delta's {@code
 * spark.databricks.delta.retentionDurationCheck.enabled}, which a client session cannot reach here).
 * Writes in flight on this server are protected by what the server knows of them ({@link
 * InFlightWrites}), not only by their files' age. Nothing is committed to the log.
 */
public final class VacuumCommand {

  private VacuumCommand() {}

  /**
   * What VACUUM deleted (or would delete).
   *
   * @param files absolute paths (URIs) of the files, sorted
   * @param dryRun whether nothing was deleted
   * @param bytes their total size, bytes
   */
  public record Result(List<String> files, boolean dryRun, long bytes) {}

  /**
   * Runs VACUUM.
   *
   * @param session Spark session (reads checkpoint tombstones when the log was cleaned)
   * @param path table root
   * @param retentionHours retention in hours (>= 0), or null for the table's {@code
   *     delta.deletedFileRetentionDuration} (at least the server's floor)
   * @param dryRun only list the files
   * @return the files
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MISSING_DELTA_TABLE}, {@code
   *     DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE} (negative retention), {@code
   *     DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT} (parameter {@code configuredRetentionHours}), {@code
   *     DELTA_UNSUPPORTED_FEATURES_FOR_WRITE}
   */
  public static Result run(SparkSession session, String path, Double retentionHours, boolean dryRun) {
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    DeltaLog log = DeltaLog.forTable(session, path);
    // The view of the writes in flight is taken before the snapshot: a write that is not in it
    // committed before, so the snapshot below has its files.
    try (InFlightWrites.VacuumView inFlight = InFlightWrites.vacuumStarting(log.tablePath().toString())) {
      return run(session, log, retentionHours, dryRun, inFlight);
    }
  }

  private static Result run(SparkSession session, DeltaLog log, Double retentionHours, boolean dryRun,
      InFlightWrites.VacuumView inFlight) {
    Snapshot snapshot = log.snapshot();
    String table = log.tablePath().toString();
    if (!snapshot.exists()) {
      throw DeltaErrors.missingTable(table, "VACUUM");
    }
    // vacuumProtocolCheck: VACUUM is a writer; a table it cannot write it does not vacuum.
    TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), table);
    long configured = TableConfig.intervalMs(TableConfig.DELETED_FILE_RETENTION.fromMetadata(snapshot.metadata()));
    if (retentionHours != null && (retentionHours < 0 || retentionHours.isNaN())) {
      throw ErrorClass.DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE.error("VACUUM retention must be >= 0 hours, got "
          + retentionHours, java.util.Map.of("retentionHours", String.valueOf(retentionHours)));
    }
    long floor = RetentionFloor.ms(session);
    long retention = retentionHours == null ? Math.max(configured, floor) : (long) (retentionHours * 3_600_000L);
    boolean check = FileCommitConf.VACUUM_RETENTION_CHECK.enabled(session.sparkContext().getConf());
    long minimum = check ? Math.max(configured, floor) : floor;
    if (retention < minimum) {
      throw ErrorClass.DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT.error("VACUUM of " + table + " with a retention of "
          + retentionHours + " hours is below " + (minimum / 3_600_000.0) + " hours (the table's "
          + TableConfig.DELETED_FILE_RETENTION.key() + ": " + (configured / 3_600_000.0) + " hours; this server's floor "
          + FileCommitConf.RETENTION_MINIMUM.key() + ": " + (floor / 3_600_000.0) + " hours): files of writes in flight or still read "
          + "could be deleted. Use a retention period of at least " + (minimum / 3_600_000.0) + " hours",
          Map.of("retentionHours", String.valueOf(retentionHours),
              "configuredRetentionHours", Double.toString(minimum / 3_600_000.0)));
    }
    long cutoff = System.currentTimeMillis() - retention;
    FileSystem fs = log.fs();
    StagedFiles.Protector staged = StagedFiles.protector(log, cutoff);
    Set<Path> valid = validFiles(session, log, snapshot, cutoff, staged);
    valid.addAll(staged.files());
    Set<String> partitionColumns = new HashSet<>();
    snapshot.metadata().partitionColumns().forEach(c -> partitionColumns.add(c.toLowerCase(Locale.ROOT)));
    List<String> files = new ArrayList<>();
    long bytes = 0;
    try {
      Path root = fs.makeQualified(log.tablePath());
      List<FileStatus> candidates = new ArrayList<>();
      FileTree.walk(fs, root, FileTree::notDeltaLog, candidates::add);
      for (FileStatus st : candidates) {
        Path p = fs.makeQualified(st.getPath());
        String rel = root.toUri().relativize(p.toUri()).getPath();
        if (hidden(rel, partitionColumns) || valid.contains(p) || st.getModificationTime() >= cutoff
            || inFlight.protects(p.toString(), st.getModificationTime())) {
          continue;
        }
        if (dryRun || inFlight.deleteUnlessProtected(p.toString(), st.getModificationTime(), () -> fs.delete(p, false))) {
          files.add(p.toString());
          bytes += st.getLen();
        }
      }
      files.sort(null);
    } catch (IOException e) {
      throw log.readFailure(e);
    }
    return new Result(files, dryRun, bytes);
  }

  /** Whether a relative path lies in {@code _delta_log} or a hidden file or directory (Delta's rule). */
  static boolean hidden(String relative, Set<String> partitionColumns) {
    String[] parts = relative.split("/");
    if (parts[0].equals("_delta_log")) {
      return true;
    }
    for (String part : parts) {
      if (!(part.startsWith("_") || part.startsWith("."))) {
        continue;
      }
      int eq = part.indexOf('=');
      boolean partitionDir = eq > 0 && partitionColumns.contains(part.substring(0, eq).toLowerCase(Locale.ROOT));
      if (!part.equals("_change_data") && !partitionDir) {
        return true;
      }
    }
    return false;
  }

  /**
   * Active files and tombstones newer than {@code cutoff}, with their deletion vector files: from
   * the snapshot, every JSON commit in the log, and (when older commits were cleaned) the
   * checkpoints' {@code remove} entries.
   */
  private static Set<Path> validFiles(SparkSession session, DeltaLog log, Snapshot snapshot, long cutoff,
      StagedFiles.Protector staged) {
    Set<Path> valid = new HashSet<>();
    FileSystem fs = log.fs();
    String root = log.tablePath().toString();
    for (AddFile f : snapshot.allFiles()) {
      valid.add(fs.makeQualified(log.absolutePath(f.path())));
      addDv(valid, fs, root, f.deletionVector());
    }
    // One listing of the log: its commits (each read with the listed length, no status request)
    // and, when older commits were cleaned, its checkpoints.
    FileStatus[] listed;
    try {
      listed = fs.listStatus(log.logPath());
    } catch (IOException e) {
      throw log.readFailure(e);
    }
    List<LogFiles.Commit> commits = new ArrayList<>();
    List<Long> versions = new ArrayList<>();
    for (FileStatus st : listed) {
      String name = st.getPath().getName();
      if (name.length() == 25 && name.endsWith(".json") && name.chars().limit(20).allMatch(Character::isDigit)) {
        commits.add(new LogFiles.Commit(Long.parseLong(name.substring(0, 20)), st));
      }
    }
    commits.sort(java.util.Comparator.comparingLong(LogFiles.Commit::version));
    for (LogFiles.Commit c : commits) {
      long v = c.version();
      versions.add(v);
      List<Action> actions = LogFiles.read(log, c);
      staged.commit(v, actions); // the staged commits' protection from the same read of the log
      for (Action a : actions) {
        if (a instanceof RemoveFile r && r.deletionTimestamp() > cutoff) {
          valid.add(fs.makeQualified(log.absolutePath(r.path())));
          addDv(valid, fs, root, r.deletionVector());
        }
      }
    }
    if (!versions.isEmpty() && versions.get(0) > 0) {
      List<String> checkpoints = new ArrayList<>();
      for (FileStatus st : listed) {
        if (st.getPath().getName().contains(".checkpoint") && st.getPath().getName().endsWith(".parquet")) {
          checkpoints.add(st.getPath().toString());
        }
      }
      if (!checkpoints.isEmpty()) {
        var removes = session.read().parquet(checkpoints.toArray(new String[0])).where("remove IS NOT NULL");
        boolean dvs = java.util.Arrays.asList(((org.apache.spark.sql.types.StructType) removes.schema().apply("remove")
            .dataType()).fieldNames()).contains("deletionVector");
        for (Row r : removes.selectExpr("remove.path", "remove.deletionTimestamp",
            dvs ? "remove.deletionVector" : "CAST(NULL AS STRUCT<storageType: STRING>) AS deletionVector").collectAsList()) {
          if (r.isNullAt(1) || r.getLong(1) > cutoff) {
            valid.add(fs.makeQualified(log.absolutePath(r.getString(0))));
            if (!r.isNullAt(2)) {
              Row dv = r.getStruct(2);
              addDv(valid, fs, root, new DeletionVectorDescriptor(dv.getAs("storageType"), dv.getAs("pathOrInlineDv"),
                  dv.getAs("offset"), dv.<Integer>getAs("sizeInBytes"), dv.<Long>getAs("cardinality")));
            }
          }
        }
      }
    }
    return valid;
  }

  private static void addDv(Set<Path> valid, FileSystem fs, String root, DeletionVectorDescriptor dv) {
    if (dv != null && !"i".equals(dv.storageType())) {
      valid.add(fs.makeQualified(new Path(KernelInternals.deletionVectorFile(root, dv))));
    }
  }
}
