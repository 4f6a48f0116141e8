package io.filecommit.errors;

import java.util.Map;
import org.apache.spark.SparkThrowable;

/** TEMPORARY stand-in until the error catalogue lands (replaced on merge). */
public class FileCommitException extends RuntimeException implements SparkThrowable {
  private static final long serialVersionUID = 1L;
  private final String condition;
  private final String sqlState;
  private final Map<String, String> params;

  public FileCommitException(String condition, String sqlState, String message, Map<String, String> params) {
    super("[" + condition + "] " + message);
    this.condition = condition;
    this.sqlState = sqlState;
    this.params = Map.copyOf(params);
  }

  @Override
  public String getCondition() {
    return condition;
  }

  @Override
  public String getSqlState() {
    return sqlState;
  }

  @Override
  public Map<String, String> getMessageParameters() {
    return params;
  }
}
