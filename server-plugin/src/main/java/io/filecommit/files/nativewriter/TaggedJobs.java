package io.filecommit.files.nativewriter;

import org.apache.spark.sql.classic.SparkSession;
import scala.Option;

/**
 * The tasks of a Spark job run under a job tag ({@code SparkContext.addJobTag}), as the file writers
 * of this plugin run theirs: after a failed job, Spark's {@code runJob} returns while tasks of the
 * job may still run (being cancelled, or finishing their files); a writer that sweeps the job's
 * files must first wait for them ({@code SparkStatusTracker}).
 */
public final class TaggedJobs {
  private TaggedJobs() {}

  /**
   * Waits (at most {@value #AWAIT_MS} ms) until no task of the jobs tagged {@code tag} runs. The
   * status tracker answers from the listener bus's status store, which lags the scheduler: the bus
   * is drained first, so that every task the failed job launched is counted (else a task still
   * running, or one that finished after the job failed, could write its file after the caller's
   * sweep of the job's files).
   *
   * @param session the session whose jobs ran under {@code tag}
   * @param tag the job tag of the failed write ({@code SparkContext.addJobTag})
   */
  public static void awaitTasks(SparkSession session, String tag) {
    org.apache.spark.SparkStatusTracker tracker = session.sparkContext().statusTracker();
    long deadline = System.currentTimeMillis() + AWAIT_MS;
    try {
      session.sparkContext().listenerBus().waitUntilEmpty(AWAIT_MS);
    } catch (java.util.concurrent.TimeoutException e) {
      LOG.warn("filecommit: the listener bus did not drain in " + AWAIT_MS + " ms; counting tasks as it stands");
    }
    while (System.currentTimeMillis() < deadline) {
      int active = 0;
      for (int jobId : tracker.getJobIdsForTag(tag)) {
        Option<org.apache.spark.SparkJobInfo> job = tracker.getJobInfo(jobId);
        if (job.isEmpty()) {
          continue;
        }
        for (int stageId : job.get().stageIds()) {
          Option<org.apache.spark.SparkStageInfo> stage = tracker.getStageInfo(stageId);
          if (stage.isDefined()) {
            active += stage.get().numActiveTasks();
          }
        }
      }
      if (active == 0) {
        return;
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private static final long AWAIT_MS = 30_000;

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TaggedJobs.class);
}
