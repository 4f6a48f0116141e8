package io.filecommit.connect;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.proto.delta.connect.DeltaRelation;
import io.filecommit.proto.delta.connect.DeltaTable;
import io.filecommit.security.Privilege;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkEnv;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * What the Delta Connect plugins ({@link DeltaConnectRelations}, {@link DeltaConnectCommands})
 * share: reading the packed message, whether delta-spark's own plugins are on the server, the table
 * a {@code delta.connect.DeltaTable} names (as Delta's {@code DeltaPlannerBase.transformDeltaTable}
 * turns it into {@code io.delta.tables.DeltaTable.forPath} / {@code forName}), the target of a
 * DELETE / UPDATE, and its expressions resolved against that target.
 *
 * <p>A table is checked as every filecommit door checks one, before anything is read: a path lies
 * under the allowed roots and the session's principal holds the privilege on it ({@link
 * CommandInput#path(String, String, SparkConnectPlanner, Privilege)}); a name is a Delta table of the
 * session catalog ({@code delta.`/path`} is a path, as Delta reads it); the root must hold a Delta
 * table, else {@code DELTA_MISSING_DELTA_TABLE}, as Delta's {@code forPath} / {@code forName}
 * raise it.
 */
final class DeltaConnectTables {
  /** delta-spark's Delta Connect relation plugin ({@code DeltaRelationPlugin} of delta-spark 4.x). */
  static final String DELTA_RELATION_PLUGIN = "org.apache.spark.sql.connect.delta.DeltaRelationPlugin";
  /** delta-spark's Delta Connect command plugin. */
  static final String DELTA_COMMAND_PLUGIN = "org.apache.spark.sql.connect.delta.DeltaCommandPlugin";

  /** Whether delta-spark's plugins are present, once looked up (null before; tests set it). */
  static volatile Boolean deltaPlugins;

  private DeltaConnectTables() {}

  /**
   * A resolved table.
   *
   * @param path the table root, checked
   * @param name the table's qualified catalog name (lower case), or null for a table by path
   */
  record Resolved(String path, String name) {}

  /**
   * Whether delta-spark's Delta Connect plugins are on the server's class path (context class
   * loader): then Delta's own plugins answer Delta Connect's messages, and filecommit's decline
   * every one (Spark Connect asks each registered plugin in turn and takes the first answer).
   *
   * @return true when either of Delta's plugin classes loads
   */
  static boolean deltaSparkPlugins() {
    Boolean known = deltaPlugins;
    if (known == null) {
      known = DeltaFormatSource.onClassPath(DELTA_RELATION_PLUGIN) || DeltaFormatSource.onClassPath(DELTA_COMMAND_PLUGIN);
      deltaPlugins = known;
    }
    return known;
  }

  /**
   * The packed message of a plugin call.
   *
   * @param raw a serialized {@code google.protobuf.Any}
   * @return the Any, or null when {@code raw} is not one
   */
  static Any any(byte[] raw) {
    try {
      return Any.parseFrom(raw);
    } catch (InvalidProtocolBufferException e) {
      return null;
    }
  }

  /**
   * Parses a Delta Connect message with Spark Connect's recursion limit for plans ({@code
   * spark.connect.grpc.marshallerRecursionLimit}, default 1024): a relation nests the client's
   * plans.
   *
   * @param <T> the message type
   * @param value the Any's value
   * @param parser the message's parser
   * @param name the message's name, for the error
   * @return the message
   * @throws FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} when it does not parse
   */
  static <T> T parse(ByteString value, com.google.protobuf.Parser<T> parser, String name) {
    CodedInputStream in = value.newCodedInput();
    in.setSizeLimit(Integer.MAX_VALUE);
    SparkEnv env = SparkEnv.get();
    in.setRecursionLimit(env == null ? 1024 : env.conf().getInt("spark.connect.grpc.marshallerRecursionLimit", 1024));
    try {
      T out = parser.parseFrom(in);
      in.checkLastTagWas(0);
      return out;
    } catch (InvalidProtocolBufferException e) {
      throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("Malformed delta.connect." + name + ": " + e.getMessage(), e);
    }
  }

  /**
   * The refusal of a Delta Connect message kind (or part of one) this server does not serve.
   *
   * @param operation the kind, e.g. {@code MERGE_INTO_TABLE}
   * @return the error ({@code FILECOMMIT_DELTA_CONNECT_UNSUPPORTED}, parameter {@code operation})
   */
  static FileCommitException unsupported(String operation) {
    return ErrorClass.FILECOMMIT_DELTA_CONNECT_UNSUPPORTED.error("The DeltaTable API call " + operation
        + " (Delta Connect) is not served by this server yet; nothing was read or committed",
        Map.of("operation", operation));
  }

  /**
   * The table a {@code DeltaTable} message names, checked.
   *
   * @param table the message
   * @param planner the session's planner
   * @param needed the privilege the call needs
   * @return the root and the catalog name
   * @throws FileCommitException {@code FILECOMMIT_PATH_NOT_ALLOWED}, {@code
   *     FILECOMMIT_PERMISSION_DENIED}, {@code DELTA_MISSING_DELTA_TABLE} (no table at the path, or
   *     no Delta table of that name), {@code INVALID_SCHEMA_OR_RELATION_NAME}, {@code
   *     FILECOMMIT_DELTA_CONNECT_UNSUPPORTED} for a path with Hadoop settings
   */
  static Resolved resolve(DeltaTable table, SparkConnectPlanner planner, Privilege needed) {
    SparkSession session = planner.session();
    Resolved r;
    if (table.hasPath()) {
      if (table.getPath().getHadoopConfCount() > 0) {
        throw unsupported("DeltaTable.forPath with hadoopConf");
      }
      r = new Resolved(CommandInput.path(table.getPath().getPath(), planner, needed), null);
    } else if (table.hasTableOrViewName()) {
      String name = table.getTableOrViewName();
      String path = pathName(session, name);
      if (path != null) {
        r = new Resolved(CommandInput.path(path, planner, needed), null);
      } else {
        try {
          TableCommands.Named n = TableCommands.named("", name, session, false);
          r = new Resolved(CommandInput.path("", name, planner, needed), n.qualified());
        } catch (FileCommitException e) {
          if (!ErrorClass.DELTA_TABLE_NOT_FOUND.name().equals(e.getCondition())) {
            throw e;
          }
          throw missing(name);
        }
      }
    } else {
      throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("delta.connect.DeltaTable names neither a path nor a table");
    }
    if (r.path() == null || r.path().isBlank() || !io.filecommit.delta.DeltaLog.forTable(session, r.path()).snapshot().exists()) {
      throw missing(r.name() != null ? table.getTableOrViewName() : r.path());
    }
    return r;
  }

  private static FileCommitException missing(String table) {
    return ErrorClass.DELTA_MISSING_DELTA_TABLE.error(table + " is not a Delta table", Map.of("tableName", table));
  }

  /** The path of a name {@code delta.`/path`} (as Delta's {@code forName} reads it), else null. */
  private static String pathName(SparkSession session, String name) {
    List<String> parts = nameParts(session, name);
    if (parts.size() == 2 && parts.get(0).equalsIgnoreCase("delta")
        && (parts.get(1).startsWith("/") || parts.get(1).contains(":/"))) {
      return parts.get(1);
    }
    return null;
  }

  /** A table name's parts, {@code INVALID_SCHEMA_OR_RELATION_NAME} when it does not parse. */
  static List<String> nameParts(SparkSession session, String name) {
    try {
      return scala.jdk.javaapi.CollectionConverters.asJava(session.sessionState().sqlParser().parseMultipartIdentifier(name));
    } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
      throw ErrorClass.INVALID_SCHEMA_OR_RELATION_NAME.error("Not a table name: '" + name + "'", Map.of("name", name));
    }
  }

  /**
   * The plan of {@code DeltaTable.toDF()}: the table as of each execution, as Delta's plan reads it
   * (its file index takes the latest snapshot when the query runs). With the server's {@code
   * spark_catalog} plugin (the catalog package's {@code FileCommitCatalog}, which resolves {@code
   * delta.`/path`} and Delta tables by name), an unresolved relation the analyzer resolves anew at
   * every execution, so a DataFrame the client keeps, or one Spark Connect's plan cache answers from,
   * reads the latest version; without it, the version of now, read through {@code
   * format("filecommit")}.
   *
   * @param session the session
   * @param t the checked table
   * @param name the name the client gave ({@code forName}), or null for a path
   * @return the plan
   */
  static LogicalPlan scanPlan(SparkSession session, Resolved t, String name) {
    CatalogPlugin catalog = session.sessionState().catalogManager().v2SessionCatalog();
    if (!catalog.getClass().getSimpleName().equals("FileCommitCatalog")) {
      return scan(session, t.path()).queryExecution().analyzed();
    }
    List<String> parts = t.name() == null ? List.of("delta", t.path()) : nameParts(session, name);
    return new UnresolvedRelation(scala.jdk.javaapi.CollectionConverters.asScala(parts).toList(),
        CaseInsensitiveStringMap.empty(), false);
  }

  /**
   * The rows of a table's latest version, read through {@code format("filecommit")} (the reader
   * checks the path again: allowed roots, READ).
   *
   * @param session the session
   * @param path the checked table root
   * @return the DataFrame
   */
  static Dataset<Row> scan(SparkSession session, String path) {
    return (Dataset<Row>) session.read().format(FileCommitSource.class.getName()).load(path);
  }

  /**
   * The target of a DELETE / UPDATE: the Delta Connect scan under it and the alias around it
   * ({@code DeltaTable.alias}), as delta-spark's client sends it.
   *
   * @param table the scan's table
   * @param alias the alias, or null
   */
  record Target(DeltaTable table, String alias) {}

  /**
   * Reads a DELETE / UPDATE target.
   *
   * @param relation the message's target relation
   * @param parse parses a packed {@code DeltaRelation}
   * @return the target
   * @throws FileCommitException {@code FILECOMMIT_DELTA_CONNECT_UNSUPPORTED} for a target that is
   *     not a (possibly aliased) Delta Connect scan
   */
  static Target target(Relation relation, java.util.function.Function<Any, DeltaRelation> parse) {
    String alias = null;
    Relation r = relation;
    while (r.hasSubqueryAlias()) {
      if (alias == null) {
        alias = r.getSubqueryAlias().getAlias();
      }
      r = r.getSubqueryAlias().getInput();
    }
    if (r.hasExtension() && r.getExtension().is(DeltaRelation.class)) {
      DeltaRelation d = parse.apply(r.getExtension());
      if (d.hasScan()) {
        return new Target(d.getScan().getTable(), alias);
      }
    }
    throw unsupported("a DELETE / UPDATE target other than DeltaTable.forPath / forName (.alias)");
  }

  /**
   * A condition resolved against the target (its aliases included), with the target's columns as
   * references by name, which the row-level commands resolve against the snapshot they read. Spark's
   * analysis errors (an unknown column, ...) are raised here, before anything is read or written.
   *
   * @param target the target's rows (aliased as the client aliased them)
   * @param condition the client's condition
   * @return the condition by name
   */
  static Column condition(Dataset<Row> target, Column condition) {
    LogicalPlan plan = target.filter(condition).queryExecution().analyzed();
    Expression e = plan instanceof Filter f ? f.condition() : ExpressionUtils.expression(condition);
    return ExpressionUtils.column(byName(e, ids(target)));
  }

  /**
   * An expression resolved against the target, by name as {@link #condition}.
   *
   * @param target the target's rows
   * @param value the expression
   * @return the resolved expression (before the rewrite to names)
   */
  static Expression resolved(Dataset<Row> target, Column value) {
    LogicalPlan plan = target.select(value.as("__filecommit_value")).queryExecution().analyzed();
    Object head = ((Project) plan).projectList().head(); // a NamedExpression: an Alias here
    return head instanceof Alias a ? a.child() : (Expression) head;
  }

  /** {@return the target's output attributes' ids} */
  static Set<ExprId> ids(Dataset<Row> target) {
    Set<ExprId> out = new HashSet<>();
    for (Attribute a : scala.jdk.javaapi.CollectionConverters.asJava(target.queryExecution().analyzed().output())) {
      out.add(a.exprId());
    }
    return out;
  }

  /** {@code e} with every reference to the target's columns turned into a reference by name. */
  static Expression byName(Expression e, Set<ExprId> target) {
    return e.transformUp(new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof AttributeReference a && target.contains(a.exprId());
      }

      @Override
      @SuppressWarnings("unchecked")
      public <A1 extends Expression, B1> B1 applyOrElse(A1 x, scala.Function1<A1, B1> otherwise) {
        if (x instanceof AttributeReference a && target.contains(a.exprId())) {
          return (B1) new UnresolvedAttribute(scala.jdk.javaapi.CollectionConverters.asScala(List.of(a.name())).toList());
        }
        return otherwise.apply(x);
      }
    });
  }

  /**
   * A plan of rows computed already (the answer of a DELETE / UPDATE, as Delta's plugin answers
   * with its command's executed plan).
   *
   * @param session the session
   * @param schema the columns
   * @param rows the rows
   * @return the analyzed local relation
   */
  static LogicalPlan rows(SparkSession session, StructType schema, List<Row> rows) {
    return session.createDataFrame(rows, schema).queryExecution().analyzed();
  }
}
