package io.filecommit.testing;

import org.apache.spark.sql.classic.SparkSession;

/**
 * One local Spark session shared by the JUnit tests of this JVM (never stopped: starting Spark
 * costs seconds per test class). Master {@code local[2,2]}: two
 * threads and up to 2 attempts per task, so a task that fails once is retried within its job.
 */
public final class SparkTestSession {
  private static SparkSession session;

  private SparkTestSession() {}

  /** The shared session, started on first use. */
  public static synchronized SparkSession get() {
    if (session == null) {
      session = (SparkSession) SparkSession.builder()
          .master("local[2,2]")
          .appName("filecommit-tests")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          .getOrCreate();
      session.sparkContext().setLogLevel("WARN");
    }
    return session;
  }
}
