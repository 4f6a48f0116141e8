package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

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
}
