package io.filecommit.commands;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.filecommit.testing.SparkTestSession;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** How DELETE, UPDATE and MERGE split its condition into the conjuncts that may prune partitions. */
class DMLUtilsTest {
  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  @Test
  void conditionsSplitIntoTheirConjuncts() {
    List<Column> parts = DMLUtils.conjuncts(spark, functions.expr("t.part = 'a' AND (t.id > 1 OR t.v = 2) AND s.id = t.id"));
    assertEquals(3, parts.size());
    assertEquals(1, DMLUtils.conjuncts(spark, functions.expr("id > 1 OR part = 'a'")).size());
    // Column.and builds an unresolved "and" function: split the same.
    Column built = functions.expr("t.id = s.id").and(functions.lit(true).and(functions.expr("t.id < 20")))
        .and(functions.expr("t.id > 1 OR t.v = 2"));
    assertEquals(4, DMLUtils.conjuncts(spark, built).size());
  }
}
