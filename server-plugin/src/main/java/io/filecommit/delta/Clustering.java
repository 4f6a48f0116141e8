package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.StructField;

/**
 * Liquid clustering's table state (protocol "Clustered Table"; Delta's {@code ClusteredTableUtils},
 * {@code ClusteringColumn} and {@code ClusteringMetadataDomain}): a table is clustered when its
 * protocol lists the {@code clustering} writer feature; its clustering columns are in the {@code
 * delta.clustering} domain as physical name paths, {@code {"clusteringColumns":[["col"],...]}}.
 * filecommit handles top-level clustering columns.
 */
public final class Clustering {
  /** The domain of the clustering columns. */
  public static final String DOMAIN = "delta.clustering";
  /** The {@code clusteringProvider} of files clustered by liquid clustering. */
  public static final String PROVIDER = "liquid";

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
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_UNSUPPORTED_OPERATION} for a
   *     nested or unknown clustering column, {@code FILECOMMIT_LOG_READ_FAILED} for an unreadable
   *     domain
   */
  public static List<String> columns(DeltaLog log, Snapshot snapshot) {
    if (!snapshot.exists() || !clustered(snapshot.protocol())) {
      return List.of();
    }
    String conf = DomainMetadatas.configuration(log, snapshot.version(), DOMAIN).orElse(null);
    return conf == null ? List.of() : logical(snapshot.metadata(), conf);
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
        throw ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION.error("The clustering column " + path
            + " is nested; filecommit clusters by top-level columns only");
      }
      String physical = path.get(0).asText();
      String name = null;
      for (StructField f : md.schema().fields()) {
        if (ColumnMapping.physicalName(md, f.name()).equals(physical)) {
          name = f.name();
        }
      }
      if (name == null) {
        throw ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION.error("The clustering column " + physical
            + " is not a column of the table schema");
      }
      out.add(name);
    }
    return out;
  }
}
