package io.filecommit.connect;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.filecommit.txn.CommandResult;
import io.filecommit.errors.ClientExceptions;
import io.filecommit.errors.FileCommitException;
import io.filecommit.proto.v1.AbortStagedCommand;
import io.filecommit.proto.v1.DeleteCommand;
import io.filecommit.proto.v1.GetStagedCommand;
import io.filecommit.proto.v1.PublishStagedCommand;
import io.filecommit.proto.v1.ReadStagedCommand;
import io.filecommit.proto.v1.StageFilesCommand;
import io.filecommit.proto.v1.StagingResponse;
import io.filecommit.proto.v1.MergeCommand;
import io.filecommit.proto.v1.SetTablePropertiesCommand;
import io.filecommit.proto.v1.UpdateCommand;
import io.filecommit.proto.v1.WriteBatchCommand;
import io.filecommit.proto.v1.WriteCommand;
import io.filecommit.txn.InFlightWrites;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.plugin.CommandPlugin;

/**
 * The Spark Connect command plugin (Spark's {@code org.apache.spark.sql.connect.plugin.CommandPlugin}):
 * handles the {@code filecommit.v1} commands packed in {@code Command.extension} and streams the
 * results back as {@code ExecutePlanResponse.extension} messages ({@link ResponseStream}).
 *
 * <p>Register on the server with {@code
 * spark.connect.extensions.command.classes=io.filecommit.connect.FileCommitPlugin} and the jar on
 * the server classpath. Errors reach the client as Spark Connect errors with their error class;
 * nothing is streamed before a command finished. Each error class arrives as the JVM exception type
 * Delta raises for it ({@link ClientExceptions}), so pyspark raises {@code AnalysisException},
 * {@code IllegalArgumentException}, ... with the class. A session that changed a server-owned setting
 * is refused first ({@link ServerSettings}).
 */
public final class FileCommitPlugin implements CommandPlugin {
  /** Public no-arg constructor, used by Spark's plugin registry. */
  public FileCommitPlugin() {}

  /**
   * Handles a command if it is one of ours.
   *
   * @param command a serialized {@code google.protobuf.Any}
   * @param planner the session's planner
   * @return true if handled, false for another plugin's command
   * @throws io.filecommit.errors.FileCommitException for a malformed command, and the classes of
   *     the command
   */
  @Override
  public boolean process(byte[] command, SparkConnectPlanner planner) {
    // Writes register as in flight for the command's duration (VACUUM on this server keeps their files).
    try (InFlightWrites.Scope scope = InFlightWrites.openScope();
        ObjectStoreRequests.Scope requests = ObjectStoreRequests.open()) {
      return dispatch(command, planner);
    } catch (FileCommitException e) {
      throw ClientExceptions.rethrow(e);
    }
  }

  private boolean dispatch(byte[] command, SparkConnectPlanner planner) {
    Any any;
    try {
      any = Any.parseFrom(command);
    } catch (InvalidProtocolBufferException e) {
      return false;
    }
    if (StandardSave.TYPE_URL.equals(any.getTypeUrl())) {
      StandardSave.run(any.getValue(), planner); // a standard-API save (StandardWriteInterceptor)
      return true;
    }
    if (!any.getTypeUrl().contains("/filecommit.v1.")) {
      return false;
    }
    ServerSettings.check(planner.session());
    CommandResult result;
    if (any.is(WriteCommand.class)) {
      result = TableCommands.write(CommandInput.unpack(any, WriteCommand.class), planner);
    } else if (any.is(SetTablePropertiesCommand.class)) {
      result = TableCommands.setTableProperties(CommandInput.unpack(any, SetTablePropertiesCommand.class), planner);
    } else if (any.is(DeleteCommand.class)) {
      result = RowLevelCommands.delete(CommandInput.unpack(any, DeleteCommand.class), planner);
    } else if (any.is(UpdateCommand.class)) {
      result = RowLevelCommands.update(CommandInput.unpack(any, UpdateCommand.class), planner);
    } else if (any.is(MergeCommand.class)) {
      result = RowLevelCommands.merge(CommandInput.unpack(any, MergeCommand.class), planner);
    } else if (any.is(PublishStagedCommand.class)) {
      result = StagingCommands.publish(CommandInput.unpack(any, PublishStagedCommand.class), planner);
    } else if (any.is(StageFilesCommand.class)) {
      result = StagingCommands.stageFiles(CommandInput.unpack(any, StageFilesCommand.class), planner);
    } else if (any.is(GetStagedCommand.class)) {
      result = StagingCommands.get(CommandInput.unpack(any, GetStagedCommand.class), planner);
    } else if (any.is(AbortStagedCommand.class)) {
      ResponseStream.<StagingResponse>of(planner).accept(
          StagingCommands.abort(CommandInput.unpack(any, AbortStagedCommand.class), planner));
      return true;
    } else if (any.is(ReadStagedCommand.class)) {
      ResponseStream.<StagingResponse>of(planner).accept(
          StagingCommands.read(CommandInput.unpack(any, ReadStagedCommand.class), planner));
      return true;
    } else if (any.is(io.filecommit.proto.v1.VacuumCommand.class)) {
      TableCommands.vacuum(CommandInput.unpack(any, io.filecommit.proto.v1.VacuumCommand.class), planner);
      return true;
    } else if (any.is(io.filecommit.proto.v1.OptimizeCommand.class)) {
      TableCommands.optimize(CommandInput.unpack(any, io.filecommit.proto.v1.OptimizeCommand.class), planner);
      return true;
    } else if (any.is(io.filecommit.proto.v1.RestoreCommand.class)) {
      TableCommands.restore(CommandInput.unpack(any, io.filecommit.proto.v1.RestoreCommand.class), planner);
      return true;
    } else if (any.is(WriteBatchCommand.class)) {
      SinkCommands.writeBatch(CommandInput.unpack(any, WriteBatchCommand.class), planner);
      return true;
    } else {
      return false;
    }
    ResponseStream.respond(result, stagedAnswer(any), ResponseStream.of(planner));
    return true;
  }

  /** Whether the command asked to stage (its answer then ends with a StagedCommit). */
  private static boolean stagedAnswer(Any any) {
    try {
      if (any.is(WriteCommand.class)) {
        return any.unpack(WriteCommand.class).hasStage();
      } else if (any.is(SetTablePropertiesCommand.class)) {
        return any.unpack(SetTablePropertiesCommand.class).hasStage();
      } else if (any.is(DeleteCommand.class)) {
        return any.unpack(DeleteCommand.class).hasStage();
      } else if (any.is(UpdateCommand.class)) {
        return any.unpack(UpdateCommand.class).hasStage();
      } else if (any.is(MergeCommand.class)) {
        return any.unpack(MergeCommand.class).hasStage();
      }
      return any.is(StageFilesCommand.class) || any.is(GetStagedCommand.class);
    } catch (InvalidProtocolBufferException e) {
      return false;
    }
  }
}
