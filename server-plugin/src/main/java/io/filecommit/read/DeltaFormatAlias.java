package io.filecommit.read;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;

/**
 * The same reader as {@link FileCommitDataSource}, answering to {@code format("delta")} when the
 * server's static setting {@value #SETTING} is {@code true} (for servers without delta-spark: no
 * delta-spark build exists for this Spark). Spark finds data sources by their {@code shortName}
 * (Spark's {@code DataSource.lookupDataSource}); this one is named {@value #DISABLED_NAME} while the
 * setting is off. With the setting on and delta-spark's {@code DeltaDataSource} on the classpath,
 * two sources would claim {@code delta}: every data source lookup then fails with {@link
 * IllegalStateException} naming the setting, instead of one of the two being picked silently.
 */
public final class DeltaFormatAlias extends FileCommitDataSource {
  /** The server's static setting (Spark conf, not a session's): answer to {@code format("delta")}. */
  public static final String SETTING = "spark.filecommit.read.deltaFormat";
  /** The name while the setting is off (no user asks for it). */
  public static final String DISABLED_NAME = "filecommit-delta-alias";
  /** delta-spark's data source class. */
  static final String DELTA_SPARK_SOURCE = "org.apache.spark.sql.delta.sources.DeltaDataSource";

  @Override
  public String shortName() {
    SparkEnv env = SparkEnv.get();
    return name(env == null ? null : env.conf(), present(DELTA_SPARK_SOURCE));
  }

  /**
   * The short name for a server configuration.
   *
   * @param conf the server's Spark conf (null: setting off)
   * @param deltaSparkPresent whether delta-spark's data source is on the classpath
   * @return {@code delta} or {@value #DISABLED_NAME}
   * @throws IllegalStateException when the setting is on and delta-spark is present
   */
  static String name(SparkConf conf, boolean deltaSparkPresent) {
    if (conf == null || !conf.getBoolean(SETTING, false)) {
      return DISABLED_NAME;
    }
    if (deltaSparkPresent) {
      throw new IllegalStateException(SETTING + "=true makes filecommit answer to format(\"delta\"), but delta-spark ("
          + DELTA_SPARK_SOURCE + ") is on this server's classpath and answers to it too: remove " + SETTING
          + " from the server's configuration (or delta-spark from its classpath) and restart the server");
    }
    return "delta";
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, Thread.currentThread().getContextClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
