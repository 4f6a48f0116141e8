package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/**
 * The keys of {@link DeltaLogCache}: harmless Spark SQL settings and values equal to the server's
 * do not make a log of their own, so one client's setting churn cannot evict other clients' logs.
 */
class DeltaLogCacheTest {
  private static scala.collection.immutable.Map<String, String> conf(Map<String, String> m) {
    return scala.collection.immutable.Map.from(scala.jdk.javaapi.CollectionConverters.asScala(m));
  }

  @Test
  void harmlessSqlSettingsAndServerValuesAreNotPartOfTheKey() {
    Configuration server = new Configuration(false);
    server.set("fs.s3a.connection.maximum", "96");
    assertEquals(conf(Map.of()), DeltaLogCache.logKey(conf(Map.of("spark.sql.shuffle.partitions", "7",
        "fs.s3a.connection.maximum", "96")), server));
    // A Hadoop key of its own, and a catalog setting (refused by ClientSettings), stay in the key.
    assertEquals(conf(Map.of("fs.s3a.connection.maximum", "8", "spark.sql.catalog.x", "a.B")),
        DeltaLogCache.logKey(conf(Map.of("fs.s3a.connection.maximum", "8", "spark.sql.catalog.x", "a.B",
            "spark.sql.ansi.enabled", "false")), server));
  }

  @Test
  void settingChurnOfOneClientEvictsNoLog() {
    DeltaLogCache cache = new DeltaLogCache();
    Configuration server = new Configuration(false);
    int[] opened = {0};
    DeltaLog log = new DeltaLog(new org.apache.hadoop.fs.Path("file:/tmp/churn"), new Configuration(false), k -> null);
    assertSame(log, cache.get("file:/tmp/churn", conf(Map.of()), server, () -> {
      opened[0]++;
      return log;
    }));
    for (int i = 0; i < 3 * DeltaLogCache.MAX_ENTRIES; i++) {
      assertSame(log, cache.get("file:/tmp/churn", conf(Map.of("spark.sql.shuffle.partitions", Integer.toString(i))),
          server, () -> {
            opened[0]++;
            return null;
          }));
    }
    assertEquals(1, opened[0], "the churning settings reused the one log");
    assertEquals(1, cache.size());
  }
}
