package io.filecommit.constraints;

import io.filecommit.testing.SparkTestSession;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.TableFeatures;
import io.filecommit.errors.FileCommitException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The table rules of {@link Constraints}, checked in real Spark writes of Parquet files (one local
 * session for the class; master local[1], so a failing task is not retried).
 */
class ConstraintsTest {
  private static SparkSession spark;

  @TempDir
  Path tmp;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  /**
   * id NOT NULL; v with invariant v < 100; twice generated as v * 2; s struct with NOT NULL field a;
   * w plain (CHECK constraints below refer to it).
   */
  private static final StructType SCHEMA = new StructType(new StructField[] {
      new StructField("id", DataTypes.LongType, false, Metadata.empty()),
      new StructField("v", DataTypes.IntegerType, true, new MetadataBuilder()
          .putString(Constraints.INVARIANTS, "{\"expression\":{\"expression\":\"v < 100\"}}").build()),
      new StructField("twice", DataTypes.IntegerType, true, new MetadataBuilder()
          .putString(TableFeatures.GENERATION_EXPRESSION, "v * 2").build()),
      new StructField("s", new StructType(new StructField[] {
          new StructField("a", DataTypes.StringType, false, Metadata.empty()),
          new StructField("b", DataTypes.IntegerType, true, Metadata.empty())}), true, Metadata.empty()),
      new StructField("w", DataTypes.IntegerType, true, Metadata.empty())});

  private static final Map<String, String> CHECKS = Map.of("delta.constraints.w_positive", "w > 0");
  private static final Set<String> NOT_TWICE = Set.of("id", "v", "s", "w");
  private static final Set<String> ALL = Set.of("id", "v", "twice", "s", "w");

  /** Rows of the table schema, made nullable as user data is. */
  private Dataset<Row> rows(Object[]... values) {
    List<Row> list = Arrays.stream(values).map(RowFactory::create).toList();
    return spark.createDataFrame(list, SCHEMA.asNullable());
  }

  private List<Row> writeAndRead(Dataset<Row> checked) {
    String out = tmp.resolve("out-" + System.nanoTime()).toString();
    checked.write().parquet(out);
    return spark.read().parquet(out).orderBy("id").collectAsList();
  }

  /** The typed violation of a write that must fail. */
  private FileCommitException violation(Dataset<Row> checked) {
    RuntimeException e = assertThrows(RuntimeException.class, () -> writeAndRead(checked));
    FileCommitException typed = Constraints.translate(e);
    assertNotNull(typed, () -> "a constraint violation is recognised: " + e);
    return typed;
  }

  /** A value of s that satisfies its NOT NULL field. */
  private static final Row S = RowFactory.create("x", 1);

  private static Object[] row(Long id, Integer v, Integer twice, Row s, Integer w) {
    return new Object[] {id, v, twice, s, w};
  }

  @Test
  void tableWithoutRulesGetsItsInputBack() {
    StructType plain = new StructType().add("x", DataTypes.LongType);
    Dataset<Row> in = spark.range(3).toDF("x");
    assertFalse(Constraints.hasRules(plain, Map.of("delta.appendOnly", "true")));
    assertSame(in, Constraints.apply(in, plain, Map.of("delta.appendOnly", "true"), Set.of("x")));
    assertNull(Constraints.translate(new RuntimeException("something else", new IllegalStateException())));
    assertNull(Constraints.translate(null));
    assertTrue(Constraints.hasRules(plain, Map.of("Delta.Constraints.c", "x > 0")), "prefix is case-insensitive");
    assertTrue(Constraints.hasRules(SCHEMA, Map.of()));
    assertEquals(List.of("twice"), Constraints.generatedColumns(SCHEMA));
  }

  @Test
  void generatedColumnComputedValidRowsUnchangedAndNoExtraJob() {
    Dataset<Row> in = rows(row(1L, 5, null, RowFactory.create("p", 7), 3), row(2L, 7, null, RowFactory.create("q", null), 1));
    Dataset<Row> checked = Constraints.apply(in, SCHEMA, CHECKS, NOT_TWICE);
    assertEquals(Arrays.asList(SCHEMA.fieldNames()), Arrays.asList(checked.schema().fieldNames()));
    assertEquals("v * 2", checked.schema().apply("twice").metadata().getString(TableFeatures.GENERATION_EXPRESSION));
    StructType withExtra = Constraints.apply(in.withColumn("_change_type", org.apache.spark.sql.functions.lit("insert")),
        SCHEMA, CHECKS, NOT_TWICE).schema();
    assertEquals("_change_type", withExtra.fieldNames()[SCHEMA.size()], "other columns pass through, last");

    List<Row> back = writeAndRead(checked);
    assertEquals(2, back.size());
    assertEquals(RowFactory.create(1L, 5, 10, RowFactory.create("p", 7), 3), back.get(0));
    assertEquals(RowFactory.create(2L, 7, 14, RowFactory.create("q", null), 1), back.get(1));

    // The checks ride in the write job: as many Spark jobs as a plain write of the same rows.
    assertEquals(jobsOf("plain", () -> in.write().parquet(tmp.resolve("plain").toString())),
        jobsOf("checked", () -> checked.write().parquet(tmp.resolve("checked").toString())));
  }

  private int jobsOf(String group, Runnable r) {
    spark.sparkContext().setJobGroup(group, group, false);
    try {
      r.run();
    } finally {
      spark.sparkContext().clearJobGroup();
    }
    return spark.sparkContext().statusTracker().getJobIdsForGroup(group).length;
  }

  @Test
  void checkConstraintFalseViolatesWithTheRowValues() {
    FileCommitException e = violation(Constraints.apply(
        rows(row(1L, 1, null, S, 1), row(2L, 1, null, S, -5)), SCHEMA, CHECKS, NOT_TWICE));
    assertEquals("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", e.getCondition());
    assertEquals("23001", e.getSqlState());
    assertEquals("w_positive", e.getMessageParameters().get("constraintName"));
    assertEquals("(w > 0)", e.getMessageParameters().get("expression"));
    assertEquals(" - w : -5", e.getMessageParameters().get("values"));
    assertTrue(e.getMessage().startsWith("[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] "), e.getMessage());
    assertTrue(e.getMessage().contains("w_positive") && e.getMessage().contains("\n - w : -5"), e.getMessage());
  }

  @Test
  void nullResultViolatesCheckAndInvariant() {
    // Delta: a CHECK constraint or invariant whose result is null fails, like false.
    FileCommitException check = violation(Constraints.apply(rows(row(1L, 1, null, S, null)), SCHEMA, CHECKS,
        NOT_TWICE));
    assertEquals("w_positive", check.getMessageParameters().get("constraintName"));
    assertEquals(" - w : null", check.getMessageParameters().get("values"));
    FileCommitException inv = violation(Constraints.apply(rows(row(3L, null, null, S, 1)), SCHEMA, Map.of(),
        NOT_TWICE));
    assertEquals("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", inv.getCondition());
    assertEquals("EXPRESSION(v < 100)", inv.getMessageParameters().get("constraintName"));
    assertEquals(" - v : null", inv.getMessageParameters().get("values"));
  }

  @Test
  void invariantAndSuppliedGeneratedValueAreChecked() {
    FileCommitException inv = violation(Constraints.apply(rows(row(1L, 500, null, S, 1)), SCHEMA, Map.of(),
        NOT_TWICE));
    assertTrue(inv.getMessage().contains("v < 100") && inv.getMessage().contains(" - v : 500"), inv.getMessage());

    FileCommitException gen = violation(Constraints.apply(rows(row(1L, 4, 9, S, 1)), SCHEMA, Map.of(), ALL));
    assertEquals("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", gen.getCondition());
    assertEquals("Generated Column", gen.getMessageParameters().get("constraintName"));
    assertEquals("(`twice` <=> (v * 2))", gen.getMessageParameters().get("expression"));
    assertEquals(" - twice : 9\n - v : 4", gen.getMessageParameters().get("values"));

    List<Row> ok = writeAndRead(Constraints.apply(rows(row(1L, 4, 8, S, 1)), SCHEMA, Map.of(), ALL));
    assertEquals(RowFactory.create(1L, 4, 8, S, 1), ok.get(0));
  }

  @Test
  void notNullTopLevelAndNested() {
    FileCommitException top = violation(Constraints.apply(rows(row(null, 1, null, S, 1)), SCHEMA, Map.of(),
        NOT_TWICE));
    assertEquals("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", top.getCondition());
    assertEquals("23502", top.getSqlState());
    assertEquals(Map.of("columnName", "id"), top.getMessageParameters());

    FileCommitException nested = violation(Constraints.apply(
        rows(row(1L, 1, null, RowFactory.create(null, 2), 1)), SCHEMA, Map.of(), NOT_TWICE));
    assertEquals("s.a", nested.getMessageParameters().get("columnName"));
    // As Delta: a NOT NULL nested field is null when its struct is, so a null struct violates too.
    FileCommitException parent = violation(Constraints.apply(rows(row(1L, 1, null, null, 1)),
        new StructType(new StructField[] {SCHEMA.fields()[0], SCHEMA.fields()[3]}), Map.of(), Set.of("id", "s")));
    assertEquals("s.a", parent.getMessageParameters().get("columnName"));
  }

  @Test
  void violationInATaskOfABiggerJobFailsTheJob() {
    // Rows from range (not a local relation, which Spark may project on the driver): the check runs
    // in the write tasks; Spark fails the job with the raised error (translate walks any wrapping).
    Dataset<Row> in = spark.range(0, 2000, 1, 2).selectExpr("id", "CAST(id % 50 AS INT) AS v",
        "CAST(NULL AS INT) AS twice", "named_struct('a', CAST(id AS STRING), 'b', 1) AS s",
        "CAST(IF(id = 1777, -1, 1) AS INT) AS w");
    spark.sparkContext().setJobGroup("big", "big", false);
    Exception e;
    try {
      e = assertThrows(Exception.class,
          () -> Constraints.apply(in, SCHEMA, CHECKS, NOT_TWICE).write().parquet(tmp.resolve("big").toString()));
    } finally {
      spark.sparkContext().clearJobGroup();
    }
    int[] jobs = spark.sparkContext().statusTracker().getJobIdsForGroup("big");
    assertEquals(1, jobs.length, "one write job, no extra check job");
    // The status tracker learns the job's end from the listener bus, asynchronously: wait for it.
    long deadline = System.currentTimeMillis() + 30_000;
    org.apache.spark.JobExecutionStatus status = spark.sparkContext().statusTracker().getJobInfo(jobs[0]).get().status();
    while (status == org.apache.spark.JobExecutionStatus.RUNNING && System.currentTimeMillis() < deadline) {
      Thread.onSpinWait();
      status = spark.sparkContext().statusTracker().getJobInfo(jobs[0]).get().status();
    }
    assertEquals(org.apache.spark.JobExecutionStatus.FAILED, status, "the violation failed the write job");
    FileCommitException typed = Constraints.translate(e);
    assertNotNull(typed, e::toString);
    assertEquals("w_positive", typed.getMessageParameters().get("constraintName"));
    assertEquals(" - w : -1", typed.getMessageParameters().get("values"));
    // The same rows without the bad one are written whole.
    List<Row> ok = writeAndRead(Constraints.apply((Dataset<Row>) in.where("id <> 1777"), SCHEMA, CHECKS, NOT_TWICE));
    assertEquals(1999, ok.size());
    assertEquals(2 * 49, ok.get(49).getInt(2));
  }

  @Test
  void translateReadsThePayloadFromAWrapperMessageToo() {
    FileCommitException e = violation(Constraints.apply(rows(row(2L, 1, null, S, -1)), SCHEMA, CHECKS, NOT_TWICE));
    // A wrapper that kept only the text (e.g. a job-abort message with a stack trace after it).
    String text = "Job aborted: " + ViolationPayload.PAYLOAD_START
        + "{\"class\":\"DELTA_VIOLATE_CONSTRAINT_WITH_VALUES\",\"name\":\"w_positive\",\"expression\":\"(w > 0)\"}"
        + ViolationPayload.PAYLOAD_SEP + "{\"w\":\"-1\"}" + ViolationPayload.PAYLOAD_END + " SQLSTATE: P0001\n\tat x.y(Z.java:1) }";
    FileCommitException fromText = Constraints.translate(new RuntimeException("outer", new RuntimeException(text)));
    assertEquals(e.getMessage(), fromText.getMessage());
    assertEquals(e.getMessageParameters(), fromText.getMessageParameters());
    assertSame(e, Constraints.translate(new RuntimeException(e)), "an already typed violation is returned");
  }

  @Test
  void unusableTableRulesAreTypedErrors() {
    Dataset<Row> in = rows(row(1L, 1, null, S, 1));
    assertEquals("DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES", assertThrows(FileCommitException.class,
        () -> Constraints.apply(in, SCHEMA, Map.of("delta.constraints.c", "nope > 1"), NOT_TWICE)).getCondition());
    StructType badInvariant = new StructType(new StructField[] {new StructField("x", DataTypes.IntegerType, true,
        new MetadataBuilder().putString(Constraints.INVARIANTS, "{\"something\":1}").build())});
    FileCommitException inv = assertThrows(FileCommitException.class,
        () -> Constraints.apply(spark.range(1).selectExpr("CAST(id AS INT) AS x"), badInvariant, Map.of(), Set.of("x")));
    assertEquals("DELTA_UNRECOGNIZED_INVARIANT", inv.getCondition());
    assertEquals("56038", inv.getSqlState());
    StructType badGenerated = new StructType(new StructField[] {
        new StructField("x", DataTypes.IntegerType, true, Metadata.empty()),
        new StructField("g", DataTypes.IntegerType, true,
            new MetadataBuilder().putString(TableFeatures.GENERATION_EXPRESSION, "missing + 1").build())});
    assertEquals("DELTA_INVALID_GENERATED_COLUMN_REFERENCES", assertThrows(FileCommitException.class,
        () -> Constraints.apply(spark.range(1).selectExpr("CAST(id AS INT) AS x", "CAST(NULL AS INT) AS g"),
            badGenerated, Map.of(), Set.of("x"))).getCondition());
  }

  @Test
  void declaredConstraintsMustBeValidBooleanExpressions() {
    assertEquals("DELTA_NON_BOOLEAN_CHECK_CONSTRAINT", declare("id + 1").getCondition());
    FileCommitException refs = declare("nope > 1");
    assertEquals("DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES", refs.getCondition());
    assertEquals("42621", refs.getSqlState());
    assertTrue(refs.getMessageParameters().get("colName").contains("nope"), refs.getMessageParameters().toString());
    assertEquals("DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT", declare("id >").getCondition());
    assertEquals("DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT", declare("rand() > 0.5").getCondition());
    assertEquals("DELTA_AGGREGATE_IN_CHECK_CONSTRAINT", declare("sum(id) > 0").getCondition());
    spark.udf().register("is_small", (org.apache.spark.sql.api.java.UDF1<Long, Boolean>) x -> x < 10,
        DataTypes.BooleanType);
    assertEquals("DELTA_UDF_IN_CHECK_CONSTRAINT", declare("is_small(id)").getCondition());
    ConstraintValidation.validateConstraintProperties(spark, SCHEMA,
        Map.of("delta.constraints.c", "id > 0 AND s.a <> '' AND v IS NOT NULL", "delta.appendOnly", "true"));
    ConstraintValidation.validateConstraintProperties(SCHEMA, Map.of("delta.constraints.c", "w > 0"));
  }

  private FileCommitException declare(String expr) {
    return assertThrows(FileCommitException.class,
        () -> ConstraintValidation.validateConstraintProperties(spark, SCHEMA, Map.of("delta.constraints.c", expr)));
  }
}
