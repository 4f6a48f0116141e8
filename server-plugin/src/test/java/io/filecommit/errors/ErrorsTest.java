package io.filecommit.errors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.SparkThrowable;
import org.junit.jupiter.api.Test;

/** The error catalogue ({@link ErrorClass}) and its exception ({@link FileCommitException}); no Spark. */
class ErrorsTest {

  @Test
  void exceptionCarriesClassSqlStateAndParameters() {
    Map<String, String> params = new HashMap<>();
    params.put("columnName", "id");
    params.put("dropped", null);
    FileCommitException e = ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED.error("id is null", params);
    SparkThrowable st = e;
    assertEquals("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", st.getCondition());
    assertEquals("23502", st.getSqlState());
    assertEquals(Map.of("columnName", "id"), st.getMessageParameters(), "null values are left out");
    assertEquals("[DELTA_NOT_NULL_CONSTRAINT_VIOLATED] id is null", e.getMessage());
    assertFalse(st.isInternalError());
    assertThrows(UnsupportedOperationException.class, () -> e.getMessageParameters().put("x", "y"));
    params.put("later", "x");
    assertFalse(e.getMessageParameters().containsKey("later"), "parameters are copied");
    assertTrue(e instanceof RuntimeException);
  }

  @Test
  void causeIsKept() {
    IllegalStateException cause = new IllegalStateException("root");
    assertSame(cause, ErrorClass.FILECOMMIT_INVALID_ARGUMENT.error("bad", cause).getCause());
    FileCommitException e = ErrorClass.DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES.error("c uses x", cause,
        Map.of("colName", "x"));
    assertSame(cause, e.getCause());
    assertEquals("x", e.getMessageParameters().get("colName"));
    assertNull(ErrorClass.DELTA_UNRECOGNIZED_INVARIANT.error("?", null, Map.of()).getCause());
    assertEquals(Map.of(), ErrorClass.DELTA_TABLE_NOT_FOUND.error("none").getMessageParameters());
  }

  @Test
  void exceptionIsSerializable() throws Exception {
    FileCommitException e = ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES.error("row breaks c",
        Map.of("constraintName", "c", "expression", "(x > 0)", "values", " - x : -1"));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(e);
    }
    FileCommitException back;
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      back = (FileCommitException) in.readObject();
    }
    assertEquals(e.getMessage(), back.getMessage());
    assertEquals("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", back.getCondition());
    assertEquals("23001", back.getSqlState());
    assertEquals(e.getMessageParameters(), back.getMessageParameters());
  }

  /** Delta Lake's class names and SQLSTATEs (its delta-error-classes.json), for the classes we share. */
  @Test
  void deltaClassesHaveDeltasSqlStates() {
    Map<ErrorClass, String> delta = Map.ofEntries(
        Map.entry(ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED, "23502"),
        Map.entry(ErrorClass.DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT, "22003"),
        Map.entry(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES, "23001"),
        Map.entry(ErrorClass.DELTA_UNSUPPORTED_FEATURES_FOR_WRITE, "56038"),
        Map.entry(ErrorClass.DELTA_UNSUPPORTED_FEATURES_FOR_READ, "56038"),
        Map.entry(ErrorClass.DELTA_CANNOT_MODIFY_APPEND_ONLY, "42809"),
        Map.entry(ErrorClass.DELTA_NON_BOOLEAN_CHECK_CONSTRAINT, "42621"),
        Map.entry(ErrorClass.DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES, "42621"),
        Map.entry(ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT, "42621"),
        Map.entry(ErrorClass.DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT, "42621"),
        Map.entry(ErrorClass.DELTA_AGGREGATE_IN_CHECK_CONSTRAINT, "42621"),
        Map.entry(ErrorClass.DELTA_UDF_IN_CHECK_CONSTRAINT, "42621"),
        Map.entry(ErrorClass.DELTA_UNRECOGNIZED_INVARIANT, "56038"),
        Map.entry(ErrorClass.DELTA_INVALID_GENERATED_COLUMN_REFERENCES, "42621"),
        Map.entry(ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN, "42621"),
        Map.entry(ErrorClass.DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH, "42K09"),
        Map.entry(ErrorClass.DELTA_CONCURRENT_APPEND, "2D521"),
        Map.entry(ErrorClass.DELTA_TABLE_NOT_FOUND, "42P01"),
        Map.entry(ErrorClass.DELTA_METADATA_MISMATCH, "42KDG"),
        Map.entry(ErrorClass.DELTA_ADD_CONSTRAINTS, "0A000"),
        Map.entry(ErrorClass.DELTA_TABLE_ONLY_OPERATION, "0AKDD"),
        Map.entry(ErrorClass.DELTA_OPERATION_NOT_ALLOWED, "0AKDC"),
        Map.entry(ErrorClass.DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION, "0AKDC"),
        Map.entry(ErrorClass.DELTA_UNSUPPORTED_EXPRESSION, "0A000"),
        Map.entry(ErrorClass.DELTA_CDC_READ_NULL_RANGE_BOUNDARY, "22004"),
        Map.entry(ErrorClass.DELTA_CDC_NON_CONSTANT_ARGUMENT, "42K0H"),
        Map.entry(ErrorClass.INCORRECT_NUMBER_OF_ARGUMENTS, "42605"),
        Map.entry(ErrorClass.DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE, "22003"),
        Map.entry(ErrorClass.DELTA_FAILED_RECOGNIZE_PREDICATE, "42601"));
    delta.forEach((cls, state) -> {
      assertEquals(state, cls.sqlState(), cls.name());
      assertEquals(state, cls.error("x").getSqlState(), cls.name());
      assertEquals(cls.name(), cls.error("x").getCondition());
    });
  }

  /** Delta's classes without its prefix (delta-error-classes.json), not Spark's: table_changes' arity. */
  private static final java.util.Set<ErrorClass> DELTA_UNPREFIXED = java.util.Set.of(
      ErrorClass.INCORRECT_NUMBER_OF_ARGUMENTS);

  @Test
  void everyClassIsNamedAndHasAStandardSqlState() throws Exception {
    com.fasterxml.jackson.databind.JsonNode spark;
    try (java.io.InputStream in = org.apache.spark.SparkThrowable.class.getClassLoader()
        .getResourceAsStream("error/error-conditions.json")) {
      spark = new com.fasterxml.jackson.databind.ObjectMapper().readTree(in);
    }
    for (ErrorClass cls : ErrorClass.values()) {
      boolean ours = cls.name().startsWith("DELTA_") || cls.name().startsWith("FILECOMMIT_")
          || DELTA_UNPREFIXED.contains(cls);
      // A class without Delta's or our prefix must be Spark's own, with Spark's SQLSTATE.
      assertTrue(ours || spark.has(cls.name()), cls.name());
      if (!ours) {
        assertEquals(spark.get(cls.name()).path("sqlState").asText(), cls.sqlState(), cls.name());
      }
      assertTrue(cls.sqlState().matches("[0-9A-Z]{5}"), cls.name() + " " + cls.sqlState());
    }
  }
}
