package io.filecommit.plugin;

import io.filecommit.errors.ErrorClass;
import io.filecommit.paths.AllowedRoots;
import java.util.List;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.filecommit.actions.AddCDCFile;
import io.filecommit.actions.AddFile;
import io.filecommit.actions.RemoveFile;
import io.filecommit.delta.WriteIntoDelta;
import io.filecommit.proto.v1.CommitSummary;
import io.filecommit.proto.v1.DeleteCommand;
import io.filecommit.proto.v1.MergeCommand;
import io.filecommit.proto.v1.UpdateCommand;
import io.filecommit.proto.v1.FileAction;
import io.filecommit.proto.v1.FileActionBatch;
import io.filecommit.proto.v1.PartitionValue;
import io.filecommit.proto.v1.SaveMode;
import io.filecommit.proto.v1.SetTablePropertiesCommand;
import io.filecommit.proto.v1.WriteBatchCommand;
import io.filecommit.proto.v1.WriteCommand;
import io.filecommit.proto.v1.WriteResponse;
import io.filecommit.sink.WriteBatchHandler;
import java.util.function.Consumer;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset$;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.plugin.CommandPlugin;

/**
 * Spark Connect command plugin: handles {@code filecommit.v1} commands packed in {@code
 * Command.extension} and streams the results back as {@code ExecutePlanResponse.extension}
 * messages (reference spark-connect-plugins.md; contract proto/filecommit/v1/commands.proto).
 *
 * <p>Register on the server with {@code
 * spark.connect.extensions.command.classes=io.filecommit.plugin.FileCommitPlugin} and the jar on
 * the server classpath. A {@code WriteCommand} answers with {@code FileActionBatch} messages of at
 * most {@link #MAX_ACTIONS_PER_MESSAGE} actions or about {@link #MAX_BYTES_PER_MESSAGE} bytes each,
 * then one {@code CommitSummary}. Errors propagate as exceptions with their message (the client
 * receives them as Spark Connect errors); nothing is streamed before the commit succeeded.
 */
public final class FileCommitPlugin implements CommandPlugin {
  /** Most file actions in one response message. */
  public static final int MAX_ACTIONS_PER_MESSAGE = 1000;
  /** Soft limit of one response message's serialized size, bytes. */
  public static final int MAX_BYTES_PER_MESSAGE = 4 << 20;

  /** Public no-arg constructor, used by Spark's plugin registry. */
  public FileCommitPlugin() {}

  /**
   * Handles a command if it is one of ours.
   *
   * @param command a serialized {@code google.protobuf.Any}
   * @param planner the session's planner
   * @return true if handled, false for another plugin's command
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) for a malformed command
   */
  @Override
  public boolean process(byte[] command, SparkConnectPlanner planner) {
    Any any;
    try {
      any = Any.parseFrom(command);
    } catch (InvalidProtocolBufferException e) {
      return false;
    }
    if (any.is(WriteCommand.class)) {
      WriteCommand cmd = unpack(any, WriteCommand.class);
      handleWrite(cmd.toBuilder().setPath(allowedPath(cmd.getPath(), planner)).build(), planner);
      return true;
    }
    if (any.is(SetTablePropertiesCommand.class)) {
      SetTablePropertiesCommand cmd = unpack(any, SetTablePropertiesCommand.class);
      handleSetTableProperties(cmd.toBuilder().setPath(allowedPath(cmd.getPath(), planner)).build(), planner);
      return true;
    }
    if (any.is(DeleteCommand.class) || any.is(UpdateCommand.class) || any.is(MergeCommand.class)) {
      respond(RowLevelCommands.handle(any, planner), ExtensionResponses.of(planner));
      return true;
    }
    if (any.is(WriteBatchCommand.class)) {
      WriteBatchCommand cmd = unpack(any, WriteBatchCommand.class);
      WriteBatchHandler.handle(cmd.toBuilder().setPath(allowedPath(cmd.getPath(), planner)).build(), planner);
      return true;
    }
    return false;
  }

  /**
   * The path a command may use, per {@link AllowedRoots} and the server's {@value AllowedRoots#CONF}
   * (static conf; blank paths pass through to the command's own check).
   */
  static String allowedPath(String path, SparkConnectPlanner planner) {
    if (path == null || path.isBlank()) {
      return path;
    }
    org.apache.spark.sql.classic.SparkSession session = planner.session();
    List<String> roots = AllowedRoots.parse(session.sparkContext().getConf().get(AllowedRoots.CONF, ""));
    return AllowedRoots.resolve(path, roots, session.sessionState().newHadoopConf());
  }

  static <T extends Message> T unpack(Any any, Class<T> type) {
    try {
      return any.unpack(type);
    } catch (InvalidProtocolBufferException e) {
      String name = any.getTypeUrl().substring(any.getTypeUrl().lastIndexOf('/') + 1);
      throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("Malformed " + name + ": " + e.getMessage(), e);
    }
  }

  /**
   * The DataFrame of a command's input plan, built by the session's planner.
   *
   * @param planner the session's planner
   * @param input the command's {@code input} relation, or null when the command has none
   * @param command the command's name, for the error
   * @return the input rows (not yet executed)
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) when {@code input} is null
   */
  public static Dataset<Row> inputData(SparkConnectPlanner planner, Relation input, String command) {
    if (input == null) {
      throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error(command + ".input (the DataFrame plan) is missing");
    }
    LogicalPlan plan = planner.transformRelation(input);
    return Dataset$.MODULE$.ofRows(planner.session(), plan);
  }

  private static void handleWrite(WriteCommand cmd, SparkConnectPlanner planner) {
    Dataset<Row> data = inputData(planner, cmd.hasInput() ? cmd.getInput() : null, "WriteCommand");
    WriteIntoDelta.Result result = WriteIntoDelta.run(
        planner.session(), data, cmd.getPath(), toMode(cmd.getMode()), cmd.getPartitionByList(),
        cmd.getOptionsMap(), cmd.getTablePropertiesMap(), cmd.getChangeData(), txnOf(cmd.hasTxn(), cmd.getTxn()));
    respond(result, ExtensionResponses.of(planner));
  }

  private static void handleSetTableProperties(SetTablePropertiesCommand cmd, SparkConnectPlanner planner) {
    respond(WriteIntoDelta.setTableProperties(planner.session(), cmd.getPath(), cmd.getPropertiesMap(),
        txnOf(cmd.hasTxn(), cmd.getTxn())), ExtensionResponses.of(planner));
  }

  /** The contract's {@code Transaction}, or null when the command has none. */
  static WriteIntoDelta.Txn txnOf(boolean present, io.filecommit.proto.v1.Transaction txn) {
    return present ? new WriteIntoDelta.Txn(txn.getAppId(), txn.getVersion()) : null;
  }

  /** Streams the file actions of a result, then its summary. */
  static void respond(WriteIntoDelta.Result result, Consumer<WriteResponse> out) {
    streamActions(result, out);
    out.accept(WriteResponse.newBuilder().setSummary(CommitSummary.newBuilder()
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
        .setNumCopiedRows(result.rowMetrics().copied())).build());
  }

  /**
   * The save mode of a contract value.
   *
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) for an unknown value
   */
  static WriteIntoDelta.Mode toMode(SaveMode mode) {
    return switch (mode) {
      case SAVE_MODE_UNSPECIFIED, SAVE_MODE_APPEND -> WriteIntoDelta.Mode.APPEND;
      case SAVE_MODE_OVERWRITE -> WriteIntoDelta.Mode.OVERWRITE;
      case SAVE_MODE_ERROR_IF_EXISTS -> WriteIntoDelta.Mode.ERROR_IF_EXISTS;
      case SAVE_MODE_IGNORE -> WriteIntoDelta.Mode.IGNORE;
      default -> throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("Unknown save mode: " + mode);
    };
  }

  /** Streams the file actions of a result in bounded batches. */
  static void streamActions(WriteIntoDelta.Result result, Consumer<WriteResponse> out) {
    FileActionBatch.Builder batch = FileActionBatch.newBuilder();
    int bytes = 0;
    for (Object a : concat(result)) {
      FileAction action = toProto(a);
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
  }

  private static java.util.List<Object> concat(WriteIntoDelta.Result result) {
    java.util.List<Object> all = new java.util.ArrayList<>(result.addFiles());
    all.addAll(result.cdcFiles());
    all.addAll(result.removeFiles());
    return all;
  }

  /** Contract form of a file action. */
  static FileAction toProto(Object action) {
    if (action instanceof AddFile a) {
      io.filecommit.proto.v1.AddFile.Builder b = io.filecommit.proto.v1.AddFile.newBuilder()
          .setPath(a.path())
          .setSize(a.size())
          .setModificationTime(a.modificationTime())
          .setDataChange(a.dataChange())
          .putAllTags(a.tags());
      a.partitionValues().forEach((k, v) -> b.addPartitionValues(pv(k, v)));
      if (a.stats() != null) {
        b.setStats(a.stats());
      }
      if (a.deletionVector() != null) {
        b.setDeletionVector(dv(a.deletionVector()));
      }
      return FileAction.newBuilder().setAdd(b).build();
    }
    if (action instanceof AddCDCFile c) {
      io.filecommit.proto.v1.AddCDCFile.Builder b = io.filecommit.proto.v1.AddCDCFile.newBuilder()
          .setPath(c.path())
          .setSize(c.size())
          .putAllTags(c.tags());
      c.partitionValues().forEach((k, v) -> b.addPartitionValues(pv(k, v)));
      return FileAction.newBuilder().setCdc(b).build();
    }
    if (action instanceof RemoveFile r) {
      io.filecommit.proto.v1.RemoveFile.Builder b = io.filecommit.proto.v1.RemoveFile.newBuilder()
          .setPath(r.path())
          .setDeletionTimestamp(r.deletionTimestamp())
          .setDataChange(r.dataChange())
          .setExtendedFileMetadata(r.extendedFileMetadata());
      r.partitionValues().forEach((k, v) -> b.addPartitionValues(pv(k, v)));
      if (r.size() != null) {
        b.setSize(r.size());
      }
      if (r.deletionVector() != null) {
        b.setDeletionVector(dv(r.deletionVector()));
      }
      return FileAction.newBuilder().setRemove(b).build();
    }
    throw new IllegalArgumentException("Unsupported file action for the v1 contract: " + action);
  }

  private static io.filecommit.proto.v1.DeletionVectorDescriptor dv(io.filecommit.actions.DeletionVector d) {
    io.filecommit.proto.v1.DeletionVectorDescriptor.Builder b = io.filecommit.proto.v1.DeletionVectorDescriptor.newBuilder()
        .setStorageType(d.storageType())
        .setPathOrInlineDv(d.pathOrInlineDv())
        .setSizeInBytes(d.sizeInBytes())
        .setCardinality(d.cardinality());
    if (d.offset() != null) {
      b.setOffset(d.offset());
    }
    return b.build();
  }

  private static PartitionValue pv(String column, String value) {
    PartitionValue.Builder b = PartitionValue.newBuilder().setColumn(column);
    if (value != null) {
      b.setValue(value);
    }
    return b.build();
  }

}
