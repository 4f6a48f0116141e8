package io.filecommit.files;

import io.filecommit.delta.PartitionPaths;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.storage.FileTree;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileNameSpec;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A {@link FileCommitProtocol} that writes data files in place under a table root and hands the
 * added files back to the driver as Delta file actions, leaving the table commit to the transaction
 * (Delta's {@code org.apache.spark.sql.delta.files.DelayedCommitProtocol}; protocol "Add File and
 * Remove File", "Add CDC File").
 *
 * <p>File names are {@code <prefix>-<split %05d>-<uuid><ext>} with prefix {@code part}, or {@code
 * cdc} for change data. Directories are Spark's Hive-style partition directories, with the virtual
 * {@code __is_cdc} partition routed as Delta does ({@link #routeCdcDir}); with a random prefix of
 * length N a table file goes to {@code <N random [0-9A-Za-z]>/<name>} and a change file to {@code
 * _change_data/<N random>/<name>}, the partition values then living only in the action.
 * {@link #commitTask} builds each file's action (size, modification time, Parquet footer
 * statistics, as its writer left them in {@link WrittenFiles} or else read back); {@link
 * #commitJob} collects them on the driver. Instances are serialized to executors: driver-only
 * registries are transient.
 *
 * <p><b>No debris.</b> Delta's {@code abortTask} and {@code abortJob} do nothing (files of a failed
 * write wait for VACUUM). Here a failed write leaves nothing behind: {@link #abortTask} deletes the
 * attempt's files; {@link #onTaskCommit} records committed tasks' files on the driver, because
 * Spark calls {@code abortJob} without task messages; {@link #abortJob} deletes those and what
 * {@link #commitJob} collected; {@link #deleteWrittenFiles} and {@link #sweepJobFiles} serve the
 * transaction when the table commit does not land (never after it landed). Every file UUID starts
 * with this committer's 64-bit job token, so a task that finished after its job failed is found by
 * name. Deletes are best effort: failures are logged, never thrown over the original error.
 *
 * <p>Over 400 lines: Spark's FileCommitProtocol lifecycle (job, task, file names, abort and
 * sweep) in one class, as Delta's DelayedCommitProtocol.
 */
public class DelayedCommitProtocol extends FileCommitProtocol implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Name of the virtual partition column that splits change data from table data. */
  public static final String CDC_PARTITION_COL = "__is_cdc";
  /** Directory (relative to the table root) holding change-data files. */
  public static final String CDC_LOCATION = "_change_data";

  static final String CDC_PARTITION_FALSE = CDC_PARTITION_COL + "=false";
  static final String CDC_PARTITION_TRUE = CDC_PARTITION_COL + "=true";
  static final Pattern CDC_PARTITION_TRUE_REGEX = Pattern.compile(Pattern.quote(CDC_PARTITION_TRUE));

  private static final String PREFIX_CHARS =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

  /** Job id given at creation. */
  private final String jobId;
  /** The table's data directory. */
  private final String path;
  /** Length of the random directory prefix, or null for none. */
  private final Integer randomPrefixLength;
  /** Leaf columns that get per-file statistics. */
  private final int numIndexedCols;
  /**
   * The first three groups ({@code xxxxxxxx-xxxx-xxxx}, 64 random bits) of every file UUID of this
   * committer (the last two groups stay random per file), so that the files of a failed job can be
   * found by name even when a task finished after the job failed ({@link #sweepJobFiles}). 64 bits
   * make it practically impossible that another job's file carries the same token.
   */
  private final String jobToken = newJobToken();

  private static String newJobToken() {
    String hex = String.format("%016x", new java.security.SecureRandom().nextLong());
    return hex.substring(0, 8) + "-" + hex.substring(8, 12) + "-" + hex.substring(12, 16);
  }

  /** Executor side: (partition values, relative file-system path) of each file of this task. */
  private transient List<Map.Entry<Map<String, String>, String>> addedFiles;
  /** Driver side: AddFiles of all committed tasks. */
  private transient List<AddFile> addedStatuses = new ArrayList<>();
  /** Driver side: AddCDCFiles of all committed tasks. */
  private transient List<AddCDCFile> changeFiles = new ArrayList<>();
  /** Driver side: log paths of the files of every task committed so far (from onTaskCommit). */
  private transient List<String> committedTaskFiles = new ArrayList<>();

  /**
   * Creates a committer.
   *
   * @param jobId job id (Delta always passes {@code "delta"}; unused)
   * @param path the table's data directory (fully qualified path string)
   * @param randomPrefixLength length of the random directory prefix, or {@code null} for none
   * @param numIndexedCols leaf columns that get per-file statistics (Delta's {@code
   *     dataSkippingNumIndexedCols}, 32 by default; negative: all)
   * @throws IllegalArgumentException if {@code randomPrefixLength} is not positive
   */
  public DelayedCommitProtocol(String jobId, String path, Integer randomPrefixLength, int numIndexedCols) {
    if (randomPrefixLength != null && randomPrefixLength <= 0) {
      throw new IllegalArgumentException("randomPrefixLength must be positive, got " + randomPrefixLength);
    }
    this.jobId = jobId;
    this.path = path;
    this.randomPrefixLength = randomPrefixLength;
    this.numIndexedCols = numIndexedCols;
  }

  /**
   * Creates a committer with no random prefix and default statistics (as {@code getCommitter}).
   *
   * @param jobId job id (unused)
   * @param path the table's data directory (fully qualified path string)
   */
  public DelayedCommitProtocol(String jobId, String path) {
    this(jobId, path, null, io.filecommit.delta.TableConfig.DATA_SKIPPING_NUM_INDEXED_COLS.defaultValue());
  }

  /** {@return the job id given at creation} */
  public String jobId() {
    return jobId;
  }

  /** {@return the 64-bit token in every file name of this committer ({@code xxxxxxxx-xxxx-xxxx})} */
  public String jobToken() {
    return jobToken;
  }

  /** {@return the data directory this committer writes under} */
  public String path() {
    return path;
  }

  /** {@return the AddFiles of the committed job (driver side), in task order} */
  public List<AddFile> addedStatuses() {
    return Collections.unmodifiableList(addedStatuses);
  }

  /** {@return the AddCDCFiles of the committed job (driver side), in task order} */
  public List<AddCDCFile> changeFiles() {
    return Collections.unmodifiableList(changeFiles);
  }

  /** {@return the files handed out to the current task so far (executor side); for tests and diagnostics} */
  public List<Map.Entry<Map<String, String>, String>> addedFiles() {
    return addedFiles == null ? List.of() : Collections.unmodifiableList(addedFiles);
  }

  /** Does nothing, as Delta's. */
  @Override
  public void setupJob(JobContext jobContext) {}

  /**
   * Records, on the driver, the files of a committed task, so that {@link #abortJob} can delete
   * them if the job fails later (Spark calls {@code abortJob} with no task messages).
   *
   * @param taskCommit the message returned by {@link #commitTask}
   */
  @Override
  public synchronized void onTaskCommit(TaskCommitMessage taskCommit) {
    if (taskCommit.obj() instanceof List<?> list) {
      for (Object o : list) {
        if (o instanceof FileAction a) {
          committedTaskFiles.add(a.path());
        }
      }
    }
  }

  /**
   * Deletes the files of every committed task of this committer: those recorded by {@link
   * #onTaskCommit} and the AddFiles / AddCDCFiles a {@link #commitJob} collected (the job failed;
   * nothing of this write will be committed). Delta's does nothing; see the class comment.
   * Files of tasks that failed are deleted by their own {@link #abortTask}. Best effort: failures
   * are logged, never thrown.
   *
   * @param jobContext the job (its configuration resolves the file system); may be null
   */
  @Override
  public synchronized void abortJob(JobContext jobContext) {
    deleteAll(writtenFiles(), jobContext == null ? new org.apache.hadoop.conf.Configuration() : jobContext.getConfiguration());
    committedTaskFiles.clear();
  }

  /**
   * Deletes every file this committer's jobs wrote and the driver knows of (files of committed
   * tasks, the AddFiles and AddCDCFiles of {@link #commitJob}), for a write that fails after
   * {@code commitJob} but before its table commit landed (conflict, constraint error, duplicate
   * {@code txn}). <b>Must never be called once the table commit landed</b>: the committed version
   * references these files. The registries {@link #addedStatuses()} and {@link #changeFiles()}
   * keep their entries (callers may hold them); calling twice is harmless. Best effort: failures
   * are logged, never thrown.
   *
   * @param conf Hadoop configuration
   */
  public synchronized void deleteWrittenFiles(org.apache.hadoop.conf.Configuration conf) {
    deleteAll(writtenFiles(), conf);
    committedTaskFiles.clear();
  }

  /** Log paths of every file the driver knows this committer wrote, without duplicates. */
  private List<String> writtenFiles() {
    List<String> all = new ArrayList<>(committedTaskFiles);
    addedStatuses.forEach(a -> all.add(a.path()));
    changeFiles.forEach(c -> all.add(c.path()));
    return all;
  }

  /**
   * Deletes every file under the data directory whose name is {@code (part|cdc)-<split>-<this
   * committer's job token>-<4 hex>-<12 hex>...} (see {@code jobToken}): the files of a failed write,
   * including those of tasks whose commit message the driver never received. Lists the directory
   * tree with {@link FileTree} (skipping {@code _delta_log} and the directories of other tables or
   * sinks nested below; files other writers delete meanwhile do not stop it); for failure paths
   * only, and like {@link #deleteWrittenFiles} never after the table commit landed. Best effort.
   *
   * @param conf Hadoop configuration
   */
  public void sweepJobFiles(org.apache.hadoop.conf.Configuration conf) {
    Path root = new Path(path);
    Pattern ours = Pattern.compile("(part|cdc)-[0-9]{5,}-" + Pattern.quote(jobToken) + "-[0-9a-f]{4}-[0-9a-f]{12}.*");
    try {
      FileSystem fs = root.getFileSystem(conf);
      List<Path> doomed = new ArrayList<>();
      FileTree.walk(fs, root, FileTree::notDeltaLog, file -> {
        if (ours.matcher(file.getPath().getName()).matches()) {
          doomed.add(file.getPath());
        }
      });
      for (Path p : doomed) {
        fs.delete(p, false);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("filecommit: could not sweep the files of an aborted write under " + root + ": " + e);
    }
  }

  private void deleteAll(List<String> logPaths, org.apache.hadoop.conf.Configuration conf) {
    java.util.Set<String> seen = new java.util.LinkedHashSet<>(logPaths);
    for (String logPath : seen) {
      Path file = new Path(new Path(path), new Path(java.net.URI.create(logPath).getPath()));
      try {
        file.getFileSystem(conf).delete(file, false);
      } catch (IOException | RuntimeException e) {
        LOG.warn("filecommit: could not delete " + file + " of an aborted write: " + e);
      }
    }
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DelayedCommitProtocol.class);

  /** Starts a task with an empty {@code addedFiles} registry. */
  @Override
  public void setupTask(TaskAttemptContext taskContext) {
    addedFiles = new ArrayList<>();
  }

  /**
   * Deletes the files this task attempt was handed by {@link #newTaskTempFile} (whether or not it
   * finished writing them) and forgets them. Delta's does nothing; see the class comment.
   * Best effort: failures are logged, never thrown over the task's own error.
   *
   * @param taskContext the failed task attempt
   */
  @Override
  public void abortTask(TaskAttemptContext taskContext) {
    if (addedFiles == null || addedFiles.isEmpty()) {
      return;
    }
    for (Map.Entry<Map<String, String>, String> f : addedFiles) {
      Path file = new Path(path, f.getValue());
      WrittenFiles.forget(file.toString());
      try {
        file.getFileSystem(taskContext.getConfiguration()).delete(file, false);
      } catch (IOException | RuntimeException e) {
        LOG.warn("filecommit: could not delete " + file + " of an aborted task: " + e);
      }
    }
    addedFiles.clear();
  }

  /**
   * Hands out the absolute path of a new data file and records it in {@code addedFiles}.
   *
   * @param taskContext the task attempt; its task id is the file's split number
   * @param dir Hive-style partition directory from Spark's writer, if the write is partitioned
   * @param ext file name suffix from the writer, e.g. {@code .c000.snappy.parquet}
   * @return absolute path string of the file to write
   * @throws IllegalArgumentException if {@code dir} is not a partition directory
   */
  @Override
  public String newTaskTempFile(TaskAttemptContext taskContext, Option<String> dir, String ext) {
    Map<String, String> partitionValues =
        dir.isDefined() ? PartitionPaths.parsePartitions(dir.get()) : new LinkedHashMap<>();
    String filename = getFileName(taskContext, ext, partitionValues);
    String relativePath = relativePathFor(dir.isDefined() ? dir.get() : null, partitionValues, filename);
    if (addedFiles == null) {
      addedFiles = new ArrayList<>();
    }
    addedFiles.add(new AbstractMap.SimpleImmutableEntry<>(partitionValues, relativePath));
    return new Path(path, relativePath).toString();
  }

  /**
   * The relative path (directory and file name) a new file goes to; see the class comment.
   *
   * @param dir partition directory or null
   * @param partitionValues parsed partition values (may contain {@code __is_cdc})
   * @param filename the file name from {@link #getFileName}
   * @return relative path under the data directory, unescaped (as on the file system)
   */
  String relativePathFor(String dir, Map<String, String> partitionValues, String filename) {
    boolean isCdc = "true".equals(partitionValues.get(CDC_PARTITION_COL));
    if (randomPrefixLength != null) {
      String prefix = randomPrefix(randomPrefixLength);
      return isCdc ? CDC_LOCATION + "/" + prefix + "/" + filename : prefix + "/" + filename;
    }
    if (dir == null) {
      return filename;
    }
    return PartitionPaths.join(List.of(routeCdcDir(dir), filename));
  }

  /**
   * Routes a partition directory carrying the virtual {@code __is_cdc} column (as Delta's {@code newTaskTempFile}): exactly {@code __is_cdc=false} -> "" (the root); {@code __is_cdc=true...} -> first
   * occurrence replaced by {@code _change_data}; {@code __is_cdc=false/x} -> {@code x}; anything
   * else unchanged.
   *
   * @param dir the relative partition directory
   * @return the relative directory the file goes to ("" for the root)
   */
  static String routeCdcDir(String dir) {
    if (dir.equals(CDC_PARTITION_FALSE)) {
      return "";
    }
    if (dir.startsWith(CDC_PARTITION_TRUE)) {
      return CDC_PARTITION_TRUE_REGEX.matcher(dir).replaceFirst(Matcher.quoteReplacement(CDC_LOCATION));
    }
    if (dir.startsWith(CDC_PARTITION_FALSE + "/")) {
      return dir.substring(CDC_PARTITION_FALSE.length() + 1);
    }
    return dir;
  }

  /**
   * File name {@code <prefix>-<split>-<uuid><ext>} (Delta's {@code getFileName}): prefix {@code cdc} when
   * {@code __is_cdc=true}, else {@code part}; split = the task id, {@code %05d}; uuid = a UUID-shaped
   * id whose first three groups are this committer's job token and whose last two are fresh random
   * digits per file (Delta uses a plain random UUID; the token lets {@link #sweepJobFiles} find
   * the job's files).
   *
   * @param taskContext the task attempt
   * @param ext suffix from the writer
   * @param partitionValues the file's partition values
   * @return the file name
   */
  protected String getFileName(TaskAttemptContext taskContext, String ext, Map<String, String> partitionValues) {
    int split = taskContext.getTaskAttemptID().getTaskID().getId();
    String prefix = "true".equals(partitionValues.get(CDC_PARTITION_COL)) ? "cdc" : "part";
    // A UUID whose first three groups are the job token and whose last two are fresh per file.
    return String.format("%s-%05d-%s%s", prefix, split, jobToken + UUID.randomUUID().toString().substring(18), ext);
  }

  private static String randomPrefix(int length) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append(PREFIX_CHARS.charAt(random.nextInt(PREFIX_CHARS.length())));
    }
    return sb.toString();
  }

  /**
   * Always fails: files are only written under the data directory.
   *
   * @throws UnsupportedOperationException {@code <this> does not support adding files with an
   *     absolute path}
   */
  @Override
  public String newTaskTempFileAbsPath(TaskAttemptContext taskContext, String absoluteDir, String ext) {
    throw new UnsupportedOperationException(this + " does not support adding files with an absolute path");
  }

  /**
   * Always fails, as {@link #newTaskTempFileAbsPath(TaskAttemptContext, String, String)}.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public String newTaskTempFileAbsPath(TaskAttemptContext taskContext, String absoluteDir, FileNameSpec spec) {
    throw new UnsupportedOperationException(this + " does not support adding files with an absolute path");
  }

  /**
   * Builds one file action per file of this task, with size, modification time and footer from
   * the file's writer ({@link WrittenFiles}) when it left them, else from the file system (a HEAD
   * and a footer read on object storage), and returns them (a serializable {@code ArrayList<FileAction>}) in the message.
   *
   * @param taskContext the task attempt
   * @return a message whose payload is the task's file actions (empty list if it wrote nothing)
   * @throws UncheckedIOException if a written file cannot be read back
   */
  @Override
  public TaskCommitMessage commitTask(TaskAttemptContext taskContext) {
    ArrayList<FileAction> actions = new ArrayList<>();
    if (addedFiles != null && !addedFiles.isEmpty()) {
      try {
        FileSystem fs = null;
        for (Map.Entry<Map<String, String>, String> f : addedFiles) {
          Path file = new Path(path, f.getValue());
          java.util.Optional<WrittenFiles.Written> written = WrittenFiles.take(file.toString());
          if (written.isPresent()) {
            actions.add(AddedFileActions.of(f, written.get().length(), written.get().modificationTime(),
                () -> ParquetStats.fromFooter(written.get().footer(), numIndexedCols)));
            continue;
          }
          fs = fs == null ? file.getFileSystem(taskContext.getConfiguration()) : fs;
          actions.add(buildActionFromAddedFile(f, fs.getFileStatus(file), taskContext));
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read back files written under " + path, e);
      }
    }
    return new TaskCommitMessage(actions);
  }

  /**
   * Turns an added file into its action (Delta's {@code buildActionFromAddedFile}): {@code __is_cdc} is
   * removed from the partition values; {@code __is_cdc=true} gives an AddCDCFile, anything else an
   * AddFile (dataChange true, statistics from the Parquet footer).
   *
   * @param f (partition values, relative path)
   * @param stat the file's status
   * @param taskContext the task attempt (for the Hadoop configuration)
   * @return the action
   * @throws IOException if the footer cannot be read
   */
  protected FileAction buildActionFromAddedFile(
      Map.Entry<Map<String, String>, String> f, FileStatus stat, TaskAttemptContext taskContext)
      throws IOException {
    return AddedFileActions.of(f, stat.getLen(), stat.getModificationTime(),
        () -> ParquetStats.collect(taskContext.getConfiguration(), stat, numIndexedCols));
  }

  /**
   * Splits the actions of all task messages into {@code addedStatuses} (AddFile) and {@code
   * changeFiles} (AddCDCFile).
   *
   * @param jobContext the job
   * @param taskCommits messages returned by {@link #commitTask}
   * @throws IllegalStateException if a message holds something other than file actions
   */
  @Override
  public synchronized void commitJob(JobContext jobContext, Seq<TaskCommitMessage> taskCommits) {
    for (TaskCommitMessage message : CollectionConverters.asJava(taskCommits)) {
      Object payload = message.obj();
      if (!(payload instanceof List<?> list)) {
        throw new IllegalStateException("Unexpected task commit message payload: " + payload);
      }
      for (Object o : list) {
        if (o instanceof AddFile add) {
          addedStatuses.add(add);
        } else if (o instanceof AddCDCFile cdc) {
          changeFiles.add(cdc);
        } else {
          throw new IllegalStateException("Unexpected file action in task commit message: " + o);
        }
      }
    }
  }

  @Override
  public String toString() {
    return "DelayedCommitProtocol(jobId=" + jobId + ", path=" + path + ")";
  }
}
