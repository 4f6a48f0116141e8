package io.filecommit.txn;

import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.SetTransaction;
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
   * The one {@code commitInfo} of a transaction's commit; {@code userId} / {@code userName} are the
   * session's verified principal when the server authenticates its clients.
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
    String user = io.filecommit.security.Principals.of(txn.session()).map(io.filecommit.security.Principal::name)
        .orElse(null);
    return new CommitInfo(inCommitTimestamp, timestamp, user, user, op.name(), new LinkedHashMap<>(op.parameters()),
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

  /** {@return whether the actions only add files (data or change data): a blind append's} */
  static boolean onlyAdds(List<? extends FileAction> actions) {
    return actions.stream().allMatch(a -> a instanceof AddFile || a instanceof AddCDCFile);
  }
}
