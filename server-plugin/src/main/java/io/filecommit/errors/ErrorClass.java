package io.filecommit.errors;

import java.util.Map;

/** TEMPORARY stand-in until the error catalogue lands (replaced on merge). */
public enum ErrorClass {
  DELTA_NOT_NULL_CONSTRAINT_VIOLATED("23502"),
  DELTA_VIOLATE_CONSTRAINT_WITH_VALUES("23001"),
  DELTA_UNSUPPORTED_FEATURES_FOR_WRITE("56038"),
  DELTA_UNSUPPORTED_FEATURES_FOR_READ("56038"),
  DELTA_CANNOT_MODIFY_APPEND_ONLY("42809");

  private final String sqlState;

  ErrorClass(String sqlState) {
    this.sqlState = sqlState;
  }

  public FileCommitException error(String message, Map<String, String> params) {
    return new FileCommitException(name(), sqlState, message, params);
  }
}
