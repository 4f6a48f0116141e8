package io.filecommit.files;

import io.filecommit.conf.FileCommitConf;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.spark.SparkEnv;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.SparkHadoopWriterUtils;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.DataSourceUtils$;
import org.apache.spark.sql.execution.datasources.FileFormatWriter$;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.WriteJobDescription;
import org.apache.spark.sql.execution.datasources.WriteJobStatsTracker;
import org.apache.spark.sql.execution.datasources.WriteTaskResult;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The small-write fast path: a write whose rows are already on the driver (a Spark Connect {@code
 * LocalRelation}, e.g. {@code spark.createDataFrame(rows)}) is written by the driver itself, with
 * no Spark job. It runs exactly the code a write task runs: Spark's {@code
 * FileFormatWriter.executeTask} (the single-directory or dynamic-partition data writer, Spark's
 * {@code ParquetOutputWriter} with the Hadoop configuration {@code ParquetFileFormat.prepareWrite}
 * builds, {@code maxRecordsPerFile}) through the same {@link DelayedCommitProtocol} (file names
 * {@code part-00000-<uuid>.c000.snappy.parquet}, partition directories, {@code _change_data/}
 * routing, footer statistics). The rows are the ones Spark's optimizer computed on the driver
 * (its {@code ConvertToLocalRelation} rule evaluates the normalizing projection — generated
 * columns, NOT NULL and CHECK rules, column order — over the local rows), so every row rule is
 * applied as in the job.
 *
 * <p>Falls back to the job ({@link ParquetJobWriter}) — returns false before writing anything —
 * when the optimized plan is not a local relation (any input read from files or tables, a plan
 * the optimizer does not fold, {@code ConvertToLocalRelation} excluded), when the rows exceed
 * {@link FileCommitConf#SMALL_WRITE_MAX_ROWS} (default 10,000; 0 turns the fast path off) or the
 * estimated size exceeds {@link FileCommitConf#SMALL_WRITE_MAX_BYTES} (default 8 MiB). The
 * caller also keeps column-mapped tables on the job path.
 */
public final class DriverSideWrite {

  private DriverSideWrite() {}

  /**
   * The rows of {@code data} when its optimized plan is a local relation within the thresholds.
   * Optimizing evaluates the plan's row rules on the driver: a violating row throws here, as the
   * job would (the caller translates it with {@code Constraints.translate}).
   *
   * @param data the normalized input
   * @return the optimized local relation, or null: use the job
   */
  static LocalRelation local(Dataset<Row> data) {
    long maxRows = FileCommitConf.SMALL_WRITE_MAX_ROWS.longValue();
    LogicalPlan analyzed = data.queryExecution().analyzed();
    if (maxRows <= 0 || !isLocal(analyzed)) {
      return null;
    }
    LocalRelation same = unchanged(analyzed);
    LogicalPlan plan = same != null ? same : data.queryExecution().optimizedPlan();
    if (!(plan instanceof LocalRelation lr) || lr.isStreaming() || lr.data().size() > maxRows) {
      return null;
    }
    if (lr.stats().sizeInBytes().compareTo(scala.math.BigInt.apply(FileCommitConf.SMALL_WRITE_MAX_BYTES.longValue())) > 0) {
      return null;
    }
    return lr;
  }

  /**
   * The local relation under a normalization that changes nothing: a projection whose every column
   * is the relation's own column, in order, under its own name (no cast, no rule, no generated
   * value, no metadata) — what the optimizer would return, without running it. Otherwise null.
   */
  static LocalRelation unchanged(LogicalPlan analyzed) {
    if (!(analyzed instanceof org.apache.spark.sql.catalyst.plans.logical.Project p)
        || !(p.child() instanceof LocalRelation lr)) {
      return null;
    }
    List<org.apache.spark.sql.catalyst.expressions.NamedExpression> columns = CollectionConverters.asJava(p.projectList());
    List<Attribute> output = CollectionConverters.asJava(lr.output());
    if (columns.size() != output.size()) {
      return null;
    }
    for (int i = 0; i < columns.size(); i++) {
      org.apache.spark.sql.catalyst.expressions.NamedExpression c = columns.get(i);
      Object inner = c;
      if (c instanceof org.apache.spark.sql.catalyst.expressions.Alias a) {
        inner = a.child();
      }
      if (!(inner instanceof org.apache.spark.sql.catalyst.expressions.AttributeReference ref)
          || !ref.exprId().equals(output.get(i).exprId()) || !c.name().equals(ref.name())
          || !c.metadata().equals(output.get(i).metadata())) {
        return null;
      }
    }
    return lr;
  }

  /** Whether every leaf of the analyzed plan is a local relation (cheap: no optimization). */
  static boolean isLocal(LogicalPlan analyzed) {
    return CollectionConverters.asJava(analyzed.collectLeaves()).stream().allMatch(l -> l instanceof LocalRelation);
  }

  /**
   * Writes the local rows under {@code outputPath} as one task of a job that has no Spark job: set
   * up the job, run Spark's task-side writer on the driver, commit the task and the job; on any
   * failure the committer's {@code abortJob} runs (the task's files are deleted by {@code
   * abortTask}).
   *
   * @param session the session (SQL and Parquet settings)
   * @param lr the optimized local relation ({@link #local})
   * @param outputPath the table root
   * @param partitionColumns partition columns in directory order (matched case-insensitively)
   * @param committer the commit protocol
   * @param options Parquet writer options, as the job path takes them
   * @throws RuntimeException what Spark's writer throws (after {@code abortJob})
   */
  static void write(SparkSession session, LocalRelation lr, String outputPath, List<String> partitionColumns,
      FileCommitProtocol committer, Map<String, String> options) {
    List<Attribute> output = CollectionConverters.asJava(lr.output());
    List<Attribute> partitionAttrs = new ArrayList<>();
    for (String p : partitionColumns) {
      output.stream().filter(a -> a.name().equalsIgnoreCase(p)).findFirst().ifPresent(partitionAttrs::add);
    }
    List<Attribute> dataColumns = output.stream().filter(a -> !partitionAttrs.contains(a)).toList();
    scala.collection.immutable.Map<String, String> scalaOptions =
        scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(options));
    Job job;
    try {
      // Job.getInstance copies the session's shared conf: the one copy this write makes
      job = Job.getInstance(io.filecommit.delta.DeltaLogCache.sessionHadoopConf(session));
      Configuration hadoopConf = io.filecommit.delta.DeltaLogCache.setOptions(job.getConfiguration(), options);
      io.filecommit.delta.storage.LocalPermissions.use(hadoopConf, new Path(outputPath).getFileSystem(hadoopConf));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    job.setOutputKeyClass(Void.class);
    job.setOutputValueClass(InternalRow.class);
    FileOutputFormat.setOutputPath(job, new Path(outputPath));
    DataSourceUtils$.MODULE$.mergeWriteOptionsIntoHadoopConf(scalaOptions, job.getConfiguration());
    StructType dataSchema = DataTypeUtils.fromAttributes(CollectionConverters.asScala(dataColumns).toSeq());
    ParquetFileFormat format = committer instanceof DelayedCommitProtocol
        ? new FooterCapturingParquetFormat() : new ParquetFileFormat();
    DataSourceUtils$.MODULE$.verifySchema(format, dataSchema, false);
    DataSourceUtils$.MODULE$.checkFieldNames(format, dataSchema);
    CaseInsensitiveMap<String> ci = org.apache.spark.sql.catalyst.util.CaseInsensitiveMap$.MODULE$.apply(scalaOptions);
    OutputWriterFactory factory = format.prepareWrite(session, job, ci, dataSchema);
    String uuid = UUID.randomUUID().toString();
    long maxRecords = options.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase("maxRecordsPerFile"))
        .map(e -> Long.parseLong(e.getValue().trim())).findFirst().orElse(session.sessionState().conf().maxRecordsPerFile());
    String timeZone = options.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase("timeZone"))
        .map(Map.Entry::getValue).findFirst().orElse(session.sessionState().conf().sessionLocalTimeZone());
    WriteJobDescription description = new WriteJobDescription(uuid, new SerializableConfiguration(job.getConfiguration()),
        factory, lr.output(), CollectionConverters.asScala(dataColumns).toList(),
        CollectionConverters.asScala(partitionAttrs).toList(), Option.empty(), outputPath,
        scala.collection.immutable.Map$.MODULE$.empty(), maxRecords, timeZone,
        CollectionConverters.asScala(List.<WriteJobStatsTracker>of()).toList());
    committer.setupJob(job);
    try {
      job.getConfiguration().set("spark.sql.sources.writeJobUUID", uuid);
      WriteTaskResult result = FileFormatWriter$.MODULE$.executeTask(description,
          SparkHadoopWriterUtils.createJobTrackerID(new Date()), 0, 0, 0, committer,
          CollectionConverters.asScala(clustered(lr, partitionAttrs)), Option.empty());
      committer.onTaskCommit(result.commitMsg());
      committer.commitJob(job, CollectionConverters.asScala(List.of(result.commitMsg())).toList());
    } catch (RuntimeException | Error e) {
      committer.abortJob(job);
      throw e;
    }
  }

  /** The rows, those of one partition next to each other (the dynamic-partition writer opens one file per run). */
  private static java.util.Iterator<InternalRow> clustered(LocalRelation lr, List<Attribute> partitionAttrs) {
    List<InternalRow> rows = CollectionConverters.asJava(lr.data());
    if (partitionAttrs.isEmpty()) {
      return rows.iterator();
    }
    UnsafeProjection key = UnsafeProjection.create(CollectionConverters.asScala(List.<org.apache.spark.sql.catalyst
        .expressions.Expression>copyOf(partitionAttrs)).toSeq(), lr.output());
    Map<UnsafeRow, List<InternalRow>> groups = new LinkedHashMap<>();
    for (InternalRow r : rows) {
      groups.computeIfAbsent(key.apply(r).copy(), k -> new ArrayList<>()).add(r);
    }
    return groups.values().stream().flatMap(List::stream).iterator();
  }
}
