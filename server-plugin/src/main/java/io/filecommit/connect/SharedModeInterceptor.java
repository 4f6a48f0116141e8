package io.filecommit.connect;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.filecommit.errors.FileCommitException;
import io.filecommit.security.Privilege;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.connect.proto.AnalyzePlanRequest;
import org.apache.spark.connect.proto.ExecutePlanRequest;
import org.apache.spark.connect.proto.Read;
import org.apache.spark.connect.proto.WriteOperation;
import org.apache.spark.connect.proto.WriteStreamOperationStart;
import org.apache.spark.sql.classic.SparkSession;
import org.sparkproject.connect.grpc.ForwardingServerCallListener;
import org.sparkproject.connect.grpc.Metadata;
import org.sparkproject.connect.grpc.ServerCall;
import org.sparkproject.connect.grpc.ServerCallHandler;
import org.sparkproject.connect.grpc.ServerInterceptor;
import org.sparkproject.connect.grpc.StatusRuntimeException;
import org.sparkproject.connect.grpc.protobuf.StatusProto;

/**
 * The gRPC interceptor of shared mode ({@link SharedMode}; a {@code
 * spark.connect.grpc.interceptor.classes} entry, a no-op unless {@code spark.filecommit.server.shared} is
 * {@code true}): refuses, before Spark Connect's planner sees the request, every RPC and proto plan
 * that would run client code or reach storage outside the caller's grants. Spark's planner resolves
 * a {@code Read.DataSource} eagerly (data source lookup loads classes, file sources list and infer
 * schemas, {@code jdbc} connects), so these checks cannot wait for the analyzer.
 *
 * <p>Refused, with {@code FILECOMMIT_SHARED_MODE_REFUSED} in Spark Connect's error format (the
 * client sees the error class, SQLSTATE and parameters as for any Spark error):
 *
 * <ul>
 *   <li>RPC {@code AddArtifacts} ({@code ADD_ARTIFACTS}: jars, class files, Python files, archives);
 *   <li>in {@code ExecutePlan} / {@code AnalyzePlan}, anywhere in the plan (a walk over every
 *       field): inline user-defined functions, Python / Scala / Java ({@code
 *       CommonInlineUserDefinedFunction}, {@code USER_DEFINED_FUNCTION}: UDFs, UDAFs, {@code
 *       mapInPandas} / {@code mapInArrow} / {@code applyInPandas} and friends, typed Scala
 *       operators), user-defined table functions ({@code USER_DEFINED_TABLE_FUNCTION}), Python data
 *       sources ({@code PYTHON_DATA_SOURCE}), streaming {@code foreach} / {@code foreachBatch}
 *       ({@code STREAMING_FOREACH}) and listeners ({@code STREAMING_LISTENER}), catalog switches
 *       ({@code CATALOG_SWITCH}), ML commands ({@code ML}: estimators loaded by name, model files
 *       written anywhere), external commands ({@code EXTERNAL_COMMAND});
 *   <li>reads of tables by name with an option that reaches Hadoop ({@code HADOOP_OPTION});
 *   <li>reads ({@code Read.DataSource}, batch and streaming) of a source outside {@link
 *       SharedMode#SOURCES} ({@code DATA_SOURCE}), with an option that reaches Hadoop ({@code
 *       HADOOP_OPTION}), or of a file format path with a {@code _delta_log} component ({@code
 *       DELTA_LOG_READ}), outside the allowed roots or the caller's READ grant;
 *   <li>writes ({@code WriteOperation}, {@code WriteOperationV2}, {@code WriteStreamOperationStart})
 *       to a source outside the allowlist, with a Hadoop option, of a file format to a path outside
 *       the caller's WRITE grant, or {@code saveAsTable} of a non-Delta table ({@code
 *       NON_DELTA_TABLE}).
 * </ul>
 *
 * SQL text is checked after parsing and analysis ({@code catalog.SharedModeCheck}).
 */
public final class SharedModeInterceptor implements ServerInterceptor {
  private static final String SERVICE = "spark.connect.SparkConnectService/";

  /** Proto message types refused wherever they occur, with the tag the refusal names. */
  private static final Map<String, String> REFUSED = Map.ofEntries(
      Map.entry("spark.connect.CommonInlineUserDefinedFunction", "USER_DEFINED_FUNCTION"),
      Map.entry("spark.connect.PythonUDF", "USER_DEFINED_FUNCTION"),
      Map.entry("spark.connect.ScalarScalaUDF", "USER_DEFINED_FUNCTION"),
      Map.entry("spark.connect.JavaUDF", "USER_DEFINED_FUNCTION"),
      Map.entry("spark.connect.CommonInlineUserDefinedTableFunction", "USER_DEFINED_TABLE_FUNCTION"),
      Map.entry("spark.connect.PythonUDTF", "USER_DEFINED_TABLE_FUNCTION"),
      Map.entry("spark.connect.CommonInlineUserDefinedDataSource", "PYTHON_DATA_SOURCE"),
      Map.entry("spark.connect.PythonDataSource", "PYTHON_DATA_SOURCE"),
      Map.entry("spark.connect.StreamingForeachFunction", "STREAMING_FOREACH"),
      Map.entry("spark.connect.StreamingQueryListenerBusCommand", "STREAMING_LISTENER"),
      Map.entry("spark.connect.StreamingQueryManagerCommand.StreamingQueryListenerCommand", "STREAMING_LISTENER"),
      Map.entry("spark.connect.SetCurrentCatalog", "CATALOG_SWITCH"),
      Map.entry("spark.connect.MlCommand", "ML"),
      Map.entry("spark.connect.MlRelation", "ML"),
      Map.entry("spark.connect.ExecuteExternalCommand", "EXTERNAL_COMMAND"),
      Map.entry("spark.connect.CreateExternalTable", "CATALOG_CREATE_TABLE"),
      Map.entry("spark.connect.CreateTable", "CATALOG_CREATE_TABLE"));

  /** filecommit's proto files (proto/filecommit/v1), whose commands arrive packed in {@code Any}. */
  private static final List<com.google.protobuf.Descriptors.FileDescriptor> FILECOMMIT_PROTOS = List.of(
      io.filecommit.proto.v1.CommandsProto.getDescriptor(), io.filecommit.proto.v1.RowLevelProto.getDescriptor(),
      io.filecommit.proto.v1.SinkProto.getDescriptor(), io.filecommit.proto.v1.StagingProto.getDescriptor());

  /** Public no-arg constructor (Spark instantiates interceptors by class name). */
  public SharedModeInterceptor() {}

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    if (!SharedMode.enabled()) {
      return next.startCall(call, headers);
    }
    String method = call.getMethodDescriptor().getFullMethodName();
    if (method.equals(SERVICE + "AddArtifacts")) {
      close(call, SharedMode.refused("ADD_ARTIFACTS", "AddArtifacts"));
      return new ServerCall.Listener<>() {};
    }
    ServerCall.Listener<Q> listener = next.startCall(call, headers);
    if (!method.equals(SERVICE + "ExecutePlan") && !method.equals(SERVICE + "AnalyzePlan")) {
      return listener;
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<Q>(listener) {
      private boolean refused;

      @Override
      public void onMessage(Q message) {
        try {
          check(message);
        } catch (FileCommitException e) {
          refused = true;
          close(call, e);
          return;
        }
        super.onMessage(message);
      }

      @Override
      public void onHalfClose() {
        if (!refused) {
          super.onHalfClose();
        }
      }
    };
  }

  /** Closes a call with a refusal in Spark Connect's error format ({@code ErrorUtils}). */
  private static <Q, R> void close(ServerCall<Q, R> call, FileCommitException e) {
    StatusRuntimeException sre = StatusProto.toStatusRuntimeException(
        org.apache.spark.sql.connect.utils.ErrorUtils$.MODULE$.buildStatusFromThrowable(e, scala.Option.empty()));
    call.close(sre.getStatus(), sre.getTrailers() == null ? new Metadata() : sre.getTrailers());
  }

  /**
   * Checks one request message ({@code ExecutePlanRequest} or {@code AnalyzePlanRequest}; others
   * pass).
   *
   * @param message the request
   * @throws FileCommitException {@code FILECOMMIT_SHARED_MODE_REFUSED} and the path checks' classes
   */
  static void check(Object message) {
    if (message instanceof ExecutePlanRequest r) {
      new Walk(r.getUserContext().getUserId(), r.getSessionId(),
          r.hasClientObservedServerSideSessionId() ? r.getClientObservedServerSideSessionId() : null).message(r.getPlan());
    } else if (message instanceof AnalyzePlanRequest r) {
      new Walk(r.getUserContext().getUserId(), r.getSessionId(),
          r.hasClientObservedServerSideSessionId() ? r.getClientObservedServerSideSessionId() : null).message(r);
    }
  }

  /** One request's walk over its plan; the session is looked up when a path needs it. */
  private static final class Walk {
    private final String userId;
    private final String sessionId;
    private final String observed;
    private SparkSession session;

    Walk(String userId, String sessionId, String observed) {
      this.userId = userId;
      this.sessionId = sessionId;
      this.observed = observed;
    }

    private SparkSession session() {
      if (session == null) {
        session = org.apache.spark.sql.connect.service.SparkConnectService.getOrCreateIsolatedSession(
            userId, sessionId, scala.Option.apply(observed)).session();
      }
      return session;
    }

    void message(Message m) {
      String type = m.getDescriptorForType().getFullName();
      if (m instanceof com.google.protobuf.DynamicMessage) {
        // inside a filecommit command: Spark's own messages are walked as their generated classes
        try {
          if (type.equals("spark.connect.Relation")) {
            message(org.apache.spark.connect.proto.Relation.parseFrom(m.toByteString()));
            return;
          } else if (type.equals("spark.connect.Expression")) {
            message(org.apache.spark.connect.proto.Expression.parseFrom(m.toByteString()));
            return;
          }
        } catch (InvalidProtocolBufferException e) {
          throw SharedMode.refused("MALFORMED_PLAN", type);
        }
      }
      String tag = REFUSED.get(type);
      if (tag != null) {
        throw SharedMode.refused(tag, type.substring("spark.connect.".length()));
      }
      if (m instanceof Any any) {
        any(any);
        return;
      }
      for (Map.Entry<FieldDescriptor, Object> field : m.getAllFields().entrySet()) {
        if (field.getKey().getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
          continue;
        }
        if (field.getKey().isRepeated()) {
          for (Object o : (List<?>) field.getValue()) {
            if (o instanceof Message child) {
              message(child);
            }
          }
        } else if (field.getValue() instanceof Message child) {
          message(child);
        }
      }
      // client code anywhere below is refused first (no session needed); then sources and paths
      if (m instanceof Read.DataSource ds) {
        read(ds);
      } else if (m instanceof Read.NamedTable t) {
        SharedMode.checkOptions(t.getOptionsMap());
      } else if (m instanceof WriteOperation w) {
        write(w);
      } else if (m instanceof org.apache.spark.connect.proto.WriteOperationV2 w) {
        SharedMode.checkSource(w.hasProvider() ? w.getProvider() : "", session());
        SharedMode.checkOptions(w.getOptionsMap());
        SharedMode.checkOptions(w.getTablePropertiesMap());
      } else if (m instanceof WriteStreamOperationStart w) {
        if (w.hasForeachBatch() || w.hasForeachWriter()) {
          throw SharedMode.refused("STREAMING_FOREACH", w.hasForeachBatch() ? "foreachBatch" : "foreach");
        }
        String f = SharedMode.checkSource(w.getFormat(), session());
        SharedMode.checkOptions(w.getOptionsMap());
        if (SharedMode.FILE_FORMATS.contains(f) && w.hasPath()) {
          SharedMode.checkPath(session(), Privilege.WRITE, w.getPath());
        }
      }
    }

    /**
     * A plugin's packed message: the standard-API write packed by {@link StandardWriteInterceptor},
     * filecommit's own commands and Delta Connect's {@code DeltaRelation} / {@code DeltaCommand}
     * (their input relations and conditions are Spark's messages, which may carry client code like
     * any plan).
     */
    private void any(Any any) {
      try {
        if (any.is(WriteOperation.class)) {
          message(any.unpack(WriteOperation.class));
          return;
        }
        String url = any.getTypeUrl();
        int slash = url.lastIndexOf('/');
        String name = url.substring(slash + 1);
        if (name.equals("delta.connect.DeltaRelation") || name.equals("delta.connect.DeltaCommand")) {
          // delta-spark's DeltaTable API (DeltaConnectRelations / DeltaConnectCommands): its
          // conditions, assignments and merge sources are Spark's messages, walked like any plan
          message(com.google.protobuf.DynamicMessage.parseFrom(name.endsWith("Relation")
              ? io.filecommit.proto.delta.connect.DeltaRelation.getDescriptor()
              : io.filecommit.proto.delta.connect.DeltaCommand.getDescriptor(), any.getValue()));
          return;
        }
        if (!name.startsWith("filecommit.v1.")) {
          return; // another plugin's message: its own checks
        }
        String simple = name.substring("filecommit.v1.".length());
        for (com.google.protobuf.Descriptors.FileDescriptor file : FILECOMMIT_PROTOS) {
          com.google.protobuf.Descriptors.Descriptor d = file.findMessageTypeByName(simple);
          if (d != null) {
            message(com.google.protobuf.DynamicMessage.parseFrom(d, any.getValue()));
            return;
          }
        }
        throw SharedMode.refused("MALFORMED_PLAN", url);
      } catch (InvalidProtocolBufferException e) {
        throw SharedMode.refused("MALFORMED_PLAN", any.getTypeUrl());
      }
    }

    private void read(Read.DataSource ds) {
      String f = SharedMode.checkSource(ds.hasFormat() ? ds.getFormat() : "", session());
      Map<String, String> options = new HashMap<>(ds.getOptionsMap());
      SharedMode.checkOptions(options);
      if (!SharedMode.FILE_FORMATS.contains(f)) {
        return;
      }
      for (String p : ds.getPathsList()) {
        SharedMode.checkPath(session(), Privilege.READ, p);
      }
      for (Map.Entry<String, String> o : options.entrySet()) {
        if (o.getKey().equalsIgnoreCase("path")) {
          SharedMode.checkPath(session(), Privilege.READ, o.getValue());
        } else if (o.getKey().equalsIgnoreCase("paths")) {
          throw SharedMode.refused("FILE_READ", o.getValue()); // a JSON list Spark decodes itself
        }
      }
    }

    private void write(WriteOperation w) {
      String f = SharedMode.checkSource(w.hasSource() ? w.getSource() : "", session());
      SharedMode.checkOptions(w.getOptionsMap());
      boolean delta = f.equals("delta") || f.equals("filecommit");
      if (w.getSaveTypeCase() == WriteOperation.SaveTypeCase.TABLE) {
        if (!delta && w.getTable().getSaveMethod() != WriteOperation.SaveTable.TableSaveMethod.TABLE_SAVE_METHOD_INSERT_INTO) {
          throw SharedMode.refused("NON_DELTA_TABLE", w.getTable().getTableName());
        }
        return;
      }
      if (delta) {
        return; // filecommit's own write checks its path (allowed roots, grants)
      }
      if (w.getSaveTypeCase() == WriteOperation.SaveTypeCase.PATH) {
        SharedMode.checkPath(session(), Privilege.WRITE, w.getPath());
      }
      for (Map.Entry<String, String> o : w.getOptionsMap().entrySet()) {
        if (o.getKey().equalsIgnoreCase("path")) {
          SharedMode.checkPath(session(), Privilege.WRITE, o.getValue());
        }
      }
      if (w.getSaveTypeCase() != WriteOperation.SaveTypeCase.PATH && !w.getOptionsMap().containsKey("path")) {
        throw SharedMode.refused("FILE_WRITE", "save() without a path");
      }
    }
  }
}
