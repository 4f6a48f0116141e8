package io.filecommit.connect;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import io.filecommit.txn.CommandResult;
import io.filecommit.proto.v1.CommitSummary;
import io.filecommit.proto.v1.FileAction;
import io.filecommit.proto.v1.FileActionBatch;
import io.filecommit.proto.v1.StagedCommit;
import io.filecommit.proto.v1.WriteResponse;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.RemoveFile;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.spark.connect.proto.ExecutePlanResponse;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.service.ExecuteHolder;

/**
 * The response stream of a command: each contract message goes back to the client packed in
 * {@code ExecutePlanResponse.extension}, with the session ids Spark Connect's client checks (Spark's
 * {@code CommandPlugin} contract; {@code ExecuteHolder.responseObserver}). A table command answers
 * with {@code FileActionBatch} messages of at most {@link #MAX_ACTIONS_PER_MESSAGE} actions or
 * about {@link #MAX_BYTES_PER_MESSAGE} bytes each, then one {@code CommitSummary}; nothing is sent
 * before the command finished.
 */
public final class ResponseStream {
  /** Most file actions in one response message. */
  public static final int MAX_ACTIONS_PER_MESSAGE = 1000;
  /** Soft limit of one response message's serialized size, bytes. */
  public static final int MAX_BYTES_PER_MESSAGE = 4 << 20;

  private ResponseStream() {}

  /**
   * A sink for the responses of the command the planner is running.
   *
   * @param planner the session's planner for this ExecutePlan call
   * @param <M> the contract message type (e.g. {@code WriteResponse}, {@code WriteBatchResponse})
   * @return a consumer that sends each message at once, in order
   * @throws IllegalStateException when the command does not run through ExecutePlan (no response
   *     stream to write to)
   */
  public static <M extends Message> Consumer<M> of(SparkConnectPlanner planner) {
    if (planner.executeHolderOpt().isEmpty()) {
      throw new IllegalStateException("filecommit commands must run through ExecutePlan (no response stream)");
    }
    ExecuteHolder holder = planner.executeHolderOpt().get();
    return msg -> holder.responseObserver().onNext(ExecutePlanResponse.newBuilder()
        .setSessionId(holder.sessionHolder().sessionId())
        .setServerSideSessionId(holder.sessionHolder().serverSessionId())
        .setExtension(Any.pack(msg))
        .build());
  }

  /**
   * Streams the file actions of a table command's result in bounded batches, then its summary.
   *
   * @param result what the command committed
   * @param staged whether the command was asked to stage: the last message is then a {@code
   *     StagedCommit} (with an empty id when nothing was staged) instead of the summary
   * @param out receives each response in order
   */
  static void respond(CommandResult result, boolean staged, Consumer<WriteResponse> out) {
    respond(result, staged, out, Map.of());
  }

  /**
   * As {@link #respond(CommandResult, boolean, Consumer)}, with the commit's {@code
   * commitInfo.operationMetrics} in the summary's {@code operation_metrics} (OPTIMIZE, RESTORE).
   *
   * @param result what the command committed
   * @param staged whether the command was asked to stage
   * @param out receives each response in order
   * @param operationMetrics metric name -> value
   */
  static void respond(CommandResult result, boolean staged, Consumer<WriteResponse> out,
      Map<String, String> operationMetrics) {
    List<Object> all = new ArrayList<>(result.addFiles());
    all.addAll(result.cdcFiles());
    all.addAll(result.removeFiles());
    FileActionBatch.Builder batch = FileActionBatch.newBuilder();
    int bytes = 0;
    for (Object a : all) {
      FileAction action = ProtoConversions.toProto(a);
      int size = action.getSerializedSize();
      if (batch.getActionsCount() > 0
          && (batch.getActionsCount() >= MAX_ACTIONS_PER_MESSAGE || bytes + size > MAX_BYTES_PER_MESSAGE)) {
        out.accept(WriteResponse.newBuilder().setActions(batch).build());
        batch = FileActionBatch.newBuilder();
        bytes = 0;
      }
      batch.addActions(action);
      bytes += size;
    }
    if (batch.getActionsCount() > 0) {
      out.accept(WriteResponse.newBuilder().setActions(batch).build());
    }
    CommitSummary summary = summary(result).toBuilder().putAllOperationMetrics(operationMetrics).build();
    if (!staged) {
      out.accept(WriteResponse.newBuilder().setSummary(summary).build());
      return;
    }
    // Staged: nothing is committed yet, whatever the command's own result says.
    StagedCommit.Builder b = StagedCommit.newBuilder().setTablePath(result.tablePath())
        .setReadVersion(result.version()).setSummary(summary.toBuilder().setCommitted(false));
    io.filecommit.txn.CommitStager.Staged s = result.staged();
    if (s != null) {
      b.setId(s.id()).setReadVersion(s.readVersion()).setCreatedTime(s.createdTime())
          .setExpirationTime(s.expirationTime()).setOperation(s.operation());
      if (s.stagedBy() != null) {
        b.setStagedBy(s.stagedBy());
      }
      if (s.protocol() != null) {
        b.setProtocolJson(io.filecommit.delta.actions.Actions.toJson(s.protocol()));
      }
      if (s.metadata() != null) {
        b.setMetadataJson(io.filecommit.delta.actions.Actions.toJson(s.metadata()));
      }
    }
    out.accept(WriteResponse.newBuilder().setStaged(b).build());
  }

  /** The contract's summary of a result. */
  private static CommitSummary summary(CommandResult result) {
    return CommitSummary.newBuilder()
        .setVersion(result.version())
        .setCommitted(result.committed())
        .setTablePath(result.tablePath())
        .setNumAddFiles(result.addFiles().size())
        .setNumRemoveFiles(result.removeFiles().size())
        .setNumOutputRows(result.numOutputRows())
        .setNumOutputBytes(result.numOutputBytes())
        .setDurationMs(result.durationMs())
        .setAttempts(result.attempts())
        .setNumCdcFiles(result.cdcFiles().size())
        .setNumDeletedRows(result.rowMetrics().deleted())
        .setNumUpdatedRows(result.rowMetrics().updated())
        .setNumInsertedRows(result.rowMetrics().inserted())
        .setNumCopiedRows(result.rowMetrics().copied())
        .putAllObjectStoreRequests(ObjectStoreRequests.counts()).build();
  }
}
