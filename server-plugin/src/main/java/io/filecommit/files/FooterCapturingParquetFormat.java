package io.filecommit.files;

import java.lang.reflect.Field;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's {@code ParquetFileFormat} whose writers, when they close a file, leave its length and
 * footer in {@link WrittenFiles} for the committer: the same files, bytes and Hadoop configuration
 * as Spark's {@code ParquetFileFormat.prepareWrite} and {@code ParquetOutputWriter} give.
 *
 * <p>The footer and the final position are those of parquet-mr's {@code ParquetFileWriter} behind
 * Spark's {@code ParquetOutputWriter} (its {@code recordWriter}, parquet-mr's {@code
 * ParquetRecordWriter.internalWriter}, {@code InternalParquetRecordWriter.parquetFileWriter}:
 * {@code getFooter()} and {@code getPos()} after {@code end}). These are private fields, read by
 * reflection; when a Spark or parquet-mr version lays them out otherwise, nothing is recorded and
 * the committer reads the file back ({@code getFileStatus} and the footer), as before.
 */
public final class FooterCapturingParquetFormat extends ParquetFileFormat {
  private static final long serialVersionUID = 1L;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FooterCapturingParquetFormat.class);
  private static volatile boolean warned;

  /**
   * Spark's Parquet writer factory for {@code job}, wrapped.
   *
   * @param session the session of the write
   * @param job the write's Hadoop job (its configuration is set up as Spark's)
   * @param options the writer options
   * @param dataSchema the written data columns
   * @return a factory whose writers record their files in {@link WrittenFiles}
   */
  @Override
  public OutputWriterFactory prepareWrite(org.apache.spark.sql.SparkSession session, Job job,
      scala.collection.immutable.Map<String, String> options, StructType dataSchema) {
    return new Factory(super.prepareWrite(session, job, options, dataSchema));
  }

  private static final class Factory extends OutputWriterFactory {
    private static final long serialVersionUID = 1L;
    private final OutputWriterFactory parquet;

    Factory(OutputWriterFactory parquet) {
      this.parquet = parquet;
    }

    @Override
    public String getFileExtension(TaskAttemptContext context) {
      return parquet.getFileExtension(context);
    }

    @Override
    public OutputWriter newInstance(String path, StructType dataSchema, TaskAttemptContext context) {
      return new Writer(parquet.newInstance(path, dataSchema, context));
    }
  }

  private static final class Writer extends OutputWriter {
    private final OutputWriter parquet;

    Writer(OutputWriter parquet) {
      this.parquet = parquet;
    }

    @Override
    public void write(InternalRow row) {
      parquet.write(row);
    }

    @Override
    public void close() {
      parquet.close();
      ParquetFileWriter file = fileWriter(parquet);
      if (file == null) {
        return;
      }
      try {
        WrittenFiles.record(parquet.path(), file.getPos(), file.getFooter());
      } catch (java.io.IOException | RuntimeException e) {
        LOG.debug("filecommit: no footer kept for " + parquet.path() + ": " + e);
      }
    }

    @Override
    public String path() {
      return parquet.path();
    }
  }

  /** parquet-mr's file writer behind Spark's {@code ParquetOutputWriter}, or null. */
  static ParquetFileWriter fileWriter(OutputWriter writer) {
    try {
      Object recordWriter = field(writer, "recordWriter");
      Object internal = field(recordWriter, "internalWriter");
      return (ParquetFileWriter) field(internal, "parquetFileWriter");
    } catch (ReflectiveOperationException | RuntimeException e) {
      if (!warned) {
        warned = true;
        LOG.warn("filecommit: cannot see Parquet footers in Spark's writer (" + e
            + "); data files are read back after they are written");
      }
      return null;
    }
  }

  private static Object field(Object o, String name) throws ReflectiveOperationException {
    for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
      try {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(o);
      } catch (NoSuchFieldException e) {
        // look in the superclass
      }
    }
    throw new NoSuchFieldException(o.getClass().getName() + "." + name);
  }
}
