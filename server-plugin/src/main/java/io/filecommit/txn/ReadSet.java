package io.filecommit.txn;

import io.filecommit.delta.Snapshot;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.RemoveFile;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.sql.Column;

/**
 * What one transaction read, for the conflict rules (Delta's {@code OptimisticTransactionImpl}
 * fields {@code readPredicates}, {@code readFiles} and {@code readTheWholeTable}; protocol
 * "Optimistic Concurrency Control"): the whole table, or the partitions matching predicates and
 * the files they held; and whether every row was checked against constraints being added.
 * Not thread-safe: one per transaction.
 */
final class ReadSet {
  private boolean wholeTable;
  private boolean rowsChecked;
  private final List<ConflictChecker.ReadPredicate> predicates = new ArrayList<>();
  private final Set<String> files = new HashSet<>();

  /** Records that every active file of {@code snapshot} was read. */
  void readWholeTable(Snapshot snapshot) {
    wholeTable = true;
    snapshot.allFiles().forEach(f -> files.add(f.path()));
  }

  /** Records the partitions matching {@code predicate} (table alias {@code alias} or null), which held {@code matched}. */
  void readPartitions(Column predicate, String alias, Collection<String> matched) {
    predicates.add(new ConflictChecker.ReadPredicate(predicate, alias));
    files.addAll(matched);
  }

  /** Records that every row was read and checked against the constraints being added. */
  void markRowsChecked() {
    rowsChecked = true;
  }

  /** {@return whether {@link #markRowsChecked} was called} */
  boolean rowsChecked() {
    return rowsChecked;
  }

  /**
   * The read state the conflict checker judges a concurrent commit against.
   *
   * @param metadataChanged whether the transaction changes metadata, protocol or domains
   * @param actions the transaction's file actions (its removes are recorded)
   * @param txns appId -> version of its {@code txn} actions
   * @param isolationLevel the table's {@code delta.isolationLevel}
   * @return the state
   */
  ConflictChecker.ReadState state(boolean metadataChanged, List<? extends FileAction> actions, Map<String, Long> txns,
      String isolationLevel) {
    Set<String> removed = actions.stream().filter(a -> a instanceof RemoveFile).map(FileAction::path)
        .collect(Collectors.toSet());
    return new ConflictChecker.ReadState(metadataChanged, wholeTable, List.copyOf(predicates), Set.copyOf(files),
        removed, Map.copyOf(txns), isolationLevel);
  }
}
