package io.filecommit.plugin;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import java.util.function.Consumer;
import org.apache.spark.connect.proto.ExecutePlanResponse;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.service.ExecuteHolder;

/**
 * The response stream of a command plugin: each of our contract messages goes back to the client
 * packed in {@code ExecutePlanResponse.extension}, with the session ids Spark Connect's client checks
 * (reference spark-connect-plugins.md "The server side"; contract proto/filecommit/v1/).
 */
public final class ExtensionResponses {
  private ExtensionResponses() {}

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
}
