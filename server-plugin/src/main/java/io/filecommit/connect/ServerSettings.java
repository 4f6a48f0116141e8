package io.filecommit.connect;

import io.filecommit.errors.ErrorClass;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.classic.SparkSession;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The settings that decide commit safety belong to the server: which LogStore publishes commits
 * ({@code spark.delta.logStore.*}, Kernel's {@code io.delta.kernel.logStore.*}), filecommit's own
 * ({@code spark.filecommit.*}, e.g. the allowed roots) and which classes implement a file system
 * ({@code spark.hadoop.fs.*.impl}). They are read from the server's static Spark configuration only;
 * a client session that sets one to another value is refused with Spark's {@code
 * CANNOT_MODIFY_STATIC_CONFIG} before anything is read or written, so no client-supplied class
 * name is ever loaded and no client can weaken how another client's commits are published.
 */
final class ServerSettings {
  private ServerSettings() {}

  /** Whether a Spark conf key is owned by the server. */
  static boolean serverOwned(String key) {
    return key.startsWith("spark.delta.logStore.")
        || key.startsWith("spark.filecommit.")
        || key.startsWith("spark.hadoop.io.delta.kernel.logStore.")
        || (key.startsWith("spark.hadoop.fs.") && key.endsWith(".impl"));
  }

  /**
   * Refuses a session whose runtime conf differs from the server's static conf on a server-owned
   * key.
   *
   * @param session the command's session
   * @throws io.filecommit.errors.FileCommitException {@code CANNOT_MODIFY_STATIC_CONFIG} naming the
   *     key (parameter {@code key})
   */
  static void check(SparkSession session) {
    SparkConf server = session.sparkContext().getConf();
    for (Tuple2<String, String> e : CollectionConverters.asJava(session.conf().getAll().toSeq())) {
      String key = e._1();
      if (serverOwned(key) && !e._2().equals(server.get(key, null))) {
        throw ErrorClass.CANNOT_MODIFY_STATIC_CONFIG.error("Cannot modify the value of the static Spark config: "
            + key + ". It decides how this server publishes commits; set it in the server's configuration "
            + "(--conf at start), and unset it in the session (spark.conf.unset)", Map.of("key", key));
      }
    }
  }
}
