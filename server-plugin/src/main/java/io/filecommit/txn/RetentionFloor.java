package io.filecommit.txn;

import io.filecommit.conf.FileCommitConf;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The operator's retention floor: the shortest time a removed or not-yet-committed file is kept
 * under any table this server writes, whatever a client asks. No table property {@code
 * delta.deletedFileRetentionDuration} below it is committed and no VACUUM retention below it is
 * run; VACUUM without a retention uses {@code max(table property, floor)}. Delta has no such
 * setting: its {@code spark.databricks.delta.retentionDurationCheck.enabled} is a session setting
 * that any client may turn off; here the floor is read from the server's static configuration
 * only ({@link FileCommitConf#RETENTION_MINIMUM}, 7 days by default: Delta's default {@code
 * delta.deletedFileRetentionDuration}; a client session cannot set {@code spark.filecommit.*}).
 *
 * <p>Log clean-up ({@code delta.logRetentionDuration}, protocol "Metadata Cleanup") is not bound by
 * it: deleting old commit files after a checkpoint loses no data file.
 */
public final class RetentionFloor {
  private RetentionFloor() {}

  /**
   * The floor of this server.
   *
   * @param session any session of the server (only its static configuration is read)
   * @return the floor in ms (>= 0)
   * @throws IllegalArgumentException when the setting is not a time string (an operator error)
   */
  public static long ms(SparkSession session) {
    long ms = FileCommitConf.RETENTION_MINIMUM.timeMs(session.sparkContext().getConf());
    if (ms < 0) {
      throw new IllegalArgumentException(FileCommitConf.RETENTION_MINIMUM.key() + " must not be negative, got " + ms
          + " ms");
    }
    return ms;
  }
}
