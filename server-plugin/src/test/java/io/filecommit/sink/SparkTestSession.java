package io.filecommit.sink;

import org.apache.spark.sql.classic.SparkSession;

/**
 * One local Spark session shared by the sink tests of this JVM. Master {@code local[2,2]}: two
 * threads and up to 2 attempts per task, so a task that fails once is retried within its job.
 */
final class SparkTestSession {
  private static SparkSession session;

  private SparkTestSession() {}

  static synchronized SparkSession get() {
    if (session == null) {
      session = (SparkSession) SparkSession.builder()
          .master("local[2,2]")
          .appName("filecommit-sink-tests")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          .getOrCreate();
      session.sparkContext().setLogLevel("WARN");
    }
    return session;
  }
}
