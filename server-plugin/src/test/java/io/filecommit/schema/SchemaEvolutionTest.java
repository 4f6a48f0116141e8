package io.filecommit.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.errors.FileCommitException;
import java.util.List;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** mergeSchema's rules (Delta's SchemaMergingUtils.mergeSchemas with TypeWidening). */
class SchemaEvolutionTest {
  private static final StructType INNER = new StructType().add("a", DataTypes.IntegerType, false);
  private static final StructType TABLE = new StructType()
      .add("id", DataTypes.IntegerType, false)
      .add("s", INNER)
      .add("arr", new ArrayType(INNER, true))
      .add("part", DataTypes.StringType);

  @Test
  void newFieldsAreAppendedNullableAndTableFieldsKeepTheirs() {
    StructType inner = new StructType().add("A", DataTypes.IntegerType).add("b", DataTypes.StringType, false);
    StructType data = new StructType()
        .add("extra", DataTypes.LongType, false)
        .add("S", inner)
        .add("ID", DataTypes.IntegerType)
        .add("arr", new ArrayType(inner, false));
    StructType merged = SchemaEvolution.merge(TABLE, data, false, List.of("part"));
    assertEquals(List.of("id", "s", "arr", "part", "extra"), List.of(merged.fieldNames()));
    assertFalse(merged.apply("id").nullable());
    StructType s = (StructType) merged.apply("s").dataType();
    assertEquals(List.of("a", "b"), List.of(s.fieldNames()));
    assertFalse(s.apply("a").nullable());
    assertTrue(s.apply("b").nullable());
    assertTrue(merged.apply("extra").nullable());
    StructType element = (StructType) ((ArrayType) merged.apply("arr").dataType()).elementType();
    assertEquals(List.of("a", "b"), List.of(element.fieldNames()));
  }

  @Test
  void sameSchemaIsUnchanged() {
    assertEquals(TABLE, SchemaEvolution.merge(TABLE, TABLE, false, List.of()));
  }

  @Test
  void int32TypesMergeWithoutWidening() {
    StructType data = new StructType().add("id", DataTypes.ShortType);
    assertEquals(DataTypes.IntegerType, SchemaEvolution.merge(TABLE, data, false, List.of()).apply("id").dataType());
  }

  @Test
  void wideningNeedsTheTablePropertyAndIsRecorded() {
    StructType data = new StructType().add("id", DataTypes.LongType);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> SchemaEvolution.merge(TABLE, data, false, List.of()));
    assertEquals("DELTA_FAILED_TO_MERGE_FIELDS", e.getCondition());
    assertTrue(e.getMessage().contains("delta.enableTypeWidening"), e.getMessage());
    StructField id = SchemaEvolution.merge(TABLE, data, true, List.of()).apply("id");
    assertEquals(DataTypes.LongType, id.dataType());
    Metadata[] changes = id.metadata().getMetadataArray(SchemaEvolution.TYPE_CHANGES);
    assertEquals(1, changes.length);
    assertEquals("integer", changes[0].getString("fromType"));
    assertEquals("long", changes[0].getString("toType"));
  }

  @Test
  void wideningInsideAnArrayRecordsTheFieldPath() {
    StructType table = new StructType().add("xs", new ArrayType(DataTypes.FloatType, true));
    StructType data = new StructType().add("xs", new ArrayType(DataTypes.DoubleType, true));
    StructField xs = SchemaEvolution.merge(table, data, true, List.of()).apply("xs");
    assertEquals("element", xs.metadata().getMetadataArray(SchemaEvolution.TYPE_CHANGES)[0].getString("fieldPath"));
  }

  @Test
  void refusals() {
    for (StructType data : List.of(
        new StructType().add("id", DataTypes.StringType),
        new StructType().add("s", DataTypes.StringType),
        new StructType().add("part", DataTypes.IntegerType))) {
      FileCommitException e = assertThrows(FileCommitException.class,
          () -> SchemaEvolution.merge(TABLE, data, true, List.of("part")), data.simpleString());
      assertEquals("DELTA_FAILED_TO_MERGE_FIELDS", e.getCondition());
    }
    StructType longTable = new StructType().add("id", DataTypes.LongType).add("p", DataTypes.IntegerType);
    assertThrows(FileCommitException.class, () -> SchemaEvolution.merge(longTable,
        new StructType().add("id", DataTypes.IntegerType), true, List.of()));
    assertThrows(FileCommitException.class, () -> SchemaEvolution.merge(longTable,
        new StructType().add("p", DataTypes.LongType), true, List.of("p")));
  }

  @Test
  void wideningsAreDeltasSchemaEvolutionOnes() {
    assertTrue(SchemaEvolution.wideningForEvolution(DataTypes.ByteType, DataTypes.LongType));
    assertTrue(SchemaEvolution.wideningForEvolution(DataTypes.FloatType, DataTypes.DoubleType));
    assertTrue(SchemaEvolution.wideningForEvolution(DataTypes.DateType, DataTypes.TimestampNTZType));
    assertTrue(SchemaEvolution.wideningForEvolution(DataTypes.createDecimalType(10, 2),
        DataTypes.createDecimalType(12, 4)));
    assertFalse(SchemaEvolution.wideningForEvolution(DataTypes.createDecimalType(10, 2),
        DataTypes.createDecimalType(11, 4)));
    assertFalse(SchemaEvolution.wideningForEvolution(DataTypes.IntegerType, DataTypes.DoubleType));
    assertFalse(SchemaEvolution.wideningForEvolution(DataTypes.LongType, DataTypes.IntegerType));
  }

  @Test
  void projectLeavesEqualTypesAlone() {
    org.apache.spark.sql.Column c = org.apache.spark.sql.functions.col("x");
    assertSame(c, SchemaEvolution.project(c, INNER, INNER));
  }
}
