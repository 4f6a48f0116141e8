package io.filecommit.errors;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.SparkThrowable;

/**
 * An error the server raises for a user: a {@link RuntimeException} that is a {@link
 * SparkThrowable}, so Spark Connect sends its error class, SQLSTATE and message parameters to the
 * client, where pyspark exposes them as {@code getCondition()}, {@code getSqlState()} and {@code
 * getMessageParameters()}. The message reads {@code [<ERROR_CLASS>] <text>}, as Spark's do. Made
 * by {@link ErrorClass#error}. Serializable (its fields are strings and a map of strings), so it
 * survives being sent from a task to the driver.
 */
public class FileCommitException extends RuntimeException implements SparkThrowable {
  private static final long serialVersionUID = 1L;
  /** The error class name. */
  private final String condition;
  /** Its SQLSTATE. */
  private final String sqlState;
  /** The message parameters (no null keys or values). */
  private final Map<String, String> params;

  /**
   * An error of a class; prefer {@link ErrorClass#error}, which fills in the class's SQLSTATE.
   *
   * @param condition the error class name
   * @param sqlState its SQLSTATE (5 characters)
   * @param message the text, naming the values involved
   * @param params message parameters (copied; null values kept out)
   */
  public FileCommitException(String condition, String sqlState, String message, Map<String, String> params) {
    super("[" + condition + "] " + message);
    this.condition = condition;
    this.sqlState = sqlState;
    Map<String, String> copy = new LinkedHashMap<>();
    params.forEach((k, v) -> {
      if (k != null && v != null) {
        copy.put(k, v);
      }
    });
    this.params = java.util.Collections.unmodifiableMap(copy);
  }

  /** The error class, e.g. {@code DELTA_CONCURRENT_APPEND}. */
  @Override
  public String getCondition() {
    return condition;
  }

  /** The SQLSTATE, e.g. {@code 2D521}. */
  @Override
  public String getSqlState() {
    return sqlState;
  }

  /** Message parameters (name -> value). */
  @Override
  public Map<String, String> getMessageParameters() {
    return params;
  }
}
