package io.filecommit.read;

import io.filecommit.delta.Clustering;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.ErrorClass;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The rows of Delta's {@code DESCRIBE HISTORY} and {@code DESCRIBE DETAIL} for a table root, in
 * Delta's columns (Delta's {@code DescribeDeltaHistoryCommand}, whose rows are its {@code
 * CommitInfo}s, protocol "Commit Provenance Information"; {@code DescribeDeltaDetailCommand}, whose
 * row is its {@code TableDetail}). Shared by the SQL statements ({@code catalog}) and the DeltaTable
 * API over Spark Connect ({@code connect}), which check the path (allowed roots, privileges) before
 * they ask.
 */
public final class TableDescriptions {
  private static final StructType JOB = new StructType()
      .add("jobId", DataTypes.StringType, true)
      .add("jobName", DataTypes.StringType, true)
      .add("jobRunId", DataTypes.StringType, true)
      .add("runId", DataTypes.StringType, true)
      .add("jobOwnerId", DataTypes.StringType, true)
      .add("triggerType", DataTypes.StringType, true);
  private static final StructType NOTEBOOK = new StructType().add("notebookId", DataTypes.StringType, true);
  private static final DataType STRING_MAP = DataTypes.createMapType(DataTypes.StringType, DataTypes.StringType);

  /**
   * DESCRIBE HISTORY's columns (Delta's {@code CommitInfo} as its history lists it): {@code version}
   * (long), {@code timestamp} (timestamp), {@code userId}, {@code userName}, {@code operation},
   * {@code operationParameters} (map of strings), {@code job}, {@code notebook} (structs, null
   * here), {@code clusterId}, {@code readVersion} (long), {@code isolationLevel}, {@code
   * isBlindAppend} (boolean), {@code operationMetrics} (map of strings), {@code userMetadata},
   * {@code engineInfo}.
   */
  public static final StructType HISTORY = new StructType()
      .add("version", DataTypes.LongType, true)
      .add("timestamp", DataTypes.TimestampType, true)
      .add("userId", DataTypes.StringType, true)
      .add("userName", DataTypes.StringType, true)
      .add("operation", DataTypes.StringType, true)
      .add("operationParameters", STRING_MAP, true)
      .add("job", JOB, true)
      .add("notebook", NOTEBOOK, true)
      .add("clusterId", DataTypes.StringType, true)
      .add("readVersion", DataTypes.LongType, true)
      .add("isolationLevel", DataTypes.StringType, true)
      .add("isBlindAppend", DataTypes.BooleanType, true)
      .add("operationMetrics", STRING_MAP, true)
      .add("userMetadata", DataTypes.StringType, true)
      .add("engineInfo", DataTypes.StringType, true);

  /**
   * DESCRIBE DETAIL's columns (Delta's {@code TableDetail}): {@code format}, {@code id}, {@code
   * name}, {@code description}, {@code location}, {@code createdAt}, {@code lastModified}
   * (timestamps), {@code partitionColumns}, {@code clusteringColumns} (arrays of strings), {@code
   * numFiles}, {@code sizeInBytes} (longs; bytes), {@code properties} (map of strings), {@code
   * minReaderVersion}, {@code minWriterVersion} (ints), {@code tableFeatures} (array of strings).
   */
  public static final StructType DETAIL = new StructType()
      .add("format", DataTypes.StringType, true)
      .add("id", DataTypes.StringType, true)
      .add("name", DataTypes.StringType, true)
      .add("description", DataTypes.StringType, true)
      .add("location", DataTypes.StringType, true)
      .add("createdAt", DataTypes.TimestampType, true)
      .add("lastModified", DataTypes.TimestampType, true)
      .add("partitionColumns", DataTypes.createArrayType(DataTypes.StringType), true)
      .add("clusteringColumns", DataTypes.createArrayType(DataTypes.StringType), true)
      .add("numFiles", DataTypes.LongType, true)
      .add("sizeInBytes", DataTypes.LongType, true)
      .add("properties", STRING_MAP, true)
      .add("minReaderVersion", DataTypes.IntegerType, true)
      .add("minWriterVersion", DataTypes.IntegerType, true)
      .add("tableFeatures", DataTypes.createArrayType(DataTypes.StringType), true);

  private TableDescriptions() {}

  /**
   * The table's commits, newest first, in {@link #HISTORY}'s columns (provenance this server does
   * not record is null).
   *
   * @param session the session
   * @param path the table root (already checked by the caller)
   * @param limit at most this many commits (the newest), or null for all
   * @return the rows
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MISSING_DELTA_TABLE} when the
   *     path holds no Delta table, {@code FILECOMMIT_LOG_READ_FAILED} when its log cannot be read
   */
  public static List<Row> history(SparkSession session, String path, Integer limit) {
    Dataset<Row> h = session.baseRelationToDataFrame(
        FileCommitDataSource.relation(session, path, Map.of("history", "true")));
    List<Column> cols = new ArrayList<>();
    for (StructField f : HISTORY.fields()) {
      boolean has = Arrays.asList(h.columns()).contains(f.name());
      cols.add((has ? functions.col(f.name()) : functions.lit(null)).cast(f.dataType()).as(f.name()));
    }
    Dataset<Row> out = h.select(cols.toArray(new Column[0])).orderBy(functions.col("version").desc());
    if (limit != null) {
      out = out.limit(limit);
    }
    return out.collectAsList();
  }

  /**
   * The one row of {@link #DETAIL} for the table's latest snapshot.
   *
   * @param session the session
   * @param path the table root (already checked by the caller)
   * @param name the table's qualified catalog name, or null for a table by path
   * @return the row
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MISSING_DELTA_TABLE} when the
   *     path holds no Delta table
   */
  public static Row detail(SparkSession session, String path, String name) {
    DeltaLog log = DeltaLog.forTable(session, path);
    Snapshot snap = log.snapshot();
    if (!snap.exists()) {
      throw ErrorClass.DELTA_MISSING_DELTA_TABLE.error(path + " is not a Delta table (no _delta_log commits)",
          Map.of("tableName", path));
    }
    Metadata md = snap.metadata();
    long size = 0;
    for (AddFile a : snap.allFiles()) {
      size += a.size();
    }
    List<String> features = new ArrayList<>(TableFeatureNames.supported(snap.protocol()));
    return RowFactory.create("delta", md.id(), name, md.description(), log.tablePath().toString(),
        md.createdTime() == null ? null : new Timestamp(md.createdTime()), new Timestamp(snap.timestamp()),
        seq(md.partitionColumns() == null ? List.of() : md.partitionColumns()), seq(Clustering.columns(log, snap)),
        (long) snap.allFiles().size(), size,
        scala.jdk.javaapi.CollectionConverters.asScala(md.configuration() == null ? Map.<String, String>of()
            : md.configuration()),
        snap.protocol().minReaderVersion(), snap.protocol().minWriterVersion(), seq(features));
  }

  private static scala.collection.immutable.Seq<String> seq(List<String> values) {
    return scala.jdk.javaapi.CollectionConverters.asScala(values).toList();
  }
}
