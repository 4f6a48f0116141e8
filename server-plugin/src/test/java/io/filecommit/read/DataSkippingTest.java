package io.filecommit.read;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.types.DataTypeUtils$;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/** Data skipping decisions on hand-written statistics (protocol "Per-file Statistics"). */
class DataSkippingTest {
  private static final StructType SCHEMA = new StructType().add("k", DataTypes.LongType).add("s", DataTypes.StringType)
      .add("d", DataTypes.DateType).add("t", DataTypes.TimestampType);
  private static final List<AttributeReference> A = CollectionConverters.asJava(DataTypeUtils$.MODULE$.toAttributes(SCHEMA));
  private static final String STATS = "{\"numRecords\":10,\"minValues\":{\"k\":100,\"s\":\"b\",\"d\":\"2024-01-02\","
      + "\"t\":\"2024-01-01T10:00:00.000Z\"},\"maxValues\":{\"k\":200,\"s\":\"m\",\"d\":\"2024-01-05\","
      + "\"t\":\"2024-01-01T10:00:00.123Z\"},\"nullCount\":{\"k\":0,\"s\":10,\"d\":0,\"t\":0}}";

  private static boolean may(Expression e) {
    return DataSkipping.mayMatch(STATS, List.of(e));
  }

  @Test
  void rangesDecideComparisons() {
    assertTrue(may(new EqualTo(A.get(0), Literal.create(150L, DataTypes.LongType))));
    assertFalse(may(new EqualTo(A.get(0), Literal.create(99L, DataTypes.LongType))));
    assertFalse(may(new GreaterThan(A.get(0), Literal.create(200L, DataTypes.LongType))));
    assertTrue(may(new GreaterThan(Literal.create(101L, DataTypes.LongType), A.get(0))));
    assertFalse(may(new GreaterThan(Literal.create(100L, DataTypes.LongType), A.get(0))));
    assertFalse(may(new LessThanOrEqual(A.get(2), Literal.create(java.time.LocalDate.of(2024, 1, 1), DataTypes.DateType))));
    assertTrue(may(new Or(new EqualTo(A.get(0), Literal.create(1L, DataTypes.LongType)),
        new EqualTo(A.get(0), Literal.create(200L, DataTypes.LongType)))));
  }

  @Test
  void timestampMaximumIsWidenedToTheMillisecond() {
    // 10:00:00.123456 is in the file although the statistic says .123 (milliseconds).
    Literal inside = Literal.create(java.time.Instant.parse("2024-01-01T10:00:00.123456Z"), DataTypes.TimestampType);
    assertTrue(may(new EqualTo(A.get(3), inside)));
    Literal after = Literal.create(java.time.Instant.parse("2024-01-01T10:00:00.124001Z"), DataTypes.TimestampType);
    assertFalse(may(new EqualTo(A.get(3), after)));
  }

  @Test
  void nullCountsDecideNullTestsAndAllNullColumns() {
    assertTrue(may(new IsNull(A.get(1))));
    assertFalse(may(new IsNull(A.get(0))));
    assertFalse(may(new EqualTo(A.get(1), Literal.create("c", DataTypes.StringType))));
  }

  @Test
  void missingOrUnreadableStatisticsKeepTheFile() {
    Expression e = new EqualTo(A.get(0), Literal.create(99L, DataTypes.LongType));
    assertTrue(DataSkipping.mayMatch(null, List.of(e)));
    assertTrue(DataSkipping.mayMatch("not json", List.of(e)));
    assertTrue(DataSkipping.mayMatch("{\"numRecords\":3}", List.of(e)));
  }
}
