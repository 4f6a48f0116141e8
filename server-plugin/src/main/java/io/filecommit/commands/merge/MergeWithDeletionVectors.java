package io.filecommit.commands.merge;

import io.filecommit.txn.CommandResult;
import io.filecommit.commands.MarkedRows;
import io.filecommit.commands.RowLevelChange;
import io.filecommit.commands.RowLevelOutput;
import io.filecommit.read.TableScan;
import io.filecommit.delta.actions.AddFile;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.functions;
import org.apache.spark.util.LongAccumulator;

/**
 * MERGE on a table that takes deletion vectors (Delta 3's {@code ClassicMergeExecutor} with {@code
 * shouldWriteDeletionVectors}; protocol "Deletion Vectors"): the target rows a MATCHED or NOT
 * MATCHED BY SOURCE clause updates or deletes are marked in new DVs of their files ({@link
 * MarkedRows}, built on the executors); only the updated rows and the inserted rows are written to
 * new files, no unchanged row is copied. A file none of whose rows is changed is not touched.
 *
 * <ol>
 *   <li><b>Mark.</b> The candidate target rows joined with the source (inner, or left outer with
 *       NOT MATCHED BY SOURCE clauses), one row per target row with how many source rows matched
 *       it and whether a clause changes it (the first clause whose condition holds is an update or
 *       a delete). A target row matched by several source rows is refused ({@code
 *       DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE}, Delta's rule as in {@link
 *       MergeIntoCommand}) before any DV is written; the changed rows are marked.
 *   <li><b>Write.</b> The marked rows, read back through the new DVs ({@link MarkedRows#rows}),
 *       joined with the source again go through the clauses: the updated rows are written, deleted
 *       ones dropped, and with the change data feed on the {@code update_preimage} / {@code
 *       update_postimage} / {@code delete} change rows written with them. Source rows that match no
 *       candidate target row go through the NOT MATCHED clauses (insert).
 * </ol>
 *
 * The commit removes each touched file's (path, old DV) and adds it back with its new DV (or only
 * removes it when no row is left), as Delta's DELETE and UPDATE with DVs; its metrics carry Delta's
 * {@code numTargetDeletionVectorsAdded} / {@code Removed} / {@code Updated}.
 */
final class MergeWithDeletionVectors {
  private MergeWithDeletionVectors() {}

  /**
   * What {@link MergeIntoCommand} prepared.
   *
   * @param candidates the candidate target files (pruned by partition values and statistics)
   * @param target their rows, aliased {@code alias}, with {@link TableScan#FILE_COLUMN} and
   *     {@link TableScan#ROW_COLUMN}
   * @param source the materialized source, aliased, with its presence column
   * @param alias the target's alias
   * @param on the ON condition
   * @param clauses the WHEN clauses
   * @param targetOutputs per joined target row, the array of output rows of the first applicable
   *     clause (a copy of the row when none applies)
   * @param insertOutputs per source row, the array of inserted rows, or null without NOT MATCHED clauses
   * @param present true on joined rows that have a source row
   * @param hasMatched whether there are MATCHED clauses
   * @param hasBySource whether there are NOT MATCHED BY SOURCE clauses
   * @param multipleAllowed whether a target row may match several source rows
   */
  record Plan(List<AddFile> candidates, Dataset<Row> target, Dataset<Row> source, String alias, Column on, List<MergeClause> clauses,
      Column targetOutputs, Column insertOutputs, Column present, boolean hasMatched, boolean hasBySource,
      boolean multipleAllowed) {}

  /**
   * Runs the merge with deletion vectors.
   *
   * @param change the open change, candidates registered
   * @param p the prepared plan
   * @param options Spark Parquet writer options
   * @return what was committed
   * @throws io.filecommit.errors.FileCommitException {@code
   *     DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE}, the table's constraint classes,
   *     conflict classes; nothing is left behind (DV files are deleted when the commit does not land)
   */
  static CommandResult run(RowLevelChange change, Plan p, Map<String, String> options) {
    Column changes = functions.lit(false);
    for (MergeClause c : p.clauses()) {
      if (c.kind() == MergeClause.Kind.NOT_MATCHED_INSERT) {
        continue;
      }
      Column when = c.kind().matched() ? p.present() : functions.not(p.present());
      if (c.condition() != null) {
        when = when.and(functions.coalesce(c.condition(), functions.lit(false)));
      }
      changes = changes.or(when); // every MATCHED / BY SOURCE clause updates or deletes
    }
    Dataset<Row> joined = p.target().join(p.source(), p.on(), p.hasBySource() ? "left_outer" : "inner");
    Dataset<Row> perRow = joined.groupBy(functions.col(TableScan.FILE_COLUMN), functions.col(TableScan.ROW_COLUMN))
        .agg(functions.count(functions.when(p.present(), functions.lit(1))).as("n"),
            functions.max(changes.cast("int")).as("changed"));
    boolean check = p.hasMatched() && !p.multipleAllowed();
    if (check) {
      perRow = perRow.persist(org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK());
    }
    MarkedRows marked;
    try {
      if (check) {
        List<Row> several = perRow.filter(functions.col("n").gt(1)).select(TableScan.FILE_COLUMN).limit(1).collectAsList();
        if (!several.isEmpty()) {
          throw MergeIntoCommand.multipleMatches(change, several.get(0).getString(0));
        }
      }
      Dataset<Row> marks = perRow.filter(functions.col("changed").equalTo(1))
          .select(functions.col(TableScan.FILE_COLUMN), functions.col(TableScan.ROW_COLUMN));
      marked = MarkedRows.mark(change, p.candidates(), () -> marks);
    } finally {
      if (check) {
        perRow.unpersist();
      }
    }

    Dataset<Row> out = null;
    if (!marked.files().isEmpty()) {
      Dataset<Row> rows = marked.rows(change).as(p.alias()).join(p.source(), p.on(), "left_outer");
      if (p.multipleAllowed()) {
        rows = rows.dropDuplicates(new String[] {TableScan.FILE_COLUMN, TableScan.ROW_COLUMN});
      }
      out = rows.select(functions.explode(p.targetOutputs()).as(RowLevelOutput.OUT));
    }
    if (p.insertOutputs() != null) {
      Dataset<Row> inserts = p.source().join(p.target(), p.on(), "left_anti")
          .select(functions.explode(p.insertOutputs()).as(RowLevelOutput.OUT));
      out = out == null ? inserts : out.union(inserts);
    }
    LongAccumulator[] counters = RowLevelOutput.counters(change.session, "MERGE");
    Dataset<Row> toWrite = out == null ? null : change.output().finish(out, counters);
    return change.writeAndCommit(toWrite, marked, false, options, MergeIntoCommand.operation(p.on(), p.clauses()),
        MergeIntoCommand.metrics(counters));
  }
}
