package io.filecommit.files;

import io.filecommit.delta.PartitionPaths;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.FileAction;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/** Unit tests of {@link DelayedCommitProtocol} and {@link PartitionPaths} (Delta's DelayedCommitProtocol; Spark's partition path escaping). */
class DelayedCommitProtocolTest {
  private static final String UUID_RE = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

  @TempDir
  Path tmp;

  private static TaskAttemptContext task(int taskId, int attempt) {
    return new TaskAttemptContextImpl(new Configuration(), new TaskAttemptID("20261121", 7, TaskType.MAP, taskId, attempt));
  }

  private String root() {
    return tmp.toUri().toString();
  }

  @Test
  void fileNamesCarrySplitAndFreshUuid() {
    DelayedCommitProtocol c = new DelayedCommitProtocol("delta", root());
    c.setupTask(task(3, 0));
    String a = c.newTaskTempFile(task(3, 0), Option.empty(), "-c000.snappy.parquet");
    String b = c.newTaskTempFile(task(3, 1), Option.empty(), "-c000.snappy.parquet");
    String nameA = new File(a.replace("file:", "")).getName();
    assertTrue(nameA.matches("part-00003-" + UUID_RE + "-c000\\.snappy\\.parquet"), nameA);
    assertNotEquals(a, b, "a retried attempt must get a different name");
    assertEquals(tmp.toFile(), local(a).getParentFile());
    // split wider than 5 digits is not truncated
    String wide = c.newTaskTempFile(task(123456, 0), Option.empty(), ".x");
    assertTrue(new File(wide).getName().startsWith("part-123456-"), wide);
  }

  @Test
  void partitionDirectoryIsParsedIntoAddedFiles() {
    DelayedCommitProtocol c = new DelayedCommitProtocol("delta", root());
    c.setupTask(task(0, 0));
    String dir = "origin=EWR/month=1/note=x%2Fy/gone=__HIVE_DEFAULT_PARTITION__";
    String file = c.newTaskTempFile(task(0, 0), Option.apply(dir), ".c000.snappy.parquet");
    assertTrue(file.contains("/" + dir + "/part-00000-"), file);
    Map.Entry<Map<String, String>, String> added = c.addedFiles().get(0);
    Map<String, String> expected = new LinkedHashMap<>();
    expected.put("origin", "EWR");
    expected.put("month", "1");
    expected.put("note", "x/y");
    expected.put("gone", null);
    assertEquals(expected, added.getKey());
    assertEquals(new ArrayList<>(expected.keySet()), new ArrayList<>(added.getKey().keySet()), "order kept");
    assertTrue(added.getValue().startsWith(dir + "/part-00000-"), added.getValue());
  }

  @Test
  void escapeUnescapeRoundTrip() {
    String[] values = {"with space", "a/b", "100%", "k=v", "12:30", "Zürich 日本", "quote\"hash#", "tab\tnew\nline", "plain"};
    for (String v : values) {
      Map<String, String> in = new LinkedHashMap<>();
      in.put("p", v);
      in.put("key with=odd/chars", v);
      String dir = PartitionPaths.partitionDir(in);
      assertEquals(2, dir.split("/").length, "value must not create directories: " + dir);
      assertEquals(in, PartitionPaths.parsePartitions(dir), "round trip of " + v);
    }
    assertEquals("a%2Fb", PartitionPaths.escape("a/b"));
    assertEquals("k%3Dv", PartitionPaths.escape("k=v"));
    assertEquals("12%3A30", PartitionPaths.escape("12:30"));
    assertEquals("100%25", PartitionPaths.escape("100%"));
    assertEquals("with space", PartitionPaths.escape("with space"), "Spark does not escape spaces");
  }

  @Test
  void nullAndEmptyValuesBecomeDefaultPartitionAndParseAsNull() {
    Map<String, String> in = new LinkedHashMap<>();
    in.put("a", null);
    in.put("b", "");
    String dir = PartitionPaths.partitionDir(in);
    assertEquals("a=__HIVE_DEFAULT_PARTITION__/b=__HIVE_DEFAULT_PARTITION__", dir);
    Map<String, String> parsed = PartitionPaths.parsePartitions(dir);
    assertTrue(parsed.containsKey("a") && parsed.get("a") == null);
    assertTrue(parsed.containsKey("b") && parsed.get("b") == null);
  }

  @Test
  void malformedPartitionDirectoryIsRefused() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> PartitionPaths.parsePartitions("a=1/novalue"));
    assertTrue(e.getMessage().contains("novalue"), e.getMessage());
  }

  @Test
  void logPathsAreUriEncoded() {
    assertEquals("a=x%252Fy/part-1.parquet", PartitionPaths.toLogPath("a=x%2Fy/part-1.parquet"));
    assertEquals("a=with%20space/f.parquet", PartitionPaths.toLogPath("a=with space/f.parquet"));
    assertEquals("a=x%2Fy/f", PartitionPaths.fromLogPath(PartitionPaths.toLogPath("a=x%2Fy/f")));
  }

  @Test
  void randomPrefixReplacesPartitionDirectories() {
    DelayedCommitProtocol c = new DelayedCommitProtocol("delta", root(), 3, 32);
    c.setupTask(task(1, 0));
    c.newTaskTempFile(task(1, 0), Option.apply("p=1"), ".c000.snappy.parquet");
    Map.Entry<Map<String, String>, String> added = c.addedFiles().get(0);
    assertTrue(added.getValue().matches("[0-9A-Za-z]{3}/part-00001-" + UUID_RE + "\\.c000\\.snappy\\.parquet"),
        added.getValue());
    assertEquals(Map.of("p", "1"), added.getKey(), "partition values still recorded");
    assertThrows(IllegalArgumentException.class, () -> new DelayedCommitProtocol("delta", root(), 0, 32));
  }

  @Test
  void absolutePathsAreUnsupported() {
    DelayedCommitProtocol c = new DelayedCommitProtocol("delta", root());
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
        () -> c.newTaskTempFileAbsPath(task(0, 0), "/elsewhere", ".parquet"));
    assertEquals(c + " does not support adding files with an absolute path", e.getMessage());
  }

  @Test
  void cdcRoutingFollowsTheSeed() {
    assertEquals("", DelayedCommitProtocol.routeCdcDir("__is_cdc=false"));
    assertEquals("a=1/b=2", DelayedCommitProtocol.routeCdcDir("__is_cdc=false/a=1/b=2"));
    assertEquals("_change_data/a/b/c", DelayedCommitProtocol.routeCdcDir("__is_cdc=true/a/b/c"));
    assertEquals("_change_data", DelayedCommitProtocol.routeCdcDir("__is_cdc=true"));
    assertEquals("_change_data/a=1", DelayedCommitProtocol.routeCdcDir("__is_cdc=true/a=1"));
    assertEquals("a=1", DelayedCommitProtocol.routeCdcDir("a=1"));

    DelayedCommitProtocol c = new DelayedCommitProtocol("delta", root());
    c.setupTask(task(2, 0));
    c.newTaskTempFile(task(2, 0), Option.apply("__is_cdc=true/a=x%2Fy"), ".c000.snappy.parquet");
    c.newTaskTempFile(task(2, 0), Option.apply("__is_cdc=false/a=x%2Fy"), ".c000.snappy.parquet");
    c.newTaskTempFile(task(2, 0), Option.apply("__is_cdc=false"), ".c000.snappy.parquet");
    List<Map.Entry<Map<String, String>, String>> added = c.addedFiles();
    assertTrue(added.get(0).getValue().startsWith("_change_data/a=x%2Fy/cdc-00002-"), added.get(0).getValue());
    assertTrue(added.get(1).getValue().startsWith("a=x%2Fy/part-00002-"), added.get(1).getValue());
    assertTrue(added.get(2).getValue().startsWith("part-00002-"), added.get(2).getValue());
  }

  @Test
  void cdcFilesWithRandomPrefixStayUnderChangeData() {
    DelayedCommitProtocol c = new DelayedCommitProtocol("delta", root(), 2, 32);
    c.setupTask(task(0, 0));
    c.newTaskTempFile(task(0, 0), Option.apply("__is_cdc=true/a=1"), ".parquet");
    c.newTaskTempFile(task(0, 0), Option.apply("__is_cdc=false/a=1"), ".parquet");
    assertTrue(c.addedFiles().get(0).getValue().matches("_change_data/[0-9A-Za-z]{2}/cdc-00000-.*"));
    assertTrue(c.addedFiles().get(1).getValue().matches("[0-9A-Za-z]{2}/part-00000-.*"));
  }

  private static void writeParquet(String absPath, int from, int to) throws Exception {
    MessageType schema = MessageTypeParser.parseMessageType(
        "message spark_schema { optional int32 id; optional binary name (STRING); optional double score; }");
    SimpleGroupFactory factory = new SimpleGroupFactory(schema);
    try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new org.apache.hadoop.fs.Path(absPath))
        .withType(schema).withConf(new Configuration()).build()) {
      for (int i = from; i < to; i++) {
        Group g = factory.newGroup().append("id", i);
        if (i % 2 == 0) {
          g.append("name", "name-" + i);
        }
        g.append("score", i * 1.5);
        w.write(g);
      }
    }
  }

  /**
   * Relative paths of all regular files under the temp directory, without Hadoop's {@code .<name>.crc}
   * checksum files (the local file system writes one per file and deletes it with the file); fails
   * if a checksum file outlived its file (debris).
   */
  private java.util.Set<String> filesOnDisk() throws Exception {
    java.util.Set<String> all;
    try (java.util.stream.Stream<Path> walk = Files.walk(tmp)) {
      all = walk.filter(Files::isRegularFile).map(p -> tmp.relativize(p).toString())
          .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    }
    java.util.Set<String> files = new java.util.TreeSet<>();
    for (String f : all) {
      Path p = Path.of(f);
      String name = p.getFileName().toString();
      if (name.startsWith(".") && name.endsWith(".crc")) {
        String data = name.substring(1, name.length() - 4);
        String dataPath = p.getParent() == null ? data : p.getParent().resolve(data).toString();
        assertTrue(all.contains(dataPath), "checksum file left behind: " + f);
      } else {
        files.add(f);
      }
    }
    return files;
  }

  /** Files another writer left in the directory before the job (one in the job's partition). */
  private java.util.Set<String> preExisting() throws Exception {
    Files.writeString(tmp.resolve("foreign.txt"), "keep");
    Files.createDirectories(tmp.resolve("p=x y"));
    writeParquet(tmp.resolve("p=x y").resolve("part-00000-11111111-2222-3333-4444-555555555555.c000.snappy.parquet")
        .toString(), 0, 1);
    Files.createDirectories(tmp.resolve("_delta_log"));
    Files.writeString(tmp.resolve("_delta_log").resolve("00000000000000000000.json"), "{}");
    return filesOnDisk();
  }

  private static org.apache.hadoop.mapreduce.JobContext jobContext() {
    return new org.apache.hadoop.mapreduce.task.JobContextImpl(new Configuration(), new org.apache.hadoop.mapreduce.JobID("20261121", 7));
  }

  /** A committed task on a serialized copy of the driver's committer; returns its (round-tripped) message. */
  private static TaskCommitMessage committedTask(DelayedCommitProtocol driver, int taskId, List<String> written,
      String... dirs) throws Exception {
    DelayedCommitProtocol executor = roundTrip(driver);
    TaskAttemptContext ctx = task(taskId, 0);
    executor.setupTask(ctx);
    for (String dir : dirs) {
      String f = executor.newTaskTempFile(ctx, dir == null ? Option.empty() : Option.apply(dir), ".c000.snappy.parquet");
      writeParquet(f, 0, 2);
      written.add(f);
    }
    return roundTrip(executor.commitTask(ctx));
  }

  @Test
  void abortTaskDeletesOnlyItsAttemptsFiles() throws Exception {
    java.util.Set<String> before = preExisting();
    DelayedCommitProtocol driver = new DelayedCommitProtocol("delta", root());
    // attempt 1 of the same task (a retry or speculative copy, on its own deserialized committer) succeeds
    DelayedCommitProtocol retry = roundTrip(driver);
    retry.setupTask(task(1, 1));
    String kept = retry.newTaskTempFile(task(1, 1), Option.apply("p=x y"), ".c000.snappy.parquet");
    writeParquet(kept, 0, 3);
    // attempt 0 wrote two files and started a third, then failed
    DelayedCommitProtocol c = roundTrip(driver);
    TaskAttemptContext ctx = task(1, 0);
    c.setupTask(ctx);
    String a = c.newTaskTempFile(ctx, Option.apply("p=a%3Ab"), ".c000.snappy.parquet");
    writeParquet(a, 0, 3);
    String b = c.newTaskTempFile(ctx, Option.apply("__is_cdc=true/p=x y"), ".c000.snappy.parquet");
    writeParquet(b, 0, 3);
    String neverWritten = c.newTaskTempFile(ctx, Option.empty(), ".c000.snappy.parquet");
    c.abortTask(ctx);
    assertFalse(local(a).exists());
    assertFalse(local(b).exists());
    assertFalse(local(neverWritten).exists());
    assertTrue(c.addedFiles().isEmpty());
    assertTrue(local(kept).exists(), "another attempt's file stays");
    java.util.Set<String> expected = new java.util.TreeSet<>(before);
    expected.add(tmp.relativize(local(kept).toPath()).toString());
    assertEquals(expected, filesOnDisk());
    c.abortTask(ctx); // a second abort (nothing left) is harmless
  }

  @Test
  void abortJobAfterATaskFailureLeavesNoFileOfTheJob() throws Exception {
    java.util.Set<String> before = preExisting();
    DelayedCommitProtocol driver = new DelayedCommitProtocol("delta", root());
    driver.setupJob(jobContext());
    List<String> written = new ArrayList<>();
    // tasks 0 and 1 commit (Spark's FileFormatWriter passes each result to onTaskCommit as it arrives) ...
    driver.onTaskCommit(committedTask(driver, 0, written, "p=x y", "p=a%3Ab"));
    driver.onTaskCommit(committedTask(driver, 1, written, "p=x y", "__is_cdc=true/p=x y"));
    // ... task 2 fails: its own abortTask deletes what it wrote ...
    DelayedCommitProtocol failing = roundTrip(driver);
    TaskAttemptContext ctx = task(2, 0);
    failing.setupTask(ctx);
    String f = failing.newTaskTempFile(ctx, Option.apply("p=x y"), ".c000.snappy.parquet");
    writeParquet(f, 0, 2);
    written.add(f);
    failing.abortTask(ctx);
    assertEquals(5, written.size());
    // ... and the driver, which never got to commitJob, calls abortJob(jobContext)
    driver.abortJob(jobContext());
    for (String w : written) {
      assertFalse(local(w).exists(), w);
    }
    assertEquals(before, filesOnDisk(), "no file of the job is left; the files of others are untouched");
    driver.abortJob(jobContext()); // again: harmless
  }

  @Test
  void abortJobAfterCommitJobDeletesTheCollectedActionsFiles() throws Exception {
    // Spark also calls abortJob when commitJob or the statistics after it fail.
    java.util.Set<String> before = preExisting();
    DelayedCommitProtocol driver = new DelayedCommitProtocol("delta", root());
    List<String> written = new ArrayList<>();
    TaskCommitMessage m0 = committedTask(driver, 0, written, "p=x y", "__is_cdc=true/p=x y");
    TaskCommitMessage m1 = committedTask(driver, 1, written, (String) null);
    // no onTaskCommit here: commitJob's messages alone must be enough
    driver.commitJob(jobContext(), CollectionConverters.asScala(List.of(m0, m1)).toSeq());
    assertEquals(2, driver.addedStatuses().size());
    assertEquals(1, driver.changeFiles().size());
    driver.abortJob(null);
    assertEquals(before, filesOnDisk());
  }

  @Test
  void deleteWrittenFilesAfterCommitJobRemovesExactlyTheJobsFiles() throws Exception {
    java.util.Set<String> before = preExisting();
    DelayedCommitProtocol driver = new DelayedCommitProtocol("delta", root());
    DelayedCommitProtocol other = new DelayedCommitProtocol("delta", root());
    driver.setupJob(jobContext());
    List<String> written = new ArrayList<>();
    List<TaskCommitMessage> messages = new ArrayList<>();
    messages.add(committedTask(driver, 0, written, "p=a%3Ab", "__is_cdc=true/p=a%3Ab"));
    messages.add(committedTask(driver, 1, written, "p=x y", "__is_cdc=true/p=x y", "p=a%3Ab"));
    messages.forEach(driver::onTaskCommit);
    driver.commitJob(jobContext(), CollectionConverters.asScala(messages).toSeq());
    // another writer's job, same partitions, not yet committed (its files must survive)
    List<String> others = new ArrayList<>();
    other.onTaskCommit(committedTask(other, 0, others, "p=a%3Ab", "__is_cdc=true/p=a%3Ab"));
    java.util.Set<String> beforeDelete = filesOnDisk();

    // the table commit fails (conflict, constraint) after commitJob: the transaction deletes the files
    driver.deleteWrittenFiles(new Configuration());

    java.util.Set<String> actionPaths = new java.util.TreeSet<>();
    driver.addedStatuses().forEach(a -> actionPaths.add(PartitionPaths.fromLogPath(a.path())));
    driver.changeFiles().forEach(c -> actionPaths.add(PartitionPaths.fromLogPath(c.path())));
    assertEquals(3, driver.addedStatuses().size(), "registries keep their entries");
    assertEquals(2, driver.changeFiles().size());
    java.util.Set<String> deleted = new java.util.TreeSet<>(beforeDelete);
    deleted.removeAll(filesOnDisk());
    assertEquals(actionPaths, deleted, "exactly the job's AddFiles and AddCDCFiles are deleted");
    java.util.Set<String> expected = new java.util.TreeSet<>(before);
    others.forEach(o -> expected.add(tmp.relativize(local(o).toPath()).toString()));
    assertEquals(expected, filesOnDisk(), "pre-existing files and the other job's files stay");
    driver.deleteWrittenFiles(new Configuration()); // again: harmless
  }

  @Test
  void sweepFindsFilesWhoseTaskCommitNeverArrivedAndOnlyThose() throws Exception {
    java.util.Set<String> before = preExisting();
    DelayedCommitProtocol driver = new DelayedCommitProtocol("delta", root(), 2, 32);
    DelayedCommitProtocol other = new DelayedCommitProtocol("delta", root(), 2, 32);
    List<String> straggler = new ArrayList<>();
    committedTask(driver, 5, straggler, "p=x y", "__is_cdc=true/p=x y"); // its message is lost
    List<String> others = new ArrayList<>();
    committedTask(other, 5, others, "p=x y", "__is_cdc=true/p=x y");
    String a = new File(straggler.get(0)).getName();
    String b = new File(straggler.get(1)).getName();
    assertTrue(a.matches("part-00005-" + UUID_RE + "\\.c000\\.snappy\\.parquet"), a);
    assertTrue(b.matches("cdc-00005-" + UUID_RE + "\\.c000\\.snappy\\.parquet"), b);
    assertEquals(token(a), token(b), "one job token per committer: " + a + " " + b);
    assertNotEquals(a.substring(a.length() - 35), b.substring(b.length() - 35), "the rest is fresh per file");
    assertNotEquals(token(a), token(new File(others.get(0)).getName()), "tokens differ per committer");
    driver.sweepJobFiles(new Configuration());
    straggler.forEach(f -> assertFalse(local(f).exists(), f));
    java.util.Set<String> expected = new java.util.TreeSet<>(before);
    others.forEach(o -> expected.add(tmp.relativize(local(o).toPath()).toString()));
    assertEquals(expected, filesOnDisk());
  }

  @Test
  void sweepDoesNotEnterAnotherTableOrSinkBelowTheRoot() throws Exception {
    DelayedCommitProtocol driver = new DelayedCommitProtocol("delta", root(), null, 32);
    List<String> straggler = new ArrayList<>();
    committedTask(driver, 5, straggler, "p=x y", "n=1", "s=1/p=1");
    // the same names inside a nested table and a nested sink (made by other tools): not this table's files
    Files.createDirectories(tmp.resolve("n=1").resolve("_delta_log"));
    Files.writeString(tmp.resolve("n=1").resolve("_delta_log").resolve("00000000000000000000.json"), "{}");
    Files.createDirectories(tmp.resolve("s=1").resolve("_spark_metadata"));
    Files.writeString(tmp.resolve("s=1").resolve("_spark_metadata").resolve("0"), "v1");
    driver.sweepJobFiles(new Configuration());
    assertFalse(local(straggler.get(0)).exists(), "this table's straggler is swept: " + straggler.get(0));
    assertTrue(local(straggler.get(1)).exists(), "a nested table's file is left alone: " + straggler.get(1));
    assertTrue(local(straggler.get(2)).exists(), "a nested sink's file is left alone: " + straggler.get(2));
  }

  @Test
  void sweepIsNotStoppedByFilesAnotherWriterDeletesMeanwhile() throws Exception {
    DelayedCommitProtocol driver = new DelayedCommitProtocol("delta", root(), 2, 32);
    List<String> straggler = new ArrayList<>();
    committedTask(driver, 5, straggler, "p=x y", "__is_cdc=true/p=x y");
    // another writer's 300 files, which its own abort deletes while this sweep lists the table
    List<Path> foreign = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      Path dir = tmp.resolve(i % 2 == 0 ? "p=x y" : "p=z");
      Files.createDirectories(dir);
      foreign.add(Files.writeString(dir.resolve(String.format(
          "part-%05d-aaaaaaaa-bbbb-cccc-dddd-%012d.c000.snappy.parquet", i, i)), "x"));
    }
    Thread deleter = new Thread(() -> {
      for (Path f : foreign) {
        try {
          Files.delete(f);
          Thread.sleep(1);
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      }
    });
    deleter.start();
    driver.sweepJobFiles(new Configuration());
    deleter.join();
    straggler.forEach(f -> assertFalse(local(f).exists(), "left behind: " + f));
  }

  /** The job token of a file name: the first three groups of its UUID. */
  private static String token(String name) {
    return name.replaceFirst("^(part|cdc)-[0-9]+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4})-.*$", "$2");
  }

  @Test
  void deletesAreBestEffort() throws Exception {
    DelayedCommitProtocol driver = new DelayedCommitProtocol("delta", root());
    List<String> written = new ArrayList<>();
    TaskCommitMessage m = committedTask(driver, 0, written, "p=x y", "p=z");
    driver.onTaskCommit(m);
    Files.delete(local(written.get(0)).toPath()); // already gone: no error, the other file is still deleted
    driver.abortJob(jobContext());
    assertFalse(local(written.get(1)).exists());
    // a file system that cannot be resolved: logged, not thrown
    DelayedCommitProtocol nowhere = new DelayedCommitProtocol("delta", "nosuchfs://nowhere/table");
    nowhere.setupTask(task(0, 0));
    nowhere.newTaskTempFile(task(0, 0), Option.empty(), ".parquet");
    nowhere.abortTask(task(0, 0));
    nowhere.onTaskCommit(m);
    nowhere.abortJob(jobContext());
    nowhere.deleteWrittenFiles(new Configuration());
    nowhere.sweepJobFiles(new Configuration());
  }

  @Test
  void commitTaskAndJobBuildSerializableActionsWithStats() throws Exception {
    DelayedCommitProtocol driver = new DelayedCommitProtocol("delta", root());
    driver.setupJob(null);
    DelayedCommitProtocol executor = roundTrip(driver);
    TaskAttemptContext ctx = task(4, 0);
    executor.setupTask(ctx);
    String data = executor.newTaskTempFile(ctx, Option.apply("p=a%3Ab"), ".c000.snappy.parquet");
    writeParquet(data, 0, 10);
    String change = executor.newTaskTempFile(ctx, Option.apply("__is_cdc=true/p=a%3Ab"), ".c000.snappy.parquet");
    writeParquet(change, 0, 3);
    TaskCommitMessage message = roundTrip(executor.commitTask(ctx));

    driver.commitJob(null, CollectionConverters.asScala(List.of(message)).toSeq());
    assertEquals(1, driver.addedStatuses().size());
    assertEquals(1, driver.changeFiles().size());
    AddFile add = driver.addedStatuses().get(0);
    File onDisk = local(data);
    assertTrue(onDisk.isFile(), onDisk.toString());
    assertEquals(onDisk.length(), add.size());
    assertEquals(onDisk.lastModified(), add.modificationTime());
    assertTrue(add.dataChange());
    assertEquals(Map.of("p", "a:b"), add.partitionValues());
    assertTrue(add.path().startsWith("p=a%253Ab/part-00004-"), add.path());
    JsonNode stats = new ObjectMapper().readTree(add.stats());
    assertEquals(10, stats.get("numRecords").asInt());
    assertEquals(0, stats.at("/minValues/id").asInt());
    assertEquals(9, stats.at("/maxValues/id").asInt());
    assertEquals("name-0", stats.at("/minValues/name").asText());
    assertEquals("name-8", stats.at("/maxValues/name").asText());
    assertEquals(5, stats.at("/nullCount/name").asInt());
    assertEquals(13.5, stats.at("/maxValues/score").asDouble());

    AddCDCFile cdc = driver.changeFiles().get(0);
    assertFalse(cdc.dataChange());
    assertEquals(Map.of("p", "a:b"), cdc.partitionValues(), "__is_cdc removed");
    assertTrue(cdc.path().startsWith("_change_data/p=a%253Ab/cdc-00004-"), cdc.path());
  }

  @Test
  void emptyTaskGivesEmptyMessageAndAbortTaskDeletesLaterFiles() throws Exception {
    DelayedCommitProtocol c = new DelayedCommitProtocol("delta", root());
    TaskAttemptContext ctx = task(0, 0);
    c.setupTask(ctx);
    assertEquals(List.of(), c.commitTask(ctx).obj());
    String f = c.newTaskTempFile(ctx, Option.empty(), ".parquet");
    writeParquet(f, 0, 1);
    c.abortTask(ctx);
    c.abortJob(null);
    assertFalse(local(f).exists(), "no debris: unlike Delta's no-op, abortTask deletes the attempt's files");
  }

  @Test
  void unexpectedPayloadIsRefused() {
    DelayedCommitProtocol c = new DelayedCommitProtocol("delta", root());
    TaskCommitMessage bad = new TaskCommitMessage("not a list");
    assertThrows(IllegalStateException.class,
        () -> c.commitJob(null, CollectionConverters.asScala(List.of(bad)).toSeq()));
  }

  @Test
  void actionsAreSerializable() throws Exception {
    Map<String, String> pv = new LinkedHashMap<>();
    pv.put("a", null);
    FileAction a = new AddFile("p", pv, 1, 2, true, null, Map.of());
    FileAction back = roundTrip(a);
    assertEquals(a, back);
    assertInstanceOf(AddFile.class, back);
  }

  /** The local file of a path string handed out by the committer (Hadoop Path: no URI decoding). */
  private static File local(String path) {
    return new File(new org.apache.hadoop.fs.Path(path).toUri().getPath());
  }

  @SuppressWarnings("unchecked")
  private static <T> T roundTrip(T o) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(o);
    }
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return (T) in.readObject();
    }
  }
}
