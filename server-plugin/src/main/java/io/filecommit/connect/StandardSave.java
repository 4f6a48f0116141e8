package io.filecommit.connect;

import com.google.protobuf.ByteString;
import io.filecommit.errors.DeltaErrors;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.connect.proto.Command;
import org.apache.spark.connect.proto.WriteOperation;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.catalyst.QueryPlanningTracker;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.Dataset$;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.service.ExecuteHolder;
import org.apache.spark.sql.errors.QueryCompilationErrors$;
import org.apache.spark.sql.execution.datasources.DataSourceUtils;
import org.apache.spark.sql.types.StructField;

/**
 * Runs a standard-API {@code df.write.format("delta" or "filecommit").save(path)} that {@link
 * StandardWriteInterceptor} handed to the plugin, as Spark's {@code DataFrameWriter.save(path)}
 * would for this V1 source ({@code saveToV1SourceCommand}, {@code DataSource.planForWriting},
 * {@code SaveIntoDataSourceCommand.run}), minus its command planning: the input plan is built as
 * the contract's commands build it ({@link CommandInput#dataFrame}: Spark Connect's planner, shipped
 * rows decoded once); each column's type is checked by the source's {@code supportsDataType}
 * (Spark's {@code dataTypeUnsupportedByDataSourceError} otherwise);
 * the options are the writer's, case-insensitive with the last of equal keys winning, plus {@code
 * __partition_columns} for {@code partitionBy} and {@code path}; the save mode defaults to {@code
 * ErrorIfExists}; then {@link FileCommitSource#save} runs the write. A {@code NullPointerException},
 * {@code MatchError} or {@code ArrayIndexOutOfBoundsException} of the source becomes Spark's {@code
 * externalDataSourceException}, as {@code SaveIntoDataSourceCommand} turns them. Nothing is sent
 * back (Spark's {@code WriteOperation} answers with no result either).
 *
 * <p>A message that {@link StandardWriteInterceptor#direct} would not have packed (sent as such by a
 * client), and a session that registered a data source of its own under the same name (a Python
 * data source), run Spark's own path instead ({@code SparkConnectPlanner.transformCommand} and eager
 * command execution, as Spark Connect runs a {@code WriteOperation}).
 */
final class StandardSave {
  /** The type URL of a {@code spark.connect.WriteOperation} packed in {@code Command.extension}. */
  static final String TYPE_URL = "type.googleapis.com/spark.connect.WriteOperation";

  private StandardSave() {}

  /**
   * Runs the write.
   *
   * @param value the packed {@code WriteOperation}
   * @param planner the session's planner
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} when the
   *     message does not parse; the write's own errors as {@link FileCommitSource#createRelation}
   *     raises them
   */
  static void run(ByteString value, SparkConnectPlanner planner) {
    WriteOperation op;
    try {
      op = WriteOperation.parseFrom(value.toByteArray());
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw DeltaErrors.malformed("Malformed WriteOperation: " + e.getMessage());
    }
    SparkSession session = planner.session();
    if (!StandardWriteInterceptor.direct(op, StandardWriteInterceptor.deltaIsOurs())
        || session.sessionState().dataSourceManager().dataSourceExists(op.getSource())) {
      sparkPath(op, planner);
      return;
    }
    Dataset<Row> data = CommandInput.dataFrame(planner, op.getInput(), "WriteOperation");
    FileCommitSource source = op.getSource().equalsIgnoreCase("delta") ? new DeltaFormatSource() : new FileCommitSource();
    for (StructField f : data.schema().fields()) {
      if (!source.supportsDataType(f.dataType())) {
        throw sneaky(QueryCompilationErrors$.MODULE$.dataTypeUnsupportedByDataSourceError(source.toString(), f));
      }
    }
    Map<String, String> options = new LinkedHashMap<>();
    op.getOptionsMap().forEach((k, v) -> put(options, k, v));
    if (op.getPartitioningColumnsCount() > 0) {
      put(options, DataSourceUtils.PARTITIONING_COLUMNS_KEY(), DataSourceUtils.encodePartitioningColumns(
          scala.jdk.javaapi.CollectionConverters.asScala(op.getPartitioningColumnsList()).toSeq()));
    }
    put(options, "path", op.getPath());
    try {
      FileCommitSource.save(session, mode(op.getMode()), options, data);
    } catch (NullPointerException | scala.MatchError | ArrayIndexOutOfBoundsException e) {
      throw sneaky(QueryCompilationErrors$.MODULE$.externalDataSourceException(e));
    }
  }

  /** {@code DataFrameWriter.option}: keys are case-insensitive, the last value wins. */
  private static void put(Map<String, String> options, String key, String value) {
    options.keySet().removeIf(k -> k.equalsIgnoreCase(key));
    options.put(key, value);
  }

  /** Spark Connect's {@code SaveModeConverter.toSaveMode}; unset is {@code DataFrameWriter}'s default. */
  static SaveMode mode(WriteOperation.SaveMode mode) {
    return switch (mode) {
      case SAVE_MODE_APPEND -> SaveMode.Append;
      case SAVE_MODE_OVERWRITE -> SaveMode.Overwrite;
      case SAVE_MODE_IGNORE -> SaveMode.Ignore;
      default -> SaveMode.ErrorIfExists;
    };
  }

  /** The write as Spark Connect runs a {@code WriteOperation} command ({@code SparkConnectPlanExecution}). */
  private static void sparkPath(WriteOperation op, SparkConnectPlanner planner) {
    ExecuteHolder holder = planner.executeHolderOpt().get();
    QueryPlanningTracker tracker = holder.eventsManager().createQueryPlanningTracker();
    LogicalPlan plan = planner.transformCommand(Command.newBuilder().setWriteOperation(op).build()).get().apply(tracker);
    Dataset$.MODULE$.ofRows(planner.session(), plan, tracker, Dataset$.MODULE$.ofRows$default$4())
        .queryExecution().assertCommandExecuted();
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
