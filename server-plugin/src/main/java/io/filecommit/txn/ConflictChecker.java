package io.filecommit.txn;

import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.schema.PartitionPredicates;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.classic.SparkSession;

/**
 * Decides whether a transaction that lost a version race to another commit may retry at the next
 * version (protocol "Conflict detection"; Delta's {@code ConflictChecker}, one method per rule with
 * Delta's names). Checked in this order against the winning commit:
 *
 * <ol>
 *   <li>a {@code protocol} action -> {@code DELTA_PROTOCOL_CHANGED};
 *   <li>a {@code metaData} action -> {@code DELTA_METADATA_CHANGED};
 *   <li>data-changing {@code add}s that this transaction should have read (it read the whole table,
 *       or a partition predicate they satisfy) -> {@code DELTA_CONCURRENT_APPEND}. Under {@code
 *       WriteSerializable} (the default) the adds of blind appends do not count unless this
 *       transaction changes metadata; under {@code Serializable} they all do;
 *   <li>a {@code remove} of a file this transaction read -> {@code DELTA_CONCURRENT_DELETE_READ};
 *   <li>a {@code remove} of a file this transaction removes -> {@code DELTA_CONCURRENT_DELETE_DELETE};
 *   <li>a {@code txn} of an application this transaction commits: a version at least ours means
 *       the same write already landed; a lower one -> {@code DELTA_CONCURRENT_TRANSACTION}.
 * </ol>
 *
 * A blind append reads nothing, so it passes everything but 1, 2 and 6: it lands through
 * concurrent appends and compactions ({@code remove} + {@code add} with {@code dataChange=false}).
 *
 * <p>Public for its records only, which a publish of staged commits builds (one {@link Reader}
 * per staged commit); the rules run inside {@link OptimisticTransaction}.
 */
public final class ConflictChecker {
  /**
   * What the transaction read and writes (Delta's {@code CurrentTransactionInfo}: {@code
   * readPredicates}, {@code readFiles}, {@code readWholeTable}, {@code readAppIds}; the isolation
   * level, which Delta passes beside it).
   *
   * @param metadataChanged whether it commits protocol or metadata
   * @param readWholeTable whether it read every file (overwrite)
   * @param readPredicates partition predicates it read (replaceWhere, the partition part of a
   *     row-level change's condition)
   * @param readFiles log paths of the files it read
   * @param removedFiles log paths of the files it removes
   * @param txns appId -> txn version of the {@code txn} actions it commits
   * @param isolationLevel {@code Serializable} or {@code WriteSerializable}
   */
  public record ReadState(boolean metadataChanged, boolean readWholeTable, List<ReadPredicate> readPredicates,
      Set<String> readFiles, Set<String> removedFiles, Map<String, Long> txns, String isolationLevel) {}

  /**
   * A predicate over partition columns that a transaction read (Delta's {@code
   * DeltaTableReadPredicate}).
   *
   * @param predicate the predicate
   * @param alias the table's name in it ({@code t.col}), or null
   */
  public record ReadPredicate(Column predicate, String alias) {}

  /**
   * What one transaction that takes part in a commit read: its read version and what it read. A
   * commit has one reader, a publish of staged commits one per staged commit.
   *
   * @param readVersion the version it read (-1: the table did not exist)
   * @param state what it read and removes
   */
  public record Reader(long readVersion, ConflictChecker.ReadState state) {}

  private final SparkSession session;
  private final Metadata metadata;
  private final ReadState ours;
  private final WinningCommitSummary winner;
  private final String table;

  /**
   * @param session Spark session (partition predicates are evaluated by Spark)
   * @param metadata the table metadata the transaction read
   * @param ours what the transaction read and writes
   * @param winner the commit that took the version
   * @param table table path, for messages
   */
  ConflictChecker(SparkSession session, Metadata metadata, ReadState ours, WinningCommitSummary winner, String table) {
    this.session = session;
    this.metadata = metadata;
    this.ours = ours;
    this.winner = winner;
    this.table = table;
  }

  /**
   * Applies every rule.
   *
   * @param winnerCreatedOurTable whether the winner created the same table this transaction would
   *     have created (same schema, partitioning, configuration and protocol): its protocol and
   *     metadata are then ours, and rules 1 and 2 do not apply
   * @return true when the winner already committed this transaction's {@code txn} (the write must
   *     not be committed again); false: retry at the next version
   * @throws io.filecommit.errors.FileCommitException with the conflict's class
   */
  boolean check(boolean winnerCreatedOurTable) {
    if (!winnerCreatedOurTable) {
      checkProtocolCompatibility();
      checkNoMetadataUpdates();
    }
    checkForAddedFilesThatShouldHaveBeenReadByCurrentTxn();
    checkForDeletedFilesAgainstCurrentTxnReadFiles();
    checkForDeletedFilesAgainstCurrentTxnDeletedFiles();
    return checkForUpdatedApplicationTransactionIdsThatCurrentTxnDependsOn();
  }

  private void checkProtocolCompatibility() {
    if (winner.protocol() != null) {
      throw conflict(ErrorClass.DELTA_PROTOCOL_CHANGED, "the protocol was changed", "PROTOCOL");
    }
  }

  private void checkNoMetadataUpdates() {
    if (winner.metadata() != null) {
      throw conflict(ErrorClass.DELTA_METADATA_CHANGED, "the metadata was changed", "METADATA");
    }
  }

  private void checkForAddedFilesThatShouldHaveBeenReadByCurrentTxn() {
    boolean countBlind = !TableConfig.IsolationLevel.WRITE_SERIALIZABLE.equals(ours.isolationLevel())
        || ours.metadataChanged();
    List<AddFile> relevant = winner.isBlindAppend() && !countBlind ? List.of() : winner.dataAdds();
    if (relevant.isEmpty()) {
      return;
    }
    if (ours.readWholeTable()) {
      throw conflict(ErrorClass.DELTA_CONCURRENT_APPEND, "files were added to the table by " + winner.operation()
          + ", which this write read", relevant.get(0).path());
    }
    for (ReadPredicate predicate : ours.readPredicates()) {
      Set<String> hit = PartitionPredicates.matching(session, metadata, relevant, predicate.predicate(),
          predicate.alias());
      if (!hit.isEmpty()) {
        throw conflict(ErrorClass.DELTA_CONCURRENT_APPEND, "files were added by " + winner.operation()
            + " to partitions this write read (" + predicate.predicate() + ")", hit.iterator().next());
      }
    }
  }

  private void checkForDeletedFilesAgainstCurrentTxnReadFiles() {
    for (String r : winner.removedPaths()) {
      if (ours.readFiles().contains(r)) {
        throw conflict(ErrorClass.DELTA_CONCURRENT_DELETE_READ, "a file this write read was removed by "
            + winner.operation(), r);
      }
    }
  }

  private void checkForDeletedFilesAgainstCurrentTxnDeletedFiles() {
    for (String r : winner.removedPaths()) {
      if (ours.removedFiles().contains(r)) {
        throw conflict(ErrorClass.DELTA_CONCURRENT_DELETE_DELETE, "a file this write removes was removed by "
            + winner.operation(), r);
      }
    }
  }

  private boolean checkForUpdatedApplicationTransactionIdsThatCurrentTxnDependsOn() {
    for (Map.Entry<String, Long> t : ours.txns().entrySet()) {
      Long theirs = winner.txns().get(t.getKey());
      if (theirs != null) {
        if (theirs >= t.getValue()) {
          return true;
        }
        throw conflict(ErrorClass.DELTA_CONCURRENT_TRANSACTION, "application '" + t.getKey()
            + "' committed txn version " + theirs, t.getKey());
      }
    }
    return false;
  }

  private RuntimeException conflict(ErrorClass cls, String what, String detail) {
    return DeltaErrors.conflict(cls, what, winner.version(), table, detail);
  }

  /**
   * Judges this transaction's domain metadata against a concurrent commit.
   *
   * @param ours the domain metadata this transaction commits
   * @param winner the concurrent commit's actions
   * @param version the concurrent commit's version
   * @param table the table path, for messages
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_CONCURRENT_TRANSACTION} when the
   *     winner wrote a domain this transaction writes
   */
  static void checkDomains(List<DomainMetadata> ours, List<Action> winner, long version, String table) {
    if (ours.isEmpty()) {
      return;
    }
    for (Action a : winner) {
      if (a instanceof DomainMetadata d && ours.stream().anyMatch(o -> o.domain().equals(d.domain()))) {
        throw DeltaErrors.conflict(ErrorClass.DELTA_CONCURRENT_TRANSACTION, "a conflicting metadata domain "
            + d.domain() + " was committed", version, table, d.domain());
      }
    }
  }

  /**
   * Whether a concurrent commit already published the staged commits being published (their ids
   * in its {@code commitInfo.operationParameters.stagedCommits}, {@link
   * WinningCommitSummary#stagedCommitIds}).
   *
   * @param winner the concurrent commit
   * @param stagedIds ids of the staged commits being published (empty for a plain commit)
   * @param table the table path, for messages
   * @return true when it published exactly them (nothing more must be committed)
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_PUBLISHED}
   *     when it published some of them together with others
   */
  static boolean publishedBy(WinningCommitSummary winner, Set<String> stagedIds, String table) {
    if (stagedIds.isEmpty()) {
      return false;
    }
    Set<String> theirs = winner.stagedCommitIds();
    if (theirs.equals(stagedIds)) {
      return true;
    }
    for (String id : stagedIds) {
      if (theirs.contains(id)) {
        throw ErrorClass.FILECOMMIT_STAGED_COMMIT_PUBLISHED.error("Staged commit " + id + " of " + table
            + " was published by version " + winner.version() + " together with other staged commits "
            + theirs + "; nothing was committed", Map.of("stagedId", id, "version", Long.toString(winner.version())));
      }
    }
    return false;
  }
}
