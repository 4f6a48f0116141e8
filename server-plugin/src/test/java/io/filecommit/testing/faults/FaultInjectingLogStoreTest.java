package io.filecommit.testing.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.delta.storage.CloseableIterator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fault-injecting LogStore: transparent when nothing is armed, and each armed step fails exactly
 * as many times as armed, with the effect on disk the step names (nothing written before, the file
 * published after). Armed through the {@link FaultPlan#PROPERTY} system property (no Spark here).
 */
class FaultInjectingLogStoreTest {
  @TempDir java.nio.file.Path tmp;
  private java.nio.file.Path faults;
  private java.nio.file.Path table;
  private FaultInjectingLogStore store;
  private final Configuration conf = new Configuration();

  @BeforeEach
  void setUp() throws IOException {
    faults = Files.createDirectories(tmp.resolve("faults"));
    table = Files.createDirectories(tmp.resolve("t").resolve("_delta_log")).getParent();
    System.setProperty(FaultPlan.PROPERTY, faults.toString());
    store = new FaultInjectingLogStore(conf);
  }

  @AfterEach
  void tearDown() {
    System.clearProperty(FaultPlan.PROPERTY);
  }

  private void arm(String name, String point, int times, int skip, Long version) throws IOException {
    String rule = "{\"table\": \"" + table + "\", \"point\": \"" + point + "\", \"times\": " + times
        + ", \"skip\": " + skip + (version == null ? "" : ", \"version\": " + version) + "}";
    Files.writeString(faults.resolve(name + ".json"), rule);
  }

  private long fired(String name) throws IOException {
    java.nio.file.Path f = faults.resolve(name + ".fired");
    return Files.exists(f) ? Files.readAllLines(f).size() : 0;
  }

  private Path commit(long v) {
    return new Path(table.resolve("_delta_log").resolve(String.format("%020d.json", v)).toUri());
  }

  private void write(Path p, String line) throws IOException {
    store.write(p, List.of(line).iterator(), false, conf);
  }

  private List<String> read(Path p) throws IOException {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<String> it = store.read(p, conf)) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  @Test
  void unarmedIsThePutIfAbsentStore() throws IOException {
    write(commit(0), "{\"a\":1}");
    assertEquals(List.of("{\"a\":1}"), read(commit(0)));
    assertThrows(FileAlreadyExistsException.class, () -> write(commit(0), "{\"b\":2}"));
    assertEquals(List.of("{\"a\":1}"), read(commit(0)));
    assertTrue(store.isPartialWriteVisible(commit(0), conf), "the local store's answer: partial writes are visible");
    assertTrue(store.listFrom(commit(0), conf).hasNext());
  }

  @Test
  void beforeWritesNothingAfterPublishesThenFails() throws IOException {
    arm("before", "commit.before", 1, 0, null);
    assertThrows(IOException.class, () -> write(commit(0), "x"));
    assertFalse(Files.exists(table.resolve("_delta_log").resolve(String.format("%020d.json", 0))));
    write(commit(0), "{\"v\":0}"); // count used up
    assertEquals(1, fired("before"));

    arm("after", "commit.after", 1, 0, null);
    IOException lost = assertThrows(IOException.class, () -> write(commit(1), "{\"v\":1}"));
    assertFalse(lost instanceof FileAlreadyExistsException);
    assertEquals(List.of("{\"v\":1}"), read(commit(1)), "the commit landed");

    arm("exists", "commit.exists", 1, 0, null);
    assertThrows(FileAlreadyExistsException.class, () -> write(commit(2), "{\"v\":2}"));
    assertEquals(List.of("{\"v\":2}"), read(commit(2)), "the commit landed");
    assertEquals(1, fired("after"));
    assertEquals(1, fired("exists"));
  }

  @Test
  void skipTimesVersionAndTableSelectTheCalls() throws IOException {
    arm("v3", "commit.before", -1, 1, 3L);
    write(commit(0), "0");
    write(commit(3), "3"); // the first matching call is skipped
    assertThrows(IOException.class, () -> write(commit(3), "again"));
    write(commit(4), "4"); // another version: not matched
    assertEquals(1, fired("v3"));
    Path otherTable = new Path(tmp.resolve("t2").resolve("_delta_log").resolve(String.format("%020d.json", 3)).toUri());
    Files.createDirectories(tmp.resolve("t2").resolve("_delta_log"));
    store.write(otherTable, List.of("other").iterator(), false, conf); // another table: not matched
    assertEquals(1, fired("v3"));
    Files.delete(faults.resolve("v3.json")); // disarmed
    assertThrows(FileAlreadyExistsException.class, () -> write(commit(3), "x"));
    assertEquals(1, fired("v3"));
  }

  @Test
  void readListAndCheckpointSteps() throws IOException {
    write(commit(0), "{}");
    arm("read", "commit.read", 1, 0, null);
    arm("list", "list", 1, 0, null);
    arm("cp", "checkpoint.before", 1, 0, null);
    arm("last", "last_checkpoint.after", 1, 0, null);
    assertThrows(IOException.class, () -> read(commit(0)));
    assertEquals(List.of("{}"), read(commit(0)));
    assertThrows(IOException.class, () -> store.listFrom(commit(0), conf));
    assertTrue(store.listFrom(commit(0), conf).hasNext());
    Path cp = new Path(table.resolve("_delta_log").resolve(String.format("%020d.checkpoint.parquet", 0)).toUri());
    assertThrows(IOException.class, () -> store.isPartialWriteVisible(cp, conf));
    assertTrue(store.isPartialWriteVisible(cp, conf));
    Path last = new Path(table.resolve("_delta_log").resolve("_last_checkpoint").toUri());
    assertThrows(IOException.class, () -> store.write(last, List.of("{\"version\":0}").iterator(), true, conf));
    assertEquals(List.of("{\"version\":0}"),
        Files.readAllLines(table.resolve("_delta_log").resolve("_last_checkpoint"), StandardCharsets.UTF_8));
    for (String n : List.of("read", "list", "cp", "last")) {
      assertEquals(1, fired(n), n);
    }
  }
}
