package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Liquid clustering's table state (protocol "Clustered Table"; Delta's {@code ClusteredTableUtils},
 * {@code ClusteringColumn} and {@code ClusteringMetadataDomain}): a table is clustered when its
 * protocol lists the {@code clustering} writer feature; its clustering columns are in the {@code
 * delta.clustering} domain as physical name paths, {@code
 * {"clusteringColumns":[["col"],...],"domainName":"delta.clustering"}} (the shape Delta's {@code
 * ClusteringMetadataDomain} serializes).
 * filecommit handles top-level clustering columns.
 */
public final class Clustering {
  /** The domain of the clustering columns. */
  public static final String DOMAIN = "delta.clustering";
  /** The {@code clusteringProvider} of files clustered by liquid clustering. */
  public static final String PROVIDER = "liquid";
  /**
   * The table property that carries the clustering columns of a table being created, a JSON array
   * of logical names (Delta's {@code ClusteredTableUtils.PROP_CLUSTERING_COLUMNS}); never stored in
   * {@code metaData.configuration}: the columns go to the {@link #DOMAIN} domain.
   */
  public static final String PROPERTY = "clusteringColumns";
  /** At most this many clustering columns (Delta's {@code clusteredTable.numClusteringColumnsLimit}). */
  public static final int MAX_COLUMNS = 4;
  /** The writer features a clustered table needs (protocol "Clustered Table"). */
  public static final java.util.Set<String> FEATURES = java.util.Set.of("clustering", "domainMetadata");

  private Clustering() {}

  /**
   * Whether the protocol makes the table a clustered table.
   *
   * @param protocol a protocol, or null
   * @return true when it lists {@code clustering}
   */
  public static boolean clustered(Protocol protocol) {
    return protocol != null && TableFeatures.writerFeatures(protocol).contains("clustering");
  }

  /**
   * The clustering columns of a table version, logical names in the domain's order.
   *
   * @param log the table's log
   * @param snapshot an existing snapshot
   * @return the columns; empty when the table is not clustered or has no clustering columns
   * @throws io.filecommit.errors.FileCommitException {@code
   *     DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION} for a nested clustering column, {@code
   *     DELTA_COLUMN_NOT_FOUND_IN_SCHEMA} for one the schema lacks, {@code
   *     FILECOMMIT_LOG_READ_FAILED} for an unreadable domain
   */
  public static List<String> columns(DeltaLog log, Snapshot snapshot) {
    if (!snapshot.exists() || !clustered(snapshot.protocol())) {
      return List.of();
    }
    String conf = DomainMetadatas.configuration(log, snapshot.version(), DOMAIN).orElse(null);
    return conf == null ? List.of() : logical(snapshot.metadata(), conf);
  }

  /**
   * The {@link #PROPERTY} value of clustering columns.
   *
   * @param columns logical names
   * @return a JSON array of the names
   */
  public static String toProperty(List<String> columns) {
    return Actions.MAPPER.valueToTree(columns).toString();
  }

  /**
   * The clustering columns of a {@link #PROPERTY} value.
   *
   * @param property a JSON array of names, or null
   * @return the names; null when {@code property} is null
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_ILLEGAL_OPTION} when it is not a
   *     JSON array of strings
   */
  public static List<String> fromProperty(String property) {
    if (property == null) {
      return null;
    }
    List<String> out = new ArrayList<>();
    try {
      JsonNode n = Actions.MAPPER.readTree(property);
      if (n == null || !n.isArray()) {
        throw new IOException("not a JSON array");
      }
      for (JsonNode c : n) {
        if (!c.isTextual()) {
          throw new IOException("not a string: " + c);
        }
        out.add(c.asText());
      }
    } catch (IOException e) {
      throw ErrorClass.DELTA_ILLEGAL_OPTION.error("Table property " + PROPERTY + " must be a JSON array of "
          + "column names, got '" + property + "': " + e.getMessage(), Map.of("name", PROPERTY, "input", property));
    }
    return out;
  }

  /**
   * The {@link #DOMAIN} domain metadata of clustering columns, checked as Delta's {@code
   * ClusteringColumn} and {@code ClusteredTableUtils.validateClusteringColumnsInStatsSchema} do:
   * top-level columns of the schema (matched case-insensitively), of a type with data skipping
   * statistics (numeric, date, timestamp, timestamp_ntz, string), within the statistics columns
   * ({@code delta.dataSkippingNumIndexedCols} leaf columns), at most {@link #MAX_COLUMNS}, no
   * partition columns on the table. The domain holds physical names (column mapping).
   *
   * @param md the metadata the table has after the commit
   * @param columns logical names; empty: clustered by no column ({@code CLUSTER BY NONE})
   * @return the domain metadata action
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS},
   *     {@code DELTA_CLUSTER_BY_WITH_PARTITIONED_BY}, {@code DELTA_COLUMN_NOT_FOUND_IN_SCHEMA},
   *     {@code DELTA_DUPLICATE_COLUMNS_FOUND}, {@code DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED},
   *     {@code DELTA_CLUSTERING_COLUMN_MISSING_STATS}; {@code
   *     DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION} for a nested column
   */
  public static io.filecommit.delta.actions.DomainMetadata domain(Metadata md, List<String> columns) {
    if (columns.size() > MAX_COLUMNS) {
      throw ErrorClass.DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS.error("CLUSTER BY supports up to " + MAX_COLUMNS
          + " clustering columns, got " + columns.size() + ": " + columns,
          Map.of("numColumnsLimit", Integer.toString(MAX_COLUMNS), "actualNumColumns", Integer.toString(columns.size())));
    }
    if (!columns.isEmpty() && md.partitionColumns() != null && !md.partitionColumns().isEmpty()) {
      throw ErrorClass.DELTA_CLUSTER_BY_WITH_PARTITIONED_BY.error("Clustering columns " + columns
          + " and partition columns " + md.partitionColumns() + " cannot both be specified");
    }
    int indexed = TableConfig.DATA_SKIPPING_NUM_INDEXED_COLS.fromMetadata(md);
    List<List<String>> physical = new ArrayList<>();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (String c : columns) {
      StructField field = null;
      int leavesBefore = 0;
      int leavesBeforeField = 0;
      for (StructField f : md.schema().fields()) {
        if (field == null && f.name().equalsIgnoreCase(c)) {
          field = f;
          leavesBeforeField = leavesBefore;
        }
        leavesBefore += leafCount(f.dataType());
      }
      if (field == null) {
        if (c != null && c.contains(".")) {
          throw ErrorClass.DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION.error("The clustering column " + c
              + " is nested or unknown; filecommit clusters by top-level columns only",
              Map.of("operation", "CLUSTER BY", "fieldName", c));
        }
        throw ErrorClass.DELTA_COLUMN_NOT_FOUND_IN_SCHEMA.error("Clustering column " + c + " is not in the table "
            + "schema " + md.schema().simpleString(), Map.of("columnName", String.valueOf(c),
            "tableSchema", md.schema().simpleString()));
      }
      if (!seen.add(field.name().toLowerCase(java.util.Locale.ROOT))) {
        throw ErrorClass.DELTA_DUPLICATE_COLUMNS_FOUND.error("Duplicate clustering column " + field.name()
            + " in " + columns, Map.of("coltype", "clustering", "duplicateCols", field.name()));
      }
      if (!skippingEligible(field.dataType())) {
        throw ErrorClass.DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED.error("CLUSTER BY is not supported "
            + "because the column " + field.name() + " : " + field.dataType().sql() + " does not support data "
            + "skipping", Map.of("columnsWithDataTypes", field.name() + " : " + field.dataType().sql()));
      }
      if (indexed >= 0 && leavesBeforeField + 1 > indexed) {
        throw ErrorClass.DELTA_CLUSTERING_COLUMN_MISSING_STATS.error("Clustering requires statistics on the "
            + "clustering column " + field.name() + ", but only the first " + indexed + " columns have them ("
            + TableConfig.DATA_SKIPPING_NUM_INDEXED_COLS.key() + ")", Map.of("columns", field.name()));
      }
      physical.add(List.of(ColumnMapping.physicalName(md, field.name())));
    }
    return new io.filecommit.delta.actions.DomainMetadata(DOMAIN, configuration(Actions.MAPPER.valueToTree(physical)),
        false);
  }

  /**
   * The {@link #DOMAIN} domain of a table clustered by no column, {@code
   * {"clusteringColumns":[],"domainName":"delta.clustering"}}
   * (Delta's {@code ClusteringMetadataDomain.fromClusteringColumns(Seq.empty)}).
   *
   * @return the domain metadata action
   */
  public static io.filecommit.delta.actions.DomainMetadata none() {
    return new io.filecommit.delta.actions.DomainMetadata(DOMAIN, "{\"clusteringColumns\":[],\"domainName\":\"" + DOMAIN + "\"}",
        false);
  }

  /**
   * Whether a table version has the {@link #DOMAIN} domain (not removed).
   *
   * @param log the table's log
   * @param snapshot a snapshot, existing or not
   * @return true when the domain is there
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOG_READ_FAILED}
   */
  public static boolean hasDomain(DeltaLog log, Snapshot snapshot) {
    return snapshot.exists() && TableFeatures.writerFeatures(snapshot.protocol()).contains("domainMetadata")
        && DomainMetadatas.configuration(log, snapshot.version(), DOMAIN).isPresent();
  }

  /**
   * The {@link #DOMAIN} action RESTORE commits (Delta's {@code
   * DomainMetadataUtils.handleDomainMetadataForRestoreTable}): when the latest version has the
   * domain, the restored version's clustering columns (its domain's physical name paths), or none
   * when that version is not clustered or has no domain; when the latest version lacks the domain
   * but the restored one has it, that domain marked removed; otherwise nothing. Other domains (row
   * tracking's high-water mark) are left as the latest version has them.
   *
   * @param log the table's log
   * @param latest the latest snapshot
   * @param restored the snapshot restored
   * @return the action to commit, or empty
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_LOG_READ_FAILED}
   */
  public static java.util.Optional<io.filecommit.delta.actions.DomainMetadata> forRestore(DeltaLog log,
      Snapshot latest, Snapshot restored) {
    String target = TableFeatures.writerFeatures(restored.protocol()).contains("domainMetadata")
        ? DomainMetadatas.configuration(log, restored.version(), DOMAIN).orElse(null) : null;
    if (!hasDomain(log, latest)) {
      return target == null ? java.util.Optional.empty()
          : java.util.Optional.of(new io.filecommit.delta.actions.DomainMetadata(DOMAIN, target, true));
    }
    if (target == null || !clustered(restored.protocol())) {
      return java.util.Optional.of(none());
    }
    JsonNode cols;
    try {
      cols = Actions.MAPPER.readTree(target).get("clusteringColumns");
    } catch (IOException e) {
      throw ErrorClass.FILECOMMIT_LOG_READ_FAILED.error("Unreadable " + DOMAIN + " domain metadata '" + target
          + "': " + e.getMessage());
    }
    String conf = configuration(cols == null ? Actions.MAPPER.createArrayNode() : cols);
    return java.util.Optional.of(new io.filecommit.delta.actions.DomainMetadata(DOMAIN, conf, false));
  }

  /**
   * The domain's configuration for the given physical name paths: Delta's {@code
   * ClusteringMetadataDomain} also serializes its {@code domainName}, so the bytes equal Delta's.
   */
  private static String configuration(JsonNode physicalPaths) {
    return Actions.MAPPER.createObjectNode().<com.fasterxml.jackson.databind.node.ObjectNode>set(
        "clusteringColumns", physicalPaths).put("domainName", DOMAIN).toString();
  }

  /** Delta's {@code SkippingEligibleDataType}: the types data skipping statistics are kept for. */
  static boolean skippingEligible(DataType t) {
    return t instanceof NumericType || t instanceof DateType || t instanceof TimestampType
        || t instanceof TimestampNTZType || t instanceof StringType;
  }

  /**
   * The number of leaf columns of a type (a struct counts its fields' leaves, any other type 1), as
   * Delta counts columns against {@code delta.dataSkippingNumIndexedCols}.
   *
   * @param t the type
   * @return the count, at least 1 for a non-struct type
   */
  public static int leafCount(DataType t) {
    if (t instanceof StructType s) {
      int c = 0;
      for (StructField f : s.fields()) {
        c += leafCount(f.dataType());
      }
      return c;
    }
    return 1;
  }

  /** The logical names of the domain's physical name paths. */
  static List<String> logical(Metadata md, String configuration) {
    List<String> out = new ArrayList<>();
    JsonNode cols;
    try {
      cols = Actions.MAPPER.readTree(configuration).get("clusteringColumns");
    } catch (IOException e) {
      throw ErrorClass.FILECOMMIT_LOG_READ_FAILED.error("Unreadable " + DOMAIN + " domain metadata '" + configuration
          + "': " + e.getMessage());
    }
    if (cols == null) {
      return out;
    }
    for (JsonNode path : cols) {
      if (path.size() != 1) {
        throw ErrorClass.DELTA_UNSUPPORTED_NESTED_FIELD_IN_OPERATION.error("The clustering column " + path
            + " is nested; filecommit clusters by top-level columns only",
            Map.of("operation", "CLUSTER BY", "fieldName", path.toString()));
      }
      String physical = path.get(0).asText();
      String name = null;
      for (StructField f : md.schema().fields()) {
        if (ColumnMapping.physicalName(md, f.name()).equals(physical)) {
          name = f.name();
        }
      }
      if (name == null) {
        throw ErrorClass.DELTA_COLUMN_NOT_FOUND_IN_SCHEMA.error("The clustering column " + physical
            + " is not a column of the table schema " + md.schema().simpleString(),
            Map.of("columnName", physical, "tableSchema", md.schema().simpleString()));
      }
      out.add(name);
    }
    return out;
  }
}
