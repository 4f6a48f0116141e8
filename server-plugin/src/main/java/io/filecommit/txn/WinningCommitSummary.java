package io.filecommit.txn;

import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.delta.actions.SetTransaction;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a concurrent commit did, read from its actions (Delta's {@code WinningCommitSummary}).
 *
 * @param version the commit's version
 * @param protocol its protocol action, or null
 * @param metadata its metaData action, or null
 * @param commitInfo its commitInfo, or null
 * @param dataAdds its {@code add}s with {@code dataChange=true}
 * @param removedPaths the paths of its {@code remove}s
 * @param txns appId -> version of its {@code txn} actions
 */
public record WinningCommitSummary(long version, Protocol protocol, Metadata metadata, CommitInfo commitInfo,
    List<AddFile> dataAdds, List<String> removedPaths, Map<String, Long> txns) {

  /**
   * Summarizes one commit.
   *
   * @param version its version
   * @param actions its actions
   * @return the summary
   */
  public static WinningCommitSummary of(long version, List<Action> actions) {
    Protocol protocol = null;
    Metadata metadata = null;
    CommitInfo info = null;
    List<AddFile> adds = new ArrayList<>();
    List<String> removes = new ArrayList<>();
    Map<String, Long> txns = new LinkedHashMap<>();
    for (Action a : actions) {
      if (a instanceof Protocol p) {
        protocol = p;
      } else if (a instanceof Metadata m) {
        metadata = m;
      } else if (a instanceof CommitInfo ci) {
        info = ci;
      } else if (a instanceof AddFile f && f.dataChange()) {
        adds.add(f);
      } else if (a instanceof RemoveFile r) {
        removes.add(r.path());
      } else if (a instanceof SetTransaction t) {
        txns.put(t.appId(), t.version());
      }
    }
    return new WinningCommitSummary(version, protocol, metadata, info, List.copyOf(adds), List.copyOf(removes),
        Map.copyOf(txns));
  }

  /** {@return whether the commit says it was a blind append} */
  public boolean isBlindAppend() {
    return commitInfo != null && Boolean.TRUE.equals(commitInfo.isBlindAppend());
  }

  /** {@return the commit's operation name, {@code ?} when unknown} */
  public String operation() {
    return commitInfo == null || commitInfo.operation() == null ? "?" : commitInfo.operation();
  }

  /** {@return the transaction id the commit carries, or null} */
  public String txnId() {
    return commitInfo == null ? null : commitInfo.txnId();
  }

  /** {@return the commit's in-commit timestamp, or null} */
  public Long inCommitTimestamp() {
    return commitInfo == null ? null : commitInfo.inCommitTimestamp();
  }

  /** {@return whether the commit removes files} */
  public boolean hasRemoves() {
    return !removedPaths.isEmpty();
  }

  /**
   * Whether this commit created the same table that {@code ours} (with {@code ourProtocol}) would
   * have created: same protocol, schema, partition columns and configuration, and no removes.
   *
   * @param ours the metadata this transaction would create the table with
   * @param ourProtocol the protocol it would create it with
   * @return true when the winning commit created that table
   */
  public boolean createdSameTable(Metadata ours, Protocol ourProtocol) {
    return ours != null && metadata != null && !hasRemoves() && ourProtocol != null
        && ourProtocol.equals(protocol)
        && metadata.schema().equals(ours.schema())
        && metadata.partitionColumns().equals(ours.partitionColumns())
        && metadata.configuration().equals(ours.configuration());
  }

  /**
   * The ids of the staged commits this commit published (its {@code commitInfo.operationParameters}
   * entry {@value #STAGED_COMMITS_PARAMETER}, a JSON array of strings); empty when none.
   *
   * @return the ids
   */
  public java.util.Set<String> stagedCommitIds() {
    if (commitInfo == null || commitInfo.operationParameters() == null) {
      return java.util.Set.of();
    }
    Object value = commitInfo.operationParameters().get(STAGED_COMMITS_PARAMETER);
    if (!(value instanceof String json)) {
      return java.util.Set.of();
    }
    try {
      java.util.Set<String> ids = new java.util.HashSet<>();
      io.filecommit.delta.actions.Actions.MAPPER.readTree(json).forEach(n -> ids.add(n.asText()));
      return ids;
    } catch (java.io.IOException e) {
      return java.util.Set.of();
    }
  }

  /** The operation parameter that names the staged commits a commit published. */
  public static final String STAGED_COMMITS_PARAMETER = "stagedCommits";
}
