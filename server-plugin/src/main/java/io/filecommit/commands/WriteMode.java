package io.filecommit.commands;

/** Spark's save modes (Spark's {@code SaveMode}), as a table write honours them. */
public enum WriteMode {
  /** Create the table if absent, else add files. */
  APPEND("Append"),
  /** Add files and remove every active file (or those a replaceWhere matches) in one commit. */
  OVERWRITE("Overwrite"),
  /** Fail if the table exists. */
  ERROR_IF_EXISTS("ErrorIfExists"),
  /** Do nothing if the table exists. */
  IGNORE("Ignore");

  private final String sparkName;

  WriteMode(String sparkName) {
    this.sparkName = sparkName;
  }

  /** {@return the name Spark and Delta use in commitInfo ({@code Append}, {@code Overwrite}, ...)} */
  public String sparkName() {
    return sparkName;
  }
}
