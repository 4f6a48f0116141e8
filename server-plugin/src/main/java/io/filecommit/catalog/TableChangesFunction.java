package io.filecommit.catalog;

import io.filecommit.errors.ErrorClass;
import io.filecommit.read.FileCommitDataSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.IntegralType;
import scala.runtime.AbstractFunction1;

/**
 * The table-valued function {@code table_changes(table, start [, end])} (Delta's {@code
 * DeltaTableValueFunctions}): the change data feed of a table by name ({@code 'db.t'} or {@code
 * 'delta.`/path`'}) between two commits, both included, as the reader's {@code readChangeFeed}
 * read returns it (the table's columns and {@code _change_type}, {@code _commit_version}, {@code
 * _commit_timestamp}). An integral bound is a version ({@code startingVersion} / {@code
 * endingVersion}), a string or timestamp bound a timestamp ({@code startingTimestamp} / {@code
 * endingTimestamp}; a timestamp value in the session's time zone).
 * Errors, as Delta's: {@code INCORRECT_NUMBER_OF_ARGUMENTS} for fewer than 2 or more than 3
 * arguments, {@code DELTA_CDC_NON_CONSTANT_ARGUMENT} for an argument that is not a constant, {@code
 * DELTA_UNSUPPORTED_EXPRESSION} for a null table name, {@code DELTA_CDC_READ_NULL_RANGE_BOUNDARY}
 * for a null bound; {@code INVALID_SCHEMA_OR_RELATION_NAME} for a table name that does not parse;
 * the reader's change data feed classes ({@code DELTA_MISSING_CHANGE_DATA}, {@code
 * DELTA_CDC_START_VERSION_AFTER_LATEST}, {@code DELTA_INVALID_CDC_RANGE}, ...);
 * {@code TABLE_OR_VIEW_NOT_FOUND} and {@code DELTA_MISSING_DELTA_TABLE} for the table.
 */
final class TableChangesFunction extends AbstractFunction1<scala.collection.immutable.Seq<Expression>, LogicalPlan> {
  /** The function's name. */
  static final String NAME = "table_changes";

  /** The function; one instance serves every session. */
  TableChangesFunction() {}

  @Override
  public LogicalPlan apply(scala.collection.immutable.Seq<Expression> arguments) {
    SparkSession session = FileCommitCatalog.session();
    List<Expression> args = scala.jdk.javaapi.CollectionConverters.asJava(arguments);
    return Guard.errors(() -> {
      if (args.size() < 2 || args.size() > 3) {
        throw ErrorClass.INCORRECT_NUMBER_OF_ARGUMENTS.error(NAME + " takes (table, start[, end]), got " + args.size()
            + " arguments", Map.of("function", NAME, "functionName", NAME, "failure",
            args.size() < 2 ? "not enough args" : "too many args", "minArgs", "2", "maxArgs", "3"));
      }
      Object table = constant(args.get(0), "table", 1);
      if (table == null) {
        throw ErrorClass.DELTA_UNSUPPORTED_EXPRESSION.error(NAME + ": the table name is null", Map.of("function", NAME,
            "expType", args.get(0).dataType().sql(), "causedBy", "table name", "supportedTypes", "STRING"));
      }
      List<String> parts;
      try {
        parts = scala.jdk.javaapi.CollectionConverters.asJava(
            session.sessionState().sqlParser().parseMultipartIdentifier(table.toString()));
      } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
        throw ErrorClass.INVALID_SCHEMA_OR_RELATION_NAME.error(NAME + ": not a table name: " + table,
            Map.of("function", NAME, "name", table.toString()));
      }
      MaintenanceStatements.Located t = MaintenanceStatements.locate(session, parts,
          io.filecommit.security.Privilege.READ);
      Map<String, String> options = new HashMap<>();
      options.put("readChangeFeed", "true");
      bound(args.get(1), "starting", 2, options);
      if (args.size() == 3) {
        bound(args.get(2), "ending", 3, options);
      }
      return session.baseRelationToDataFrame(FileCommitDataSource.relation(session, t.path(), options)).logicalPlan();
    });
  }

  private static void bound(Expression e, String prefix, int position, Map<String, String> options) {
    Object v = constant(e, prefix, position);
    if (v == null) {
      throw ErrorClass.DELTA_CDC_READ_NULL_RANGE_BOUNDARY.error(NAME + ": the " + prefix + " bound is null",
          Map.of("function", NAME));
    }
    if (e.dataType() instanceof IntegralType) {
      options.put(prefix + "Version", v.toString());
    } else if (e.dataType() instanceof org.apache.spark.sql.types.TimestampType
        || e.dataType() instanceof org.apache.spark.sql.types.TimestampNTZType) {
      // microseconds since the epoch: the reader's timestamp text in the session's time zone
      java.time.Instant at = java.time.Instant.EPOCH.plus((Long) v, java.time.temporal.ChronoUnit.MICROS);
      java.time.ZoneId zone = e.dataType() instanceof org.apache.spark.sql.types.TimestampType
          ? java.time.ZoneId.of(FileCommitCatalog.session().sessionState().conf().sessionLocalTimeZone())
          : java.time.ZoneOffset.UTC;
      options.put(prefix + "Timestamp", java.time.LocalDateTime.ofInstant(at, zone).toString().replace('T', ' '));
    } else {
      options.put(prefix + "Timestamp", v.toString());
    }
  }

  private static Object constant(Expression e, String argument, int position) {
    if (!e.foldable()) {
      throw ErrorClass.DELTA_CDC_NON_CONSTANT_ARGUMENT.error(NAME + " takes constant arguments, got " + e.sql(),
          Map.of("function", NAME, "functionName", NAME, "argumentName", argument, "pos", Integer.toString(position),
              "sqlExpr", e.sql()));
    }
    return e.eval(null);
  }
}
