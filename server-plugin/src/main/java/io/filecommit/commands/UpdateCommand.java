package io.filecommit.commands;

import io.filecommit.delta.IdentityColumns;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.files.TransactionalWrite;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.Operation;
import io.filecommit.txn.RowMetrics;
import io.filecommit.txn.TransactionId;
import io.filecommit.txn.staging.StageRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;

/**
 * {@code UPDATE table SET column = value, ... [WHERE condition]} as one table version (Delta's
 * {@code UpdateCommand}, a caller of {@code TransactionalWrite.writeFiles};
 * protocol "Add File and Remove File", "Change Data Files").
 *
 * <p>The candidate files (partition-pruned) are scanned once to find the files holding matching
 * rows; only those are rewritten, every matching row with the assigned values (cast to the column
 * types; generated columns that are not assigned computed from the new values) and every other
 * row copied. With the change data feed on, each updated row also gives an {@code
 * update_preimage} and an {@code update_postimage} change row, written in the same pass. The
 * table's constraints hold for every written row. Rows whose condition is NULL are not updated. On
 * a table that takes deletion vectors, the old rows are marked deleted in their files' DVs
 * ({@link MarkedRows}, built on the executors) and only the updated rows are written (as Delta
 * does), no row is copied: the rows written are the rows the new DVs mark, read back through them,
 * so the condition is evaluated once per row. Non-deterministic conditions and assignments are
 * refused before anything is written, as Spark refuses them ({@code
 * INVALID_NON_DETERMINISTIC_EXPRESSIONS}). Refused on append-only tables.
 */
public final class UpdateCommand {
  private UpdateCommand() {}

  /**
   * Runs the update.
   *
   * @param session Spark session
   * @param path table root
   * @param assignments table column (case-insensitive) -> new value, evaluated on the row before
   *     the update; at least one
   * @param condition the rows to update, or null for every row
   * @param options Spark Parquet writer options for rewritten files
   * @param txnId application transaction of an idempotent change, or null
   * @param stage when not null, the commit is staged ({@link CommandResult#staged()}), not published
   * @return what was committed; {@code committed=false} when {@code txnId} was already applied or
   *     no row matched (and no {@code txnId} was given); row metrics: updated and copied rows
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} without
   *     assignments, {@code DELTA_MERGE_UNRESOLVED_EXPRESSION} for an unknown or twice-assigned
   *     column, {@code DELTA_MISSING_DELTA_TABLE}, {@code DELTA_CANNOT_MODIFY_APPEND_ONLY}, {@code
   *     INVALID_NON_DETERMINISTIC_EXPRESSIONS} for a non-deterministic condition or value, the
   *     table's constraint classes, conflict classes; Spark's analysis errors for expressions
   *     that do not resolve
   */
  public static CommandResult run(SparkSession session, String path, Map<String, Column> assignments,
      Column condition, Map<String, String> options, TransactionId txnId,
      StageRequest stage) {
    if (assignments.isEmpty()) {
      throw DeltaErrors.malformed("UPDATE of " + path + " needs at least one assignment");
    }
    RowLevelChange change = RowLevelChange.open(session, path, "UPDATE", txnId, true, stage);
    if (change.skipped()) {
      return change.nothingCommitted();
    }
    Map<String, Column> set = change.assignments(assignments, "UPDATE");
    IdentityColumns.checkUpdate(new org.apache.spark.sql.types.StructType(change.columns()), set.keySet());
    Column matches = condition == null ? functions.lit(true) : functions.coalesce(condition, functions.lit(false));
    List<Column> before = change.targetValues(null);
    List<Column> after = new ArrayList<>();
    Set<String> recompute = new HashSet<>();
    for (StructField f : change.columns()) {
      Column v = set.get(f.name());
      after.add(v != null ? v : DMLUtils.ref(null, f.name()));
      if (v == null && change.isGenerated(f.name())) {
        recompute.add(f.name());
      }
    }
    // Resolve every expression before any work; refuse non-deterministic ones.
    Dataset<Row> empty = change.scan(List.of());
    DMLUtils.requireDeterministic(empty.filter(matches), ErrorClass.INVALID_NON_DETERMINISTIC_EXPRESSIONS,
        "the condition of UPDATE");
    DMLUtils.requireDeterministic(empty.select(set.values().toArray(new Column[0])),
        ErrorClass.INVALID_NON_DETERMINISTIC_EXPRESSIONS, "the assignments of UPDATE");
    empty.filter(matches).select(after.toArray(new Column[0]));

    RowLevelChange.Candidates candidates = change.candidates(condition, null);
    String predicate = DMLUtils.sql(condition);
    if (change.usesDeletionVectors(candidates.files())) {
      // Deletion vectors: the old rows are marked deleted in their files, only the updated rows are
      // written: the rows the new DVs mark, read back through them (one decision per row).
      MarkedRows marked = change.markRows(candidates.files(), matches);
      Dataset<Row> out = null;
      if (!marked.files().isEmpty()) {
        Dataset<Row> matched = marked.rows(change);
        out = change.cdf
            ? change.output().finish(matched.select(functions.explode(RowLevelOutput.array(change.output().updated(before, after, recompute)))
                .as(RowLevelOutput.OUT)), null)
            : change.output().updatedInPlace(matched, functions.lit(true), after, recompute);
      }
      RowMetrics metrics = new RowMetrics(0, marked.count(), 0, 0);
      return change.writeAndCommit(out, marked, true, options,
          stats -> new Operation.Update(predicate, stats), () -> metrics);
    }
    RowLevelChange.Touched touched = change.touched(candidates.files(), matches);
    List<AddFile> rewritten = touched.files();
    Dataset<Row> rows = null;
    if (!rewritten.isEmpty()) {
      Dataset<Row> scan = change.scan(rewritten);
      if (change.cdf) {
        Column outputs = functions.when(matches, RowLevelOutput.array(change.output().updated(before, after, recompute)))
            .otherwise(RowLevelOutput.array(change.output().copied(before)));
        rows = change.output().finish(scan.select(functions.explode(outputs).as(RowLevelOutput.OUT)), null);
      } else {
        rows = change.output().updatedInPlace(scan, matches, after, recompute);
      }
    }
    RowMetrics metrics = new RowMetrics(0, touched.matched(), 0, touched.others());
    return change.writeAndCommit(rows, rewritten, List.of(), options, stats -> new Operation.Update(predicate, stats),
        () -> metrics);
  }
}
