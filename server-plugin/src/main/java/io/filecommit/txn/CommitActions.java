package io.filecommit.txn;

import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.SetTransaction;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The actions of one commit attempt of an {@link OptimisticTransaction}, in the order they are
 * written (protocol "Delta Log Entries"; Delta's {@code OptimisticTransaction.prepareCommit}):
 * {@code commitInfo} first (protocol "In-Commit Timestamps" needs it first), then the protocol and
 * metadata changes, the domain metadata ({@code domainMetadata} actions, protocol "Domain
 * Metadata"), the {@code txn} actions, and the file actions. Also judges domain metadata against a
 * concurrent commit, as Delta's {@code ConflictChecker.checkIfDomainMetadataConflict}: a domain
 * both commits write conflicts (the row tracking domain excepted, merged by {@link RowTracking}).
 */
final class CommitActions {
  private CommitActions() {}

  /**
   * The one {@code commitInfo} of a transaction's commit.
   *
   * @param txn the transaction
   * @param op what the commit does
   * @param inCommitTimestamp the in-commit timestamp (ms since epoch), or null
   * @param timestamp the commit's timestamp, ms since epoch
   * @param isolation the isolation level
   * @param blind whether the commit is a blind append
   * @return the action
   */
  static CommitInfo commitInfo(OptimisticTransaction txn, Operation op, Long inCommitTimestamp, long timestamp,
      String isolation, boolean blind) {
    return new CommitInfo(inCommitTimestamp, timestamp, op.name(), new LinkedHashMap<>(op.parameters()),
        txn.snapshot().exists() ? txn.snapshot().version() : null, isolation, blind, op.metrics().isEmpty() ? null
        : new LinkedHashMap<>(op.metrics()), CommitInfo.ENGINE + " Apache-Spark/" + txn.session().version(),
        txn.txnId, op.userMetadata());
  }

  /**
   * The lines of one commit attempt.
   *
   * @param info the commitInfo
   * @param protocol the new protocol, or null
   * @param metadata the new metadata, or null
   * @param domains the domain metadata the transaction commits (may be empty)
   * @param txns appId -> version of the {@code txn} actions
   * @param now the commit's timestamp, ms since epoch (the {@code txn} actions' lastUpdated)
   * @param files the file actions (and row tracking's domain metadata) of the attempt
   * @return the actions to write, in order
   */
  static List<Action> lines(CommitInfo info, Protocol protocol, Metadata metadata, List<DomainMetadata> domains,
      Map<String, Long> txns, long now, List<Action> files) {
    List<Action> lines = new ArrayList<>();
    lines.add(info);
    if (protocol != null) {
      lines.add(protocol);
    }
    if (metadata != null) {
      lines.add(metadata);
    }
    lines.addAll(domains);
    for (Map.Entry<String, Long> t : txns.entrySet()) {
      lines.add(new SetTransaction(t.getKey(), t.getValue(), now));
    }
    lines.addAll(files);
    return lines;
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
}
