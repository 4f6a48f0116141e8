package io.filecommit.commands;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.read.TableScan;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import io.filecommit.txn.TransactionId;
import io.filecommit.txn.staging.StagedCommit;
import io.filecommit.txn.staging.StagedPublish;
import io.filecommit.txn.staging.StagingStore;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;

/**
 * Write, audit, publish: what a client does with staged commits after staging them (a table
 * command run with a {@link io.filecommit.txn.staging.StageRequest}, or {@link
 * StageFilesCommand}). Delta commits in the call that writes; here the commit's actions wait in
 * {@link StagingStore} until they are published ({@link StagedPublish}: one version, Delta's
 * conflict rules since each staged commit's read version), read for an audit, or aborted (files
 * deleted). Every entry point first sweeps the table's expired staged commits.
 */
public final class StagedCommits {
  private StagedCommits() {}

  /**
   * Publishes staged commits of one table as one version.
   *
   * @param session Spark session
   * @param path table root
   * @param ids staged commit ids (at least one, distinct)
   * @param txnId the publish's application transaction, or null
   * @return the commit: its version and the staged commits' actions; {@code committed=false} when
   *     they were already published (that version) or the txn was already applied
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_INVALID_STAGED_COMMIT_IDS} (no
   *     or repeated ids), the classes of {@link StagingStore#load} and {@link StagedPublish#publish}
   */
  public static CommandResult publish(SparkSession session, String path, List<String> ids, TransactionId txnId) {
    long start = System.currentTimeMillis();
    DeltaLog log = open(session, path, ids, true);
    List<StagedCommit> staged = load(log, ids, true);
    // The cached snapshot, unchecked: the commit is put-if-absent, and a lost race reads the log.
    OptimisticTransaction txn = OptimisticTransaction.onCachedSnapshot(session, log);
    Snapshot snapshot = txn.snapshot();
    if (snapshot.exists()) {
      TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), txn.table());
    }
    if (txnId != null && txn.setTransaction(txnId)) {
      return CommandResult.nothingCommitted(snapshot.version(), txn.table(), start, 0);
    }
    StagedPublish.Outcome outcome = StagedPublish.publish(txn, staged, System.currentTimeMillis());
    if (!outcome.committed()) {
      return CommandResult.nothingCommitted(outcome.version(), txn.table(), start, outcome.attempts());
    }
    return result(staged, outcome.version(), true, System.currentTimeMillis() - start, outcome.attempts());
  }

  /**
   * Staged commits as one command result: their file actions, and their counters from the
   * operation metrics each recorded (Delta's names: {@code numOutputRows}, {@code numDeletedRows},
   * {@code numTargetRowsInserted}, ...).
   *
   * @param staged the staged commits
   * @param version the version (read version of a staged commit, or the published version)
   * @param committed whether the version holds them
   * @param durationMs wall time, ms
   * @param attempts commit attempts
   * @return the result; {@link CommandResult#staged()} is the staged commit when there is one
   */
  public static CommandResult result(List<StagedCommit> staged, long version, boolean committed, long durationMs,
      int attempts) {
    List<AddFile> adds = new ArrayList<>();
    List<RemoveFile> removes = new ArrayList<>();
    List<AddCDCFile> cdc = new ArrayList<>();
    long[] m = new long[6];
    for (StagedCommit c : staged) {
      adds.addAll(c.addFiles());
      removes.addAll(c.removeFiles());
      cdc.addAll(c.cdcFiles());
      Map<String, String> om = c.operationMetrics();
      m[0] += metric(om, "numDeletedRows") + metric(om, "numTargetRowsDeleted");
      m[1] += metric(om, "numUpdatedRows") + metric(om, "numTargetRowsUpdated");
      m[2] += metric(om, "numTargetRowsInserted");
      m[3] += metric(om, "numCopiedRows") + metric(om, "numTargetRowsCopied");
      m[4] += metric(om, "numOutputRows");
      m[5] += metric(om, "numOutputBytes");
    }
    return new CommandResult(version, committed, staged.get(0).tablePath(), adds, removes, cdc, m[4], m[5], durationMs,
        attempts, new RowMetrics(m[0], m[1], m[2], m[3]), staged.size() == 1 ? staged.get(0) : null);
  }

  /**
   * Aborts staged commits: deletes the files the server wrote for them. Aborting one that was
   * already aborted does nothing.
   *
   * @param session the command's session
   * @param path the table root
   * @param ids the staged commits' ids
   * @return the number of files deleted
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_NOT_FOUND},
   *     {@code FILECOMMIT_STAGED_COMMIT_PUBLISHED}, {@code FILECOMMIT_STAGED_COMMIT_BUSY}
   */
  public static long abort(SparkSession session, String path, List<String> ids) {
    DeltaLog log = open(session, path, ids, false);
    long deleted = 0;
    for (String id : ids) {
      StagedCommit c;
      try {
        c = load(log, List.of(id), false).get(0);
      } catch (io.filecommit.errors.FileCommitException e) {
        if (ErrorClass.FILECOMMIT_STAGED_COMMIT_ABORTED.name().equals(e.getCondition())
            || ErrorClass.FILECOMMIT_STAGED_COMMIT_EXPIRED.name().equals(e.getCondition())) {
          continue;
        }
        throw e;
      }
      deleted += StagingStore.abort(log, c);
    }
    return deleted;
  }

  /**
   * One staged commit, as stored.
   *
   * @param session the command's session
   * @param path the table root
   * @param id the staged commit's id
   * @return the record
   * @throws io.filecommit.errors.FileCommitException the classes of {@link StagingStore#load}
   */
  public static StagedCommit get(SparkSession session, String path, String id) {
    DeltaLog log = open(session, path, List.of(id), false);
    return load(log, List.of(id), false).get(0);
  }

  /**
   * The rows of staged commits for an audit, read as the table's readers will read them: the rows
   * of the data files they add that are not in the table yet ({@code tableAfter=false}), or the
   * whole table as it would be after publishing them on its latest version ({@code
   * tableAfter=true}: active files minus the removed ones, plus the added ones, deletion vectors
   * applied).
   *
   * @param session the command's session
   * @param path the table root
   * @param ids the staged commits' ids
   * @param tableAfter whether to read the whole table after publishing instead of the added rows
   * @return the rows, in the table's (or the staged metadata's) columns
   * @throws io.filecommit.errors.FileCommitException the classes of {@link StagingStore#load}
   */
  public static Dataset<Row> read(SparkSession session, String path, List<String> ids, boolean tableAfter) {
    DeltaLog log = open(session, path, ids, false);
    List<StagedCommit> staged = load(log, ids, false);
    Snapshot snapshot = log.snapshot();
    Metadata md = snapshot.exists() ? snapshot.metadata() : null;
    Map<String, AddFile> files = new LinkedHashMap<>();
    if (tableAfter && snapshot.exists()) {
      files.putAll(snapshot.activeFiles());
    }
    Set<String> before = snapshot.exists() ? snapshot.activeFiles().keySet() : Set.of();
    Set<String> removed = new HashSet<>();
    for (StagedCommit c : staged) {
      md = c.metadata() != null ? c.metadata() : md;
      c.removeFiles().forEach(r -> removed.add(r.path()));
    }
    removed.forEach(files::remove);
    for (StagedCommit c : staged) {
      for (AddFile a : c.addFiles()) {
        if (tableAfter || !before.contains(a.path())) {
          files.put(a.path(), a);
        }
      }
    }
    if (md == null) {
      throw DeltaErrors.missingTable(log.tablePath().toString(), "READ STAGED");
    }
    Dataset<Row> rows = TableScan.read(session, log, md, files.values());
    return rows.drop(TableScan.FILE_COLUMN, TableScan.ROW_COLUMN);
  }

  private static DeltaLog open(SparkSession session, String path, List<String> ids, boolean publish) {
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    if (ids.isEmpty()) {
      throw ErrorClass.FILECOMMIT_INVALID_STAGED_COMMIT_IDS.error("No staged commit ids given for " + path,
          java.util.Map.of("stagedIds", ""));
    }
    if (new HashSet<>(ids).size() != ids.size()) {
      throw ErrorClass.FILECOMMIT_INVALID_STAGED_COMMIT_IDS.error("Staged commit ids repeat: " + ids,
          java.util.Map.of("stagedIds", String.join(", ", ids)));
    }
    DeltaLog log = DeltaLog.forTable(session, path);
    if (publish) {
      StagingStore.sweepWhenDue(log, System.currentTimeMillis());
    } else {
      StagingStore.sweepIfDue(log, System.currentTimeMillis());
    }
    return log;
  }

  private static List<StagedCommit> load(DeltaLog log, List<String> ids, boolean cached) {
    List<StagedCommit> out = new ArrayList<>();
    for (String id : ids) {
      StagedCommit c = StagingStore.load(log, id, cached);
      if (!c.tablePath().equals(log.tablePath().toString())) {
        throw ErrorClass.FILECOMMIT_STAGED_COMMIT_NOT_FOUND.error("Staged commit " + id + " belongs to "
            + c.tablePath() + ", not to " + log.tablePath(), Map.of("stagedId", id));
      }
      out.add(c);
    }
    return out;
  }

  private static long metric(Map<String, String> m, String key) {
    try {
      return m.containsKey(key) ? Long.parseLong(m.get(key)) : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
