package io.filecommit.connect;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.security.Privilege;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.Dataset$;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;

/**
 * Turns the parts of a contract message into what commands take: the packed message itself, the
 * input DataFrame of a {@code spark.connect.Relation} and the columns of {@code
 * spark.connect.Expression}s, both built by the session's planner (Spark Connect's {@code
 * SparkConnectPlanner.transformRelation} / {@code transformExpression}).
 */
final class CommandInput {
  private CommandInput() {}

  /**
   * Unpacks a command.
   *
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} naming
   *     the message when it does not parse
   */
  static <T extends Message> T unpack(Any any, Class<T> type) {
    try {
      return any.unpack(type);
    } catch (InvalidProtocolBufferException e) {
      String name = any.getTypeUrl().substring(any.getTypeUrl().lastIndexOf('/') + 1);
      throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("Malformed " + name + ": " + e.getMessage(), e);
    }
  }

  /**
   * The DataFrame of a command's input plan: rows shipped in the plan as {@link ShippedRows}
   * reads them, anything else as Spark Connect's planner transforms it.
   *
   * @param planner the session's planner
   * @param input the command's input relation, or null when the command has none
   * @param command the command's name, for the error
   * @return the input rows (not yet executed)
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} when
   *     {@code input} is null
   */
  static Dataset<Row> dataFrame(SparkConnectPlanner planner, Relation input, String command) {
    if (input == null) {
      throw DeltaErrors.malformed(command + ".input (the DataFrame plan) is missing");
    }
    LogicalPlan plan = ShippedRows.plan(input).orElseGet(() -> planner.transformRelation(input));
    return Dataset$.MODULE$.ofRows(planner.session(), plan);
  }

  /** The column of a Spark Connect expression. */
  static Column column(SparkConnectPlanner planner, org.apache.spark.connect.proto.Expression e) {
    return ExpressionUtils.column(planner.transformExpression(e));
  }

  /**
   * The path a command may use ({@link AllowedRoots#allowedPath(String,
   * org.apache.spark.sql.classic.SparkSession, Privilege)}: inside the allowed roots, and the
   * session's principal holds {@code needed} on it); the command's object-store requests are
   * counted from here on ({@link ObjectStoreRequests#watch}).
   */
  static String path(String path, SparkConnectPlanner planner, Privilege needed) {
    String allowed = AllowedRoots.allowedPath(path, planner.session(), needed);
    ObjectStoreRequests.watch(allowed, io.filecommit.delta.DeltaLogCache.sessionHadoopConf(planner.session()));
    return allowed;
  }

  /**
   * The path of a command that gives either a table root ({@code path}) or a table name of the
   * server's catalog ({@code table}, resolved by {@link TableCommands#named}), then checked as
   * {@link #path(String, SparkConnectPlanner, Privilege)}; a name is checked as a table too (a
   * grant on the name, or on a prefix of its location: {@code Access.checkTable}).
   */
  static String path(String path, String table, SparkConnectPlanner planner, Privilege needed) {
    return path(path, table, planner, needed, false);
  }

  /**
   * {@link #path(String, String, SparkConnectPlanner, Privilege)}; with {@code parquet}, a name is
   * a Parquet table of the catalog (a file sink's directory) instead of a Delta table.
   */
  static String path(String path, String table, SparkConnectPlanner planner, Privilege needed, boolean parquet) {
    if (table == null || table.isEmpty()) {
      return path(path, planner, needed);
    }
    TableCommands.Named t = TableCommands.named(path, table, planner.session(), parquet);
    String allowed = AllowedRoots.allowedPath(t.location(), planner.session());
    io.filecommit.security.Access.checkTable(planner.session(), needed, t.qualified(),
        AllowedRoots.grantForm(allowed, planner.session()));
    ObjectStoreRequests.watch(allowed, io.filecommit.delta.DeltaLogCache.sessionHadoopConf(planner.session()));
    return allowed;
  }

  /**
   * OWNER for a write that creates or replaces a table (the table's first commit at a path, or an
   * overwrite with {@code overwriteSchema=true}), as {@link Privilege#OWNER} lists it; other writes
   * need WRITE only (checked with the path). Looks at the table's log only for a principal that is
   * not an admin (nothing is read otherwise).
   *
   * @param session the command's session
   * @param path the write's resolved path
   * @param options the writer options
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_PERMISSION_DENIED}
   */
  static void ownerToCreate(org.apache.spark.sql.classic.SparkSession session, String path,
      java.util.Map<String, String> options) {
    if (io.filecommit.security.Principals.of(session).filter(p -> !p.admin()).isEmpty()) {
      return;
    }
    boolean replace = "true".equalsIgnoreCase(options.get(io.filecommit.commands.WriteIntoDelta.OVERWRITE_SCHEMA));
    if (replace || !io.filecommit.delta.DeltaLog.forTable(session, path).snapshot().exists()) {
      io.filecommit.security.Access.checkPath(session, Privilege.OWNER, AllowedRoots.grantForm(path, session));
    }
  }
}
