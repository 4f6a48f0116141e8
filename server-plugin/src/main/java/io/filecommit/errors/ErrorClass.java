package io.filecommit.errors;

import java.util.Map;

/** TEMPORARY stand-in until the error catalogue lands (replaced on merge). */
public enum ErrorClass {
  DELTA_NOT_NULL_CONSTRAINT_VIOLATED("23502"),
  DELTA_VIOLATE_CONSTRAINT_WITH_VALUES("23001"),
  DELTA_UNSUPPORTED_FEATURES_FOR_WRITE("56038"),
  DELTA_UNSUPPORTED_FEATURES_FOR_READ("56038"),
  DELTA_CANNOT_MODIFY_APPEND_ONLY("42809"),
  DELTA_CONCURRENT_APPEND("2D521"),
  DELTA_CONCURRENT_DELETE_READ("2D521"),
  DELTA_CONCURRENT_DELETE_DELETE("2D521"),
  DELTA_METADATA_CHANGED("2D521"),
  DELTA_PROTOCOL_CHANGED("2D521"),
  DELTA_CONCURRENT_TRANSACTION("2D521"),
  FILECOMMIT_RELATIVE_PATH("42501"),
  FILECOMMIT_PATH_NOT_ALLOWED("42501");

  private final String sqlState;

  ErrorClass(String sqlState) {
    this.sqlState = sqlState;
  }

  public FileCommitException error(String message, Map<String, String> params) {
    return new FileCommitException(name(), sqlState, message, params);
  }
}
