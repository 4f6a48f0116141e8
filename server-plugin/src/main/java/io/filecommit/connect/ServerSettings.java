package io.filecommit.connect;

import io.filecommit.delta.ClientSettings;
import io.filecommit.delta.DeltaLogCache;
import java.util.Map;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The settings that decide how this server reads, writes, deletes and publishes belong to the
 * server ({@link ClientSettings} says which): the file systems and their classes, mount tables and
 * default file system, committers, LogStores ({@code spark.delta.logStore.*}), filecommit's own
 * ({@code spark.filecommit.*}, e.g. the allowed roots), and every other key Hadoop reads. A
 * command whose session set one of them to a value not the server's, or whose writer options name
 * one, is refused with Spark's {@code CANNOT_MODIFY_STATIC_CONFIG} before anything is read or
 * written, so no client-supplied class name is ever loaded, no client picks the file system that
 * writes and deletes, and no client can weaken how another client's commits are published.
 *
 * <p>The session's verdict is made once per distinct session SQL conf and kept with its Hadoop conf
 * ({@link DeltaLogCache#sessionHadoopConf}); a command pays one cache lookup. The same conf then
 * checks the command's path against the allowed roots ({@link AllowedRoots}) and opens the file
 * system that writes and deletes: writer options may only differ from it in keys no file system
 * reads.
 */
final class ServerSettings {
  private ServerSettings() {}

  /**
   * Refuses a session that changed a server-owned setting (first step of every command).
   *
   * @param session the command's session
   * @throws io.filecommit.errors.FileCommitException {@code CANNOT_MODIFY_STATIC_CONFIG} naming the
   *     first such key (parameter {@code key})
   */
  static void check(SparkSession session) {
    DeltaLogCache.sessionHadoopConf(session);
  }

  /**
   * A command's writer options, once none names a server-owned setting (with a value not the
   * server's): checked before the command reads or writes anything.
   *
   * @param session the command's session (already {@link #check}ed)
   * @param options the writer options the client sent
   * @return {@code options}
   * @throws io.filecommit.errors.FileCommitException {@code CANNOT_MODIFY_STATIC_CONFIG} naming the
   *     first such option (parameter {@code key})
   */
  static Map<String, String> options(SparkSession session, Map<String, String> options) {
    DeltaLogCache.checkOptions(DeltaLogCache.sessionHadoopConf(session), options);
    return options;
  }
}
