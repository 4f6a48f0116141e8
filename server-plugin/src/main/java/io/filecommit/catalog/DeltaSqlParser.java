package io.filecommit.catalog;

import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParameterContext;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.parser.SqlStatementSplitResult;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * The session's SQL parser with Delta's maintenance statements (Delta's {@code DeltaSqlParser},
 * which the session extension injects the same way): a statement {@link DeltaStatement} recognises
 * becomes a command of {@link MaintenanceStatements}, a grant statement ({@link GrantStatement}:
 * GRANT, REVOKE, SHOW GRANTS) one of {@link GrantStatements}; every other text, and every other kind of
 * parse (expressions, identifiers, types), goes to the parser it wraps (Spark's), which also
 * reports the syntax errors ({@code PARSE_SYNTAX_ERROR}).
 */
final class DeltaSqlParser implements ParserInterface {
  private final SparkSession session;
  private final ParserInterface delegate;

  /**
   * The parser of a session.
   *
   * @param session the session
   * @param delegate the parser it wraps
   */
  DeltaSqlParser(SparkSession session, ParserInterface delegate) {
    this.session = session;
    this.delegate = delegate;
  }

  @Override
  public LogicalPlan parsePlan(String sqlText) throws ParseException {
    LogicalPlan ours = ours(sqlText);
    return ours != null ? ours : SharedModeCheck.parsed(session, delegate.parsePlan(sqlText));
  }

  @Override
  public LogicalPlan parsePlanWithParameters(String sqlText, ParameterContext context) throws ParseException {
    LogicalPlan ours = ours(sqlText);
    return ours != null ? ours : SharedModeCheck.parsed(session, delegate.parsePlanWithParameters(sqlText, context));
  }

  /** The plan of a Delta maintenance statement or a grant statement, or null for any other text. */
  private LogicalPlan ours(String sqlText) {
    DeltaStatement s = DeltaStatement.parse(sqlText);
    if (s != null) {
      return MaintenanceStatements.plan(session, s);
    }
    GrantStatement g = GrantStatement.parse(sqlText);
    return g != null ? GrantStatements.plan(session, g) : null;
  }

  @Override
  public Expression parseExpression(String sqlText) throws ParseException {
    return delegate.parseExpression(sqlText);
  }

  @Override
  public TableIdentifier parseTableIdentifier(String sqlText) throws ParseException {
    return delegate.parseTableIdentifier(sqlText);
  }

  @Override
  public FunctionIdentifier parseFunctionIdentifier(String sqlText) throws ParseException {
    return delegate.parseFunctionIdentifier(sqlText);
  }

  @Override
  public scala.collection.immutable.Seq<String> parseMultipartIdentifier(String sqlText) throws ParseException {
    return delegate.parseMultipartIdentifier(sqlText);
  }

  @Override
  public org.apache.spark.sql.catalyst.parser.TemporalIdentifier parseTemporalTableIdentifier(String sqlText)
      throws ParseException {
    return delegate.parseTemporalTableIdentifier(sqlText);
  }

  @Override
  public LogicalPlan parseQuery(String sqlText) throws ParseException {
    return delegate.parseQuery(sqlText);
  }

  @Override
  public StructType parseRoutineParam(String sqlText) throws ParseException {
    return delegate.parseRoutineParam(sqlText);
  }

  @Override
  public SqlStatementSplitResult splitStatements(String sqlText) {
    return delegate.splitStatements(sqlText);
  }

  @Override
  public StructType parseTableSchema(String sqlText) throws ParseException {
    return delegate.parseTableSchema(sqlText);
  }

  @Override
  public DataType parseDataType(String sqlText) throws ParseException {
    return delegate.parseDataType(sqlText);
  }
}
