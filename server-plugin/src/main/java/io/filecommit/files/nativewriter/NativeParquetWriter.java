package io.filecommit.files.nativewriter;

import io.filecommit.conf.FileCommitConf;
import java.lang.reflect.Method;
import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.execution.SQLExecution$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;
import scala.runtime.BoxedUnit;

/**
 * The columnar bulk-write path: a write job whose tasks encode Parquet with a native (C++) writer
 * instead of parquet-mr through Spark's {@code ParquetWriteSupport}: DuckDB's Parquet writer
 * ({@link DuckDbParquetFiles}, snappy) when {@code org.duckdb:duckdb_jdbc} and {@code
 * org.apache.arrow:arrow-c-data} load, else Apache Arrow's dataset writer ({@code
 * org.apache.arrow:arrow-dataset}, {@code DatasetFileWriter}, uncompressed), behind the same commit protocol
 * ({@code DelayedCommitProtocol} of the files package: file names, task commit with footer statistics, abort) as
 * the files package's {@code ParquetJobWriter}. The job mirrors Spark's {@code FileFormatWriter.write}: one SQL
 * execution, {@code runJob} over the plan's rows, {@code onTaskCommit} per finished task, then
 * {@code commitJob}; on failure {@code abortJob}.
 *
 * <p>Setting {@link FileCommitConf#WRITER_NATIVE} ({@code auto}, the default, or {@code off}; the session's value over the
 * server's). With {@code auto} a write goes here when {@link #ineligible} finds no reason against it and the Arrow dataset
 * jars are on the server's class path and their native library loads ({@link #available}); every
 * other write uses Spark's writer. Differences of the files (same rows, types and {@code add.stats}):
 * DuckDB's are snappy ({@code -c000.snappy.parquet} as Spark's), row groups of 122,880 rows, every
 * column optional; Arrow's are uncompressed (no published Java binding of Arrow's dataset writer
 * has a compression option; named {@code -c000.parquet}, as Spark names uncompressed files), row
 * groups of at most 32,768 rows, decimals as fixed-length byte arrays; timestamps are INT64
 * microseconds in both (read by every Parquet reader the same way).
 */
public final class NativeParquetWriter {
  /** The reason {@link #ineligible} gives when the setting is {@code off}. */
  public static final String OFF = "spark.filecommit.writer.native=off";
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(NativeParquetWriter.class);
  private static final AtomicLong NATIVE_WRITES = new AtomicLong();
  private static final AtomicLong FALLBACKS = new AtomicLong();
  private static final AtomicLong COLUMNAR_WRITES = new AtomicLong();
  private static volatile Boolean available;
  private static Method writeMethod;
  private static Object parquetFormat;
  private static volatile boolean duckDb;

  private NativeParquetWriter() {}

  /** {@return how many write jobs went through the native writer since the server started} */
  public static long nativeWrites() {
    return NATIVE_WRITES.get();
  }

  /** {@return how many of {@link #nativeWrites} read their input as Spark column vectors} */
  public static long columnarWrites() {
    return COLUMNAR_WRITES.get();
  }

  /**
   * The columnar plan under the write plan's root when the root only turns batches into rows
   * ({@code ColumnarToRowExec}, possibly as a whole-stage-codegen stage's input) and the batches'
   * columns have the written schema's types in order; else null (the rows are used).
   *
   * @param plan the write's executed plan
   * @param schema the written schema
   * @return the columnar child, or null
   */
  static SparkPlan columnarInput(SparkPlan plan, StructType schema) {
    SparkPlan p = plan instanceof WholeStageCodegenExec w ? w.child() : plan;
    if (!(p instanceof ColumnarToRowExec c) || !c.child().supportsColumnar()) {
      return null;
    }
    List<Attribute> out = CollectionConverters.asJava(c.child().output());
    if (out.size() != schema.fields().length) {
      return null;
    }
    for (int i = 0; i < out.size(); i++) {
      if (!out.get(i).dataType().equals(schema.fields()[i].dataType())) {
        return null;
      }
    }
    return c.child();
  }

  /** {@return how many write jobs fell back to Spark's writer with the setting on {@code auto}} */
  public static long fallbacks() {
    return FALLBACKS.get();
  }

  /**
   * Why a write cannot use the native writer, or empty when it can: the setting is {@code off}, the
   * write has Spark writer options, {@code spark.sql.files.maxRecordsPerFile} is set, the table is
   * neither on the local file system nor on S3 through Hadoop's S3A ({@code s3a:}: each file is
   * encoded into a local temporary file and uploaded, {@link StagedUpload}; other object stores are
   * refused until tested the same way), a data column has a type without an exact Arrow mapping here
   * (allowed: boolean, byte, short, int, long, string without collation, binary, date, timestamp,
   * timestamp without time zone, decimal, and float and double with DuckDB's engine only: it writes
   * no min/max for a chunk with NaN, Arrow's writes bounds that leave NaN out), or a partition
   * column is not a string, integral or boolean column.
   *
   * @param session the session of the write
   * @param schema the physical schema of the written rows, partition columns included
   * @param partitionColumns the partition columns (names of {@code schema})
   * @param outputPath the table root
   * @param options the write's Spark Parquet writer options
   * @return the reason, or empty
   */
  public static Optional<String> ineligible(SparkSession session, StructType schema, List<String> partitionColumns,
      String outputPath, Map<String, String> options) {
    // The session's value (a client may opt out for its own writes) over the server's, default auto.
    String setting = FileCommitConf.WRITER_NATIVE.sessionValue(session).trim().toLowerCase(Locale.ROOT);
    if (setting.equals("off")) {
      return Optional.of(OFF);
    }
    if (!setting.equals("auto")) {
      throw new IllegalArgumentException(FileCommitConf.WRITER_NATIVE.key() + " must be auto or off, got " + setting);
    }
    if (!options.isEmpty()) {
      return Optional.of("writer options " + options.keySet());
    }
    if (!session.conf().get("spark.sql.files.maxRecordsPerFile", "0").trim().equals("0")) {
      return Optional.of("spark.sql.files.maxRecordsPerFile is set");
    }
    String scheme = new org.apache.hadoop.fs.Path(outputPath).toUri().getScheme();
    if (scheme != null && !scheme.equals("file") && !scheme.equals("s3a")) {
      return Optional.of("table on " + scheme + ":");
    }
    for (StructField f : schema.fields()) {
      boolean partition = partitionColumns.contains(f.name());
      if (partition ? !PARTITION_TYPES.contains(f.dataType()) : !dataType(f.dataType())) {
        return Optional.of("column " + f.name() + " of type " + f.dataType().simpleString());
      }
      if (!partition && FLOAT_TYPES.contains(f.dataType()) && !(available() && duckDb)) {
        // Arrow's writer keeps min/max of a chunk with NaN (NaN left out); DuckDB's writes none.
        return Optional.of("column " + f.name() + " of type " + f.dataType().simpleString()
            + " without DuckDB's writer");
      }
    }
    return Optional.empty();
  }

  private static final Set<DataType> PARTITION_TYPES = Set.of(DataTypes.StringType, DataTypes.IntegerType,
      DataTypes.LongType, DataTypes.ShortType, DataTypes.ByteType, DataTypes.BooleanType);
  private static final Set<DataType> DATA_TYPES = Set.of(DataTypes.StringType, DataTypes.IntegerType,
      DataTypes.LongType, DataTypes.ShortType, DataTypes.ByteType, DataTypes.BooleanType, DataTypes.BinaryType,
      DataTypes.DateType, DataTypes.TimestampType, DataTypes.TimestampNTZType, DataTypes.FloatType,
      DataTypes.DoubleType);
  private static final Set<DataType> FLOAT_TYPES = Set.of(DataTypes.FloatType, DataTypes.DoubleType);

  private static boolean dataType(DataType t) {
    return DATA_TYPES.contains(t) || t instanceof DecimalType;
  }

  /**
   * Whether DuckDB's or Arrow's dataset classes are on the server's class path and their native
   * library loads (checked once, DuckDB first; the first check extracts and loads the library,
   * about a second or more).
   *
   * @return true when the native writer can run
   */
  public static boolean available() {
    Boolean a = available;
    if (a == null) {
      synchronized (NativeParquetWriter.class) {
        if (available == null) {
          available = load();
        }
        a = available;
      }
    }
    return a;
  }

  private static boolean load() {
    try {
      DuckDbParquetFiles.load();
      duckDb = true;
      LOG.info("filecommit: the native Parquet writer uses DuckDB (snappy)");
      return true;
    } catch (ReflectiveOperationException | LinkageError | java.sql.SQLException | RuntimeException e) {
      LOG.info("filecommit: DuckDB's Parquet writer is not available, trying Arrow's dataset writer: " + e);
    }
    try {
      ClassLoader cl = NativeParquetWriter.class.getClassLoader();
      Class<?> writer = Class.forName("org.apache.arrow.dataset.file.DatasetFileWriter", true, cl);
      Class<?> format = Class.forName("org.apache.arrow.dataset.file.FileFormat", true, cl);
      @SuppressWarnings({"unchecked", "rawtypes"})
      Object parquet = Enum.valueOf((Class) format, "PARQUET");
      Method m = writer.getMethod("write", BufferAllocator.class, ArrowReader.class, format, String.class,
          String[].class, int.class, String.class);
      Class<?> loader = Class.forName("org.apache.arrow.dataset.jni.JniLoader", true, cl);
      Object jni = loader.getMethod("get").invoke(null);
      loader.getMethod("ensureLoaded").invoke(jni);
      parquetFormat = parquet;
      writeMethod = m;
      return true;
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      LOG.info("filecommit: the native Parquet writer is not available, Spark's writer is used: " + e);
      return false;
    }
  }

  /**
   * {@return true when the engine is DuckDB's writer ({@link DuckDbParquetFiles}, snappy files),
   * false when it is Arrow's dataset writer (uncompressed files)}
   */
  static boolean snappy() {
    writeMethodOrDuck();
    return duckDb;
  }

  private static void writeMethodOrDuck() {
    if (!available()) {
      throw new IllegalStateException("The native Parquet writer is not available");
    }
  }

  static Method writeMethod() {
    if (!available()) {
      throw new IllegalStateException("The native Parquet writer is not available");
    }
    return writeMethod;
  }

  static Object parquetFormat() {
    writeMethod();
    return parquetFormat;
  }

  /**
   * Notes a write that uses Spark's writer although the setting is {@code auto}, with the reason
   * in the server log (info) and in {@link #fallbacks}.
   *
   * @param outputPath the table root
   * @param reason why
   */
  public static void fellBack(String outputPath, String reason) {
    FALLBACKS.incrementAndGet();
    LOG.info("filecommit: Spark's Parquet writer for " + outputPath + " (native writer not used: " + reason + ")");
  }

  /**
   * Writes {@code data} under {@code outputPath} as one job through the native writer.
   *
   * @param session the session that runs the job
   * @param data the rows; its analyzed output is the written schema (partition columns included),
   *     already checked by {@link #ineligible}
   * @param outputPath the table root, as given to the committer
   * @param partitionColumns partition column names in directory order (exact names of the data)
   * @param committer the commit protocol of this job
   * @param recorder where a file put on object storage leaves its length and footer for the
   *     committer (the files package's {@code WrittenFiles::record})
   * @param description the SQL execution's description
   * @throws RuntimeException (Spark's {@code SparkException} and others) when the job fails; the
   *     committer's {@code abortJob} has run by then
   */
  public static void write(SparkSession session, Dataset<Row> data, String outputPath, List<String> partitionColumns,
      org.apache.spark.internal.io.FileCommitProtocol committer, FileRecorder recorder, String description) {
    QueryExecution qe = data.queryExecution();
    StructType schema = qe.analyzed().schema();
    List<Integer> partitionOrdinals = new ArrayList<>();
    for (String p : partitionColumns) {
      partitionOrdinals.add(schema.fieldIndex(p));
    }
    Configuration hadoopConf = io.filecommit.delta.DeltaLogCache.sessionHadoopConfWithOptions(session, Map.of());
    String jobTrackerId = new SimpleDateFormat("yyyyMMddHHmmss", Locale.US).format(new Date());
    NativeTaskWriter task = new NativeTaskWriter(committer, hadoopConf, schema, partitionOrdinals,
        session.sessionState().conf().sessionLocalTimeZone(), jobTrackerId, recorder);
    Job job;
    try {
      job = Job.getInstance(hadoopConf);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    String tag = "filecommit-" + java.util.UUID.randomUUID();
    session.sparkContext().addJobTag(tag);
    try {
      committer.setupJob(job);
      List<TaskCommitMessage> messages = new ArrayList<>();
      SQLExecution$.MODULE$.withNewExecutionId(qe, Option.apply(description), () -> {
        scala.Function2<Object, TaskCommitMessage, BoxedUnit> handler = (i, m) -> {
          committer.onTaskCommit(m);
          messages.add(m);
          return BoxedUnit.UNIT;
        };
        SparkPlan columnar = columnarInput(qe.executedPlan(), schema);
        if (columnar != null) {
          // Spark's vectors are copied into Arrow column by column (no UnsafeRow projection of ColumnarToRow).
          RDD<ColumnarBatch> rdd = columnar.executeColumnar();
          scala.Function2<org.apache.spark.TaskContext, scala.collection.Iterator<ColumnarBatch>, TaskCommitMessage> f =
              (scala.Function2<org.apache.spark.TaskContext, scala.collection.Iterator<ColumnarBatch>,
                  TaskCommitMessage> & java.io.Serializable)
                  (tc, it) -> task.runColumnar(tc, CollectionConverters.asJava(it));
          session.sparkContext().runJob(rdd, f, handler, ClassTag$.MODULE$.apply(TaskCommitMessage.class));
          COLUMNAR_WRITES.incrementAndGet();
          return null;
        }
        RDD<InternalRow> rdd = qe.executedPlan().execute();
        scala.Function2<org.apache.spark.TaskContext, scala.collection.Iterator<InternalRow>, TaskCommitMessage> f =
            (scala.Function2<org.apache.spark.TaskContext, scala.collection.Iterator<InternalRow>, TaskCommitMessage>
                & java.io.Serializable) (tc, it) -> task.run(tc, CollectionConverters.asJava(it));
        session.sparkContext().runJob(rdd, f, handler, ClassTag$.MODULE$.apply(TaskCommitMessage.class));
        return null;
      });
      committer.commitJob(job, CollectionConverters.asScala(messages).toSeq());
      NATIVE_WRITES.incrementAndGet();
    } catch (RuntimeException | Error e) {
      TaggedJobs.awaitTasks(session, tag);
      committer.abortJob(job);
      throw e;
    } finally {
      session.sparkContext().removeJobTag(tag);
    }
  }
}
