package io.filecommit.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link DeltaStatement#parse}: the forms of Delta's grammar for OPTIMIZE, VACUUM, RESTORE,
 * DESCRIBE HISTORY and DESCRIBE DETAIL, and every other text left to Spark's parser (null).
 */
class DeltaStatementTest {
  @Test
  void optimizeWithPredicateAndZOrder() {
    DeltaStatement s = DeltaStatement.parse("optimize db.events WHERE date >= '2017-01-01' AND x = 'ZORDER' "
        + "ZORDER BY (eventType, `a b`);");
    assertEquals(DeltaStatement.Kind.OPTIMIZE, s.kind());
    assertEquals(List.of("db", "events"), s.table());
    assertEquals("date >= '2017-01-01' AND x = 'ZORDER'", s.where());
    assertEquals(List.of("eventType", "a b"), s.zOrderBy());
    DeltaStatement p = DeltaStatement.parse("OPTIMIZE '/data/events' ZORDER BY c");
    assertEquals("/data/events", p.path());
    assertNull(p.where());
    assertEquals(List.of("c"), p.zOrderBy());
    assertEquals(List.of("delta", "/tmp/a`b"), DeltaStatement.parse("OPTIMIZE delta.`/tmp/a``b`").table());
  }

  @Test
  void vacuumRestoreHistoryDetail() {
    DeltaStatement v = DeltaStatement.parse("VACUUM t RETAIN 1.5 HOURS DRY RUN");
    assertEquals(1.5, v.retainHours());
    assertTrue(v.dryRun());
    DeltaStatement plain = DeltaStatement.parse("vacuum '/p'");
    assertNull(plain.retainHours());
    assertFalse(plain.dryRun());
    assertEquals(3L, DeltaStatement.parse("RESTORE TABLE t TO VERSION AS OF 3").version());
    assertEquals(3L, DeltaStatement.parse("RESTORE t VERSION AS OF '3'").version());
    assertEquals("2024-01-01 00:00:00",
        DeltaStatement.parse("RESTORE delta.`/p` TO TIMESTAMP AS OF '2024-01-01 00:00:00'").timestamp());
    DeltaStatement h = DeltaStatement.parse("DESC HISTORY t LIMIT 2");
    assertEquals(DeltaStatement.Kind.HISTORY, h.kind());
    assertEquals(2, h.limit());
    assertEquals(DeltaStatement.Kind.DETAIL, DeltaStatement.parse("DESCRIBE DETAIL '/p'").kind());
  }

  @Test
  void convertToDeltaKeepsThePartitionSchemaText() {
    DeltaStatement c = DeltaStatement.parse("convert to delta parquet.`/p` PARTITIONED BY (a INT, d DECIMAL(10, 2));");
    assertEquals(DeltaStatement.Kind.CONVERT, c.kind());
    assertEquals(List.of("parquet", "/p"), c.table());
    assertEquals("a INT, d DECIMAL(10, 2)", c.where());
    DeltaStatement plain = DeltaStatement.parse("CONVERT TO DELTA parquet.`/p`");
    assertEquals(DeltaStatement.Kind.CONVERT, plain.kind());
    assertNull(plain.where());
    assertNull(DeltaStatement.parse("CONVERT TO DELTA parquet.`/p` PARTITIONED BY (a INT"));
  }

  @Test
  void otherTextIsLeftToSpark() {
    for (String sql : List.of("SELECT 1", "DESCRIBE t", "DESCRIBE TABLE t", "OPTIMIZE t ZORDER (c",
        "VACUUM t RETAIN x HOURS", "RESTORE t TO TIMESTAMP AS OF 5", "DESCRIBE HISTORY t LIMIT -1",
        "OPTIMIZE t WHERE", "OPTIMIZE 't", "", "DELETE FROM t WHERE id = 1", "DELETE FROM t AS x",
        "UPDATE t SET version = 1", "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE",
        "CONVERT TO PARQUET x", "GENERATE x FOR TABLE t")) {
      assertNull(DeltaStatement.parse(sql), sql);
    }
  }

  @Test
  void deltaStatementsNotRunAndTimeTravelTargetsAreRefusedByName() {
    java.util.Map<String, String> cases = new java.util.LinkedHashMap<>();
    cases.put("CONVERT TO DELTA parquet.`/p` NO STATISTICS PARTITIONED BY (a INT)", "CONVERT TO DELTA NO STATISTICS");
    cases.put("GENERATE symlink_format_manifest FOR TABLE t", "GENERATE symlink_format_manifest");
    cases.put("REORG TABLE t APPLY (PURGE)", "REORG TABLE");
    cases.put("VACUUM t LITE", "VACUUM LITE");
    cases.put("VACUUM t RETAIN 200 HOURS LITE DRY RUN", "VACUUM LITE");
    cases.put("OPTIMIZE t FULL", "OPTIMIZE FULL");
    cases.put("OPTIMIZE db.t@v1", "OPTIMIZE on a time-travel version");
    cases.put("OPTIMIZE t VERSION AS OF 1 ZORDER BY (a)", "OPTIMIZE on a time-travel version");
    cases.put("VACUUM t FOR SYSTEM_TIME AS OF '2024-01-01'", "VACUUM on a time-travel version");
    cases.put("RESTORE TABLE t@v3 TO VERSION AS OF 1", "RESTORE on a time-travel version");
    cases.put("DELETE FROM t@v1 WHERE id = 1", "DELETE on a time-travel version");
    cases.put("delete from delta.`/p` TIMESTAMP AS OF '2024-01-01'", "DELETE on a time-travel version");
    cases.put("UPDATE t VERSION AS OF 0 SET id = 1", "UPDATE on a time-travel version");
    cases.put("MERGE INTO t@v1 x USING s ON x.id = s.id WHEN MATCHED THEN DELETE", "MERGE on a time-travel version");
    cases.forEach((sql, what) -> {
      DeltaStatement s = DeltaStatement.parse(sql);
      assertEquals(DeltaStatement.Kind.REFUSED, s.kind(), sql);
      assertEquals(what, s.refused(), sql);
    });
    DeltaStatement full = DeltaStatement.parse("VACUUM t FULL RETAIN 200 HOURS DRY RUN");
    assertEquals(DeltaStatement.Kind.VACUUM, full.kind());
    assertEquals(200.0, full.retainHours());
    assertTrue(full.dryRun());
    assertEquals(DeltaStatement.Kind.VACUUM, DeltaStatement.parse("VACUUM t RETAIN 200 HOURS FULL").kind());
  }
}
