package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.errors.FileCommitException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The table rules of {@link Constraints}, checked in a real Spark write of Parquet files. */
class ConstraintsTest {
  private static SparkSession spark;

  @TempDir
  Path tmp;

  @BeforeAll
  static void startSpark() {
    spark = (SparkSession) org.apache.spark.sql.SparkSession.builder()
        .master("local[1]").config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
        .getOrCreate();
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  private static final StructType SCHEMA = new StructType(new StructField[] {
      new StructField("id", DataTypes.LongType, false, org.apache.spark.sql.types.Metadata.empty()),
      new StructField("v", DataTypes.IntegerType, true, new MetadataBuilder()
          .putString(Constraints.INVARIANTS, "{\"expression\":{\"expression\":\"v < 100\"}}").build()),
      new StructField("twice", DataTypes.IntegerType, true, new MetadataBuilder()
          .putString(TableFeatures.GENERATION_EXPRESSION, "v * 2").build()),
      new StructField("s", new StructType(new StructField[] {
          new StructField("a", DataTypes.StringType, false, org.apache.spark.sql.types.Metadata.empty())}), true,
          org.apache.spark.sql.types.Metadata.empty())});

  @SuppressWarnings("unchecked")
  private Dataset<Row> rows(Object[]... values) {
    List<Row> list = java.util.Arrays.stream(values).map(RowFactory::create).toList();
    return (Dataset<Row>) spark.createDataFrame(list, SCHEMA.asNullable());
  }

  private List<Row> writeAndRead(Dataset<Row> checked) {
    String out = tmp.resolve("out-" + System.nanoTime()).toString();
    checked.write().parquet(out);
    return spark.read().parquet(out).orderBy("id").collectAsList();
  }

  private FileCommitException violation(Dataset<Row> checked) {
    RuntimeException e = assertThrows(RuntimeException.class, () -> writeAndRead(checked));
    FileCommitException typed = Constraints.translate(e);
    assertTrue(typed != null, "a constraint violation is recognised: " + e);
    return typed;
  }

  @Test
  void tableWithoutRulesGetsItsInputBack() {
    StructType plain = new StructType().add("x", DataTypes.LongType);
    Dataset<Row> in = (Dataset<Row>) spark.range(3).toDF("x");
    assertSame(in, Constraints.apply(in, plain, Map.of(), Set.of("x")));
    assertNull(Constraints.translate(new RuntimeException("something else")));
  }

  @Test
  void absentGeneratedColumnIsComputedAndValidRowsPassUnchanged() {
    Dataset<Row> in = rows(new Object[] {1L, 5, null, RowFactory.create("p")}, new Object[] {2L, 7, null, null});
    List<Row> back = writeAndRead(Constraints.apply(in, SCHEMA, Map.of("delta.constraints.pos", "id > 0"),
        Set.of("id", "v", "s")));
    assertEquals(2, back.size());
    assertEquals(10, back.get(0).getInt(2));
    assertEquals(14, back.get(1).getInt(2));
    assertEquals("p", back.get(0).getStruct(3).getString(0));
  }

  @Test
  void checkConstraintFalseOrNullViolatesWithTheRowValues() {
    Map<String, String> conf = Map.of("delta.constraints.pos", "id > 0");
    FileCommitException e = violation(Constraints.apply(rows(new Object[] {-5L, 1, null, null}), SCHEMA, conf,
        Set.of("id", "v", "s")));
    assertEquals("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", e.getCondition());
    assertEquals("23001", e.getSqlState());
    assertEquals("pos", e.getMessageParameters().get("constraintName"));
    assertEquals("-5", e.getMessageParameters().get("value.id"));
    assertTrue(e.getMessage().contains(" - id : -5"), e.getMessage());
    // A null result violates too (Delta's rule): v is null, so the invariant "v < 100" is null.
    FileCommitException n = violation(Constraints.apply(rows(new Object[] {3L, null, null, null}), SCHEMA,
        Map.of(), Set.of("id", "v", "s")));
    assertEquals("EXPRESSION(v < 100)", n.getMessageParameters().get("constraintName"));
    assertEquals("null", n.getMessageParameters().get("value.v"));
  }

  @Test
  void notNullTopLevelAndNestedUnderAPresentParent() {
    FileCommitException top = violation(Constraints.apply(rows(new Object[] {null, 1, null, null}), SCHEMA, Map.of(),
        Set.of("id", "v", "s")));
    assertEquals("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", top.getCondition());
    assertEquals("id", top.getMessageParameters().get("columnName"));
    FileCommitException nested = violation(Constraints.apply(
        rows(new Object[] {1L, 1, null, RowFactory.create((Object) null)}), SCHEMA, Map.of(), Set.of("id", "v", "s")));
    assertEquals("s.a", nested.getMessageParameters().get("columnName"));
    // A null parent struct is fine.
    assertEquals(1, writeAndRead(Constraints.apply(rows(new Object[] {1L, 1, null, null}), SCHEMA, Map.of(),
        Set.of("id", "v", "s"))).size());
  }


  @Test
  void invariantAndSuppliedGeneratedValueAreChecked() {
    FileCommitException inv = violation(Constraints.apply(rows(new Object[] {1L, 500, null, null}), SCHEMA, Map.of(),
        Set.of("id", "v", "s")));
    assertEquals("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", inv.getCondition());
    assertTrue(inv.getMessage().contains("v < 100") && inv.getMessage().contains(" - v : 500"), inv.getMessage());
    FileCommitException gen = violation(Constraints.apply(rows(new Object[] {1L, 4, 9, null}), SCHEMA, Map.of(),
        Set.of("id", "v", "twice", "s")));
    assertEquals("Generated Column", gen.getMessageParameters().get("constraintName"));
    assertEquals(1, writeAndRead(Constraints.apply(rows(new Object[] {1L, 4, 8, null}), SCHEMA, Map.of(),
        Set.of("id", "v", "twice", "s"))).size());
  }

  @Test
  void declaredConstraintsMustBeBooleanOverKnownColumns() {
    assertEquals("DELTA_NON_BOOLEAN_CHECK_CONSTRAINT", assertThrows(FileCommitException.class,
        () -> Constraints.validateConstraintProperties(spark, SCHEMA, Map.of("delta.constraints.c", "id + 1")))
        .getCondition());
    assertEquals("DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES", assertThrows(FileCommitException.class,
        () -> Constraints.validateConstraintProperties(spark, SCHEMA, Map.of("delta.constraints.c", "nope > 1")))
        .getCondition());
    Constraints.validateConstraintProperties(spark, SCHEMA, Map.of("delta.constraints.c", "id > 0 AND v < 3"));
  }
}
