package io.filecommit.catalog;

import io.filecommit.connect.AllowedRoots;
import io.filecommit.errors.ErrorClass;
import io.filecommit.security.Privilege;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.expressions.Transform;

/**
 * A CREATE / REPLACE / CREATE OR REPLACE of a Delta table turned into its {@link TableCreation} (Delta's {@code
 * DeltaCatalog.createDeltaTable}, which builds a {@code CreateDeltaTableCommand}): where the table goes (the path of
 * {@code delta.`/path`}, the location of the registered table a replace replaces, {@code LOCATION}, or the session
 * catalog's default location of a managed table; always inside the allowed roots, and with OWNER there), its
 * partition columns or {@code CLUSTER BY} columns (the {@code delta.clustering} property; any other transform is
 * refused), its table properties (Spark's reserved keys left out) and its {@code COMMENT} (the metadata's
 * {@code description}, as Delta's {@code CreateDeltaTableCommand} writes it). Nothing is written here: the creation commits
 * when Spark commits the staged table.
 */
final class TableStaging {
  private TableStaging() {}

  /**
   * A REPLACE or CREATE OR REPLACE of a table of ours.
   *
   * @param catalog the catalog
   * @param ident the table's name or path identifier
   * @param columns the declared columns
   * @param partitions the declared partitioning
   * @param properties the statement's properties ({@code provider}, {@code location}, TBLPROPERTIES, OPTIONS)
   * @param kind REPLACE or CREATE_OR_REPLACE
   * @return the staged creation
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_TABLE_ONLY_OPERATION} for another provider, or
   *     as {@link #stage}
   */
  static StagedTable replace(FileCommitCatalog catalog, Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties, TableCreation.Kind kind) {
    if (!FileCommitCatalog.ours(properties.get(TableCatalog.PROP_PROVIDER))) {
      throw ErrorClass.DELTA_TABLE_ONLY_OPERATION.error("REPLACE TABLE is supported for Delta tables only "
          + "(USING delta), not for provider " + properties.get(TableCatalog.PROP_PROVIDER),
          Map.of("operation", "REPLACE TABLE", "tableName", ident.toString()));
    }
    try {
      return stage(catalog, ident, columns, partitions, properties, kind);
    } catch (TableAlreadyExistsException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Stages the creation of a table of ours.
   *
   * @param catalog the catalog
   * @param ident the table's name or path identifier
   * @param columns the declared columns
   * @param partitions the declared partitioning
   * @param properties the statement's properties
   * @param kind what the statement asks
   * @return the staged creation
   * @throws TableAlreadyExistsException for a CREATE of a registered name
   * @throws io.filecommit.errors.FileCommitException (as the client's type) {@code FILECOMMIT_PATH_NOT_ALLOWED},
   *     {@code FILECOMMIT_PERMISSION_DENIED}, {@code DELTA_OPERATION_NOT_ALLOWED} for a partitioning that is not by
   *     columns, {@code DELTA_TABLE_ONLY_OPERATION} for a replace of a table not ours
   */
  static TableCreation stage(FileCommitCatalog catalog, Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties, TableCreation.Kind kind) throws TableAlreadyExistsException {
    try {
      return stageChecked(catalog, ident, columns, partitions, properties, kind);
    } catch (io.filecommit.errors.FileCommitException e) {
      throw io.filecommit.errors.ClientExceptions.rethrow(e);
    }
  }

  private static TableCreation stageChecked(FileCommitCatalog catalog, Identifier ident, Column[] columns,
      Transform[] partitions, Map<String, String> properties, TableCreation.Kind kind)
      throws TableAlreadyExistsException {
    String path = TableLookup.pathOf(ident);
    boolean registered = path == null && catalog.tableExists(ident);
    if (kind == TableCreation.Kind.CREATE && registered) {
      throw new TableAlreadyExistsException(ident);
    }
    String explicit = properties.get(TableCatalog.PROP_LOCATION);
    String location;
    if (path != null) {
      location = path;
    } else if (registered) {
      location = AllowedRoots.allowedPath(existingLocation(catalog, ident), FileCommitCatalog.session());
    } else if (explicit != null) {
      location = AllowedRoots.allowedPath(explicit, FileCommitCatalog.session());
    } else {
      location = AllowedRoots.allowedPath(FileCommitCatalog.session().sessionState().catalog().defaultTablePath(
          new org.apache.spark.sql.catalyst.TableIdentifier(ident.name(),
              scala.Option.apply(ident.namespace().length == 0 ? null : ident.namespace()[ident.namespace().length - 1])))
          .toString(), FileCommitCatalog.session());
    }
    // Creating, replacing: OWNER on the table (its name, for a registered one) or its location.
    FileCommitTable.check(FileCommitCatalog.session(), registered ? TableLookup.qualified(catalog, ident) : null,
        location, Privilege.OWNER);
    List<String> partitionBy = new ArrayList<>();
    List<String> clusterBy = null;
    for (Transform t : partitions) {
      if (t instanceof org.apache.spark.sql.connector.expressions.ClusterByTransform) {
        clusterBy = new ArrayList<>(); // CLUSTER BY (Delta's ClusterBySpec): a table property for the write
        for (org.apache.spark.sql.connector.expressions.NamedReference r : t.references()) {
          clusterBy.add(String.join(".", r.fieldNames()));
        }
        continue;
      }
      if (!"identity".equals(t.name()) || t.references().length != 1) {
        throw ErrorClass.DELTA_OPERATION_NOT_ALLOWED.error("Delta tables are partitioned by columns only, not by "
            + t.describe(), Map.of("operation", "PARTITIONED BY " + t.describe()));
      }
      partitionBy.add(String.join(".", t.references()[0].fieldNames()));
    }
    Map<String, String> props = tableProperties(properties);
    if (properties.get(TableCatalog.PROP_COMMENT) != null) { // COMMENT: the metadata's description
      props.put(io.filecommit.commands.WriteIntoDelta.DESCRIPTION, properties.get(TableCatalog.PROP_COMMENT));
    }
    if (clusterBy != null) {
      props.put(io.filecommit.delta.Clustering.PROPERTY, io.filecommit.delta.Clustering.toProperty(clusterBy));
    }
    return new TableCreation(catalog, ident, path != null, registered, explicit != null, location,
        TableCreation.declaredSchema(columns, partitionBy), partitionBy, props, kind);
  }

  private static String existingLocation(FileCommitCatalog catalog, Identifier ident) {
    try {
      String l = TableLookup.locationOf(catalog.sessionTable(ident));
      if (l == null) {
        throw ErrorClass.DELTA_TABLE_ONLY_OPERATION.error(ident + " is not a Delta table: REPLACE needs one",
            Map.of("operation", "REPLACE TABLE", "tableName", ident.toString()));
      }
      return l;
    } catch (NoSuchTableException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The table properties a CREATE gives the Delta table: its TBLPROPERTIES and OPTIONS, without Spark's reserved keys. */
  static Map<String, String> tableProperties(Map<String, String> properties) {
    Map<String, String> out = new LinkedHashMap<>();
    properties.forEach((k, v) -> {
      String key = k.toLowerCase(Locale.ROOT);
      if (org.apache.spark.sql.connector.catalog.CatalogV2Util.TABLE_RESERVED_PROPERTIES().contains(key)
          || key.startsWith("option.") || key.equals("is_managed_location")) {
        return;
      }
      out.put(k, v);
    });
    return out;
  }
}
