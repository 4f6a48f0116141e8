package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.FileCommitException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** Identity column values and high-water marks (protocol "Identity Columns"; Delta's IdentityColumn facts). */
class IdentityColumnsTest {
  static StructType schema(long start, long step, Long mark, boolean byDefault) {
    MetadataBuilder b = new MetadataBuilder().putLong(IdentityColumns.START, start).putLong(IdentityColumns.STEP, step)
        .putBoolean(IdentityColumns.ALLOW_EXPLICIT_INSERT, byDefault);
    if (mark != null) {
      b.putLong(IdentityColumns.HIGH_WATER_MARK, mark);
    }
    return new StructType(new StructField[] {new StructField("id", DataTypes.LongType, true, b.build()),
        new StructField("v", DataTypes.StringType, true, org.apache.spark.sql.types.Metadata.empty())});
  }

  private static Metadata md(StructType s) {
    return new Metadata("t", null, null, s.json(), List.of(), Map.of(), 0L);
  }

  @Test
  void tasksGenerateDisjointValuesOnTheSequenceAboveTheMark() {
    for (long step : new long[] {5, -3}) {
      IdentityColumns.Info info = IdentityColumns.of(schema(10, step, 10 + 3 * step, false)).get(0);
      assertEquals(10 + 4 * step, info.first());
      Set<Long> seen = new HashSet<>();
      int tasks = 7;
      for (int p = 0; p < tasks; p++) {
        for (long k = 0; k < 50; k++) {
          long v = IdentityColumns.value(info.first(), step, p, tasks, k);
          assertTrue(seen.add(v), "duplicate " + v);
          assertEquals(0, (v - 10) % step);
          assertTrue((v - info.highWaterMark()) * step > 0, "not past the mark: " + v);
        }
      }
    }
    // Without a mark the first value is the start; task 0's values follow each other by tasks * step.
    IdentityColumns.Info fresh = IdentityColumns.of(schema(1, 1, null, true)).get(0);
    assertEquals(1, fresh.first());
    assertEquals(List.of(1L, 4L, 7L), List.of(IdentityColumns.value(1, 1, 0, 3, 0), IdentityColumns.value(1, 1, 0, 3, 1),
        IdentityColumns.value(1, 1, 0, 3, 2)));
    assertEquals(3, IdentityColumns.value(1, 1, 2, 3, 0));
    assertThrows(ArithmeticException.class, () -> IdentityColumns.value(Long.MAX_VALUE - 1, 1, 0, 2, 1));
  }

  @Test
  void roundToNextFollowsTheStepDirection() {
    assertEquals(20, IdentityColumns.roundToNext(10, 5, 17));
    assertEquals(20, IdentityColumns.roundToNext(10, 5, 20));
    assertEquals(10, IdentityColumns.roundToNext(10, 5, 7)); // before start: toward start
    assertEquals(-7, IdentityColumns.roundToNext(-1, -3, -5));
    assertEquals(-1, IdentityColumns.roundToNext(-1, -3, 1));
  }

  @Test
  void highWaterMarkMovesForwardOnlyAndStaysOnTheSequence() {
    IdentityColumns.Info none = IdentityColumns.of(schema(10, 5, null, true)).get(0);
    assertEquals(25L, IdentityColumns.advance(none, 23));
    assertNull(IdentityColumns.advance(none, 9), "a value before the start never sets the mark");
    IdentityColumns.Info at40 = IdentityColumns.of(schema(10, 5, 40L, true)).get(0);
    assertNull(IdentityColumns.advance(at40, 40));
    assertNull(IdentityColumns.advance(at40, 30), "never lowered");
    assertEquals(45L, IdentityColumns.advance(at40, 41));
    IdentityColumns.Info negative = IdentityColumns.of(schema(-1, -3, -4L, false)).get(0);
    assertEquals(-10L, IdentityColumns.advance(negative, -10));
    assertNull(IdentityColumns.advance(negative, -2));
    IdentityColumns.Info damaged = IdentityColumns.of(schema(10, 5, 3L, false)).get(0);
    assertEquals(5L, IdentityColumns.advance(damaged, 2), "a mark before the start is replaced, even by one before it");
  }

  @Test
  void marksAreWrittenIntoTheColumnAndKeptByRestore() {
    Metadata at15 = md(schema(10, 5, 15L, false));
    Metadata at40 = IdentityColumns.withHighWaterMarks(at15, Map.of("id", 40L));
    assertEquals(40L, IdentityColumns.of(at40.schema()).get(0).highWaterMark());
    assertEquals(at15.id(), at40.id());
    assertEquals(10L, at40.schema().apply("id").metadata().getLong(IdentityColumns.START));
    assertEquals(at40.schemaString(), IdentityColumns.keepHighWaterMarks(at15, at40).schemaString());
    assertEquals(at40.schemaString(), IdentityColumns.keepHighWaterMarks(at40, at15).schemaString());
    Metadata fresh = md(schema(10, 5, null, false));
    assertEquals(40L, IdentityColumns.of(IdentityColumns.keepHighWaterMarks(fresh, at40).schema()).get(0).highWaterMark());
  }

  @Test
  void givenValuesAndUpdatesAreRefusedWithDeltasClasses() {
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> IdentityColumns.checkExplicitInsert(schema(1, 1, null, false), List.of("v", "ID")));
    assertEquals("DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED", e.getCondition());
    assertEquals("42808", e.getSqlState());
    IdentityColumns.checkExplicitInsert(schema(1, 1, null, true), List.of("id", "v"));
    IdentityColumns.checkExplicitInsert(schema(1, 1, null, false), List.of("v"));
    e = assertThrows(FileCommitException.class, () -> IdentityColumns.checkUpdate(schema(1, 1, null, true), List.of("id")));
    assertEquals("DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED", e.getCondition());
    IdentityColumns.checkUpdate(schema(1, 1, null, true), List.of("v"));
  }

  @Test
  void damagedDefinitionsAreRefused() {
    StructType noStep = new StructType(new StructField[] {new StructField("id", DataTypes.LongType, true,
        new MetadataBuilder().putLong(IdentityColumns.START, 1).build())});
    assertEquals("DELTA_IDENTITY_COLUMN_INCONSISTENT_METADATA",
        assertThrows(FileCommitException.class, () -> IdentityColumns.of(noStep)).getCondition());
    assertEquals("DELTA_IDENTITY_COLUMNS_ILLEGAL_STEP",
        assertThrows(FileCommitException.class, () -> IdentityColumns.of(schema(1, 0, null, true))).getCondition());
  }

  @Test
  void aDeclaredColumnCarriesDeltasKeysAndOnlyBigint() {
    org.apache.spark.sql.types.StructField f = IdentityColumns.declare(new org.apache.spark.sql.types.StructField("id",
        org.apache.spark.sql.types.DataTypes.LongType, true, org.apache.spark.sql.types.Metadata.empty()), 5, -2, false);
    IdentityColumns.Info i = IdentityColumns.of(new org.apache.spark.sql.types.StructType(
        new org.apache.spark.sql.types.StructField[] {f})).get(0);
    assertEquals(new IdentityColumns.Info("id", 5, -2, null, false), i);
    assertEquals(Set.of(IdentityColumns.START, IdentityColumns.STEP, IdentityColumns.ALLOW_EXPLICIT_INSERT),
        Set.of(scala.jdk.javaapi.CollectionConverters.asJava(f.metadata().map().keySet()).toArray(new String[0])));
    assertEquals("DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE", assertThrows(FileCommitException.class,
        () -> IdentityColumns.declare(new org.apache.spark.sql.types.StructField("id",
            org.apache.spark.sql.types.DataTypes.IntegerType, true, org.apache.spark.sql.types.Metadata.empty()), 1, 1,
            true)).getCondition());
  }
}
