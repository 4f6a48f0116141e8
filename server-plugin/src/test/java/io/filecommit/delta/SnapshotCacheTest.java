package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.SetTransaction;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The snapshot cache is bounded: by the number of tables (least recently used out) and by idle time. */
class SnapshotCacheTest {
  private static SnapshotCache.Entry entry(long version) {
    return new SnapshotCache.Entry(version, 1, null, null, null, Map.of());
  }

  @Test
  void atMostMaxEntriesLeastRecentlyUsedFirstOut() {
    AtomicLong now = new AtomicLong();
    SnapshotCache cache = new SnapshotCache(3, 1_000, now::get);
    for (int i = 0; i < 3; i++) {
      cache.put("t" + i, entry(i));
    }
    assertNotNull(cache.get("t0"), "t0 is now the most recently used");
    cache.put("t3", entry(3));
    assertEquals(3, cache.size());
    assertNull(cache.get("t1"), "the least recently used table left");
    assertNotNull(cache.get("t0"));
    assertNotNull(cache.get("t3"));
  }

  @Test
  void entriesUnusedForTheIdleTimeAreDropped() {
    AtomicLong now = new AtomicLong();
    SnapshotCache cache = new SnapshotCache(10, 1_000, now::get);
    cache.put("a", entry(1));
    cache.put("b", entry(1));
    now.set(600);
    assertNotNull(cache.get("a"), "used at 600: stays");
    now.set(1_500);
    assertNull(cache.get("b"), "unused since 0: dropped");
    assertNotNull(cache.get("a"));
    now.set(3_000);
    cache.put("c", entry(1));
    assertEquals(1, cache.size(), "a put drops idle entries too");
  }

  @Test
  void replaceOnlyMovesTheEntryItRead() {
    SnapshotCache cache = new SnapshotCache(10, 1_000, () -> 0);
    SnapshotCache.Entry first = entry(1);
    cache.put("t", first);
    cache.replace("t", entry(7), entry(2));
    assertEquals(1, cache.get("t").version(), "another writer's view moved it: not replaced");
    cache.replace("t", first, entry(2));
    assertEquals(2, cache.get("t").version());
  }

  @TempDir
  Path tmp;

  private static AddFile add(String path) {
    return new AddFile(path, Map.of(), 1, 1, true, null, Map.of());
  }

  @Test
  void rollForwardReadsTheNewCommitsAndStopsAtAProtocolOrMetadataChange() throws Exception {
    DeltaLog log = new DeltaLog(new org.apache.hadoop.fs.Path(tmp.toUri()), new Configuration());
    Metadata md = new Metadata("id-1", null, null, "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\","
        + "\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}", List.of(), Map.of(), 0L);
    log.writeCommit(0, List.<Action>of(Protocol.DEFAULT, md, add("a.parquet")));
    assertEquals(0, log.snapshot().version());
    SnapshotCache.Entry cached = SnapshotCache.INSTANCE.get(log.tablePath().toString());
    assertNull(SnapshotCache.rollForward(log, cached), "nothing new: nothing to move");
    log.writeCommit(1, List.<Action>of(new SetTransaction("app", 3, 1L), add("b.parquet")));
    log.writeCommit(2, List.<Action>of(add("c.parquet")));
    SnapshotCache.Entry moved = SnapshotCache.rollForward(log, cached);
    assertNotNull(moved);
    assertEquals(2, moved.version());
    assertEquals(Map.of("app", 3L), moved.ownTxns());
    assertEquals(0, moved.kernel().getVersion(), "Kernel did not reload");
    assertEquals(md, moved.metadata());
    log.writeCommit(3, List.<Action>of(md.withConfiguration(Map.of("delta.appendOnly", "true"))));
    assertNull(SnapshotCache.rollForward(log, moved), "a metadata change goes to Kernel");
    assertEquals("true", log.snapshot().metadata().configuration().get("delta.appendOnly"));
  }
}
