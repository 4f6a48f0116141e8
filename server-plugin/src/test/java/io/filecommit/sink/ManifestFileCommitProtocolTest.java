package io.filecommit.sink;

import io.filecommit.testing.SparkTestSession;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.internal.io.FileNameSpec;
import org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog;
import org.apache.spark.sql.execution.streaming.sinks.SinkFileStatus;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Unit tests of {@link ManifestFileCommitProtocol}: registries, file names, the setup requirement,
 * the race error and the abort paths (as Spark's ManifestFileCommitProtocol). The log is Spark's
 * {@link FileStreamSinkLog}, checked by reading its files as text.
 */
class ManifestFileCommitProtocolTest {
  private static final String UUID_RE = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
  private static org.apache.spark.sql.classic.SparkSession spark;

  @TempDir
  Path tmp;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  private static TaskAttemptContext task(int taskId, int attempt) {
    return new TaskAttemptContextImpl(new Configuration(), new TaskAttemptID("20260101", 3, TaskType.MAP, taskId, attempt));
  }

  private static JobContext job() {
    return new JobContextImpl(new Configuration(), new JobID("20260101", 3));
  }

  private String root() {
    return tmp.toUri().toString();
  }

  private FileStreamSinkLog log() {
    return new FileStreamSinkLog(1, spark, tmp.resolve("_spark_metadata").toUri().toString(), Option.empty());
  }

  private ManifestFileCommitProtocol committer(FileStreamSinkLog log, long batchId) {
    ManifestFileCommitProtocol c = new ManifestFileCommitProtocol("unused", root());
    c.setupManifestOptions(log, batchId);
    c.setupJob(job());
    return c;
  }

  private static File local(String file) {
    return new File(new org.apache.hadoop.fs.Path(file).toUri().getPath());
  }

  private static void writeBytes(String file, int n) throws Exception {
    File f = local(file);
    f.getParentFile().mkdirs();
    Files.write(f.toPath(), new byte[n]);
  }

  @SuppressWarnings("unchecked")
  private static List<SinkFileStatus> payload(TaskCommitMessage m) {
    return (List<SinkFileStatus>) m.obj();
  }

  @Test
  void fileNamesCarrySplitUuidAndPartitionDirectory() {
    ManifestFileCommitProtocol c = committer(log(), 0);
    c.setupTask(task(3, 0));
    String a = c.newTaskTempFile(task(3, 0), Option.empty(), ".c000.snappy.parquet");
    String b = c.newTaskTempFile(task(3, 1), Option.apply("day=2024-01-01"), ".c000.snappy.parquet");
    String p = c.newTaskTempFile(task(42, 0), Option.empty(), new FileNameSpec("pre-", ".json"));
    assertTrue(local(a).getName().matches("part-00003-" + UUID_RE + "\\.c000\\.snappy\\.parquet"), a);
    assertEquals(tmp.toFile(), local(a).getParentFile());
    assertEquals(tmp.resolve("day=2024-01-01").toFile(), local(b).getParentFile());
    assertNotEquals(local(a).getName().substring(11), local(b).getName().substring(11), "every file gets a fresh uuid");
    assertTrue(local(p).getName().matches("pre-part-00042-" + UUID_RE + "\\.json"), p);
    String wide = c.newTaskTempFile(task(123456, 0), Option.empty(), ".x");
    assertTrue(local(wide).getName().startsWith("part-123456-"), wide);
    assertEquals(List.of(a, b, p, wide), c.addedFiles());
  }

  @Test
  void absolutePathsAreRefused() {
    ManifestFileCommitProtocol c = committer(log(), 0);
    c.setupTask(task(0, 0));
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
        () -> c.newTaskTempFileAbsPath(task(0, 0), "/elsewhere", ".parquet"));
    assertTrue(e.getMessage().contains("/elsewhere"), e.getMessage());
  }

  @Test
  void setupTaskResetsAddedFilesAndSetupJobResetsPending() throws Exception {
    ManifestFileCommitProtocol c = committer(log(), 0);
    c.setupTask(task(0, 0));
    String f = c.newTaskTempFile(task(0, 0), Option.empty(), ".parquet");
    writeBytes(f, 10);
    c.onTaskCommit(c.commitTask(task(0, 0)));
    assertEquals(1, c.addedFiles().size());
    assertEquals(1, c.pendingCommitFiles().size());
    c.setupTask(task(1, 0));
    assertEquals(List.of(), c.addedFiles());
    c.setupJob(job());
    assertEquals(List.of(), c.pendingCommitFiles());
  }

  @Test
  void commitTaskReturnsOneStatusPerFileAndOnTaskCommitAddsThemToPending() throws Exception {
    ManifestFileCommitProtocol c = committer(log(), 0);
    c.setupTask(task(0, 0));
    String f1 = c.newTaskTempFile(task(0, 0), Option.empty(), ".parquet");
    String f2 = c.newTaskTempFile(task(0, 0), Option.apply("k=a b"), ".parquet");
    writeBytes(f1, 123);
    writeBytes(f2, 7);
    TaskCommitMessage m = c.commitTask(task(0, 0));
    assertInstanceOf(ArrayList.class, m.obj(), "payload must be a plain serializable java list");
    List<SinkFileStatus> statuses = payload(m);
    assertEquals(2, statuses.size());
    SinkFileStatus s1 = statuses.get(0);
    assertEquals(local(f1).getCanonicalFile(), new File(java.net.URI.create(s1.path())).getCanonicalFile());
    assertTrue(s1.path().startsWith("file:/"), "fully qualified: " + s1.path());
    assertEquals(123L, s1.size());
    assertFalse(s1.isDir());
    assertEquals(local(f1).lastModified(), s1.modificationTime());
    assertEquals("add", s1.action());
    assertTrue(s1.blockSize() > 0);
    assertEquals(7L, statuses.get(1).size());
    assertTrue(statuses.get(1).path().contains("/k=a%20b/"), "URI-encoded: " + statuses.get(1).path());
    assertEquals(List.of(), c.pendingCommitFiles());
    c.onTaskCommit(m);
    assertEquals(statuses, c.pendingCommitFiles());
  }

  @Test
  void setupManifestOptionsIsRequired() {
    ManifestFileCommitProtocol c = new ManifestFileCommitProtocol("unused", root());
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> c.setupJob(job()));
    assertTrue(e.getMessage().contains("setupManifestOptions(fileLog, batchId) must be called before setupJob"), e.getMessage());
    assertTrue(assertThrows(IllegalStateException.class, () -> c.setupTask(task(0, 0))).getMessage()
        .contains("before setupTask"));
    assertTrue(assertThrows(IllegalStateException.class,
        () -> c.commitJob(job(), CollectionConverters.asScala(List.<TaskCommitMessage>of()).toSeq())).getMessage()
        .contains("before commitJob"));
    assertThrows(IllegalArgumentException.class, () -> c.setupManifestOptions(null, 0));
    IllegalArgumentException neg = assertThrows(IllegalArgumentException.class, () -> c.setupManifestOptions(log(), -3));
    assertTrue(neg.getMessage().contains("-3"), neg.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new ManifestFileCommitProtocol("x", " "));
  }

  @Test
  void commitJobAddsTheBatchToSparksLog() throws Exception {
    FileStreamSinkLog log = log();
    ManifestFileCommitProtocol c = committer(log, 0);
    c.setupTask(task(0, 0));
    String f = c.newTaskTempFile(task(0, 0), Option.empty(), ".parquet");
    writeBytes(f, 5);
    TaskCommitMessage m = c.commitTask(task(0, 0));
    c.onTaskCommit(m);
    c.commitJob(job(), CollectionConverters.asScala(List.of(m)).toSeq());
    assertEquals(payload(m), c.committedFiles());
    assertEquals(List.of(), c.pendingCommitFiles(), "pending is cleared once committed");
    String text = Files.readString(tmp.resolve("_spark_metadata").resolve("0"), StandardCharsets.UTF_8);
    String[] lines = text.split("\n");
    assertEquals("v1", lines[0]);
    assertEquals(2, lines.length);
    assertTrue(lines[1].startsWith("{\"path\":\"file:/") && lines[1].contains("\"size\":5,\"isDir\":false,"), lines[1]);
    assertTrue(lines[1].endsWith("\"action\":\"add\"}"), lines[1]);
    assertFalse(text.endsWith("\n"));
    // Spark's own reader of the log sees the entry.
    FileStreamSinkLog reader = log();
    assertEquals(1, reader.allFiles().length);
    assertEquals(payload(m).get(0), reader.allFiles()[0]);
    // abortJob after a successful commit must not delete committed files.
    c.abortJob(job());
    assertTrue(local(f).exists());
  }

  /** A log whose add writes the batch file and then fails, as compaction or retention clean-up can. */
  private static final class FailingAfterWriteLog extends FileStreamSinkLog {
    FailingAfterWriteLog(String path) {
      super(1, spark, path, Option.empty());
    }

    @Override
    public boolean add(long batchId, SinkFileStatus[] metadata) {
      super.add(batchId, metadata);
      throw new IllegalStateException("clean-up failed after the batch was written");
    }
  }

  /** Two committed tasks of {@code c}, one file each; returns their messages and adds the files to {@code files}. */
  private List<TaskCommitMessage> twoCommittedTasks(ManifestFileCommitProtocol c, List<String> files) throws Exception {
    List<TaskCommitMessage> msgs = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      c.setupTask(task(t, 0));
      String f = c.newTaskTempFile(task(t, 0), t == 0 ? Option.empty() : Option.apply("p=a b"), ".parquet");
      writeBytes(f, 4);
      files.add(f);
      TaskCommitMessage m = c.commitTask(task(t, 0));
      c.onTaskCommit(m);
      msgs.add(m);
    }
    return msgs;
  }

  @Test
  void addThatThrowsAfterWritingTheBatchKeepsEveryCommittedFile() throws Exception {
    FileStreamSinkLog failing = new FailingAfterWriteLog(tmp.resolve("_spark_metadata").toUri().toString());
    ManifestFileCommitProtocol c = committer(failing, 0);
    List<String> files = new ArrayList<>();
    List<TaskCommitMessage> msgs = twoCommittedTasks(c, files);
    // The outcome is read from the log: the batch lists our files, so it is committed; the failure
    // came after (clean-up) and does not make the batch a failed write.
    c.commitJob(job(), CollectionConverters.asScala(msgs).toSeq());
    assertEquals(2, c.committedFiles().size(), "committed: the log lists the batch's files");
    assertEquals(List.of(), c.pendingCommitFiles(), "files the log lists are no longer pending");
    c.abortJob(job()); // harmless even if called: nothing is pending
    SinkFileStatus[] batch = log().get(0L).get();
    assertEquals(2, batch.length, "batch 0 was committed by the failing add");
    for (String f : files) {
      assertTrue(local(f).exists(), "a file the committed batch lists is never deleted: " + f);
    }
    for (SinkFileStatus s : batch) {
      assertTrue(new File(java.net.URI.create(s.path())).exists(), s.path());
    }
  }

  @Test
  void addThatThrowsBecauseAnotherWriterTookTheBatchDeletesOnlyOurFiles() throws Exception {
    // Another server renamed its batch file first: add throws (Spark's concurrent-writer error).
    String logPath = tmp.resolve("_spark_metadata").toUri().toString();
    Path otherFile = tmp.resolve("part-00000-other.parquet");
    Files.write(otherFile, new byte[3]);
    SinkFileStatus others = new SinkFileStatus(otherFile.toUri().toString(), 3, false, 1L, 1, 1L, "add");
    FileStreamSinkLog lostRace = new FileStreamSinkLog(1, spark, logPath, Option.empty()) {
      @Override
      public boolean add(long batchId, SinkFileStatus[] metadata) {
        new FileStreamSinkLog(1, spark, logPath, Option.empty()).add(batchId, new SinkFileStatus[] {others});
        throw new java.util.ConcurrentModificationException("Multiple streaming queries are concurrently using " + logPath);
      }
    };
    ManifestFileCommitProtocol c = committer(lostRace, 0);
    List<String> files = new ArrayList<>();
    List<TaskCommitMessage> msgs = twoCommittedTasks(c, files);
    IllegalStateException race = assertThrows(IllegalStateException.class,
        () -> c.commitJob(job(), CollectionConverters.asScala(msgs).toSeq()));
    assertEquals("Race while writing batch 0", race.getMessage(), "another writer's batch holds the id");
    assertTrue(race.getCause() instanceof java.util.ConcurrentModificationException, String.valueOf(race.getCause()));
    assertEquals(2, c.pendingCommitFiles().size(), "the log lists none of them: back to abortJob");
    c.abortJob(job());
    for (String f : files) {
      assertFalse(local(f).exists(), "no debris of the losing job: " + f);
    }
    assertTrue(Files.exists(otherFile), "the winner's file stays");
    assertEquals(List.of(others), List.of(log().get(0L).get()));
  }

  @Test
  void addThatThrowsBeforeWritingLeavesNoDebrisButAnUnreadableLogKeepsTheFiles() throws Exception {
    String logPath = tmp.resolve("_spark_metadata").toUri().toString();
    FileStreamSinkLog nothingWritten = new FileStreamSinkLog(1, spark, logPath, Option.empty()) {
      @Override
      public boolean add(long batchId, SinkFileStatus[] metadata) {
        throw new IllegalStateException("disk full");
      }
    };
    ManifestFileCommitProtocol c = committer(nothingWritten, 0);
    List<String> files = new ArrayList<>();
    List<TaskCommitMessage> msgs = twoCommittedTasks(c, files);
    io.filecommit.errors.FileCommitException failed = assertThrows(io.filecommit.errors.FileCommitException.class,
        () -> c.commitJob(job(), CollectionConverters.asScala(msgs).toSeq()));
    assertEquals("FILECOMMIT_LOG_WRITE_FAILED", failed.getCondition(), "the log shows the batch absent: definite");
    assertEquals("disk full", failed.getCause().getMessage(), "the original error is the cause");
    c.abortJob(job());
    files.forEach(f -> assertFalse(local(f).exists(), f));
    assertTrue(log().get(0L).isEmpty());

    // When the log cannot be read after the failure, the files stay (a batch might list them).
    FileStreamSinkLog inDoubt = new FileStreamSinkLog(1, spark, logPath, Option.empty()) {
      @Override
      public boolean add(long batchId, SinkFileStatus[] metadata) {
        throw new IllegalStateException("rename timed out");
      }

      @Override
      public Option<SinkFileStatus[]> get(long batchId) {
        throw new IllegalStateException("log unreadable");
      }
    };
    ManifestFileCommitProtocol d = committer(inDoubt, 0);
    List<String> kept = new ArrayList<>();
    List<TaskCommitMessage> msgs2 = twoCommittedTasks(d, kept);
    io.filecommit.errors.FileCommitException e = assertThrows(io.filecommit.errors.FileCommitException.class,
        () -> d.commitJob(job(), CollectionConverters.asScala(msgs2).toSeq()));
    assertEquals("FILECOMMIT_COMMIT_STATE_UNKNOWN", e.getCondition());
    assertEquals("rename timed out", e.getCause().getMessage(), "the original error, not the log's");
    d.abortJob(job());
    kept.forEach(f -> assertTrue(local(f).exists(), f));
  }

  @Test
  void secondCommitOfTheSameBatchIsARaceAndAbortJobDeletesItsFiles() throws Exception {
    ManifestFileCommitProtocol winner = committer(log(), 4);
    ManifestFileCommitProtocol loser = committer(log(), 4);
    List<TaskCommitMessage> msgs = new ArrayList<>();
    String[] files = new String[2];
    int i = 0;
    for (ManifestFileCommitProtocol c : List.of(winner, loser)) {
      c.setupTask(task(0, 0));
      files[i] = c.newTaskTempFile(task(0, 0), Option.empty(), ".parquet");
      writeBytes(files[i++], 3);
      TaskCommitMessage m = c.commitTask(task(0, 0));
      c.onTaskCommit(m);
      msgs.add(m);
    }
    winner.commitJob(job(), CollectionConverters.asScala(List.of(msgs.get(0))).toSeq());
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> loser.commitJob(job(), CollectionConverters.asScala(List.of(msgs.get(1))).toSeq()));
    assertEquals("Race while writing batch 4", e.getMessage());
    assertTrue(loser.committedFiles().isEmpty());
    loser.abortJob(job());
    assertFalse(local(files[1]).exists(), "the loser's pending file is deleted");
    assertTrue(local(files[0]).exists(), "the winner's file stays");
    FileStreamSinkLog reader = log();
    assertEquals(List.of(payload(msgs.get(0)).get(0)), List.of(reader.get(4L).get()));
  }

  @Test
  void abortTaskDeletesTheTasksFiles() throws Exception {
    ManifestFileCommitProtocol c = committer(log(), 0);
    c.setupTask(task(1, 0));
    String f1 = c.newTaskTempFile(task(1, 0), Option.empty(), ".parquet");
    String f2 = c.newTaskTempFile(task(1, 0), Option.apply("p=1"), ".parquet");
    writeBytes(f1, 4);
    writeBytes(f2, 4);
    String neverWritten = c.newTaskTempFile(task(1, 0), Option.empty(), ".parquet");
    c.abortTask(task(1, 0));
    assertFalse(local(f1).exists());
    assertFalse(local(f2).exists());
    assertFalse(local(neverWritten).exists());
    assertEquals(List.of(), c.addedFiles());
  }

  @Test
  void abortJobDeletesPendingFilesOnly() throws Exception {
    ManifestFileCommitProtocol c = committer(log(), 0);
    List<String> committedTasksFiles = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      c.setupTask(task(t, 0));
      String f = c.newTaskTempFile(task(t, 0), Option.empty(), ".parquet");
      writeBytes(f, 9);
      committedTasksFiles.add(f);
      c.onTaskCommit(c.commitTask(task(t, 0)));
    }
    File unrelated = tmp.resolve("keep.parquet").toFile();
    Files.write(unrelated.toPath(), new byte[1]);
    assertEquals(2, c.pendingCommitFiles().size());
    c.abortJob(job());
    for (String f : committedTasksFiles) {
      assertFalse(local(f).exists(), f);
    }
    assertTrue(unrelated.exists());
    assertEquals(List.of(), c.pendingCommitFiles());
    assertFalse(tmp.resolve("_spark_metadata").resolve("0").toFile().exists());
  }

  @Test
  void serializedTaskCopyKeepsTheBatchButNotTheLog() throws Exception {
    ManifestFileCommitProtocol c = committer(log(), 6);
    ManifestFileCommitProtocol copy = roundTrip(c);
    assertEquals(6, copy.batchId());
    assertEquals(root(), copy.outputPath());
    copy.setupTask(task(0, 0));
    assertTrue(copy.newTaskTempFile(task(0, 0), Option.empty(), ".p").contains("part-00000-"));
    assertThrows(IllegalStateException.class, () -> copy.commitJob(job(),
        CollectionConverters.asScala(List.<TaskCommitMessage>of()).toSeq()));
    ManifestFileCommitProtocol notSetUp = roundTrip(new ManifestFileCommitProtocol("j", root()));
    assertThrows(IllegalStateException.class, () -> notSetUp.setupTask(task(0, 0)));
  }

  private static ManifestFileCommitProtocol roundTrip(ManifestFileCommitProtocol c) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(c);
    }
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return (ManifestFileCommitProtocol) in.readObject();
    }
  }

  @Test
  void isASparkManifestCommitterOverridingEveryMethodItDeclares() throws Exception {
    Class<?> spark = org.apache.spark.sql.execution.streaming.ManifestFileCommitProtocol.class;
    assertTrue(spark.isAssignableFrom(ManifestFileCommitProtocol.class),
        "FileStreamSink only calls setupManifestOptions on Spark's ManifestFileCommitProtocol type");
    Set<String> notOverridden = new TreeSet<>();
    for (Method m : spark.getDeclaredMethods()) {
      if (Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers()) && !m.isSynthetic()) {
        Method ours = ManifestFileCommitProtocol.class.getMethod(m.getName(), m.getParameterTypes());
        if (ours.getDeclaringClass() != ManifestFileCommitProtocol.class) {
          notOverridden.add(m.toString());
        }
      }
    }
    assertEquals(Set.of(), notOverridden);
    // Both deprecated String-extension variants of the base class are ours too.
    assertEquals(ManifestFileCommitProtocol.class, ManifestFileCommitProtocol.class
        .getMethod("newTaskTempFile", TaskAttemptContext.class, Option.class, String.class).getDeclaringClass());
    // FileCommitProtocol.instantiate finds the (jobId, path) constructor, as FileStreamSink calls it.
    FileCommitProtocol made = FileCommitProtocol.instantiate(ManifestFileCommitProtocol.class.getName(), "7", root(), false);
    assertInstanceOf(ManifestFileCommitProtocol.class, made);
    assertEquals("7", ((ManifestFileCommitProtocol) made).jobId());
  }
}
