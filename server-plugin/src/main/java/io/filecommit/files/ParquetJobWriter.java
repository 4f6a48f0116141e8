package io.filecommit.files;

import io.filecommit.files.nativewriter.TaggedJobs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SQLExecution$;
import org.apache.spark.sql.execution.datasources.FileFormatWriter$;
import org.apache.spark.sql.execution.datasources.FileFormatWriter;
import org.apache.spark.sql.execution.datasources.WriteJobStatsTracker;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Runs one Spark write job of a DataFrame as Parquet files through Spark's own {@code
 * FileFormatWriter}, with the commit protocol the caller built: a {@link DelayedCommitProtocol} for
 * Delta tables (via {@code TransactionalWrite}, as Delta's {@code TransactionalWrite.writeFiles}) or a
 * {@code ManifestFileCommitProtocol} for batch-id sinks (as Spark's {@code FileStreamSink.addBatch}). No Parquet is
 * written by hand and nothing is staged: the committer decides where every file lands and what gets
 * committed.
 */
public final class ParquetJobWriter {
  private ParquetJobWriter() {}

  /**
   * Writes {@code data} under {@code outputPath} as one job (setupJob, tasks, commitJob or abortJob)
   * inside a new SQL execution, so the job shows in Spark's UI and metrics.
   *
   * @param session the session that runs the job
   * @param data the rows; its analyzed output is the written schema (partition columns included)
   * @param outputPath the job's output root (table root or sink root), as given to the committer
   * @param partitionColumns names of partition columns in directory order, matched
   *     case-insensitively against the data's columns (first match); unknown names are ignored, so
   *     callers validate them first
   * @param committer the commit protocol of this job
   * @param options Spark Parquet writer options (compression, ...); also overlaid on the Hadoop
   *     configuration
   * @param description the SQL execution's description
   * @throws RuntimeException (Spark's {@code SparkException} and others) when the job fails; the
   *     committer's {@code abortJob} has run by then, and no task of the job is still running (a
   *     task that was finishing when the job failed has ended, so its files can be found)
   */
  public static void write(SparkSession session, Dataset<Row> data, String outputPath, List<String> partitionColumns,
      FileCommitProtocol committer, Map<String, String> options, String description) {
    QueryExecution qe = data.queryExecution();
    scala.collection.immutable.Seq<Attribute> output = qe.analyzed().output();
    List<Attribute> partitionAttrs = new ArrayList<>();
    for (String p : partitionColumns) {
      for (Attribute a : CollectionConverters.asJava(output)) {
        if (a.name().equalsIgnoreCase(p)) {
          partitionAttrs.add(a);
          break;
        }
      }
    }
    scala.collection.immutable.Map<String, String> scalaOptions =
        scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(options));
    Configuration hadoopConf = io.filecommit.delta.DeltaLogCache.sessionHadoopConfWithOptions(session, options);
    FileFormatWriter.OutputSpec spec = new FileFormatWriter.OutputSpec(
        outputPath, scala.collection.immutable.Map$.MODULE$.empty(), output);
    String tag = "filecommit-" + java.util.UUID.randomUUID();
    session.sparkContext().addJobTag(tag);
    try {
      run(session, qe, output, partitionAttrs, committer, spec, hadoopConf, scalaOptions, description);
    } catch (RuntimeException | Error e) {
      TaggedJobs.awaitTasks(session, tag);
      throw e;
    } finally {
      session.sparkContext().removeJobTag(tag);
    }
  }

  private static void run(SparkSession session, QueryExecution qe, scala.collection.immutable.Seq<Attribute> output,
      List<Attribute> partitionAttrs, FileCommitProtocol committer, FileFormatWriter.OutputSpec spec,
      Configuration hadoopConf, scala.collection.immutable.Map<String, String> scalaOptions, String description) {
    SQLExecution$.MODULE$.withNewExecutionId(qe, Option.apply(description), () ->
        FileFormatWriter$.MODULE$.write(
            session,
            qe.executedPlan(),
            committer instanceof DelayedCommitProtocol ? new FooterCapturingParquetFormat() : new ParquetFileFormat(),
            committer,
            spec,
            hadoopConf,
            CollectionConverters.asScala(partitionAttrs).toSeq(),
            Option.empty(),
            CollectionConverters.asScala(List.<WriteJobStatsTracker>of()).toSeq(),
            scalaOptions,
            0,
            FileFormatWriter$.MODULE$.write$default$12()));
  }
}
