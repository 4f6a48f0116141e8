package io.filecommit.commands;

import io.filecommit.delta.actions.AddFile;
import io.filecommit.errors.ErrorClass;
import io.filecommit.files.TransactionalWrite;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.Operation;
import io.filecommit.txn.RowMetrics;
import io.filecommit.txn.TransactionId;
import io.filecommit.txn.staging.StageRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;

/**
 * {@code DELETE FROM table [WHERE condition]} as one table version (Delta's {@code DeleteCommand}, a
 * caller of {@code TransactionalWrite.writeFiles}; protocol "Add File and
 * Remove File", "Change Data Files"):
 *
 * <ul>
 *   <li>no condition, or a condition on partition columns only: the matching files are removed
 *       whole, nothing is rewritten; with the change data feed on, their rows are written as
 *       {@code delete} change rows;
 *   <li>otherwise the candidate files (partition-pruned) are scanned once to find the files that
 *       hold matching rows and how many; only those are rewritten without the matching rows (and,
 *       with the change data feed on, the matching rows written as {@code delete} change rows in the
 *       same pass); their {@code remove}s and the new {@code add}s are committed together.
 * </ul>
 *
 * On a table that takes deletion vectors ({@code delta.enableDeletionVectors=true}), the matching
 * rows are marked deleted in their files' deletion vectors instead ({@link MarkedRows}, built on
 * the executors): each touched file is removed and added back with its new DV (or only removed when
 * no row is left); with the change data feed on, the {@code delete} change rows are the rows the
 * new DVs mark, read back through them (the condition is evaluated once). Rows whose condition is
 * NULL are kept (SQL semantics). A non-deterministic condition is refused before anything is
 * written, as Spark refuses it ({@code INVALID_NON_DETERMINISTIC_EXPRESSIONS}). Refused on
 * append-only tables.
 */
public final class DeleteCommand {
  private DeleteCommand() {}

  /**
   * Runs the delete.
   *
   * @param session Spark session
   * @param path table root
   * @param condition the rows to delete, or null for every row
   * @param options Spark Parquet writer options for rewritten files
   * @param txnId application transaction of an idempotent change, or null
   * @param stage when not null, the commit is staged ({@link CommandResult#staged()}), not published
   * @return what was committed; {@code committed=false} when {@code txnId} was already applied or
   *     no row matched (and no {@code txnId} was given); row metrics: deleted and copied rows
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MISSING_DELTA_TABLE}, {@code
   *     DELTA_CANNOT_MODIFY_APPEND_ONLY}, {@code INVALID_NON_DETERMINISTIC_EXPRESSIONS}, {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE}, conflict
   *     classes; Spark's analysis errors for a condition that does not resolve
   */
  public static CommandResult run(SparkSession session, String path, Column condition,
      Map<String, String> options, TransactionId txnId,
      StageRequest stage) {
    RowLevelChange change = RowLevelChange.open(session, path, "DELETE", txnId, true, stage);
    if (change.skipped()) {
      return change.nothingCommitted();
    }
    if (condition != null) {
      // Resolves the condition before any work, and refuses it when it is not deterministic.
      DMLUtils.requireDeterministic(change.scan(List.of()).filter(condition),
          ErrorClass.INVALID_NON_DETERMINISTIC_EXPRESSIONS, "the condition of DELETE");
    }
    RowLevelChange.Candidates candidates = change.candidates(condition, null);
    String predicate = DMLUtils.sql(condition);

    if (candidates.onPartitionsOnly()) {
      List<AddFile> removed = candidates.files();
      Dataset<Row> changes = null;
      if (change.cdf && !removed.isEmpty()) {
        changes = RowLevelOutput.withoutLocation(change.scan(removed))
            .withColumn(TransactionalWrite.CDC_TYPE_COLUMN, functions.lit("delete"));
      }
      long numDeleted = change.rowCount(removed);
      return change.writeAndCommit(changes, removed, List.of(), options, stats -> new Operation.Delete(predicate, stats),
          () -> new RowMetrics(numDeleted, 0, 0, 0));
    }

    Column matches = functions.coalesce(condition, functions.lit(false));
    if (change.usesDeletionVectors(candidates.files())) {
      // Deletion vectors: the matching rows are marked deleted in their files; nothing is rewritten.
      MarkedRows marked = change.markRows(candidates.files(), matches);
      Dataset<Row> changes = change.cdf && !marked.files().isEmpty()
          ? RowLevelOutput.withoutLocation(marked.rows(change))
              .withColumn(TransactionalWrite.CDC_TYPE_COLUMN, functions.lit("delete"))
          : null;
      RowMetrics metrics = new RowMetrics(marked.count(), 0, 0, 0);
      return change.writeAndCommit(changes, marked, false, options,
          stats -> new Operation.Delete(predicate, stats), () -> metrics);
    }
    RowLevelChange.Touched touched = change.touched(candidates.files(), matches);
    List<AddFile> rewritten = touched.files();
    Dataset<Row> rows = null;
    if (!rewritten.isEmpty()) {
      Dataset<Row> scan = RowLevelOutput.withoutLocation(change.scan(rewritten));
      rows = change.cdf
          ? scan.withColumn(TransactionalWrite.CDC_TYPE_COLUMN,
              functions.when(matches, functions.lit("delete")).otherwise(functions.lit(null).cast("string")))
          : scan.filter(functions.not(matches));
    }
    RowMetrics metrics = new RowMetrics(touched.matched(), 0, 0, touched.others());
    return change.writeAndCommit(rows, new ArrayList<>(rewritten), List.of(), options,
        stats -> new Operation.Delete(predicate, stats), () -> metrics);
  }
}
