package io.filecommit.files;

import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;

/**
 * What a data file's writer knew when it closed the file: its length (bytes), the time it was
 * closed (ms since the epoch) and its Parquet footer. A writer {@link #record}s a file it finished
 * in this JVM; {@link DelayedCommitProtocol#commitTask} {@link #take}s the record and builds the
 * file's action from it, so on object storage no HEAD (size) and no ranged GET (footer) follow the
 * upload. A file without a record (another writer, or a writer that could not see its footer) is
 * read back as before: {@code getFileStatus} and {@link ParquetStats#collect}.
 *
 * <p>This is what Delta's {@code DeltaJobStatisticsTracker} gives Delta's {@code
 * DelayedCommitProtocol} (statistics from the task that wrote the file), taken from the writer's
 * footer instead of recomputed over the rows. The footer kept is the one a reader would parse: the
 * writer's in-memory footer is converted to Parquet's Thrift {@code FileMetaData} and back with
 * parquet-mr's {@code ParquetMetadataConverter}, as {@code ParquetFileReader} does when it reads a
 * footer (statistics a reader would drop are dropped here too).
 *
 * <p>Keys are the absolute path strings that {@link DelayedCommitProtocol#newTaskTempFile} handed
 * out (unique: every name carries a UUID). Records are per JVM (an executor's records are taken by
 * the same executor's {@code commitTask}); {@code abortTask} {@link #forget}s its files' records.
 */
public final class WrittenFiles {
  private static final ConcurrentHashMap<String, Written> FILES = new ConcurrentHashMap<>();
  private static final java.util.concurrent.atomic.AtomicLong TAKEN = new java.util.concurrent.atomic.AtomicLong();

  private WrittenFiles() {}

  /**
   * One finished file.
   *
   * @param length the file's length in bytes
   * @param modificationTime when the writer closed the file, ms since the epoch (the {@code
   *     modificationTime} of its AddFile)
   * @param footer the file's footer as a reader would parse it
   */
  public record Written(long length, long modificationTime, ParquetMetadata footer) {}

  /**
   * Records a file its writer just closed.
   *
   * @param path the absolute path string the committer handed out for the file
   * @param length the file's length in bytes (non-negative)
   * @param footer the writer's footer of the file
   * @throws IllegalArgumentException if {@code length} is negative
   */
  public static void record(String path, long length, ParquetMetadata footer) {
    if (length < 0) {
      throw new IllegalArgumentException("negative length " + length + " of " + path);
    }
    ParquetMetadataConverter converter = new ParquetMetadataConverter();
    ParquetMetadata parsed;
    try {
      parsed = converter.fromParquetMetadata(converter.toParquetMetadata(1, footer));
    } catch (java.io.IOException e) {
      return; // no record: the committer reads the footer back
    }
    FILES.put(path, new Written(length, System.currentTimeMillis(), parsed));
  }

  /**
   * Takes (and removes) the record of a file.
   *
   * @param path the absolute path string the committer handed out for the file
   * @return the record, or empty when the file's writer left none in this JVM
   */
  public static Optional<Written> take(String path) {
    Written w = FILES.remove(path);
    if (w != null) {
      TAKEN.incrementAndGet();
    }
    return Optional.ofNullable(w);
  }

  /** {@return how many records {@link #take} found since the server started} */
  public static long taken() {
    return TAKEN.get();
  }

  /**
   * Forgets the record of a file (its task was aborted).
   *
   * @param path the absolute path string the committer handed out for the file
   */
  public static void forget(String path) {
    FILES.remove(path);
  }

  /** {@return how many records wait to be taken (tests: none after a write)} */
  public static int pending() {
    return FILES.size();
  }
}
