package io.filecommit.sink;

import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.UUID;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.internal.io.FileNameSpec;
import org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog;
import org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog$;
import org.apache.spark.sql.execution.streaming.sinks.SinkFileStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A {@code FileCommitProtocol} that makes one write job one batch of a streaming file sink: the
 * files the job writes become visible only when {@link #commitJob} records them as batch {@code
 * batchId} in the sink's {@code _spark_metadata} log (Spark's
 * {@code org.apache.spark.sql.execution.streaming.ManifestFileCommitProtocol}).
 *
 * <p><b>Why this class extends Spark's {@code
 * org.apache.spark.sql.execution.streaming.ManifestFileCommitProtocol}.</b> Spark 4.3.0's {@code
 * FileStreamSink.addBatch} instantiates the class named by {@code
 * spark.sql.streaming.commitProtocolClass} with {@code FileCommitProtocol.instantiate(className,
 * jobId = batchId.toString, outputPath)} and then calls {@code setupManifestOptions(fileLog,
 * batchId)} only when the instance is a Spark {@code ManifestFileCommitProtocol} (a pattern match
 * on that exact class, checked with {@code javap}). A committer that merely extends {@code
 * FileCommitProtocol} would never receive the log and batch id from a streaming query. Spark's
 * class is neither final nor has final methods, so this class subclasses it only to pass that
 * type test and <em>overrides every method Spark's class declares</em> ({@link
 * #setupManifestOptions}, {@link #setupJob}, {@link #commitJob}, {@link #abortJob}, {@link
 * #onTaskCommit}, {@link #setupTask}, both {@code newTaskTempFile} and {@code
 * newTaskTempFileAbsPath} variants, {@link #commitTask}, {@link #abortTask}) with its own
 * implementation, never calling {@code super}; the inherited private fields stay unused. The log
 * format itself is Spark's: entries are Spark {@link SinkFileStatus} objects added through Spark's
 * {@link FileStreamSinkLog}, so the files it writes are byte-compatible and Spark's readers honour
 * them.
 *
 * <p>Lifecycle (driver: {@code setupManifestOptions}, {@code setupJob}, {@code onTaskCommit},
 * {@code commitJob} / {@code abortJob}; executors, on a serialized copy: {@code setupTask}, {@code
 * newTaskTempFile}, {@code commitTask} / {@code abortTask}):
 *
 * <ul>
 *   <li>{@link #setupManifestOptions} must run before {@link #setupJob}, {@link #setupTask} and
 *       {@link #commitJob}; otherwise they throw {@link IllegalStateException}.
 *   <li>{@code setupJob} resets the job's pending files; {@code setupTask} resets the task's added
 *       files.
 *   <li>{@code newTaskTempFile} names a file {@code [prefix]part-<split %05d>-<uuid><ext>} directly
 *       in its final place (the output path or its partition directory) and registers it.
 *   <li>{@code commitTask} returns one {@link SinkFileStatus} per registered file (a {@code
 *       java.util.ArrayList<SinkFileStatus>} payload); {@code abortTask} deletes them.
 *   <li>{@code onTaskCommit} adds a committed task's statuses to the pending files; {@code abortJob}
 *       deletes the pending files.
 *   <li>{@code commitJob} adds all statuses to the log as batch {@code batchId} and logs {@code
 *       Committed batch <id>}; when the log already has that batch it throws {@code
 *       IllegalStateException("Race while writing batch <id>")} (Spark's {@code FileFormatWriter}
 *       then calls {@code abortJob}, which deletes this job's files). The pending files are
 *       cleared <em>before</em> {@code fileLog.add} (as Spark's own committer does), so no later
 *       {@code abortJob} can delete a file the log lists. When {@code add} throws, the outcome is
 *       read from the log: the batch lists this job's files -> committed (the failure came after);
 *       absent -> {@code FILECOMMIT_LOG_WRITE_FAILED} and the files go back to {@code abortJob};
 *       another writer's -> the race error; unreadable -> {@code FILECOMMIT_COMMIT_STATE_UNKNOWN},
 *       the files stay on disk, invisible to readers of the log.
 * </ul>
 *
 * <p>Concurrency: adding a batch is serialized per log directory inside this JVM, because the
 * no-overwrite rename of Hadoop's local file system checks and renames in two steps; across JVMs
 * the file system's no-overwrite rename decides (atomic on HDFS and most object-store committers
 * Spark supports for checkpoints). One instance serves one job; it is not thread-safe.
 *
 * <p>Over 400 lines: Spark's ManifestFileCommitProtocol lifecycle and the batch-id manifest it
 * commits are one protocol.
 */
public class ManifestFileCommitProtocol extends org.apache.spark.sql.execution.streaming.ManifestFileCommitProtocol {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ManifestFileCommitProtocol.class);
  /**
   * Per-JVM commit locks, striped by the log directory (qualified path string): one sink's commits
   * never run at once in this JVM; two sinks may share a stripe (then they wait for each other,
   * which is harmless). A fixed number, so the locks do not grow with the sinks a server has seen.
   */
  private static final Object[] COMMIT_LOCKS = java.util.stream.Stream.generate(Object::new).limit(256).toArray();

  /** Job id given at construction. */
  private final String jobId;
  /** The sink root, as given at construction. */
  private final String outputPath;
  /** -1 until {@link #setupManifestOptions}; serialized to executors so tasks can check setup. */
  private long batchId = -1L;
  private transient FileStreamSinkLog fileLog;
  private transient List<String> addedFiles;
  private transient List<SinkFileStatus> pendingCommitFiles;
  private transient List<SinkFileStatus> committedFiles;

  /**
   * Creates the committer; the signature {@code FileCommitProtocol.instantiate} looks for.
   *
   * @param jobId job id (unused; {@code FileStreamSink} passes the batch id as a string)
   * @param path the sink root the files are written under (a Hadoop path or URI string)
   * @throws IllegalArgumentException if {@code path} is null or blank
   */
  public ManifestFileCommitProtocol(String jobId, String path) {
    super(jobId, requirePath(path));
    this.jobId = jobId;
    this.outputPath = path;
  }

  private static String requirePath(String path) {
    if (path == null || path.isBlank()) {
      throw new IllegalArgumentException("ManifestFileCommitProtocol needs a non-empty output path, got '" + path + "'");
    }
    return path;
  }

  /** {@return the job id given at construction (unused by the protocol)} */
  public String jobId() {
    return jobId;
  }

  /** {@return the sink root this committer writes under, as given at construction} */
  public String outputPath() {
    return outputPath;
  }

  /** {@return the batch id set by {@link #setupManifestOptions}, or -1 before it} */
  public long batchId() {
    return batchId;
  }

  /**
   * Assigns the sink log and the batch id this job commits (Spark's {@code setupManifestOptions}).
   *
   * @param fileLog the sink's {@code _spark_metadata} log
   * @param batchId the batch id, {@code >= 0}
   * @throws IllegalArgumentException if {@code fileLog} is null or {@code batchId < 0}
   */
  @Override
  public void setupManifestOptions(FileStreamSinkLog fileLog, long batchId) {
    if (fileLog == null) {
      throw new IllegalArgumentException("setupManifestOptions: fileLog is null (output path " + outputPath + ")");
    }
    if (batchId < 0) {
      throw new IllegalArgumentException("setupManifestOptions: batch id must be >= 0, got " + batchId);
    }
    this.fileLog = fileLog;
    this.batchId = batchId;
  }

  private void requireManifestOptions(String method) {
    if (batchId < 0) {
      throw new IllegalStateException("setupManifestOptions(fileLog, batchId) must be called before " + method
          + " on io.filecommit.sink.ManifestFileCommitProtocol for " + outputPath);
    }
  }

  private void requireFileLog(String method) {
    requireManifestOptions(method);
    if (fileLog == null) {
      throw new IllegalStateException(method + " runs on the driver after setupManifestOptions; this "
          + "ManifestFileCommitProtocol for " + outputPath + " has no file log (a deserialized task-side copy?)");
    }
  }

  /**
   * Starts the job: resets the pending files to an empty list (as Spark's).
   *
   * @param jobContext the Hadoop job context (unused)
   * @throws IllegalStateException if {@link #setupManifestOptions} was not called
   */
  @Override
  public void setupJob(JobContext jobContext) {
    requireFileLog("setupJob");
    pendingCommitFiles = new ArrayList<>();
    committedFiles = null;
  }

  /**
   * Starts a task: resets the task's added files to an empty list (as Spark's).
   *
   * @param taskContext the task attempt
   * @throws IllegalStateException if {@link #setupManifestOptions} was not called on the driver
   *     before this copy was serialized
   */
  @Override
  public void setupTask(TaskAttemptContext taskContext) {
    requireManifestOptions("setupTask");
    addedFiles = new ArrayList<>();
  }

  /**
   * A new file for the task: {@code <path>[/<dir>]/<prefix>part-<split %05d>-<uuid><suffix>},
   * registered in the task's added files (as Spark's). The file is written in place.
   *
   * @param taskContext the task attempt; its task id is the split number
   * @param dir partition directory relative to the output path (e.g. {@code day=2024-01-01}), or
   *     empty
   * @param spec file name prefix and suffix (extension, e.g. {@code .c000.snappy.parquet})
   * @return the file's full path string
   * @throws IllegalStateException if {@link #setupTask} has not run
   */
  @Override
  public String newTaskTempFile(TaskAttemptContext taskContext, Option<String> dir, FileNameSpec spec) {
    if (addedFiles == null) {
      throw new IllegalStateException("newTaskTempFile before setupTask on ManifestFileCommitProtocol for " + outputPath);
    }
    int split = taskContext.getTaskAttemptID().getTaskID().getId();
    String name = spec.prefix() + String.format(Locale.ROOT, "part-%05d-%s", split, UUID.randomUUID()) + spec.suffix();
    Path parent = dir.isDefined() ? new Path(new Path(outputPath), dir.get()) : new Path(outputPath);
    String file = new Path(parent, name).toString();
    addedFiles.add(file);
    return file;
  }

  /**
   * Same as {@link #newTaskTempFile(TaskAttemptContext, Option, FileNameSpec)} with an empty prefix
   * and {@code ext} as the suffix.
   */
  @Override
  public String newTaskTempFile(TaskAttemptContext taskContext, Option<String> dir, String ext) {
    return newTaskTempFile(taskContext, dir, new FileNameSpec("", ext));
  }

  /**
   * Not supported: a sink's files live under its root, where the log can describe them.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public String newTaskTempFileAbsPath(TaskAttemptContext taskContext, String absoluteDir, FileNameSpec spec) {
    throw new UnsupportedOperationException(
        "ManifestFileCommitProtocol does not support absolute output locations (" + absoluteDir + "): write under " + outputPath);
  }

  /**
   * Not supported, as {@link #newTaskTempFileAbsPath(TaskAttemptContext, String, FileNameSpec)}.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public String newTaskTempFileAbsPath(TaskAttemptContext taskContext, String absoluteDir, String ext) {
    return newTaskTempFileAbsPath(taskContext, absoluteDir, new FileNameSpec("", ext));
  }

  /**
   * Commits a task: one {@link SinkFileStatus} per added file (qualified, URI-encoded path; size in
   * bytes; modification time in ms since the epoch; action {@code add}), in creation order (as Spark's
   * {@code commitTask}).
   *
   * @param taskContext the task attempt (its configuration resolves the file system)
   * @return a message whose payload is a {@code java.util.ArrayList<SinkFileStatus>}
   * @throws UncheckedIOException if a file's status cannot be read (e.g. it does not exist)
   */
  @Override
  public TaskCommitMessage commitTask(TaskAttemptContext taskContext) {
    ArrayList<SinkFileStatus> statuses = new ArrayList<>();
    for (String f : addedFiles == null ? List.<String>of() : addedFiles) {
      Path p = new Path(f);
      try {
        FileSystem fs = p.getFileSystem(taskContext.getConfiguration());
        FileStatus st = fs.getFileStatus(p);
        statuses.add(new SinkFileStatus(fs.makeQualified(p).toUri().toString(), st.getLen(), st.isDirectory(),
            st.getModificationTime(), st.getReplication(), st.getBlockSize(), FileStreamSinkLog$.MODULE$.ADD_ACTION()));
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read the status of written file " + f, e);
      }
    }
    return new TaskCommitMessage(statuses);
  }

  /**
   * Aborts a task: deletes its added files (best effort; failures are logged) and clears them
   * (as Spark's).
   *
   * @param taskContext the task attempt (its configuration resolves the file system)
   */
  @Override
  public void abortTask(TaskAttemptContext taskContext) {
    if (addedFiles == null) {
      return;
    }
    for (String f : addedFiles) {
      delete(new Path(f), taskContext.getConfiguration());
    }
    addedFiles.clear();
  }

  /**
   * Driver side of a committed task: adds its {@link SinkFileStatus}es to the pending files (as Spark's
   * {@code onTaskCommit}).
   *
   * @param taskCommit the message {@link #commitTask} returned
   * @throws IllegalStateException if {@link #setupJob} has not run
   * @throws IllegalArgumentException for a message that does not come from {@link #commitTask}
   */
  @Override
  public void onTaskCommit(TaskCommitMessage taskCommit) {
    if (pendingCommitFiles == null) {
      throw new IllegalStateException("onTaskCommit before setupJob on ManifestFileCommitProtocol for " + outputPath);
    }
    pendingCommitFiles.addAll(statusesOf(taskCommit));
  }

  /**
   * Commits the job: adds the statuses of all task commits to the log as batch {@code batchId}
   * (Spark's {@link FileStreamSinkLog#add}: a new file {@code _spark_metadata/<batchId>}, or {@code
   * <batchId>.compact} on a compaction batch, written to a temporary name and renamed without
   * overwrite) and logs {@code Committed batch <id>} (as Spark's).
   *
   * <p>The pending files are cleared before {@code add} is called, as in Spark's own committer:
   * {@code add} can write the batch and then throw (compaction, clean-up of expired batch files),
   * and the {@link #abortJob} Spark calls next must not delete files the batch lists. When {@code
   * add} throws or returns false, the pending files are restored for {@code abortJob} only if batch
   * {@code batchId} is absent from the log or lists none of them.
   *
   * @param jobContext the Hadoop job context (unused)
   * @param taskCommits the messages of every task, from {@link #commitTask}
   * @throws IllegalStateException {@code "Race while writing batch <id>"} when the log already has
   *     batch {@code batchId}; or when {@link #setupManifestOptions} was not called
   */
  @Override
  public void commitJob(JobContext jobContext, scala.collection.immutable.Seq<TaskCommitMessage> taskCommits) {
    requireFileLog("commitJob");
    List<SinkFileStatus> statuses = new ArrayList<>();
    for (TaskCommitMessage m : CollectionConverters.asJava(taskCommits)) {
      statuses.addAll(statusesOf(m));
    }
    // As Spark's own sink: forget the pending files BEFORE adding the batch. add() can throw after it
    // wrote the batch file (compaction, retention clean-up); the abortJob Spark then calls must not
    // delete files that a committed batch lists. They go back to abortJob only when the log shows
    // that no batch lists them: a clean "not added" (another writer owns the batch id), or an add
    // that threw and left batch batchId absent or listing none of our files.
    List<SinkFileStatus> pending = pendingCommitFiles == null ? List.of() : new ArrayList<>(pendingCommitFiles);
    if (pendingCommitFiles != null) {
      pendingCommitFiles.clear();
    }
    boolean added;
    try {
      Object lock = COMMIT_LOCKS[Math.floorMod(fileLog.metadataPath().toString().hashCode(), COMMIT_LOCKS.length)];
      synchronized (lock) {
        added = fileLog.add(batchId, statuses.toArray(new SinkFileStatus[0]));
      }
    } catch (Throwable t) {
      // The outcome is read from the log, never guessed from the exception.
      Outcome outcome = outcomeOf(pending, statuses);
      if (outcome == Outcome.OURS) {
        LOG.warn("Batch {} of {} was added although the log reported {}: committed", batchId, outputPath, t.toString());
        committedFiles = Collections.unmodifiableList(statuses);
        return;
      }
      if (outcome == Outcome.UNKNOWN) {
        throw ErrorClass.FILECOMMIT_COMMIT_STATE_UNKNOWN.error("Cannot tell whether batch " + batchId + " of "
            + outputPath + " was committed: adding it to the sink log failed (" + t + ") and the log cannot be read "
            + "back; its files were kept. Write the batch again to converge", t,
            Map.of("batchId", Long.toString(batchId), "path", outputPath));
      }
      if (pendingCommitFiles != null) {
        pendingCommitFiles.addAll(pending);
      }
      if (outcome == Outcome.ABSENT) {
        throw ErrorClass.FILECOMMIT_LOG_WRITE_FAILED.error("Adding batch " + batchId + " to the sink log of "
            + outputPath + " failed and the log shows it absent; nothing was committed: " + t, t,
            Map.of("batchId", Long.toString(batchId), "path", outputPath));
      }
      throw new IllegalStateException("Race while writing batch " + batchId, t);
    }
    if (!added) {
      if (pendingCommitFiles != null) {
        pendingCommitFiles.addAll(pending);
      }
      throw new IllegalStateException("Race while writing batch " + batchId);
    }
    LOG.info("Committed batch {}", batchId);
    committedFiles = Collections.unmodifiableList(statuses);
  }

  /** What the log says about batch {@code batchId} after a failed {@code fileLog.add}. */
  private enum Outcome {
    /** The batch lists this job's files: it was committed (the failure came after). */
    OURS,
    /** The batch is absent: nothing was committed. */
    ABSENT,
    /** Another writer's batch holds the id. */
    OTHERS,
    /** The log cannot be read: the batch may or may not be ours. */
    UNKNOWN
  }

  private Outcome outcomeOf(List<SinkFileStatus> pending, List<SinkFileStatus> statuses) {
    try {
      Option<SinkFileStatus[]> batch = fileLog.get(batchId);
      if (batch.isEmpty()) {
        return Outcome.ABSENT;
      }
      java.util.Set<Path> listed = new java.util.HashSet<>();
      for (SinkFileStatus s : batch.get()) {
        listed.add(s.toFileStatus().getPath());
      }
      for (List<SinkFileStatus> ours : List.of(pending, statuses)) {
        for (SinkFileStatus s : ours) {
          if (listed.contains(s.toFileStatus().getPath())) {
            return Outcome.OURS;
          }
        }
      }
      // An empty batch of ours lists nothing: the id is committed either way, with no file.
      return statuses.isEmpty() && pending.isEmpty() ? Outcome.OURS : Outcome.OTHERS;
    } catch (Throwable t) {
      LOG.warn("Cannot read batch {} of {} back after a failed add: {}", batchId, outputPath, t.toString());
      return Outcome.UNKNOWN;
    }
  }

  /**
   * Aborts the job: deletes every pending file (best effort; failures are logged) and clears the
   * list (as Spark's).
   *
   * @param jobContext the Hadoop job context (its configuration resolves the file system)
   */
  @Override
  public void abortJob(JobContext jobContext) {
    if (pendingCommitFiles == null) {
      return;
    }
    for (SinkFileStatus s : pendingCommitFiles) {
      delete(s.toFileStatus().getPath(), jobContext.getConfiguration());
    }
    pendingCommitFiles.clear();
  }

  /** {@return the current task's added files (full path strings), in order; empty before {@link #setupTask}} */
  public List<String> addedFiles() {
    return addedFiles == null ? List.of() : List.copyOf(addedFiles);
  }

  /** {@return the job's pending files (statuses of committed tasks not yet in the log); empty before setupJob} */
  public List<SinkFileStatus> pendingCommitFiles() {
    return pendingCommitFiles == null ? List.of() : List.copyOf(pendingCommitFiles);
  }

  /** {@return the statuses {@link #commitJob} added to the log; empty before a successful commit} */
  public List<SinkFileStatus> committedFiles() {
    return committedFiles == null ? List.of() : committedFiles;
  }

  @SuppressWarnings("unchecked")
  private static List<SinkFileStatus> statusesOf(TaskCommitMessage m) {
    Object obj = m.obj();
    if (obj instanceof List<?> list) {
      for (Object o : list) {
        if (!(o instanceof SinkFileStatus)) {
          throw new IllegalArgumentException("Task commit message holds a " + (o == null ? "null" : o.getClass().getName())
              + ", expected SinkFileStatus");
        }
      }
      return (List<SinkFileStatus>) list;
    }
    if (obj instanceof scala.collection.Seq<?> seq) {
      return statusesOf(new TaskCommitMessage(new ArrayList<>(CollectionConverters.asJava(seq))));
    }
    throw new IllegalArgumentException("Task commit message payload is a "
        + (obj == null ? "null" : obj.getClass().getName()) + ", expected a list of SinkFileStatus");
  }

  private static void delete(Path p, org.apache.hadoop.conf.Configuration conf) {
    try {
      FileSystem fs = p.getFileSystem(conf);
      if (fs.exists(p) && !fs.delete(p, false)) {
        LOG.warn("Could not delete {}", p);
      }
    } catch (IOException e) {
      LOG.warn("Could not delete {}: {}", p, e.toString());
    }
  }
}
