/**
 * The native Parquet writer, the default writer of small and columnar writes: {@link
 * NativeParquetWriter} runs one Spark job whose tasks ({@code NativeTaskWriter}) copy Spark's rows
 * or column vectors into Arrow ({@code ArrowColumnCopy}, {@code ColumnarPartitions}) and write each
 * file with DuckDB's Parquet writer ({@code DuckDbParquetFiles}; on S3 into a local file that {@code
 * StagedUpload} and {@code MultipartFileUpload} upload), under the same commit protocol as
 * Spark's {@code FileFormatWriter} (setupJob, setupTask, newTaskTempFile, commitTask / abortTask,
 * commitJob / abortJob; Spark's {@code FileCommitProtocol}).
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> ..., checked by the build): part of the {@code files} layer; may
 * import {@code files} and every package below it.
 */
package io.filecommit.files.nativewriter;
