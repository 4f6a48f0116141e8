package io.filecommit.errors;

import java.util.Set;

/**
 * The JVM exception type an error class reaches Spark Connect clients as. Spark Connect sends the
 * class hierarchy of the server's exception (Spark's {@code ErrorUtils}, error info metadata
 * {@code classes}); pyspark's {@code convert_exception} picks its Python type from the first name
 * it knows ({@code EXCEPTION_CLASS_MAPPING}: {@code org.apache.spark.sql.AnalysisException}, {@code
 * java.lang.IllegalArgumentException}, {@code java.lang.UnsupportedOperationException}, ...), other
 * clients do alike. Each class follows the type Delta raises for it (Delta's {@code DeltaErrors}:
 * {@code DeltaAnalysisException}, {@code DeltaIllegalArgumentException}, {@code
 * DeltaUnsupportedOperationException}, the {@code java.util.ConcurrentModificationException}s of
 * {@code io.delta.exceptions}, and plain runtime exceptions such as {@code
 * DeltaInvariantViolationException}), else Spark's rule by SQLSTATE class: {@code 42} analysis
 * errors, {@code 22023} invalid arguments, {@code 0A} unsupported features.
 */
public enum ClientExceptionType {
  /** {@code org.apache.spark.sql.AnalysisException} (pyspark {@code AnalysisException}). */
  ANALYSIS,
  /** {@code java.lang.IllegalArgumentException} (pyspark {@code IllegalArgumentException}). */
  ILLEGAL_ARGUMENT,
  /** {@code java.lang.UnsupportedOperationException} (pyspark {@code UnsupportedOperationException}). */
  UNSUPPORTED_OPERATION,
  /**
   * {@code java.util.ConcurrentModificationException}, as Delta's conflict exceptions: pyspark has
   * no type for it (nor for Delta's own without delta-spark's Python package), so it arrives as
   * {@code UnknownException} with its error class; filecommit's client maps it to Delta's Python
   * conflict types.
   */
  CONCURRENT_MODIFICATION,
  /**
   * A plain {@link RuntimeException} ({@link FileCommitException} itself), as Delta's constraint
   * violations, file-not-found and state errors: pyspark's {@code UnknownException} with the error
   * class.
   */
  RUNTIME;

  /** Classes outside SQLSTATE class 42 that Delta raises as analysis errors. */
  private static final Set<String> ANALYSIS_CLASSES = Set.of("DELTA_VERSION_NOT_FOUND", "DELTA_INVALID_CDC_RANGE",
      "DELTA_CDC_START_VERSION_AFTER_LATEST", "DELTA_FAILED_TO_MERGE_FIELDS", "DELTA_CANNOT_RESTORE_TABLE_VERSION",
      "DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER", "DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER", "DELTA_REPLACE_WHERE_MISMATCH",
      "DELTA_UNKNOWN_CONFIGURATION", "DELTA_MISSING_CHANGE_DATA", "DELTA_ZORDERING_ON_COLUMN_WITHOUT_STATS",
      "CANNOT_MODIFY_STATIC_CONFIG");
  /** Classes Delta raises as {@code IllegalArgumentException}. */
  private static final Set<String> ILLEGAL_ARGUMENT_CLASSES = Set.of("DELTA_ILLEGAL_OPTION",
      "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT", "FILECOMMIT_RETENTION_BELOW_MINIMUM");
  /** Classes Delta raises as {@code UnsupportedOperationException}. */
  private static final Set<String> UNSUPPORTED_CLASSES = Set.of("DELTA_CANNOT_MODIFY_APPEND_ONLY",
      "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE");
  /** SQLSTATE-42 classes Delta raises as plain runtime exceptions (its file-not-found exceptions). */
  private static final Set<String> RUNTIME_CLASSES = Set.of("DELTA_LOG_FILE_NOT_FOUND",
      "DELTA_FILE_NOT_FOUND_DETAILED");

  /**
   * The type of an error class.
   *
   * @param condition the error class name
   * @param sqlState its SQLSTATE (5 characters)
   * @return the type its exception reaches clients as
   */
  public static ClientExceptionType of(String condition, String sqlState) {
    if (ANALYSIS_CLASSES.contains(condition)) {
      return ANALYSIS;
    }
    if (ILLEGAL_ARGUMENT_CLASSES.contains(condition)) {
      return ILLEGAL_ARGUMENT;
    }
    if (UNSUPPORTED_CLASSES.contains(condition)) {
      return UNSUPPORTED_OPERATION;
    }
    if (RUNTIME_CLASSES.contains(condition)) {
      return RUNTIME;
    }
    if (sqlState.startsWith("2D")) {
      return CONCURRENT_MODIFICATION;
    }
    if (sqlState.startsWith("42")) {
      return ANALYSIS;
    }
    if (sqlState.equals("22023")) {
      return ILLEGAL_ARGUMENT;
    }
    if (sqlState.startsWith("0A")) {
      return UNSUPPORTED_OPERATION;
    }
    return RUNTIME;
  }
}
