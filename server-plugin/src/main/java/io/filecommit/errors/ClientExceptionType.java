package io.filecommit.errors;


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
 * errors, {@code 22023} invalid arguments, {@code 0A} unsupported features. The type is an
 * attribute of each class of {@link ErrorClass} (its second constructor argument where Delta's type
 * differs from the rule).
 */
public enum ClientExceptionType {
  /** {@code org.apache.spark.sql.AnalysisException} (pyspark {@code AnalysisException}). */
  ANALYSIS,
  /** {@code java.lang.IllegalArgumentException} (pyspark {@code IllegalArgumentException}). */
  ILLEGAL_ARGUMENT,
  /** {@code java.lang.UnsupportedOperationException} (pyspark {@code UnsupportedOperationException}). */
  UNSUPPORTED_OPERATION,
  /**
   * {@code java.util.ConcurrentModificationException}, as Delta's conflict exceptions, of Delta's
   * class name for the error class ({@code io.delta.exceptions.ConcurrentAppendException}, ...;
   * {@link DeltaConflictTypes}): pyspark alone has no type for it, so it arrives as {@code
   * UnknownException} with its error class; delta-spark's Python package and filecommit's client map
   * it to Delta's Python conflict types.
   */
  CONCURRENT_MODIFICATION,
  /**
   * A plain {@link RuntimeException} ({@link FileCommitException} itself), as Delta's constraint
   * violations, file-not-found and state errors: pyspark's {@code UnknownException} with the error
   * class.
   */
  RUNTIME;

  /**
   * The type of an error class: the class's own ({@link ErrorClass#clientType}) for filecommit's
   * catalogue, else Spark's rule by SQLSTATE ({@link #bySqlState}).
   *
   * @param condition the error class name
   * @param sqlState its SQLSTATE (5 characters)
   * @return the type its exception reaches clients as
   */
  public static ClientExceptionType of(String condition, String sqlState) {
    for (ErrorClass c : ErrorClass.values()) {
      if (c.name().equals(condition)) {
        return c.clientType();
      }
    }
    return bySqlState(sqlState);
  }

  /**
   * Spark's rule by SQLSTATE class: {@code 2D} conflicts, {@code 42} analysis errors, {@code
   * 22023} invalid arguments, {@code 0A} unsupported features, else a runtime error.
   *
   * @param sqlState a SQLSTATE (5 characters)
   * @return the type
   */
  public static ClientExceptionType bySqlState(String sqlState) {
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
