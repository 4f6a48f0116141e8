/**
 * The read side: the data source {@code spark.read.format("filecommit")} ({@link
 * FileCommitDataSource}, with Delta's read options as Delta's {@code DeltaDataSource} / {@code
 * DeltaOptions}; the registered data sources, which also write, are {@code
 * connect.FileCommitSource} and {@code connect.DeltaFormatSource}), snapshots and time travel ({@code TimeTravel}, Delta's {@code DeltaTimeTravelSpec};
 * {@code CommitTimestamps}, Delta's {@code DeltaHistoryManager}), the change data feed ({@code
 * ChangeFeed}, Delta's {@code CDCReader}; protocol "Change Data Files"), history ({@code
 * HistoryRelation}, Delta's {@code DESCRIBE HISTORY}), and Spark's view of a scan's files ({@link
 * DeltaFileIndex}, Delta's {@code TahoeFileIndex}: files from the log, partition pruning, and
 * {@link DataSkipping} by per-file statistics, Delta's {@code DataSkippingReader}). Each scan stays
 * Spark's own Parquet file scan (Data Source V1); column mapping and deletion vectors are applied
 * around it ({@code TableRelation}).
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import {@code constraints}, {@code schema}, {@code
 * deletionvectors}, {@code delta} and {@code errors} and, on its own layer, {@code txn}; never
 * {@code files} or a package above it.
 */
package io.filecommit.read;
