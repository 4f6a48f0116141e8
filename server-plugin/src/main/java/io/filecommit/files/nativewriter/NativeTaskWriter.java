package io.filecommit.files.nativewriter;

import io.filecommit.delta.PartitionPaths;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.TaskContext;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowFieldWriter;
import org.apache.spark.sql.execution.arrow.ArrowWriter$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils$;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;
import scala.Option;

/**
 * The task side of {@link NativeParquetWriter}: writes one Spark task's rows as Parquet files with
 * DuckDB's Parquet writer ({@link DuckDbParquetFiles}, straight to the committer's file name on the
 * local file system; on object storage into a local file that {@link StagedUpload} uploads) or
 * Apache Arrow's native dataset writer ({@code org.apache.arrow.dataset.file.DatasetFileWriter},
 * Arrow C++'s Parquet writer), through the job's {@code DelayedCommitProtocol} of the files package exactly as Spark's
 * {@code FileFormatWriter.executeTask} does (setupTask, newTaskTempFile per file, commitTask or
 * abortTask).
 *
 * <p>Rows are copied into Arrow vectors by Spark's own {@code ArrowFieldWriter}s (the conversion
 * of {@code org.apache.spark.sql.execution.arrow.ArrowWriter}) on the task thread, in batches of
 * {@value #BATCH_ROWS} rows; Spark column batches (a columnar scan written as is) are copied
 * column by column instead ({@link ArrowColumnCopy}), with the same Arrow types and values. A
 * file's batches are kept until the file is finished and then written
 * by the native writer on the task thread (its reader runs on Arrow's thread pool and must not wait
 * for Spark; the Spark iterator is only read on the task thread). A task keeps at most {@value
 * #TASK_BUFFER_BYTES} bytes of batches: over that, its largest open file is finished, and later
 * rows of that partition go to a new file. A partitioned write keeps one open file per partition
 * directory of the task (directories built by {@link PartitionPaths#partitionDir}, as Spark's
 * writer does), at most {@value #MAX_OPEN_FILES} at once. No sort is needed.
 *
 * <p>Arrow's dataset writer refuses a non-empty directory, so each of its files is written alone into a hidden
 * directory next to its final place ({@code _filecommit_native-<uuid>}) and renamed to the name the
 * committer handed out (on object storage: a local directory, the file uploaded); it is removed always.
 *
 * <p>Over 400 lines: one task's whole life (row and columnar input, an open file per partition
 * directory, both engines' files, abort) in one place.
 */
final class NativeTaskWriter implements Serializable {
  private static final long serialVersionUID = 1L;
  /** Rows per Arrow batch handed to the native writer. */
  static final int BATCH_ROWS = 32768;
  /** Open files (partition directories) per task at most. */
  static final int MAX_OPEN_FILES = 32;
  /** Bytes of Arrow batches a task keeps before it finishes its largest open file. */
  static final long TASK_BUFFER_BYTES = 128L << 20;
  /**
   * Hard limit of a task's Arrow memory: over it Arrow fails the task with its own {@code
   * OutOfMemoryException} (an exception), before Netty's direct memory limit would raise an
   * {@code Error} that ends the server.
   */
  static final long TASK_MEMORY_LIMIT = 3 * TASK_BUFFER_BYTES;
  /**
   * File name suffixes, as Spark's writers give them for uncompressed Parquet: {@code -c000.parquet}
   * (single directory) and {@code .c000.parquet} (partitioned); Arrow's dataset writer writes
   * uncompressed Parquet.
   */
  static final String EXTENSION = "-c000.parquet";
  static final String PARTITIONED_EXTENSION = ".c000.parquet";
  /** The same for snappy files (DuckDB's engine), as Spark names them. */
  static final String SNAPPY_EXTENSION = "-c000.snappy.parquet";
  static final String SNAPPY_PARTITIONED_EXTENSION = ".c000.snappy.parquet";

  private final org.apache.spark.internal.io.FileCommitProtocol committer;
  private final SerializableConfiguration conf;
  private final StructType schema;
  private final int[] partitionOrdinals;
  private final int[] dataOrdinals;
  private final String timeZone;
  private final String jobTrackerId;
  private final FileRecorder recorder;

  NativeTaskWriter(org.apache.spark.internal.io.FileCommitProtocol committer, Configuration conf, StructType schema,
      List<Integer> partitionOrdinals, String timeZone, String jobTrackerId, FileRecorder recorder) {
    this.committer = committer;
    this.conf = new SerializableConfiguration(conf);
    this.schema = schema;
    this.partitionOrdinals = partitionOrdinals.stream().mapToInt(Integer::intValue).toArray();
    List<Integer> data = new ArrayList<>();
    for (int i = 0; i < schema.fields().length; i++) {
      if (!partitionOrdinals.contains(i)) {
        data.add(i);
      }
    }
    this.dataOrdinals = data.stream().mapToInt(Integer::intValue).toArray();
    this.timeZone = timeZone;
    this.jobTrackerId = jobTrackerId;
    this.recorder = recorder;
  }

  /**
   * Writes one task's rows and commits the task.
   *
   * @param tc the running task
   * @param rows the task's rows (schema: the job's, partition columns included)
   * @return the committer's task message (the task's AddFiles)
   * @throws RuntimeException when writing fails; the task's files are deleted first
   */
  TaskCommitMessage run(TaskContext tc, Iterator<InternalRow> rows) {
    return runTask(tc, files -> {
      while (rows.hasNext()) {
        InternalRow row = rows.next();
        String dir = partitionOrdinals.length == 0 ? "" : partitionDir(row);
        files.wrote(files.sink(dir).write(row));
      }
    });
  }

  /**
   * Writes one task's column batches and commits the task: each batch's columns are copied into
   * the Arrow vectors column by column ({@link ArrowColumnCopy}), a partitioned write's rows
   * grouped by directory first ({@link ColumnarPartitions}).
   *
   * @param tc the running task
   * @param batches the task's batches (columns: the job's schema, partition columns included)
   * @return the committer's task message (the task's AddFiles)
   * @throws RuntimeException when writing fails; the task's files are deleted first
   */
  TaskCommitMessage runColumnar(TaskContext tc, Iterator<ColumnarBatch> batches) {
    DataType[] partitionTypes = new DataType[partitionOrdinals.length];
    for (int i = 0; i < partitionTypes.length; i++) {
      partitionTypes[i] = schema.fields()[partitionOrdinals[i]].dataType();
    }
    ColumnarPartitions parts = partitionOrdinals.length == 0 ? null
        : new ColumnarPartitions(partitionOrdinals, partitionTypes, this::partitionDir);
    ArrowColumnCopy[] copies = new ArrowColumnCopy[dataOrdinals.length];
    for (int i = 0; i < copies.length; i++) {
      copies[i] = ArrowColumnCopy.of(schema.fields()[dataOrdinals[i]].dataType());
    }
    return runTask(tc, files -> {
      while (batches.hasNext()) {
        ColumnarBatch b = batches.next();
        for (ArrowColumnCopy c : copies) {
          c.newBatch();
        }
        if (parts == null) {
          files.wrote(files.sink("").write(b, copies, null, 0, b.numRows()));
          continue;
        }
        for (ColumnarPartitions.Group g : parts.group(b)) {
          files.wrote(files.sink(g.dir).write(b, copies, g.rows, 0, g.count));
        }
      }
    });
  }

  private TaskCommitMessage runTask(TaskContext tc, java.util.function.Consumer<TaskFiles> body) {
    TaskAttemptID id = new TaskAttemptID(new TaskID(new JobID(jobTrackerId, tc.stageId()), TaskType.MAP,
        tc.partitionId()), tc.attemptNumber());
    Configuration hc = conf.value();
    TaskAttemptContextImpl ctx = new TaskAttemptContextImpl(hc, id);
    committer.setupTask(ctx);
    BufferAllocator allocator = ArrowUtils$.MODULE$.rootAllocator()
        .newChildAllocator("filecommit-native-" + tc.partitionId(), 0, TASK_MEMORY_LIMIT);
    TaskFiles files = null;
    try {
      files = new TaskFiles(ctx, hc, allocator);
      body.accept(files);
      files.finishAll();
      files.uploads.finish();
      return committer.commitTask(ctx);
    } catch (RuntimeException | Error e) {
      if (files != null) {
        for (Sink s : files.open.values()) {
          s.abort();
        }
        files.uploads.settle();
      }
      committer.abortTask(ctx);
      throw e;
    } finally {
      allocator.close();
    }
  }

  /** A task's open files, one per partition directory, and the task's Arrow memory. */
  private final class TaskFiles {
    private final Map<String, Sink> open = new LinkedHashMap<>();
    private final TaskAttemptContextImpl ctx;
    private final Configuration hc;
    private final BufferAllocator allocator;
    private final Schema arrowSchema;
    private final boolean snappy;
    private final String ext;
    private final String partExt;
    /** Bytes per value of each variable-width column in the task's last batch (0: none yet). */
    private final double[] density;
    private final StagedUpload.Uploads uploads;

    TaskFiles(TaskAttemptContextImpl ctx, Configuration hc, BufferAllocator allocator) {
      this.ctx = ctx;
      this.hc = hc;
      this.allocator = allocator;
      this.arrowSchema = ArrowUtils$.MODULE$.toArrowSchema(dataSchema(), timeZone, true, false,
          ArrowUtils$.MODULE$.toArrowSchema$default$5());
      this.snappy = NativeParquetWriter.snappy();
      this.ext = snappy ? SNAPPY_EXTENSION : EXTENSION;
      this.partExt = snappy ? SNAPPY_PARTITIONED_EXTENSION : PARTITIONED_EXTENSION;
      this.density = new double[arrowSchema.getFields().size()];
      this.uploads = new StagedUpload.Uploads(hc, recorder);
    }

    /** The open file of a directory ("" unpartitioned), opened (at most {@value #MAX_OPEN_FILES}) when new. */
    Sink sink(String dir) {
      Sink sink = open.get(dir);
      if (sink == null) {
        if (open.size() >= MAX_OPEN_FILES) {
          finishLargest();
        }
        String target = dir.isEmpty() ? committer.newTaskTempFile(ctx, Option.empty(), ext)
            : committer.newTaskTempFile(ctx, Option.apply(dir), partExt);
        sink = new Sink(new Path(target), arrowSchema, allocator, hc, snappy, density, uploads);
        open.put(dir, sink);
      }
      return sink;
    }

    /** After a write that completed batches: over the buffer limit, finishes the largest open file. */
    void wrote(long bytes) {
      // Arrow's own count of the task's buffers (capacities, not just the bytes written).
      if (bytes > 0 && allocator.getAllocatedMemory() > TASK_BUFFER_BYTES) {
        finishLargest();
      }
    }

    private void finishLargest() {
      Map.Entry<String, Sink> largest = open.entrySet().stream()
          .max((a, b) -> Long.compare(a.getValue().buffered, b.getValue().buffered)).orElseThrow();
      open.remove(largest.getKey()).finish();
    }

    void finishAll() {
      for (Sink s : open.values()) {
        s.finish();
      }
      open.clear();
    }
  }

  private StructType dataSchema() {
    StructField[] fields = new StructField[dataOrdinals.length];
    for (int i = 0; i < dataOrdinals.length; i++) {
      fields[i] = schema.fields()[dataOrdinals[i]];
    }
    return new StructType(fields);
  }

  /** The row's partition directory, values rendered as Spark's cast to string renders them. */
  private String partitionDir(InternalRow row) {
    Map<String, String> values = new LinkedHashMap<>();
    for (int o : partitionOrdinals) {
      StructField f = schema.fields()[o];
      values.put(f.name(), row.isNullAt(o) ? null : partitionValue(row, o, f.dataType()));
    }
    return PartitionPaths.partitionDir(values);
  }

  private static String partitionValue(InternalRow row, int o, DataType t) {
    if (t.equals(DataTypes.StringType)) {
      return row.getUTF8String(o).toString();
    } else if (t.equals(DataTypes.IntegerType)) {
      return Integer.toString(row.getInt(o));
    } else if (t.equals(DataTypes.LongType)) {
      return Long.toString(row.getLong(o));
    } else if (t.equals(DataTypes.ShortType)) {
      return Short.toString(row.getShort(o));
    } else if (t.equals(DataTypes.ByteType)) {
      return Byte.toString(row.getByte(o));
    } else if (t.equals(DataTypes.BooleanType)) {
      return Boolean.toString(row.getBoolean(o));
    }
    throw new IllegalStateException("Not a native partition column type: " + t);
  }

  /**
   * One open file: Arrow vectors filled on the task thread, their batches kept until the file is
   * finished, then written by the native writer on the task thread. The native writer reads its
   * input on Arrow's own thread pool, so its reader must never wait for the task (several files
   * of a task, or several tasks, would starve that pool): all of a file's batches are there first.
   */
  private final class Sink {
    private final Path target;
    private final Path tmpDir;
    private final VectorSchemaRoot root;
    private final FieldVector[] vectors;
    private final double[] density;
    private ArrowFieldWriter[] writers;
    private final List<ArrowRecordBatch> batches = new ArrayList<>();
    private final BufferAllocator allocator;
    private final Schema arrowSchema;
    private final Configuration hc;
    private final boolean snappy;
    private final StagedUpload.Uploads uploads;
    private int rows;
    private long buffered;

    Sink(Path target, Schema arrowSchema, BufferAllocator allocator, Configuration hc, boolean snappy,
        double[] density, StagedUpload.Uploads uploads) {
      this.target = target;
      this.uploads = uploads;
      this.snappy = snappy;
      this.hc = hc;
      this.allocator = allocator;
      this.arrowSchema = arrowSchema;
      this.tmpDir = StagedUpload.direct(target) ? new Path(target.getParent(), "_filecommit_native-" + UUID.randomUUID())
          : new Path(StagedUpload.localFile().toURI()); // staged on local disk, then uploaded
      this.root = VectorSchemaRoot.create(arrowSchema, allocator);
      this.vectors = root.getFieldVectors().toArray(new FieldVector[0]);
      this.density = density;
      allocate();
    }

    private void allocate() {
      for (int i = 0; i < vectors.length; i++) {
        FieldVector v = vectors[i];
        if (v instanceof BaseVariableWidthVector w && density[i] > 0) {
          // Room for a batch of values as long as the last batch's (no reallocation on the way).
          w.setInitialCapacity(BATCH_ROWS, density[i]);
        } else {
          v.setInitialCapacity(BATCH_ROWS);
        }
        v.allocateNew();
      }
      if (writers != null) {
        for (ArrowFieldWriter w : writers) {
          w.count_$eq(0);
        }
      }
    }

    /** Adds a row; returns the bytes newly buffered (a batch was completed) or 0. */
    long write(InternalRow row) {
      if (writers == null) {
        // Spark's row-to-Arrow conversion; a sink is fed either rows or column batches, never both.
        writers = new ArrowFieldWriter[vectors.length];
        for (int i = 0; i < writers.length; i++) {
          writers[i] = ArrowWriter$.MODULE$.createFieldWriter(vectors[i]);
        }
      }
      for (int i = 0; i < writers.length; i++) {
        writers[i].write(row, dataOrdinals[i]);
      }
      rows++;
      return rows == BATCH_ROWS ? flush() : 0;
    }

    /**
     * Adds rows of a column batch, column by column: {@code selected[from..from+count)}, or rows
     * {@code from..from+count} when {@code selected} is null; returns the bytes newly buffered.
     */
    long write(ColumnarBatch batch, ArrowColumnCopy[] copies, int[] selected, int from, int count) {
      long bytes = 0;
      while (count > 0) {
        int m = Math.min(count, BATCH_ROWS - rows);
        for (int i = 0; i < vectors.length; i++) {
          copies[i].copy(batch.column(dataOrdinals[i]), selected, from, m, vectors[i], rows);
        }
        rows += m;
        from += m;
        count -= m;
        if (rows == BATCH_ROWS) {
          bytes += flush();
        }
      }
      return bytes;
    }

    private long flush() {
      if (writers != null) {
        for (ArrowFieldWriter w : writers) {
          w.finish();
        }
      }
      root.setRowCount(rows);
      for (int i = 0; i < vectors.length; i++) {
        if (vectors[i] instanceof BaseVariableWidthVector w && rows > 0) {
          density[i] = Math.max(1.0, 1.1 * w.getOffsetBuffer().getInt((long) rows * 4) / rows);
        }
      }
      ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch();
      // The batch keeps its buffers; the vectors get fresh ones (resetting would zero shared memory).
      root.clear();
      allocate();
      rows = 0;
      batches.add(batch);
      long bytes = batch.computeBodyLength();
      buffered += bytes;
      return bytes;
    }

    /** Writes the file with the native writer and moves it to the committer's name. */
    void finish() {
      try {
        if (rows > 0) {
          flush();
        }
        root.close();
        if (snappy && !StagedUpload.direct(target)) {
          uploads.submit(StagedUpload.encode(local -> DuckDbParquetFiles.write(allocator,
              new ArrowBatchListReader(allocator, arrowSchema, batches), local)), target.toString());
          return;
        }
        if (snappy) {
          FileSystem fs = target.getFileSystem(hc);
          fs.mkdirs(target.getParent());
          boolean done = false;
          try {
            // The exported stream owns the reader: DuckDB releases (closes) it.
            DuckDbParquetFiles.write(allocator, new ArrowBatchListReader(allocator, arrowSchema, batches),
                new java.io.File(target.toUri()).getAbsolutePath());
            done = true;
          } finally {
            if (!done) {
              fs.delete(target, false);
            }
          }
          return;
        }
        try (ArrowReader reader = new ArrowBatchListReader(allocator, arrowSchema, batches)) {
          NativeParquetWriter.writeMethod().invoke(null, allocator, reader, NativeParquetWriter.parquetFormat(),
              tmpDir.toUri().toString(), new String[0], 1, "data-{i}.parquet");
        } catch (InvocationTargetException e) {
          throw new IllegalStateException("Native Parquet writer of " + target + " failed: " + e.getCause(),
              e.getCause());
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
        if (!StagedUpload.direct(target)) {
          StagedUpload.upload(new java.io.File(new Path(tmpDir, "data-0.parquet").toUri()), target.toString(), hc, recorder);
          return;
        }
        FileSystem fs = target.getFileSystem(hc);
        fs.mkdirs(target.getParent());
        if (!fs.rename(new Path(tmpDir, "data-0.parquet"), target)) {
          throw new IOException("Cannot rename the native writer's file to " + target);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } finally {
        abort();
      }
    }

    /** Releases the buffers and removes the hidden directory (the file is the committer's). */
    void abort() {
      root.close();
      for (ArrowRecordBatch b : batches) {
        if (b != null) {
          b.close();
        }
      }
      batches.clear();
      deleteTmp();
    }

    private void deleteTmp() {
      try {
        tmpDir.getFileSystem(hc).delete(tmpDir, true);
      } catch (IOException e) {
        LOG.warn("filecommit: could not delete " + tmpDir + ": " + e);
      }
    }
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(NativeTaskWriter.class);
}
