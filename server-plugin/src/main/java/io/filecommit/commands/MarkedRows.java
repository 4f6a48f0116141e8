package io.filecommit.commands;

import io.filecommit.read.TableScan;
import io.filecommit.deletionvectors.DeletionVectorBitmapGenerator;
import io.filecommit.deletionvectors.DeletionVectorStore;
import io.filecommit.deletionvectors.RowIndexFilter;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.txn.InFlightWrites;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.functions;

/**
 * Pass 1 of a DELETE or UPDATE on a table that takes deletion vectors (Delta's {@code
 * DMLWithDeletionVectorsHelper}): the rows satisfying the condition are marked in new deletion
 * vectors built on the executors ({@link DeletionVectorBitmapGenerator}); the driver gets one
 * descriptor per touched file. The new DVs are the command's one decision per row: whatever else
 * the command writes for these rows (UPDATE's new rows, DELETE's {@code delete} change rows) is read
 * back through them ({@link #rows}), never by evaluating the condition again.
 *
 * <p>DV files carry a per-command token; the cleanup that deletes them is registered with the
 * transaction before the job runs ({@code OptimisticTransaction.onAbort}: never once the commit
 * landed), and files of failed or duplicate task attempts are deleted as soon as the job is done.
 *
 * @param files the touched files, in snapshot order: every one is removed (its current (path, DV)
 *     pair)
 * @param kept the same files that keep live rows, with their new DV (the {@code add}s)
 * @param count rows newly marked (deleted or updated)
 * @param dvs log path -> new DV of the files in {@code kept}
 * @param everyRow log paths of the touched files whose every row is now marked (only removed)
 */
public record MarkedRows(List<AddFile> files, List<AddFile> kept, long count, Map<String, DeletionVectorDescriptor> dvs,
    Set<String> everyRow) {

  /**
   * Marks the rows of {@code candidates} that satisfy {@code matches} in new DVs, one DV file per
   * task under the table root.
   *
   * @param change the change (its transaction gets the DV files' cleanup)
   * @param candidates files to scan; each with a trustworthy {@code numRecords}
   * @param matches the condition, NULL treated as false; deterministic
   * @return the touched files and their new DVs; no file when no row matched
   * @throws RuntimeException when the job fails; the transaction is aborted (DV files deleted) first
   */
  static MarkedRows mark(RowLevelChange change, List<AddFile> candidates, Column matches) {
    return mark(change, candidates, () -> change.scan(candidates).filter(matches)
        .select(functions.col(TableScan.FILE_COLUMN), functions.col(TableScan.ROW_COLUMN)));
  }

  /**
   * Marks the given rows of {@code candidates} in new DVs, one DV file per task under the table
   * root (MERGE: the target rows a MATCHED or NOT MATCHED BY SOURCE clause updates or deletes).
   *
   * @param change the change (its transaction gets the DV files' cleanup)
   * @param candidates files the marks may name; each with a trustworthy {@code numRecords}
   * @param marks builds the rows to mark: column 0 a file's log path, column 1 the row's index in
   *     it; each pair at most once, none already deleted
   * @return the touched files and their new DVs; no file when no row is marked
   * @throws RuntimeException when the job fails; the transaction is aborted (DV files deleted) first
   */
  public static MarkedRows mark(RowLevelChange change, List<AddFile> candidates,
      java.util.function.Supplier<Dataset<Row>> marks) {
    String token = DeletionVectorStore.newToken();
    Path root = change.log.tablePath();
    InFlightWrites.register(root.toString()).protectToken(token);
    change.txn.onAbort(() -> DeletionVectorStore.sweep(change.log.fs(), root, token, Set.of()));
    List<DeletionVectorBitmapGenerator.Outcome> outcomes;
    try {
      outcomes = DeletionVectorBitmapGenerator.generate(change.session, marks.get(), candidates, root,
          change.log.conf(), token);
    } catch (RuntimeException | Error e) {
      change.txn.abort();
      throw e;
    }
    Map<String, DeletionVectorDescriptor> dvs = new HashMap<>();
    Set<String> everyRow = new HashSet<>();
    Set<String> referenced = new HashSet<>();
    long count = 0;
    for (DeletionVectorBitmapGenerator.Outcome o : outcomes) {
      count += o.newlyMarked();
      if (o.deletionVector() == null) {
        everyRow.add(o.path());
      } else {
        dvs.put(o.path(), o.deletionVector());
        referenced.add(o.dvFile());
      }
    }
    // Files of task attempts whose results were not taken (failed or duplicate attempts).
    DeletionVectorStore.sweep(change.log.fs(), root, token, referenced);
    Set<String> touched = new HashSet<>(dvs.keySet());
    touched.addAll(everyRow);
    List<AddFile> files = change.files(touched);
    List<AddFile> kept = new ArrayList<>();
    for (AddFile f : files) {
      DeletionVectorDescriptor dv = dvs.get(f.path());
      if (dv != null) {
        kept.add(DeletionVectorBitmapGenerator.withDeletionVector(f, dv));
      }
    }
    return new MarkedRows(files, kept, count, dvs, everyRow);
  }

  /**
   * Delta's deletion-vector metrics of this change ({@code DMLWithDeletionVectorsHelper}): per
   * touched file, a new DV where it had none is added, a new DV replacing one is updated, and a file
   * that had one and leaves the table whole removes it.
   *
   * @return {added, removed, updated}
   */
  public long[] deletionVectorCounts() {
    long added = 0;
    long removed = 0;
    long updated = 0;
    for (AddFile f : files) {
      boolean had = f.deletionVector() != null;
      boolean has = dvs.containsKey(f.path());
      if (has) {
        if (had) {
          updated++;
        } else {
          added++;
        }
      } else if (had) {
        removed++;
      }
    }
    return new long[] {added, removed, updated};
  }

  /**
   * The rows this pass marked, read back from the touched files through the new DVs: rows of the
   * current snapshot (earlier DVs applied) whose index is in the new DV, i.e. in (new DV minus old
   * DV), and every live row of a file marked whole. The condition is not evaluated again.
   *
   * @param change the change
   * @return the table's columns plus {@link TableScan#FILE_COLUMN} and {@link TableScan#ROW_COLUMN}
   */
  public Dataset<Row> rows(RowLevelChange change) {
    Dataset<Row> scan = change.scan(files);
    if (files.isEmpty()) {
      return scan;
    }
    return scan.filter(RowIndexFilter.keep(change.session, change.log.tablePath().toString(), change.log.conf(), dvs,
        everyRow, RowIndexFilter.Mode.KEEP_MARKED, functions.col(TableScan.FILE_COLUMN),
        functions.col(TableScan.ROW_COLUMN)));
  }
}
