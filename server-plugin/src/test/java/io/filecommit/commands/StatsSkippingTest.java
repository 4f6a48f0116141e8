package io.filecommit.commands;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.actions.AddFile;
import io.filecommit.testing.SparkTestSession;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Which candidate files a DELETE / UPDATE / MERGE condition skips by statistics: never one that may
 * hold an affected row (protocol "Per-file Statistics"; Delta's {@code filterFiles}).
 */
class StatsSkippingTest {
  private static SparkSession spark;
  private static Dataset<Row> target;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
    StructType schema = new StructType().add("id", DataTypes.LongType).add("x", DataTypes.LongType)
        .add("part", DataTypes.StringType);
    target = spark.createDataFrame(List.<Row>of(), schema).as("target");
  }

  private static AddFile file(String stats) {
    return new AddFile("f.parquet", Map.of(), 1, 1, true, stats, Map.of());
  }

  private static final AddFile LOW = file("{\"numRecords\":10,\"minValues\":{\"id\":1,\"x\":1},"
      + "\"maxValues\":{\"id\":10,\"x\":10},\"nullCount\":{\"id\":0,\"x\":0}}");
  private static final AddFile NULLS = file("{\"numRecords\":10,\"minValues\":{\"id\":21},"
      + "\"maxValues\":{\"id\":30},\"nullCount\":{\"id\":0,\"x\":10}}");
  private static final AddFile NO_STATS = file(null);
  private static final AddFile NO_MIN_MAX = file("{\"numRecords\":10}");

  private static StatsSkipping of(String... conditions) {
    return StatsSkipping.of(target, n -> n, java.util.Arrays.stream(conditions).map(functions::expr).toList());
  }

  @Test
  void rangesAndNullCountsRuleOutFiles() {
    assertFalse(of("target.id >= 12", "target.id <= 14").keeps(LOW));
    assertTrue(of("target.id >= 2 + 3").keeps(LOW), "folded: id >= 5");
    assertFalse(of("target.id > 2 * 10").keeps(LOW), "folded: id > 20");
    assertFalse(of("x IS NULL").keeps(LOW));
    assertTrue(of("x IS NULL").keeps(NULLS));
    assertFalse(of("x IS NOT NULL").keeps(NULLS));
    assertFalse(of("x = 3").keeps(NULLS), "only nulls: no comparison holds");
    assertFalse(of("(true AND target.id < 1) OR (true AND target.id > 10)").keeps(LOW));
    assertTrue(of("(true AND target.id < 1) OR (true AND target.id > 9)").keeps(LOW));
  }

  @Test
  void whatCannotBeDecidedKeepsTheFile() {
    assertTrue(of("target.id = 50").keeps(NO_STATS));
    assertTrue(of("target.id = 50").keeps(NO_MIN_MAX));
    assertTrue(of("id % 100 = 0").keeps(LOW));
    assertTrue(of("NOT (id < 100)").keeps(LOW));
    assertTrue(of("part = 'z'").keeps(LOW), "partition columns have no statistics");
  }

  @Test
  void conjunctsNamingAnotherRelationAreNotUsed() {
    StatsSkipping s = of("target.id = s.id", "target.id > 100");
    assertEquals(1, s.filters().size());
    assertFalse(s.keeps(LOW));
    assertTrue(of("target.id = s.id").keeps(LOW));
  }

  @Test
  void columnsAreRenamedToTheirPhysicalNames() {
    StatsSkipping s = StatsSkipping.of(target, n -> n.equals("id") ? "col-1" : n, List.of(functions.expr("id > 100")));
    assertTrue(s.keeps(LOW), "the statistics have no key col-1");
    assertFalse(s.keeps(file("{\"numRecords\":1,\"minValues\":{\"col-1\":1},\"maxValues\":{\"col-1\":10}}")));
  }

  @Test
  void materializedRowTrackingColumnsAreNeverUsedForSkipping() {
    String rowId = "_row-id-col-0b5e";
    Dataset<Row> rt = spark.createDataFrame(List.<Row>of(), new StructType().add("id", DataTypes.LongType)
        .add(rowId, DataTypes.LongType)).as("target");
    // Every materialized value NULL: each row's ID is its default (baseRowId + index), not NULL.
    AddFile defaults = file("{\"numRecords\":10,\"minValues\":{\"id\":1},\"maxValues\":{\"id\":10},"
        + "\"nullCount\":{\"id\":0,\"" + rowId + "\":10}}");
    List<org.apache.spark.sql.Column> byRowId = List.of(functions.col("`" + rowId + "`").equalTo(5));
    assertTrue(StatsSkipping.of(rt, n -> n, byRowId, java.util.Set.of(rowId)).keeps(defaults));
    List<org.apache.spark.sql.Column> both = List.of(functions.col("id").gt(20), functions.col("`" + rowId + "`").equalTo(5));
    assertFalse(StatsSkipping.of(rt, n -> n, both, java.util.Set.of(rowId)).keeps(defaults),
        "the other conjuncts still skip");
  }
}
