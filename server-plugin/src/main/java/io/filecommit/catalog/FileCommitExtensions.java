package io.filecommit.catalog;

import org.apache.spark.sql.SparkSessionExtensions;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * The session extension of Delta tables by name and SQL (Delta's {@code
 * DeltaSparkSessionExtension}): set {@code spark.sql.extensions=io.filecommit.catalog.FileCommitExtensions}
 * (a static setting) together with the catalog {@link FileCommitCatalog}. It injects the analysis
 * rule {@code TableResolution} (reads of the catalog's tables, DELETE / UPDATE / MERGE INTO,
 * dynamic partition overwrite, ADD CONSTRAINT).
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
    return BoxedUnit.UNIT;
  }
}
