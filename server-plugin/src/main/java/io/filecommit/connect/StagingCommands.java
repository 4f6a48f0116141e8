package io.filecommit.connect;

import io.filecommit.commands.StageFilesCommand;
import io.filecommit.commands.StagedCommits;
import io.filecommit.conf.FileCommitConf;
import io.filecommit.errors.ErrorClass;
import io.filecommit.proto.v1.AbortStagedCommand;
import io.filecommit.proto.v1.AbortSummary;
import io.filecommit.proto.v1.ExternalFile;
import io.filecommit.proto.v1.GetStagedCommand;
import io.filecommit.proto.v1.PartitionValue;
import io.filecommit.proto.v1.PublishStagedCommand;
import io.filecommit.proto.v1.ReadStagedCommand;
import io.filecommit.proto.v1.ReadStagedSummary;
import io.filecommit.proto.v1.Stage;
import io.filecommit.proto.v1.StagingResponse;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.staging.StageRequest;
import io.filecommit.txn.staging.StagedCommit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;

/**
 * Serves the staging commands of the contract ({@code staging.proto}) with {@link StagedCommits}
 * and {@link StageFilesCommand}, and turns a command's {@code Stage} into a {@link StageRequest}
 * under the server's expiry setting {@link FileCommitConf#STAGING_EXPIRATION} (Spark time string,
 * default 24 hours, shorter than Delta's 7-day VACUUM retention; a static setting, so clients
 * cannot change it).
 */
final class StagingCommands {

  private StagingCommands() {}

  /**
   * The stage request of a command, or null when it is not staged.
   *
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_INVALID_STAGE_EXPIRY} for an
   *     expiry <= 0 or beyond the server's
   */
  static StageRequest stage(boolean present, Stage stage, SparkConnectPlanner planner) {
    if (!present) {
      return null;
    }
    long max = FileCommitConf.STAGING_EXPIRATION.timeMs(planner.session().sparkContext().getConf());
    if (!stage.hasExpiresAfterMs()) {
      return new StageRequest(max);
    }
    long ms = stage.getExpiresAfterMs();
    if (ms <= 0 || ms > max) {
      throw ErrorClass.FILECOMMIT_INVALID_STAGE_EXPIRY.error("Stage.expires_after_ms must be in (0, " + max
          + "] (the server's " + FileCommitConf.STAGING_EXPIRATION.key() + "), got " + ms,
          Map.of("value", Long.toString(ms), "maxMs", Long.toString(max)));
    }
    return new StageRequest(ms);
  }

  /** Runs a {@code PublishStagedCommand}. */
  static CommandResult publish(PublishStagedCommand cmd, SparkConnectPlanner planner) {
    return StagedCommits.publish(planner.session(), CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE), cmd.getStagedIdsList(),
        ProtoConversions.txnOf(cmd.hasTxn(), cmd.getTxn()));
  }

  /** Runs an {@code AbortStagedCommand}. */
  static StagingResponse abort(AbortStagedCommand cmd, SparkConnectPlanner planner) {
    long deleted = StagedCommits.abort(planner.session(), CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE),
        cmd.getStagedIdsList());
    return StagingResponse.newBuilder().setAborted(AbortSummary.newBuilder()
        .addAllStagedIds(cmd.getStagedIdsList()).setNumDeletedFiles(deleted)).build();
  }

  /** Runs a {@code GetStagedCommand}: the staged commit as a staged command's result. */
  static CommandResult get(GetStagedCommand cmd, SparkConnectPlanner planner) {
    StagedCommit c = StagedCommits.get(planner.session(), CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE), cmd.getStagedId());
    return StagedCommits.result(List.of(c), c.readVersion(), false, 0, 0);
  }

  /**
   * Runs a {@code ReadStagedCommand}: registers the rows as a temporary view of the session.
   *
   * @throws io.filecommit.errors.FileCommitException {@code INVALID_SCHEMA_OR_RELATION_NAME} for a
   *     view name that is not a plain identifier
   */
  static StagingResponse read(ReadStagedCommand cmd, SparkConnectPlanner planner) {
    String view = cmd.getViewName().isEmpty()
        ? "filecommit_staged_" + UUID.randomUUID().toString().replace("-", "") : cmd.getViewName();
    if (!view.matches("[A-Za-z_][A-Za-z0-9_]*")) {
      throw ErrorClass.INVALID_SCHEMA_OR_RELATION_NAME.error("view_name must be a plain identifier "
          + "([A-Za-z_][A-Za-z0-9_]*), got '" + view + "'", Map.of("value", view, "name", view));
    }
    StagedCommits.read(planner.session(), CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE), cmd.getStagedIdsList(),
        cmd.getTableAfter()).createOrReplaceTempView(view);
    return StagingResponse.newBuilder().setRead(ReadStagedSummary.newBuilder().setViewName(view)).build();
  }

  /** Runs a {@code StageFilesCommand}. */
  static CommandResult stageFiles(io.filecommit.proto.v1.StageFilesCommand cmd, SparkConnectPlanner planner) {
    List<StageFilesCommand.StagedFile> files = new ArrayList<>();
    for (ExternalFile f : cmd.getFilesList()) {
      Map<String, String> values = null;
      if (f.getPartitionValuesCount() > 0) {
        values = new LinkedHashMap<>();
        for (PartitionValue v : f.getPartitionValuesList()) {
          values.put(v.getColumn(), v.hasValue() ? v.getValue() : null);
        }
      }
      files.add(new StageFilesCommand.StagedFile(f.getPath(), values));
    }
    StageRequest stage = stage(true, cmd.getStage(), planner);
    return StageFilesCommand.run(planner.session(), CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE), files,
        ProtoConversions.txnOf(cmd.hasTxn(), cmd.getTxn()), stage);
  }
}
