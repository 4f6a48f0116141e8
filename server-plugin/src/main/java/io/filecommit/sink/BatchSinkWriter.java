package io.filecommit.sink;

import io.filecommit.delta.storage.TableLocation;
import io.filecommit.errors.ErrorClass;
import io.filecommit.files.ParquetJobWriter;
import io.filecommit.schema.SchemaUtils;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.FileFormatWriter;
import org.apache.spark.sql.execution.streaming.runtime.CompactibleFileStreamLog$;
import org.apache.spark.sql.execution.streaming.sinks.FileStreamSink$;
import org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog$;
import org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog;
import org.apache.spark.sql.execution.streaming.sinks.SinkFileStatus;
import org.apache.spark.util.Utils;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Exactly-once batch writes into a streaming file sink directory: what Spark's {@code
 * FileStreamSink.addBatch} does for one micro-batch, driven by an explicit batch id (Spark's
 * {@code FileStreamSink} and {@code FileStreamSinkLog} file layout).
 *
 * <p>{@link #write} opens the sink's {@code _spark_metadata} log with Spark's {@link
 * FileStreamSinkLog} (compaction every {@code spark.sql.streaming.fileSink.log.compactInterval}
 * batches of the session's configuration, default 10; the {@code retention} option). A batch id at
 * or below the log's latest is skipped and its committed files are returned; the next batch id is
 * written as Parquet through Spark's {@code FileFormatWriter} with a {@link
 * ManifestFileCommitProtocol}, whose {@code commitJob} makes it visible. A batch id that would
 * leave a gap is refused: Spark's log readers require consecutive batch ids.
 */
public final class BatchSinkWriter {
  /** Writer option naming the log retention (a Spark time string such as {@code 12h}), as FileStreamSink's. */
  public static final String RETENTION_OPTION = "retention";

  private BatchSinkWriter() {}

  /**
   * The outcome of one {@link #write}.
   *
   * @param batchId the requested batch id
   * @param committed true when this call committed the batch, false when it was skipped
   * @param path the fully qualified sink root
   * @param latestBatchId the latest batch id in the log after the call
   * @param files the batch's file statuses: the files committed by this call, or for a skipped batch
   *     the files it committed earlier (empty when that batch's own log file has already been
   *     cleaned up after a compaction, see {@link #filesOfBatch})
   * @param durationMs wall time of the call, ms
   */
  public record Result(long batchId, boolean committed, String path, long latestBatchId, List<SinkFileStatus> files,
      long durationMs) {
    /** {@return the sum of the file sizes, bytes} */
    public long numOutputBytes() {
      return files.stream().mapToLong(SinkFileStatus::size).sum();
    }
  }

  /**
   * Checks the arguments that need no data: path and batch id.
   *
   * @param path the sink root
   * @param batchId the batch id
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) for a null or blank path or a negative batch id, naming the value
   */
  public static void checkArguments(String path, long batchId) {
    if (path == null || path.isBlank()) {
      throw ErrorClass.INVALID_EMPTY_LOCATION.error("Sink path must be a non-empty string, got '" + path + "'",
          Map.of("location", String.valueOf(path)));
    }
    if (batchId < 0) {
      throw ErrorClass.FILECOMMIT_INVALID_BATCH_ID.error("Batch id must be >= 0, got " + batchId,
          Map.of("batchId", Long.toString(batchId)));
    }
  }

  /**
   * Writes {@code data} as batch {@code batchId} of the sink at {@code path}, unless the log already
   * has it.
   *
   * @param session the session that runs the write (its SQL configuration sets the compaction
   *     interval and log cleanup)
   * @param data the rows to write
   * @param path the sink root (Hadoop path or URI); created when absent
   * @param batchId the batch id, {@code >= 0}; at most the log's latest + 1
   * @param partitionBy partition columns in directory order, matched case-insensitively; may be empty
   * @param options Spark Parquet writer options, plus {@link #RETENTION_OPTION}
   * @return what was committed (or found committed)
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) before anything is written: blank path, negative batch id, a
   *     batch id beyond latest + 1, a path that is a file, a bad partition column, an unparsable
   *     retention; {@code FILECOMMIT_TABLE_LOCATION_OVERLAP} for a new sink inside or above a
   *     table or sink, or at an allowed root ({@link TableLocation})
   * @throws IllegalStateException {@code "Race while writing batch <id>: ..."} when another writer
   *     committed the same batch id first (this call's files were deleted)
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOG_WRITE_FAILED} when the sink
   *     log could not be written and shows the batch absent (files deleted), {@code
   *     FILECOMMIT_COMMIT_STATE_UNKNOWN} when it cannot be read back (files kept)
   * @throws UncheckedIOException when the file system cannot be reached
   */
  public static Result write(SparkSession session, Dataset<Row> data, String path, long batchId,
      List<String> partitionBy, Map<String, String> options) {
    long start = System.currentTimeMillis();
    checkArguments(path, batchId);
    Map<String, String> writerOptions = new LinkedHashMap<>(options);
    Option<Object> retentionMs = parseRetention(writerOptions.remove(RETENTION_OPTION));
    List<String> partitionColumns = SchemaUtils.checkPartitionColumns(data.schema(), partitionBy, "sink");

    scala.collection.immutable.Map<String, String> scalaOptions = scalaMap(writerOptions);
    Configuration hadoopConf = io.filecommit.delta.DeltaLogCache.sessionHadoopConfWithOptions(session, writerOptions);
    Path root = new Path(path);
    FileSystem fs;
    Path qualified;
    try {
      fs = root.getFileSystem(hadoopConf);
      qualified = fs.makeQualified(root);
      if (fs.exists(qualified)) {
        FileStatus st = fs.getFileStatus(qualified);
        if (!st.isDirectory()) {
          throw ErrorClass.FILECOMMIT_PATH_NOT_A_DIRECTORY.error("Sink path " + qualified + " is a file, not a "
              + "directory", Map.of("path", qualified.toString()));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot access sink path " + path, e);
    }
    Path logPath = FileStreamSink$.MODULE$.getMetadataLogPath(fs, qualified, session.sessionState().conf());
    // Opening the log creates its directory: decide the gap error first, from the listing alone.
    boolean logExists;
    try {
      logExists = fs.exists(logPath);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot access sink log " + logPath, e);
    }
    if (!logExists && batchId > 0) {
      throw gap(batchId, qualified, -1);
    }
    if (!logExists) { // a new sink: its directory must be its own, before the log or any file is written
      TableLocation.checkNew(fs, qualified, true, TableLocation.allowedRoots(session));
    }
    FileStreamSinkLog log = new FileStreamSinkLog(FileStreamSinkLog$.MODULE$.VERSION(), session, logPath.toString(),
        retentionMs);
    long latest = latestBatchId(log);
    if (batchId <= latest) {
      return new Result(batchId, false, qualified.toString(), latest, filesOfBatch(log, batchId),
          System.currentTimeMillis() - start);
    }
    if (batchId > latest + 1) {
      throw gap(batchId, qualified, latest);
    }

    ManifestFileCommitProtocol committer = new ManifestFileCommitProtocol(Long.toString(batchId), qualified.toString());
    committer.setupManifestOptions(log, batchId);
    try {
      ParquetJobWriter.write(session, data, qualified.toString(), partitionColumns, committer, writerOptions,
          "filecommit batch " + batchId + " -> " + qualified);
    } catch (RuntimeException e) {
      String race = "Race while writing batch " + batchId;
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof io.filecommit.errors.FileCommitException typed) {
          throw typed;
        }
        if (t instanceof IllegalStateException && race.equals(t.getMessage())) {
          throw new IllegalStateException(race + ": another writer committed batch " + batchId + " of " + qualified
              + " first; the files of this attempt were deleted", e);
        }
      }
      throw e;
    }
    return new Result(batchId, true, qualified.toString(), batchId, committer.committedFiles(),
        System.currentTimeMillis() - start);
  }

  private static RuntimeException gap(long batchId, Path sink, long latest) {
    return ErrorClass.FILECOMMIT_INVALID_BATCH_ID.error("Batch id " + batchId + " would leave a gap in the sink log of "
        + sink + ": " + (latest < 0 ? "the log is empty, so the first batch id is 0"
            : "the latest committed batch is " + latest + ", so the next batch id is " + (latest + 1)),
        Map.of("batchId", Long.toString(batchId), "latestBatchId", Long.toString(latest)));
  }

  /**
   * The latest batch id of a sink log, or -1 when it has none.
   *
   * @param log the sink log
   * @return the latest batch id, or -1
   */
  public static long latestBatchId(FileStreamSinkLog log) {
    Option<Object> latest = log.getLatestBatchId();
    return latest.isDefined() ? (Long) latest.get() : -1L;
  }

  /**
   * The files committed as batch {@code batchId}: the entries of its log file; for a compaction batch
   * (whose {@code <id>.compact} file holds every live entry), the entries not already listed by the
   * batches it compacts. Empty when those log files are gone (Spark deletes batch files older than
   * the latest compaction after {@code spark.sql.streaming.fileSink.log.cleanupDelay}).
   *
   * @param log the sink log
   * @param batchId a committed batch id
   * @return the batch's statuses in log order
   */
  public static List<SinkFileStatus> filesOfBatch(FileStreamSinkLog log, long batchId) {
    Option<SinkFileStatus[]> own = log.get(batchId);
    if (own.isEmpty()) {
      return List.of();
    }
    List<SinkFileStatus> entries = List.of(own.get());
    int interval = log.compactInterval();
    if (!CompactibleFileStreamLog$.MODULE$.isCompactionBatch(batchId, interval)) {
      return entries;
    }
    Set<String> earlier = new HashSet<>();
    for (Object b : CollectionConverters.asJava(
        CompactibleFileStreamLog$.MODULE$.getValidBatchesBeforeCompactionBatch(batchId, interval))) {
      Option<SinkFileStatus[]> prior = log.get((Long) b);
      if (prior.isEmpty()) {
        return List.of();
      }
      for (SinkFileStatus s : prior.get()) {
        earlier.add(s.path());
      }
    }
    List<SinkFileStatus> out = new ArrayList<>();
    for (SinkFileStatus s : entries) {
      if (!earlier.contains(s.path())) {
        out.add(s);
      }
    }
    return out;
  }

  private static Option<Object> parseRetention(String value) {
    if (value == null) {
      return Option.empty();
    }
    long ms;
    try {
      ms = Utils.timeStringAsMs(value.trim());
    } catch (RuntimeException e) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Option retention must be a time string such as '12h' or '30d', got '"
          + value + "'", e);
    }
    if (ms <= 0) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Option retention must be positive, got '" + value + "'");
    }
    return Option.apply(ms);
  }

  private static <K, V> scala.collection.immutable.Map<K, V> scalaMap(Map<K, V> m) {
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(m));
  }
}
