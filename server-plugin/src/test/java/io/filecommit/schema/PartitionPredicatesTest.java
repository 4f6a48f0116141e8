package io.filecommit.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.testing.SparkTestSession;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Partition-only predicates (with a table alias) and their evaluation on partition values. */
class PartitionPredicatesTest {
  private static SparkSession spark;

  private static final StructType SCHEMA = new StructType()
      .add("id", DataTypes.LongType).add("v", DataTypes.LongType).add("part", DataTypes.StringType);
  private static final Metadata MD = new Metadata(UUID.randomUUID().toString(), null, null, SCHEMA.json(),
      List.of("part"), Map.of(), 0L);

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  private static AddFile file(String path, String part) {
    return new AddFile(path, java.util.Collections.singletonMap("part", part), 1, 1, true, null, Map.of());
  }

  @Test
  void onlyPredicatesOnPartitionColumnsPrune() {
    assertTrue(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("t.part IN ('a', 'b')"), "t"));
    assertTrue(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("part = 'a'"), null));
    assertFalse(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("t.id = 1"), "t"));
    assertFalse(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("t.part = s.part"), "t"));
    assertFalse(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("part = 'a' AND rand() < 0.5"), null));
    List<AddFile> files = List.of(file("a1", "a"), file("b1", "b"), file("n1", null));
    assertEquals(Set.of("a1"), PartitionPredicates.matching(spark, MD, files, functions.expr("t.part = 'a'"), "t"));
    assertEquals(Set.of("n1"), PartitionPredicates.matching(spark, MD, files, functions.expr("part IS NULL"), null));
  }
}
