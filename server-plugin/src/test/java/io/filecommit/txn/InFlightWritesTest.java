package io.filecommit.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The in-flight registry VACUUM consults ({@link InFlightWrites}); no Spark. */
class InFlightWritesTest {
  private static final long DAYS_9 = 9 * 86_400_000L;

  private static String table() {
    return "file:/tables/" + UUID.randomUUID();
  }

  @Test
  void registrationsLiveAsLongAsTheirScope() {
    String t = table();
    InFlightWrites.Registration outside = InFlightWrites.register(t).protectToken("abc");
    assertEquals(0, InFlightWrites.openOn(t), "without a command scope nothing is registered");
    outside.close();
    try (InFlightWrites.Scope scope = InFlightWrites.openScope()) {
      InFlightWrites.register(t).protectToken("abc");
      try (InFlightWrites.Scope nested = InFlightWrites.openScope()) {
        InFlightWrites.register(t);
      }
      assertEquals(2, InFlightWrites.openOn(t), "a nested scope closes nothing");
    }
    assertEquals(0, InFlightWrites.openOn(t), "closing the scope closes its registrations");
  }

  @Test
  void vacuumKeepsFilesByTokenPathOrStartTime() {
    String t = table();
    long now = System.currentTimeMillis();
    String old = t + "/part-00000-old.parquet";
    try (InFlightWrites.VacuumView idle = InFlightWrites.vacuumStarting(t)) {
      assertFalse(idle.protects(old, now - DAYS_9), "nothing in flight: age decides");
      assertFalse(idle.protects(old, now), "nothing in flight: the view protects nothing");
    }
    try (InFlightWrites.Registration w = InFlightWrites.open(t, now)) {
      w.protectToken("1a2b3c4d-1a2b-1a2b").protectPaths(List.of(t + "/restored.parquet"));
      try (InFlightWrites.VacuumView v = InFlightWrites.vacuumStarting(t)) {
        assertTrue(v.protects(t + "/x=1/part-00003-1a2b3c4d-1a2b-1a2b-9f9f-0123456789ab.c000.snappy.parquet",
            now - DAYS_9), "a file of the job, whatever its age");
        assertTrue(v.protects(t + "/restored.parquet", now - DAYS_9), "a registered path, whatever its age");
        assertTrue(v.protects(t + "/new.parquet", now - InFlightWrites.CLOCK_SLACK_MS + 1000),
            "written after the write started, within the clock slack");
        assertFalse(v.protects(old, now - InFlightWrites.CLOCK_SLACK_MS - 1000), "older than the write: age decides");
      }
    }
    try (InFlightWrites.VacuumView other = InFlightWrites.vacuumStarting(table())) {
      assertFalse(other.protects(t + "/restored.parquet", now - DAYS_9), "registrations are per table");
    }
  }

  @Test
  void aViewKeepsHonouringWritesItSawAfterTheyEnd() {
    String t = table();
    long now = System.currentTimeMillis();
    String restored = t + "/restored.parquet";
    try (InFlightWrites.VacuumView v = InFlightWrites.vacuumStarting(t)) {
      InFlightWrites.Registration late = InFlightWrites.open(t, now).protectPaths(List.of(restored));
      assertTrue(v.protects(restored, now - DAYS_9), "opened after the view started: seen");
      late.close();
      assertEquals(0, InFlightWrites.openOn(t));
      // The write may have committed after the view's snapshot was read: still kept by this view.
      assertTrue(v.protects(restored, now - DAYS_9), "closed during the view: still honoured");
    }
    try (InFlightWrites.VacuumView next = InFlightWrites.vacuumStarting(t)) {
      assertFalse(next.protects(restored, now - DAYS_9), "a later VACUUM reads the commit instead");
    }
  }

  @Test
  void deletionIsAtomicWithRegistration(@TempDir Path dir) throws Exception {
    String t = "file:" + dir;
    Path file = Files.writeString(dir.resolve("part-00000-x.parquet"), "data");
    String path = "file:" + file;
    long old = System.currentTimeMillis() - DAYS_9;
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (InFlightWrites.VacuumView v = InFlightWrites.vacuumStarting(t)) {
      CountDownLatch deleting = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      Future<Boolean> vacuum = pool.submit(() -> v.deleteUnlessProtected(path, old, () -> {
        deleting.countDown();
        await(release);
        Files.delete(file);
      }));
      assertTrue(deleting.await(10, TimeUnit.SECONDS));
      // A RESTORE registering the file now waits for the deletion under way, then its own
      // existence check sees the file gone: it cannot commit a reference to it.
      Thread restore = new Thread(() -> InFlightWrites.open(t, System.currentTimeMillis())
          .protectPaths(List.of(path)).close());
      restore.start();
      restore.join(300);
      assertTrue(restore.isAlive(), "registration waits for the deletion in progress");
      release.countDown();
      restore.join(10_000);
      assertTrue(vacuum.get(10, TimeUnit.SECONDS));
      assertFalse(Files.exists(file));
    } finally {
      pool.shutdownNow();
    }
    Path kept = Files.writeString(dir.resolve("part-00001-y.parquet"), "data");
    String keptPath = "file:" + kept;
    try (InFlightWrites.VacuumView v = InFlightWrites.vacuumStarting(t);
        InFlightWrites.Registration restore = InFlightWrites.open(t, System.currentTimeMillis())) {
      restore.protectPaths(List.of(keptPath));
      assertFalse(v.deleteUnlessProtected(keptPath, old, () -> Files.delete(kept)),
          "registered before VACUUM reached it: kept");
      assertTrue(Files.exists(kept));
    }
  }

  private static void await(CountDownLatch latch) throws IOException {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new IOException("not released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }
}
