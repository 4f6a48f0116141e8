package io.filecommit.catalog;

import org.apache.spark.sql.SparkSessionExtensions;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * The session extension of Delta tables by name and SQL (Delta's {@code
 * DeltaSparkSessionExtension}): set {@code spark.sql.extensions=io.filecommit.catalog.FileCommitExtensions}
 * (a static setting) together with the catalog {@link FileCommitCatalog}. It injects the analysis
 * rule {@code TableResolution} (reads of the catalog's tables, DELETE / UPDATE / MERGE INTO,
 * dynamic partition overwrite, ADD CONSTRAINT), the parser of Delta's maintenance statements
 * ({@code DeltaSqlParser}: OPTIMIZE, VACUUM, RESTORE, DESCRIBE HISTORY / DETAIL, and GRANT / REVOKE /
 * SHOW GRANTS of {@code GrantStatements}) around Spark's, the table-valued function {@code
 * table_changes} ({@code TableChangesFunction}), and shared mode's check of SQL plans ({@code
 * SharedModeCheck}, an analyzer check rule; a no-op unless the server sets {@code
 * spark.filecommit.server.shared=true}).
 */
public final class FileCommitExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  /** The extension; Spark instantiates it by class name. */
  public FileCommitExtensions() {}

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectResolutionRule(new AbstractFunction1<>() {
      @Override
      public TableResolution apply(org.apache.spark.sql.SparkSession session) {
        return new TableResolution((org.apache.spark.sql.classic.SparkSession) session);
      }
    });
    extensions.injectParser(new scala.runtime.AbstractFunction2<>() {
      @Override
      public org.apache.spark.sql.catalyst.parser.ParserInterface apply(org.apache.spark.sql.SparkSession session,
          org.apache.spark.sql.catalyst.parser.ParserInterface delegate) {
        return new DeltaSqlParser((org.apache.spark.sql.classic.SparkSession) session, delegate);
      }
    });
    extensions.injectCheckRule(new AbstractFunction1<>() {
      @Override
      public SharedModeCheck apply(org.apache.spark.sql.SparkSession session) {
        return new SharedModeCheck((org.apache.spark.sql.classic.SparkSession) session);
      }
    });
    extensions.injectTableFunction(new scala.Tuple3<>(
        new org.apache.spark.sql.catalyst.FunctionIdentifier(TableChangesFunction.NAME),
        new org.apache.spark.sql.catalyst.expressions.ExpressionInfo(TableChangesFunction.class.getName(),
            TableChangesFunction.NAME),
        new TableChangesFunction()));
    return BoxedUnit.UNIT;
  }
}
