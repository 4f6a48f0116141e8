package io.filecommit.errors;

import java.util.Map;

/**
 * Factories of the refusals that more than one command raises, so each is written once (as Delta's
 * {@code DeltaErrors}). Every method returns the exception for the caller to throw.
 */
public final class DeltaErrors {
  private DeltaErrors() {}

  /**
   * A blank table or sink path.
   *
   * @param path what the client sent (may be null)
   * @return {@code INVALID_EMPTY_LOCATION} with Spark's parameter {@code location}
   */
  public static FileCommitException blankPath(String path) {
    return ErrorClass.INVALID_EMPTY_LOCATION.error("Table path must not be empty, got '" + path + "'",
        Map.of("location", String.valueOf(path)));
  }

  /**
   * A change that would remove data from an append-only table.
   *
   * @param table the table path
   * @param property the table property that makes it append-only ({@code delta.appendOnly})
   * @param what what the write would do, e.g. "mode overwrite is not allowed"
   * @return {@code DELTA_CANNOT_MODIFY_APPEND_ONLY} with Delta's parameters {@code table_name} and
   *     {@code config}
   */
  public static FileCommitException appendOnly(String table, String property, String what) {
    return ErrorClass.DELTA_CANNOT_MODIFY_APPEND_ONLY.error("Table " + table + " is append-only (" + property
        + "=true): " + what, Map.of("table_name", table, "config", property + "=false"));
  }

  /**
   * A concurrent commit that conflicts with this transaction (protocol "Conflict detection").
   *
   * @param cls the conflict's class ({@code DELTA_CONCURRENT_*}, {@code DELTA_METADATA_CHANGED}, ...)
   * @param what what the other commit did
   * @param version the other commit's version
   * @param table the table path
   * @param detail the file, app id or rule involved
   * @return the error, with parameters {@code version}, {@code table} and {@code conflict}
   */
  public static FileCommitException conflict(ErrorClass cls, String what, long version, String table, String detail) {
    return cls.error("Concurrent commit at version " + version + " of " + table + " conflicts with this write: "
        + what + " (" + detail + "); nothing was committed, retry the write",
        Map.of("version", Long.toString(version), "table", table, "conflict", detail == null ? "" : detail));
  }

  /**
   * A command that needs an existing table where there is none.
   *
   * @param table the table path
   * @param operation what needed it, e.g. DELETE
   * @return {@code DELTA_MISSING_DELTA_TABLE}
   */
  public static FileCommitException missingTable(String table, String operation) {
    return ErrorClass.DELTA_MISSING_DELTA_TABLE.error(table + " is not a Delta table: " + operation
        + " needs an existing table");
  }

  /**
   * An assignment to a column the table does not have, or to one column twice (Delta's class for
   * both in UPDATE and MERGE).
   *
   * @param operation UPDATE or MERGE, or the contract message
   * @param column the column as given
   * @param twice whether the column was assigned twice (else: unknown column)
   * @param columns the table's columns, for the message (ignored when {@code twice})
   * @return {@code DELTA_MERGE_UNRESOLVED_EXPRESSION} with parameter {@code column}
   */
  public static FileCommitException unresolvedAssignment(String operation, String column, boolean twice,
      java.util.List<String> columns) {
    String what = twice ? "column '" + column + "' is assigned more than once"
        : "cannot resolve column '" + column + "' of the assignment in the table columns " + columns;
    return ErrorClass.DELTA_MERGE_UNRESOLVED_EXPRESSION.error(operation + ": " + what, Map.of("column", column));
  }

  /**
   * A malformed contract message.
   *
   * @param what what is wrong, naming the message and field
   * @return {@code FILECOMMIT_MALFORMED_COMMAND}
   */
  public static FileCommitException malformed(String what) {
    return ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error(what);
  }
}
