package io.filecommit.testing.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.CancellableFSDataOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fault-injecting sink log manager: unarmed it publishes like Spark's; {@code sink.before}
 * leaves no file, {@code sink.after} leaves the file in place and still fails the close.
 */
class FaultInjectingCheckpointFileManagerTest {
  @TempDir java.nio.file.Path tmp;
  private java.nio.file.Path faults;
  private java.nio.file.Path log;
  private FaultInjectingCheckpointFileManager manager;

  @BeforeEach
  void setUp() throws IOException {
    faults = Files.createDirectories(tmp.resolve("faults"));
    log = Files.createDirectories(tmp.resolve("sink").resolve("_spark_metadata"));
    System.setProperty(FaultPlan.PROPERTY, faults.toString());
    manager = new FaultInjectingCheckpointFileManager(new Path(log.toUri()), new Configuration());
  }

  @AfterEach
  void tearDown() {
    System.clearProperty(FaultPlan.PROPERTY);
  }

  private void arm(String name, String point) throws IOException {
    Files.writeString(faults.resolve(name + ".json"),
        "{\"table\": \"" + tmp.resolve("sink") + "\", \"point\": \"" + point + "\", \"times\": 1}");
  }

  private void publish(String name, String content) throws IOException {
    CancellableFSDataOutputStream out = manager.createAtomic(new Path(log.resolve(name).toUri()), false);
    try {
      out.write(content.getBytes(StandardCharsets.UTF_8));
      out.close();
    } catch (IOException e) {
      out.cancel(); // as Spark's HDFSMetadataLog does
      throw e;
    }
  }

  @Test
  void unarmedPublishesTheBatchFile() throws IOException {
    publish("0", "v1\n{}");
    assertEquals("v1\n{}", Files.readString(log.resolve("0")));
  }

  @Test
  void beforeLeavesNoFileAfterLeavesItAndBothFailOnce() throws IOException {
    arm("before", "sink.before");
    assertThrows(IOException.class, () -> publish("1", "v1\n{}"));
    assertFalse(Files.exists(log.resolve("1")));
    try (var names = Files.list(log)) {
      assertEquals(0, names.count(), "no temporary file left either");
    }
    arm("after", "sink.after");
    assertThrows(IOException.class, () -> publish("1", "v1\n{\"a\":1}"));
    assertTrue(Files.exists(log.resolve("1")));
    assertEquals("v1\n{\"a\":1}", Files.readString(log.resolve("1")));
    publish("2", "v1\n{}"); // both rules used up
    assertTrue(Files.exists(log.resolve("2")));
  }
}
