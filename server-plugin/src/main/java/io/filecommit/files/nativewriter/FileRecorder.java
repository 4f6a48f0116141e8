package io.filecommit.files.nativewriter;

import org.apache.parquet.hadoop.metadata.ParquetMetadata;

/**
 * Where the native writer leaves what it knows of a data file it put on object storage, so the
 * committer builds the file's action from it (no HEAD, no footer GET): the files package passes its
 * {@code WrittenFiles::record} (this package may not import that one). Serializable: it travels to
 * the executors with the task.
 */
@FunctionalInterface
public interface FileRecorder extends java.io.Serializable {
  /**
   * Records a file its writer just finished.
   *
   * @param path the absolute path string the committer handed out for the file
   * @param length the file's length in bytes
   * @param footer the file's Parquet footer
   */
  void record(String path, long length, ParquetMetadata footer);
}
