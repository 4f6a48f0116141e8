package io.filecommit.txn;

/**
 * Row counts of a DELETE, UPDATE or MERGE (Delta's {@code numDeletedRows}, {@code numUpdatedRows},
 * {@code numInsertedRows}, {@code numCopiedRows} operation metrics).
 *
 * @param deleted rows deleted
 * @param updated rows updated
 * @param inserted rows inserted
 * @param copied unchanged rows copied from rewritten files into new files
 */
public record RowMetrics(long deleted, long updated, long inserted, long copied) {
  /** All zero. */
  public static final RowMetrics NONE = new RowMetrics(0, 0, 0, 0);
}
