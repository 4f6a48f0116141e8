package io.filecommit.sink;

import io.filecommit.plugin.ExtensionResponses;
import io.filecommit.plugin.FileCommitPlugin;
import io.filecommit.proto.v1.BatchSummary;
import io.filecommit.proto.v1.SinkFileStatusBatch;
import io.filecommit.proto.v1.WriteBatchCommand;
import io.filecommit.proto.v1.WriteBatchResponse;
import java.util.List;
import java.util.function.Consumer;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.execution.streaming.sinks.SinkFileStatus;

/**
 * Serves a {@code filecommit.v1.WriteBatchCommand} (contract proto/filecommit/v1/sink.proto): runs
 * {@link BatchSinkWriter#write} and streams the batch's file statuses back as {@code
 * WriteBatchResponse} messages ({@code SinkFileStatusBatch}es of at most {@link
 * #MAX_FILES_PER_MESSAGE} files, then one {@code BatchSummary}) in {@code
 * ExecutePlanResponse.extension} (reference spark-connect-plugins.md "The server side").
 */
public final class WriteBatchHandler {
  /** Most file statuses in one response message. */
  public static final int MAX_FILES_PER_MESSAGE = 1000;

  private WriteBatchHandler() {}

  /**
   * Runs the command and streams the result; nothing is streamed before the batch was committed or
   * found committed.
   *
   * @param cmd the command
   * @param planner the session's planner (turns the input plan into a DataFrame, gives the stream)
   * @throws IllegalArgumentException for a missing input, blank path, negative batch id and the
   *     other bad input {@link BatchSinkWriter#write} refuses, before anything is written
   * @throws IllegalStateException for a lost race on the batch id (see {@link BatchSinkWriter#write})
   *     or when the command does not run through ExecutePlan
   */
  public static void handle(WriteBatchCommand cmd, SparkConnectPlanner planner) {
    BatchSinkWriter.checkArguments(cmd.getPath(), cmd.getBatchId());
    Consumer<WriteBatchResponse> out = ExtensionResponses.of(planner);
    Dataset<Row> data = FileCommitPlugin.inputData(planner, cmd.hasInput() ? cmd.getInput() : null,
        "WriteBatchCommand");
    BatchSinkWriter.Result result = BatchSinkWriter.write(planner.session(), data, cmd.getPath(), cmd.getBatchId(),
        cmd.getPartitionByList(), cmd.getOptionsMap());
    stream(result, out);
  }

  /**
   * Streams a result: file statuses in bounded messages, then the summary.
   *
   * @param result the batch write's outcome
   * @param out receives each response payload in order
   */
  public static void stream(BatchSinkWriter.Result result, Consumer<WriteBatchResponse> out) {
    List<SinkFileStatus> files = result.files();
    for (int i = 0; i < files.size(); i += MAX_FILES_PER_MESSAGE) {
      SinkFileStatusBatch.Builder b = SinkFileStatusBatch.newBuilder();
      for (SinkFileStatus s : files.subList(i, Math.min(files.size(), i + MAX_FILES_PER_MESSAGE))) {
        b.addFiles(toProto(s));
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

  /** Contract form of a Spark sink log entry. */
  static io.filecommit.proto.v1.SinkFileStatus toProto(SinkFileStatus s) {
    return io.filecommit.proto.v1.SinkFileStatus.newBuilder()
        .setPath(s.path())
        .setSize(s.size())
        .setIsDir(s.isDir())
        .setModificationTime(s.modificationTime())
        .setBlockReplication(s.blockReplication())
        .setBlockSize(s.blockSize())
        .setAction(s.action())
        .build();
  }
}
