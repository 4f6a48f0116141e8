package io.filecommit.files;

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
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
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
import org.apache.spark.util.SerializableConfiguration;
import scala.Option;

/**
 * The task side of {@link NativeParquetWriter}: writes one Spark task's rows as Parquet files with
 * DuckDB's Parquet writer ({@link DuckDbParquetFiles}, straight to the committer's file name) or
 * Apache Arrow's native dataset writer ({@code org.apache.arrow.dataset.file.DatasetFileWriter},
 * Arrow C++'s Parquet writer), through the job's {@link DelayedCommitProtocol} exactly as Spark's
 * {@code FileFormatWriter.executeTask} does (setupTask, newTaskTempFile per file, commitTask or
 * abortTask).
 *
 * <p>Rows are copied into Arrow vectors by Spark's own {@code ArrowFieldWriter}s (the conversion
 * of {@code org.apache.spark.sql.execution.arrow.ArrowWriter}) on the task thread, in batches of
 * {@value #BATCH_ROWS} rows. A file's batches are kept until the file is finished and then written
 * by the native writer on the task thread (its reader runs on Arrow's thread pool and must not wait
 * for Spark; the Spark iterator is only read on the task thread). A task keeps at most {@value
 * #TASK_BUFFER_BYTES} bytes of batches: over that, its largest open file is finished, and later
 * rows of that partition go to a new file. A partitioned write keeps one open file per partition
 * directory of the task (directories built by {@link PartitionPaths#partitionDir}, as Spark's
 * writer does), at most {@value #MAX_OPEN_FILES} at once. No sort is needed.
 *
 * <p>Arrow's dataset writer refuses a non-empty directory, so each of its files is written alone into a hidden
 * directory next to its final place ({@code _filecommit_native-<uuid>}) and renamed to the name the
 * committer handed out; the hidden directory is removed in every outcome.
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

  private final DelayedCommitProtocol committer;
  private final SerializableConfiguration conf;
  private final StructType schema;
  private final int[] partitionOrdinals;
  private final int[] dataOrdinals;
  private final String timeZone;
  private final String jobTrackerId;

  NativeTaskWriter(DelayedCommitProtocol committer, Configuration conf, StructType schema,
      List<Integer> partitionOrdinals, String timeZone, String jobTrackerId) {
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
    TaskAttemptID id = new TaskAttemptID(new TaskID(new JobID(jobTrackerId, tc.stageId()), TaskType.MAP,
        tc.partitionId()), tc.attemptNumber());
    Configuration hc = conf.value();
    TaskAttemptContextImpl ctx = new TaskAttemptContextImpl(hc, id);
    committer.setupTask(ctx);
    Map<String, Sink> open = new LinkedHashMap<>();
    BufferAllocator allocator = ArrowUtils$.MODULE$.rootAllocator()
        .newChildAllocator("filecommit-native-" + tc.partitionId(), 0, TASK_MEMORY_LIMIT);
    try {
      StructType dataSchema = dataSchema();
      Schema arrowSchema = ArrowUtils$.MODULE$.toArrowSchema(dataSchema, timeZone, true, false,
          ArrowUtils$.MODULE$.toArrowSchema$default$5());
      boolean snappy = NativeParquetWriter.snappy();
      String ext = snappy ? SNAPPY_EXTENSION : EXTENSION;
      String partExt = snappy ? SNAPPY_PARTITIONED_EXTENSION : PARTITIONED_EXTENSION;
      while (rows.hasNext()) {
        InternalRow row = rows.next();
        String dir = partitionOrdinals.length == 0 ? "" : partitionDir(row);
        Sink sink = open.get(dir);
        if (sink == null) {
          if (open.size() >= MAX_OPEN_FILES) {
            Map.Entry<String, Sink> largest = open.entrySet().stream()
                .max((a, b) -> Long.compare(a.getValue().buffered, b.getValue().buffered)).orElseThrow();
            open.remove(largest.getKey()).finish();
          }
          String target = dir.isEmpty() ? committer.newTaskTempFile(ctx, Option.empty(), ext)
              : committer.newTaskTempFile(ctx, Option.apply(dir), partExt);
          sink = new Sink(new Path(target), arrowSchema, allocator, hc, snappy);
          open.put(dir, sink);
        }
        // Arrow's own count of the task's buffers (capacities, not just the bytes written).
        if (sink.write(row) > 0 && allocator.getAllocatedMemory() > TASK_BUFFER_BYTES) {
          Map.Entry<String, Sink> largest = open.entrySet().stream()
              .max((a, b) -> Long.compare(a.getValue().buffered, b.getValue().buffered)).orElseThrow();
          open.remove(largest.getKey()).finish();
        }
      }
      for (Sink s : open.values()) {
        s.finish();
      }
      open.clear();
      return committer.commitTask(ctx);
    } catch (RuntimeException | Error e) {
      for (Sink s : open.values()) {
        s.abort();
      }
      committer.abortTask(ctx);
      throw e;
    } finally {
      allocator.close();
    }
  }

  /**
   * The rows of Spark's column batches, read in place ({@code ColumnarBatch.rowIterator}: each row
   * a view of the batch's vectors, valid until the next; the task copies values at once).
   *
   * @param batches a task's batches (columns: the job's schema)
   * @return their rows, in order
   */
  static Iterator<InternalRow> rows(Iterator<org.apache.spark.sql.vectorized.ColumnarBatch> batches) {
    return new Iterator<>() {
      private Iterator<InternalRow> current = java.util.Collections.emptyIterator();

      @Override
      public boolean hasNext() {
        while (!current.hasNext() && batches.hasNext()) {
          current = batches.next().rowIterator();
        }
        return current.hasNext();
      }

      @Override
      public InternalRow next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        return current.next();
      }
    };
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
    private final ArrowFieldWriter[] writers;
    private final List<ArrowRecordBatch> batches = new ArrayList<>();
    private final BufferAllocator allocator;
    private final Schema arrowSchema;
    private final Configuration hc;
    private final boolean snappy;
    private int rows;
    private long buffered;

    Sink(Path target, Schema arrowSchema, BufferAllocator allocator, Configuration hc, boolean snappy) {
      this.target = target;
      this.snappy = snappy;
      this.hc = hc;
      this.allocator = allocator;
      this.arrowSchema = arrowSchema;
      this.tmpDir = new Path(target.getParent(), "_filecommit_native-" + UUID.randomUUID());
      this.root = VectorSchemaRoot.create(arrowSchema, allocator);
      List<FieldVector> vectors = root.getFieldVectors();
      this.writers = new ArrowFieldWriter[vectors.size()];
      for (int i = 0; i < writers.length; i++) {
        writers[i] = ArrowWriter$.MODULE$.createFieldWriter(vectors.get(i));
      }
      allocate();
    }

    private void allocate() {
      for (FieldVector v : root.getFieldVectors()) {
        v.setInitialCapacity(BATCH_ROWS);
        v.allocateNew();
      }
      for (ArrowFieldWriter w : writers) {
        w.count_$eq(0);
      }
    }

    /** Adds a row; returns the bytes newly buffered (a batch was completed) or 0. */
    long write(InternalRow row) {
      for (int i = 0; i < writers.length; i++) {
        writers[i].write(row, dataOrdinals[i]);
      }
      rows++;
      return rows == BATCH_ROWS ? flush() : 0;
    }

    private long flush() {
      for (ArrowFieldWriter w : writers) {
        w.finish();
      }
      root.setRowCount(rows);
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
        if (snappy) {
          FileSystem fs = target.getFileSystem(hc);
          fs.mkdirs(target.getParent());
          boolean done = false;
          try {
            // The exported stream owns the reader: DuckDB releases (closes) it.
            DuckDbParquetFiles.write(allocator, new ListReader(allocator, arrowSchema, batches),
                new java.io.File(target.toUri()).getAbsolutePath());
            done = true;
          } finally {
            if (!done) {
              fs.delete(target, false);
            }
          }
          return;
        }
        try (ArrowReader reader = new ListReader(allocator, arrowSchema, batches)) {
          NativeParquetWriter.writeMethod().invoke(null, allocator, reader, NativeParquetWriter.parquetFormat(),
              tmpDir.toUri().toString(), new String[0], 1, "data-{i}.parquet");
        } catch (InvocationTargetException e) {
          throw new IllegalStateException("Native Parquet writer of " + target + " failed: " + e.getCause(),
              e.getCause());
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
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

  /** An {@link ArrowReader} over batches already made; each is released once loaded. */
  private static final class ListReader extends ArrowReader {
    private final Schema schema;
    private final List<ArrowRecordBatch> batches;
    private int next;

    ListReader(BufferAllocator allocator, Schema schema, List<ArrowRecordBatch> batches) {
      super(allocator);
      this.schema = schema;
      this.batches = batches;
    }

    @Override
    public synchronized boolean loadNextBatch() throws IOException {
      if (next >= batches.size()) {
        return false;
      }
      ArrowRecordBatch batch = batches.set(next++, null);
      try (batch) {
        new VectorLoader(getVectorSchemaRoot()).load(batch);
      }
      return true;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {}

    @Override
    protected Schema readSchema() {
      return schema;
    }
  }
}
