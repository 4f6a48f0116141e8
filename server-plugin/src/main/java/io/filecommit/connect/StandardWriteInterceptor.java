package io.filecommit.connect;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.connect.proto.Command;
import org.apache.spark.connect.proto.ExecutePlanRequest;
import org.apache.spark.connect.proto.Plan;
import org.apache.spark.connect.proto.WriteOperation;
import org.sparkproject.connect.grpc.ForwardingServerCallListener;
import org.sparkproject.connect.grpc.Metadata;
import org.sparkproject.connect.grpc.ServerCall;
import org.sparkproject.connect.grpc.ServerCallHandler;
import org.sparkproject.connect.grpc.ServerInterceptor;
import com.google.protobuf.Any;
import io.filecommit.conf.FileCommitConf;

/**
 * A Spark Connect gRPC interceptor (Spark's {@code spark.connect.grpc.interceptor.classes}, a
 * {@code ServerInterceptor} of Spark's shaded gRPC) that hands {@code df.write.format("delta" or
 * "filecommit").save(path)} straight to the plugin: such an {@code ExecutePlan} request's {@code
 * WriteOperation} is repacked into {@code Command.extension} (type URL {@value StandardSave#TYPE_URL}),
 * which {@link FileCommitPlugin} runs as {@link StandardSave} does: the same write as Spark's {@code
 * DataFrameWriter.save} reaching {@link FileCommitSource#createRelation} (same options, modes,
 * checks, error classes and exception types), without Spark's command planning around it (the
 * writer's {@code SaveIntoDataSourceCommand} and its {@code QueryExecution}, SQL execution events,
 * data source lookup, and the second analysis of shipped rows). Nothing else changes: other
 * requests, other sources, {@code save()} without a path, {@code saveAsTable} / {@code
 * insertInto}, writes with {@code bucketBy} / {@code sortBy} / {@code clusterBy} or a {@code path}
 * option, compressed plans, and {@code delta} while delta-spark answers it ({@link
 * FileCommitConf#READ_DELTA_FORMAT}) keep Spark's own path and errors.
 *
 * <p>The server's static setting {@link FileCommitConf#STANDARD_API_DIRECT_WRITE} ({@code true} by default) switches it off:
 * {@code false} keeps every write on Spark's path (e.g. for {@code QueryExecutionListener}s or
 * the SQL tab of the UI, which see Spark's command but not the direct write).
 */
public final class StandardWriteInterceptor implements ServerInterceptor {
  private static final String EXECUTE_PLAN = "spark.connect.SparkConnectService/ExecutePlan";

  private static volatile Boolean deltaIsOurs;
  private volatile Boolean enabled;

  /** Public no-arg constructor (Spark instantiates interceptors by class name). */
  public StandardWriteInterceptor() {}

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    ServerCall.Listener<Q> listener = next.startCall(call, headers);
    if (!EXECUTE_PLAN.equals(call.getMethodDescriptor().getFullMethodName())) {
      return listener;
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<Q>(listener) {
      @Override
      @SuppressWarnings("unchecked")
      public void onMessage(Q message) {
        super.onMessage(message instanceof ExecutePlanRequest r && enabled() ? (Q) rewrite(r, deltaIsOurs()) : message);
      }
    };
  }

  /**
   * The request the server runs: {@code request} itself, or, for a direct standard-API write,
   * the same request with its {@code WriteOperation} packed in {@code Command.extension}.
   *
   * @param request an {@code ExecutePlanRequest}
   * @param deltaIsOurs whether this server's {@code format("delta")} is filecommit's
   * @return the request to run (ids, options and everything else unchanged)
   */
  static ExecutePlanRequest rewrite(ExecutePlanRequest request, boolean deltaIsOurs) {
    if (request.getPlan().getOpTypeCase() != Plan.OpTypeCase.COMMAND) {
      return request;
    }
    Command command = request.getPlan().getCommand();
    if (command.getCommandTypeCase() != Command.CommandTypeCase.WRITE_OPERATION
        || !direct(command.getWriteOperation(), deltaIsOurs)) {
      return request;
    }
    return request.toBuilder()
        .setPlan(Plan.newBuilder().setCommand(Command.newBuilder().setExtension(Any.pack(command.getWriteOperation()))))
        .build();
  }

  /**
   * Whether a {@code WriteOperation} is a {@code save(path)} to this plugin's source that Spark's
   * {@code DataFrameWriter} would hand to {@link FileCommitSource#createRelation} unchanged.
   */
  static boolean direct(WriteOperation op, boolean deltaIsOurs) {
    if (!op.hasInput() || !op.hasSource() || op.getSaveTypeCase() != WriteOperation.SaveTypeCase.PATH
        || op.getSortColumnNamesCount() > 0 || op.hasBucketBy() || op.getClusteringColumnsCount() > 0
        || op.getMode() == WriteOperation.SaveMode.UNRECOGNIZED) {
      return false;
    }
    String source = op.getSource();
    if (!source.equalsIgnoreCase(io.filecommit.read.FileCommitDataSource.NAME) && !(deltaIsOurs && source.equalsIgnoreCase("delta"))) {
      return false;
    }
    for (String key : op.getOptionsMap().keySet()) {
      if (key.equalsIgnoreCase("path")) {
        return false; // DataFrameWriter.save(path) refuses a path option too: Spark raises its own error
      }
    }
    return true;
  }

  private boolean enabled() {
    Boolean e = enabled;
    if (e == null) {
      SparkEnv env = SparkEnv.get();
      e = FileCommitConf.STANDARD_API_DIRECT_WRITE.enabled(env == null ? null : env.conf());
      enabled = e;
    }
    return e;
  }

  /** {@return whether this server's {@code format("delta")} is filecommit's (decided once)} */
  static boolean deltaIsOurs() {
    Boolean d = deltaIsOurs;
    if (d == null) {
      SparkEnv env = SparkEnv.get();
      d = deltaIsOurs(env == null ? null : env.conf());
      deltaIsOurs = d;
    }
    return d;
  }

  /** Whether {@link DeltaFormatSource} answers {@code delta} on a server with {@code conf}. */
  static boolean deltaIsOurs(SparkConf conf) {
    try {
      return "delta".equals(DeltaFormatSource.name(conf, DeltaFormatSource.deltaSparkPresent()));
    } catch (IllegalStateException e) {
      return false; // Spark's lookup raises the same error on its own path
    }
  }
}
