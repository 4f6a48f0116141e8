/**
 * The write half of a transaction: {@link TransactionalWrite} (Delta's {@code
 * TransactionalWrite.writeFiles}: the input normalized to the table's schema, write-time rules
 * applied, physical column names, change-data split) runs Spark's own {@code FileFormatWriter}
 * through {@link ParquetJobWriter} (or the {@code files.nativewriter} sub-package's native Parquet
 * writer, the default for small and columnar inputs), with {@link DelayedCommitProtocol} (Delta's {@code
 * DelayedCommitProtocol}, Spark's {@code FileCommitProtocol}) naming the files and returning them
 * as {@code add} / {@code cdc} actions; {@link DriverSideWrite} runs the same task code on the
 * driver for small local inputs; {@link ParquetStats} turns a Parquet footer into per-file
 * statistics (protocol "Per-file Statistics"), the footer its writer left in {@link WrittenFiles}
 * ({@link FooterCapturingParquetFormat}) or else read back; partition directories are the delta
 * package's {@code PartitionPaths}.
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import {@code txn}, {@code read}, {@code constraints}, {@code
 * schema}, {@code deletionvectors}, {@code delta} and {@code errors}; never {@code commands},
 * {@code sink} or {@code connect}.
 */
package io.filecommit.files;
