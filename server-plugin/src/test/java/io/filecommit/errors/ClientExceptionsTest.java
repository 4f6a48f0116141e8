package io.filecommit.errors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkThrowable;
import org.junit.jupiter.api.Test;

/**
 * Every error class reaches Spark Connect clients as a {@link SparkThrowable} of its JVM type, with
 * its class, SQLSTATE, parameters and message; the type is read the way pyspark's {@code
 * convert_exception} reads it: the first name of the class hierarchy in its {@code
 * EXCEPTION_CLASS_MAPPING}.
 */
class ClientExceptionsTest {
  /** The keys of pyspark's {@code EXCEPTION_CLASS_MAPPING} (pyspark/errors/exceptions/connect.py, Spark 4.3). */
  private static final List<String> PYSPARK_MAPPED = List.of("org.apache.spark.sql.catalyst.parser.ParseException",
      "org.apache.spark.sql.AnalysisException", "org.apache.spark.sql.streaming.StreamingQueryException",
      "org.apache.spark.sql.execution.QueryExecutionException", "java.lang.NumberFormatException",
      "java.lang.IllegalArgumentException", "java.lang.ArithmeticException", "java.lang.UnsupportedOperationException",
      "java.lang.ArrayIndexOutOfBoundsException", "java.time.DateTimeException", "org.apache.spark.SparkRuntimeException",
      "org.apache.spark.SparkUpgradeException", "org.apache.spark.api.python.PythonException",
      "org.apache.spark.SparkNoSuchElementException", "org.apache.spark.SparkException",
      "org.apache.spark.sql.connect.common.InvalidPlanInput");

  /** The Java class pyspark picks its type by (null: none, so pyspark's UnknownException). */
  private static String pysparkType(Throwable t) {
    List<String> hierarchy = new ArrayList<>();
    for (Class<?> c = t.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
      hierarchy.add(c.getName());
    }
    return hierarchy.stream().filter(PYSPARK_MAPPED::contains).findFirst().orElse(null);
  }

  @Test
  void everyClassKeepsItsClassStateParametersAndMessage() {
    for (ErrorClass c : ErrorClass.values()) {
      FileCommitException e = c.error("what happened", Map.of("name", "value"));
      Throwable t = ClientExceptions.of(e);
      SparkThrowable s = assertInstanceOf(SparkThrowable.class, t, c.name());
      assertEquals(c.name(), s.getCondition(), c.name());
      assertEquals(c.sqlState(), s.getSqlState(), c.name());
      assertEquals(Map.of("name", "value"), s.getMessageParameters(), c.name());
      assertEquals("[" + c.name() + "] what happened", t.getMessage(), c.name());
    }
  }

  @Test
  void everyClassArrivesAsItsPysparkType() {
    for (ErrorClass c : ErrorClass.values()) {
      Throwable t = ClientExceptions.of(c.error("x"));
      String expected = switch (ClientExceptionType.of(c.name(), c.sqlState())) {
        case ANALYSIS -> "org.apache.spark.sql.AnalysisException";
        case ILLEGAL_ARGUMENT -> "java.lang.IllegalArgumentException";
        case UNSUPPORTED_OPERATION -> "java.lang.UnsupportedOperationException";
        case CONCURRENT_MODIFICATION, RUNTIME -> null;
      };
      assertEquals(expected, pysparkType(t), c.name());
    }
  }

  @Test
  void typesFollowDeltaAndSpark() {
    assertEquals(ClientExceptionType.ANALYSIS, type(ErrorClass.DELTA_TABLE_ALREADY_EXISTS));
    assertEquals(ClientExceptionType.ANALYSIS, type(ErrorClass.DELTA_METADATA_MISMATCH));
    assertEquals(ClientExceptionType.ANALYSIS, type(ErrorClass.DELTA_MISSING_DELTA_TABLE));
    assertEquals(ClientExceptionType.ANALYSIS, type(ErrorClass.DELTA_VERSION_NOT_FOUND));
    assertEquals(ClientExceptionType.ANALYSIS, type(ErrorClass.CANNOT_MODIFY_STATIC_CONFIG));
    assertEquals(ClientExceptionType.ILLEGAL_ARGUMENT, type(ErrorClass.DELTA_ILLEGAL_OPTION));
    assertEquals(ClientExceptionType.ILLEGAL_ARGUMENT, type(ErrorClass.FILECOMMIT_INVALID_ARGUMENT));
    assertEquals(ClientExceptionType.UNSUPPORTED_OPERATION, type(ErrorClass.DELTA_CANNOT_MODIFY_APPEND_ONLY));
    assertEquals(ClientExceptionType.UNSUPPORTED_OPERATION, type(ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION));
    assertEquals(ClientExceptionType.ILLEGAL_ARGUMENT, type(ErrorClass.INVALID_EMPTY_LOCATION)); // Spark's type
    assertEquals(ClientExceptionType.ANALYSIS, type(ErrorClass.DELTA_ADD_CONSTRAINTS)); // Delta's, not by SQLSTATE
    assertEquals(ClientExceptionType.ILLEGAL_ARGUMENT, type(ErrorClass.FILECOMMIT_TOO_MANY_ZORDER_COLUMNS));
    for (ErrorClass c : List.of(ErrorClass.DELTA_CONCURRENT_APPEND, ErrorClass.DELTA_CONCURRENT_DELETE_READ,
        ErrorClass.DELTA_CONCURRENT_DELETE_DELETE, ErrorClass.DELTA_METADATA_CHANGED, ErrorClass.DELTA_PROTOCOL_CHANGED,
        ErrorClass.DELTA_CONCURRENT_TRANSACTION)) {
      Throwable t = ClientExceptions.of(c.error("x"));
      assertInstanceOf(java.util.ConcurrentModificationException.class, t, c.name());
      // Delta's class names, most derived first, as Spark Connect sends the hierarchy
      assertEquals("io.delta.exceptions." + DeltaConflictTypes.BY_CONDITION.get(c.name()), t.getClass().getName());
      assertEquals("io.delta.exceptions.DeltaConcurrentModificationException", t.getClass().getSuperclass().getName());
      assertInstanceOf(ClientExceptions.ConcurrentModification.class, t);
      assertEquals(c.name(), ((SparkThrowable) t).getCondition());
      assertEquals("2D521", ((SparkThrowable) t).getSqlState());
      assertEquals("[" + c.name() + "] x", t.getMessage());
    }
    FileCommitException violation = ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES.error("x");
    assertSame(violation, ClientExceptions.of(violation));
  }

  private static ClientExceptionType type(ErrorClass c) {
    return ClientExceptionType.of(c.name(), c.sqlState());
  }
}
