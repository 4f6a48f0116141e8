package io.filecommit.connect;

import io.filecommit.commands.WriteIntoDelta;
import io.filecommit.commands.WriteMode;
import io.filecommit.errors.ClientExceptions;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.read.FileCommitDataSource;
import io.filecommit.txn.InFlightWrites;
import io.filecommit.txn.TransactionId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.DataSourceUtils;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;
import org.apache.spark.sql.types.StructType;

/**
 * The data source {@code format("filecommit")} of Spark's standard reader and writer API, for any
 * Spark Connect client: reads as {@link FileCommitDataSource}; {@code df.write.format(...)
 * .mode(m).save(path)} (Spark's {@code CreatableRelationProvider}, which Spark's {@code
 * SaveIntoDataSourceCommand} calls) runs the same {@link WriteIntoDelta} as the contract's {@code
 * WriteCommand}: the same checks, invariants, group commit, conflict rules, error classes and
 * auto compaction, after the same server checks (session settings and writer options, {@link
 * ServerSettings}; allowed roots, {@link AllowedRoots}).
 *
 * <p>Writer options, as Delta's {@code DeltaOptions} names them (keys case-insensitive):
 * {@code partitionBy} (Spark sends it as {@code __partition_columns}), {@code clusterBy} (as {@code
 * __clustering_columns}: clustering columns, as {@code cluster_by}), {@code replaceWhere}, {@code
 * mergeSchema}, {@code overwriteSchema}, {@code txnAppId} + {@code txnVersion} (an idempotent write,
 * protocol "Transaction Identifiers"), {@code userMetadata} ({@code commitInfo.userMetadata}),
 * {@code partitionOverwriteMode} ({@code static} or {@code dynamic}), {@code maxRecordsPerFile},
 * {@code delta.*} table properties (as {@code table_properties} of the contract), and Parquet's
 * options. Save modes: {@code append}, {@code overwrite}, {@code error} / {@code errorifexists}
 * ({@code DELTA_TABLE_ALREADY_EXISTS} when the table exists), {@code ignore}.
 *
 * <p>Errors reach the client as the JVM types Delta raises for their classes ({@link
 * ClientExceptions}). The standard API returns nothing (Spark's {@code DataFrameWriter.save}); the contract's
 * {@code filecommit.write} returns the committed actions.
 */
public class FileCommitSource extends FileCommitDataSource implements CreatableRelationProvider {
  /** Delta's writer option: the application id of an idempotent write (with {@link #TXN_VERSION}). */
  public static final String TXN_APP_ID = "txnAppId";
  /** Delta's writer option: the application's version of an idempotent write. */
  public static final String TXN_VERSION = "txnVersion";

  /** Public no-arg constructor (Spark's {@code ServiceLoader} of data sources). */
  public FileCommitSource() {}

  /**
   * Runs a {@code save}.
   *
   * @param sqlContext the session's context
   * @param mode Spark's save mode
   * @param parameters the writer's options (case-insensitive), {@code path} the table root
   * @param data the rows
   * @return a relation over the written table's schema
   * @throws io.filecommit.errors.FileCommitException with {@link WriteIntoDelta}'s classes, {@code
   *     CANNOT_MODIFY_STATIC_CONFIG} for a server-owned setting or option, {@code
   *     FILECOMMIT_PATH_NOT_ALLOWED} outside the allowed roots, {@code DELTA_ILLEGAL_OPTION} for
   *     an option value Delta refuses
   */
  @Override
  public BaseRelation createRelation(SQLContext sqlContext, SaveMode mode,
      scala.collection.immutable.Map<String, String> parameters, org.apache.spark.sql.Dataset<Row> data) {
    // Spark passes a CaseInsensitiveMap, whose keys iterate lower-cased: read the keys as written.
    scala.collection.Map<String, String> written = parameters instanceof CaseInsensitiveMap<?> ci
        ? (scala.collection.Map<String, String>) ci.originalMap() : parameters;
    save((SparkSession) sqlContext.sparkSession(), mode, scala.jdk.javaapi.CollectionConverters.asJava(written), data);
    StructType schema = data.schema();
    return new BaseRelation() {
      @Override
      public SQLContext sqlContext() {
        return sqlContext;
      }

      @Override
      public StructType schema() {
        return schema;
      }
    };
  }

  /**
   * Resolves a read ({@link FileCommitDataSource#open(SQLContext,
   * scala.collection.immutable.Map)}), its errors of the JVM types their classes call for ({@link
   * ClientExceptions}). A {@code table} option instead of a path reads the catalog table of that
   * name at its location. The path (or the table's location) must lie inside the allowed roots and
   * the session's principal hold READ on it, as for writes.
   *
   * @param sqlContext the session's context
   * @param parameters the reader's options
   * @return the relation
   */
  @Override
  public BaseRelation createRelation(SQLContext sqlContext, scala.collection.immutable.Map<String, String> parameters) {
    try {
      return open(sqlContext, checkedRead((SparkSession) sqlContext.sparkSession(), parameters));
    } catch (FileCommitException e) {
      throw ClientExceptions.rethrow(e);
    }
  }

  /**
   * The table a read may open: a {@code table} option (a table name of the server's catalog,
   * {@link TableCommands#named}) becomes the {@code path} option of its location, checked against
   * the allowed roots, and the session's principal must hold READ on the name or the location; a
   * {@code path} must lie inside the allowed roots and the principal hold READ on it ({@link
   * AllowedRoots#allowedPath(String, SparkSession, io.filecommit.security.Privilege)}), and is
   * replaced by its resolved form (the path the check saw is the path read).
   *
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_PATH_NOT_ALLOWED} outside
   *     the roots, {@code FILECOMMIT_PERMISSION_DENIED} without READ, before anything is read
   */
  private static scala.collection.immutable.Map<String, String> checkedRead(SparkSession session,
      scala.collection.immutable.Map<String, String> parameters) {
    Map<String, String> options = new LinkedHashMap<>(scala.jdk.javaapi.CollectionConverters.asJava(parameters));
    String table = null;
    String path = null;
    for (Map.Entry<String, String> e : Map.copyOf(options).entrySet()) {
      if (e.getKey().equalsIgnoreCase("table")) {
        table = options.remove(e.getKey());
      } else if (e.getKey().equalsIgnoreCase("path")) {
        path = options.remove(e.getKey());
      }
    }
    if (table != null && !table.isEmpty()) {
      TableCommands.Named t = TableCommands.named(path, table, session, false);
      path = AllowedRoots.allowedPath(t.location(), session);
      io.filecommit.security.Access.checkTable(session, io.filecommit.security.Privilege.READ, t.qualified(),
          AllowedRoots.grantForm(path, session));
    } else if (path != null) {
      path = AllowedRoots.allowedPath(path, session, io.filecommit.security.Privilege.READ);
    }
    if (path != null) {
      options.put("path", path);
    }
    return scala.collection.immutable.Map.from(scala.jdk.javaapi.CollectionConverters.asScala(options));
  }

  /**
   * The write of a {@code save}, registered as in flight for its duration; used by {@link
   * #createRelation(SQLContext, SaveMode, scala.collection.immutable.Map, org.apache.spark.sql.Dataset)}
   * and by {@link StandardSave}.
   *
   * @param session the session
   * @param mode Spark's save mode
   * @param written the writer's options with their keys as the client wrote them (no two equal
   *     ignoring case), {@code path} the table root
   * @param data the rows
   * @throws RuntimeException the JVM types of {@link ClientExceptions} for filecommit's error classes
   */
  static void save(SparkSession session, SaveMode mode, Map<String, String> written,
      org.apache.spark.sql.Dataset<Row> data) {
    try (InFlightWrites.Scope scope = InFlightWrites.openScope()) {
      write(session, mode, written, data);
    } catch (FileCommitException e) {
      throw ClientExceptions.rethrow(e);
    }
  }

  private static void write(SparkSession session, SaveMode mode, Map<String, String> written,
      org.apache.spark.sql.Dataset<Row> data) {
    ServerSettings.check(session);
    StandardWrite w = StandardWrite.parse(written);
    ServerSettings.options(session, w.options());
    String path = AllowedRoots.allowedPath(w.path(), session, io.filecommit.security.Privilege.WRITE);
    CommandInput.ownerToCreate(session, path, w.options());
    WriteIntoDelta.run(session, (Dataset<Row>) data, path, toMode(mode), w.partitionBy(), w.options(),
        w.tableProperties(), false, w.txn(), null);
  }

  private static WriteMode toMode(SaveMode mode) {
    return switch (mode) {
      case Append -> WriteMode.APPEND;
      case Overwrite -> WriteMode.OVERWRITE;
      case ErrorIfExists -> WriteMode.ERROR_IF_EXISTS;
      case Ignore -> WriteMode.IGNORE;
    };
  }

  /**
   * A standard-API write's parts, from its options.
   *
   * @param path the {@code path} option, or null
   * @param partitionBy the partition columns ({@code partitionBy})
   * @param options writer options for {@link WriteIntoDelta} (Delta's and Parquet's)
   * @param tableProperties the {@code delta.*} options
   * @param txn the idempotent write's transaction, or null
   */
  record StandardWrite(String path, List<String> partitionBy, Map<String, String> options,
      Map<String, String> tableProperties, TransactionId txn) {
    /**
     * Splits the options of a {@code save}.
     *
     * @param parameters Spark's options (keys as the client wrote them)
     * @return the parts
     * @throws io.filecommit.errors.FileCommitException {@code DELTA_ILLEGAL_OPTION} for only one of
     *     {@code txnAppId} / {@code txnVersion}, or a {@code txnVersion} that is not a number
     */
    static StandardWrite parse(Map<String, String> parameters) {
      String path = null;
      String appId = null;
      String txnVersion = null;
      List<String> partitionBy = List.of();
      Map<String, String> options = new LinkedHashMap<>();
      Map<String, String> properties = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : parameters.entrySet()) {
        String key = e.getKey().toLowerCase(Locale.ROOT);
        if (key.equals("path")) {
          path = e.getValue();
        } else if (key.equals(DataSourceUtils.PARTITIONING_COLUMNS_KEY().toLowerCase(Locale.ROOT))) {
          partitionBy = new ArrayList<>(scala.jdk.javaapi.CollectionConverters.asJava(
              DataSourceUtils.decodePartitioningColumns(e.getValue())));
        } else if (key.equals(DataSourceUtils.CLUSTERING_COLUMNS_KEY().toLowerCase(Locale.ROOT))) {
          properties.put(io.filecommit.delta.Clustering.PROPERTY,
              io.filecommit.delta.Clustering.toProperty(clusteringColumns(e.getValue())));
        } else if (key.equals(TXN_APP_ID.toLowerCase(Locale.ROOT))) {
          appId = e.getValue();
        } else if (key.equals(TXN_VERSION.toLowerCase(Locale.ROOT))) {
          txnVersion = e.getValue();
        } else if (key.startsWith("delta.")) {
          properties.put(e.getKey(), e.getValue());
        } else {
          options.put(canonical(e.getKey()), e.getValue());
        }
      }
      return new StandardWrite(path, partitionBy, options, properties, txn(appId, txnVersion));
    }

    /**
     * The column names of Spark's {@code clusterBy} option (a JSON array of name-part arrays, as
     * Spark's {@code ClusterBySpec} writes it), dotted.
     *
     * @throws io.filecommit.errors.FileCommitException {@code DELTA_ILLEGAL_OPTION} when unreadable
     */
    static List<String> clusteringColumns(String json) {
      List<String> out = new ArrayList<>();
      try {
        for (com.fasterxml.jackson.databind.JsonNode col : io.filecommit.delta.actions.Actions.MAPPER.readTree(json)) {
          List<String> parts = new ArrayList<>();
          col.forEach(p -> parts.add(p.asText()));
          out.add(col.isArray() ? String.join(".", parts) : col.asText());
        }
      } catch (java.io.IOException | RuntimeException e) {
        throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Unreadable clustering columns '" + json + "': " + e.getMessage());
      }
      return out;
    }

    /** Delta's option names in the spelling {@link WriteIntoDelta} reads; other keys unchanged. */
    private static String canonical(String key) {
      for (String known : List.of(WriteIntoDelta.OVERWRITE_SCHEMA, WriteIntoDelta.MERGE_SCHEMA,
          WriteIntoDelta.REPLACE_WHERE, WriteIntoDelta.USER_METADATA, WriteIntoDelta.PARTITION_OVERWRITE_MODE)) {
        if (known.equalsIgnoreCase(key)) {
          return known;
        }
      }
      return key;
    }

    private static TransactionId txn(String appId, String version) {
      if (appId == null && version == null) {
        return null;
      }
      if (appId == null || version == null || appId.isBlank()) {
        throw ErrorClass.DELTA_ILLEGAL_OPTION.error("An idempotent write needs both options " + TXN_APP_ID + " and "
            + TXN_VERSION + "; got " + TXN_APP_ID + "=" + appId + ", " + TXN_VERSION + "=" + version,
            Map.of("name", appId == null || appId.isBlank() ? TXN_APP_ID : TXN_VERSION, "input", "null"));
      }
      try {
        return new TransactionId(appId, Long.parseLong(version.trim()));
      } catch (NumberFormatException e) {
        throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Invalid value '" + version + "' for option '" + TXN_VERSION
            + "': must be a number", Map.of("name", TXN_VERSION, "input", version));
      }
    }
  }
}
