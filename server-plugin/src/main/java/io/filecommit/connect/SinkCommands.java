package io.filecommit.connect;

import io.filecommit.proto.v1.BatchSummary;
import io.filecommit.proto.v1.SinkFileStatusBatch;
import io.filecommit.proto.v1.WriteBatchCommand;
import io.filecommit.proto.v1.WriteBatchResponse;
import io.filecommit.sink.BatchSinkWriter;
import java.util.List;
import java.util.function.Consumer;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.execution.streaming.sinks.SinkFileStatus;

/**
 * Serves a {@code WriteBatchCommand} (contract {@code sink.proto}) with {@link BatchSinkWriter}
 * and streams the batch's file statuses back as {@code WriteBatchResponse} messages: {@code
 * SinkFileStatusBatch}es of at most {@link #MAX_FILES_PER_MESSAGE} files, then one {@code
 * BatchSummary}.
 */
final class SinkCommands {
  /** Most file statuses in one response message. */
  static final int MAX_FILES_PER_MESSAGE = 1000;

  private SinkCommands() {}

  /**
   * Runs the command and streams the result; nothing is streamed before the batch was committed or
   * found committed.
   *
   * @param cmd the command
   * @param planner the session's planner (turns the input plan into a DataFrame, gives the stream)
   * @throws io.filecommit.errors.FileCommitException for a missing input, blank path, negative batch
   *     id and the other bad input {@link BatchSinkWriter#write} refuses, {@code DELTA_TABLE_NOT_FOUND}
   *     for a {@code table} that is not a Parquet table of the catalog, before anything is written
   * @throws IllegalStateException for a lost race on the batch id (see {@link BatchSinkWriter#write})
   */
  static void writeBatch(WriteBatchCommand cmd, SparkConnectPlanner planner) {
    java.util.Map<String, String> options = ServerSettings.options(planner.session(), cmd.getOptionsMap());
    String root = TableCommands.tablePath(cmd.getPath(), cmd.getTable(), planner.session(), true);
    BatchSinkWriter.checkArguments(root, cmd.getBatchId());
    String path = CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE, true);
    Consumer<WriteBatchResponse> out = ResponseStream.of(planner);
    BatchSinkWriter.Result result = BatchSinkWriter.write(planner.session(),
        CommandInput.dataFrame(planner, cmd.hasInput() ? cmd.getInput() : null, "WriteBatchCommand"), path,
        cmd.getBatchId(), cmd.getPartitionByList(), options);
    stream(result, out);
  }

  /**
   * Streams a result: file statuses in bounded messages, then the summary.
   *
   * @param result the batch write's outcome
   * @param out receives each response payload in order
   */
  static void stream(BatchSinkWriter.Result result, Consumer<WriteBatchResponse> out) {
    List<SinkFileStatus> files = result.files();
    for (int i = 0; i < files.size(); i += MAX_FILES_PER_MESSAGE) {
      SinkFileStatusBatch.Builder b = SinkFileStatusBatch.newBuilder();
      for (SinkFileStatus s : files.subList(i, Math.min(files.size(), i + MAX_FILES_PER_MESSAGE))) {
        b.addFiles(ProtoConversions.toProto(s));
      }
      out.accept(WriteBatchResponse.newBuilder().setFiles(b).build());
    }
    out.accept(WriteBatchResponse.newBuilder().setSummary(BatchSummary.newBuilder()
        .setBatchId(result.batchId())
        .setCommitted(result.committed())
        .setPath(result.path())
        .setLatestBatchId(result.latestBatchId())
        .setNumFiles(files.size())
        .setNumOutputBytes(result.numOutputBytes())
        .setDurationMs(result.durationMs())).build());
  }
}
