package io.filecommit.connect;

import io.filecommit.conf.FileCommitConf;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;

/**
 * {@link FileCommitSource} under the name {@code delta}: {@code spark.read.format("delta")} and
 * {@code df.write.format("delta")} reach filecommit on a server without delta-spark (no
 * delta-spark build exists for this Spark), as Delta's own {@code DeltaDataSource} would answer
 * them. Spark finds data sources by their {@code shortName} (Spark's {@code
 * DataSource.lookupDataSource}).
 *
 * <p>The server's static setting {@link FileCommitConf#READ_DELTA_FORMAT} decides: unset or {@code true}, this source
 * answers {@code delta}; {@code false}, it is named {@value #DISABLED_NAME} (no user asks for it)
 * and {@code delta} is left to whatever else provides it. With the setting not {@code false} and
 * delta-spark's {@code DeltaDataSource} on the classpath, two sources would claim {@code delta}:
 * the server refuses to start ({@link ServerStartCheck}), and, on a server started without that
 * check, every data source lookup fails with {@link IllegalStateException} naming the setting,
 * instead of one of the two being picked silently.
 */
public final class DeltaFormatSource extends FileCommitSource {
  /** The name while the setting is {@code false}. */
  public static final String DISABLED_NAME = "filecommit-delta-alias";
  /** delta-spark's data source class. */
  static final String DELTA_SPARK_SOURCE = "org.apache.spark.sql.delta.sources.DeltaDataSource";

  /** Public no-arg constructor (Spark's {@code ServiceLoader} of data sources). */
  public DeltaFormatSource() {}

  @Override
  public String shortName() {
    SparkEnv env = SparkEnv.get();
    return name(env == null ? null : env.conf(), deltaSparkPresent());
  }

  /**
   * The short name for a server configuration.
   *
   * @param conf the server's Spark conf (null: the setting unset)
   * @param deltaSparkPresent whether delta-spark's data source is on the classpath
   * @return {@code delta} or {@value #DISABLED_NAME}
   * @throws IllegalStateException when the setting is not {@code false} and delta-spark is present
   */
  static String name(SparkConf conf, boolean deltaSparkPresent) {
    String value = FileCommitConf.READ_DELTA_FORMAT.raw(conf);
    if (value != null && value.trim().equalsIgnoreCase("false")) {
      return DISABLED_NAME;
    }
    if (value != null && !value.trim().equalsIgnoreCase("true")) {
      throw new IllegalStateException(FileCommitConf.READ_DELTA_FORMAT.key() + " must be true or false, got '" + value + "'");
    }
    if (deltaSparkPresent) {
      throw new IllegalStateException("filecommit answers to format(\"delta\") unless " + FileCommitConf.READ_DELTA_FORMAT.key() + "=false, but "
          + "delta-spark (" + DELTA_SPARK_SOURCE + ") is on this server's classpath and answers to it too: set "
          + FileCommitConf.READ_DELTA_FORMAT.key() + "=false in the server's configuration (delta-spark then answers format(\"delta\"), filecommit "
          + "format(\"filecommit\")), or remove delta-spark from its classpath, and restart the server");
    }
    return "delta";
  }

  /** {@return whether delta-spark's data source class is on the context class loader} */
  static boolean deltaSparkPresent() {
    return onClassPath(DELTA_SPARK_SOURCE);
  }

  /**
   * Whether a class loads from the context class loader (not initialized): how the server finds
   * out that delta-spark is on its class path.
   *
   * @param className a binary class name
   * @return true when it loads, false when it is missing or cannot link
   */
  static boolean onClassPath(String className) {
    try {
      Class.forName(className, false, Thread.currentThread().getContextClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
