package io.filecommit.catalog;

import io.filecommit.connect.AllowedRoots;
import io.filecommit.errors.ErrorClass;
import io.filecommit.security.Privilege;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.DelegatingCatalogExtension;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;

/**
 * The {@code spark_catalog} plugin (Delta's {@code DeltaCatalog}): Spark's session catalog (Hive
 * metastore or in-memory) keeps the names, the Delta log keeps everything else. Set it with {@code
 * spark.sql.catalog.spark_catalog=io.filecommit.catalog.FileCommitCatalog} (a static setting).
 *
 * <ul>
 *   <li>A table whose provider is {@code delta} or {@code filecommit} loads as a {@link
 *       FileCommitTable} at its location; other tables load as the session catalog has them.
 *   <li>{@code delta.`/path`} (and {@code filecommit.`/path`}) name the table at that path; the
 *       path goes through the server's allowed roots ({@code spark.filecommit.allowedRoots}).
 *   <li>{@code name@v3} (Delta's time-travel suffix), {@code VERSION AS OF} and {@code TIMESTAMP AS
 *       OF} load the table pinned to that version or timestamp. Names are resolved by {@link
 *       TableLookup}.
 *   <li>CREATE TABLE / CTAS / REPLACE / CREATE OR REPLACE with {@code USING delta} write the table's
 *       first (or replacing) commit with the plugin's {@code WriteIntoDelta} ({@link TableCreation},
 *       staged by {@link TableStaging}: location, partitioning or clustering, table properties),
 *       and register the name with the provider and, when {@code LOCATION} was given, the location
 *       (an external table), else the session catalog's default location (a managed table, whose
 *       files {@code DROP TABLE} deletes, as Spark does for managed tables).
 *   <li>ALTER TABLE ... SET TBLPROPERTIES commits through {@code SetTablePropertiesCommand}, ADD /
 *       DROP CONSTRAINT (Delta's {@code delta.constraints.<name>}) through {@code
 *       CheckConstraintCommand}, which checks the table's rows first; ADD
 *       COLUMNS commits a schema change through {@code WriteIntoDelta}'s schema evolution ({@link
 *       TableChanges}).
 * </ul>
 *
 * Errors carry the plugin's (Delta's) error classes: {@code DELTA_TABLE_ALREADY_EXISTS}, {@code
 * FILECOMMIT_PATH_NOT_ALLOWED}, {@code DELTA_MISSING_DELTA_TABLE}, ...
 */
public class FileCommitCatalog extends DelegatingCatalogExtension implements StagingTableCatalog {
  /** A catalog; Spark creates it and sets the session catalog as its delegate. */
  public FileCommitCatalog() {}

  static SparkSession session() {
    return (SparkSession) org.apache.spark.sql.classic.SparkSession.active();
  }

  /**
   * Whether a provider name is this plugin's.
   *
   * @param provider a table's provider, or null
   * @return true for {@code delta} and {@code filecommit} (any case)
   */
  static boolean ours(String provider) {
    return provider != null && (provider.equalsIgnoreCase("delta") || provider.equalsIgnoreCase("filecommit"));
  }

  /**
   * The session catalog's capabilities and {@code SUPPORTS_CREATE_TABLE_WITH_IDENTITY_COLUMNS}:
   * Spark then passes {@code GENERATED ... AS IDENTITY} declarations on the columns ({@code
   * Column.identityColumnSpec}) to {@link #createTable} and the staged creations, which write them
   * as Delta's identity column metadata ({@link TableCreation#declaredSchema}).
   *
   * @return the capabilities
   */
  @Override
  public java.util.Set<org.apache.spark.sql.connector.catalog.TableCatalogCapability> capabilities() {
    java.util.Set<org.apache.spark.sql.connector.catalog.TableCatalogCapability> out =
        new java.util.HashSet<>(super.capabilities());
    out.add(org.apache.spark.sql.connector.catalog.TableCatalogCapability.SUPPORTS_CREATE_TABLE_WITH_IDENTITY_COLUMNS);
    return out;
  }

  /**
   * Loads a table ({@link TableLookup}): a {@link FileCommitTable} for {@code delta.`/path`} and a name registered
   * with provider {@code delta} / {@code filecommit}, the session catalog's table for any other name.
   *
   * @param ident the name; {@code name@v3} or {@code name@20240101000000000} pins the table to that version
   *     or timestamp
   * @return the table
   * @throws NoSuchTableException when there is no such name
   */
  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return TableLookup.load(this, ident, Map.of());
  }

  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    return TableLookup.load(this, ident, Map.of("versionAsOf", version));
  }

  @Override
  public Table loadTable(Identifier ident, long timestampMicros) throws NoSuchTableException {
    return TableLookup.load(this, ident, Map.of("timestampAsOf", TableLookup.timestampOption(timestampMicros)));
  }

  @Override
  public Table createTable(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    if (!ours(properties.get(TableCatalog.PROP_PROVIDER))) {
      if (java.util.Arrays.stream(columns).anyMatch(c -> c.identityColumnSpec() != null)) {
        // Spark's refusal for a catalog without identity columns: only Delta tables have them here
        throw (RuntimeException) org.apache.spark.sql.errors.QueryCompilationErrors.unsupportedTableOperationError(
            this, ident, "identity columns");
      }
      return super.createTable(ident, columns, partitions, properties);
    }
    TableCreation c = Guard.errors(() -> {
      try {
        return TableStaging.stage(this, ident, columns, partitions, properties, TableCreation.Kind.CREATE);
      } catch (TableAlreadyExistsException e) {
        throw ErrorClass.DELTA_TABLE_ALREADY_EXISTS.error("Table " + ident + " already exists",
            Map.of("tableName", ident.toString()));
      }
    });
    c.commitStagedChanges();
    try {
      return loadTable(ident);
    } catch (NoSuchTableException e) {
      throw new IllegalStateException("table " + ident + " vanished right after its creation", e);
    }
  }

  @Override
  public Table createTable(Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    return createTable(ident, org.apache.spark.sql.connector.catalog.CatalogV2Util.structTypeToV2Columns(schema, false),
        partitions, properties);
  }

  @Override
  public StagedTable stageCreate(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
    if (!ours(properties.get(TableCatalog.PROP_PROVIDER))) {
      throw ErrorClass.DELTA_TABLE_ONLY_OPERATION.error("CREATE TABLE AS SELECT through this catalog is "
          + "supported for Delta tables only (USING delta), not for provider " + properties.get(TableCatalog.PROP_PROVIDER),
          Map.of("operation", "CREATE TABLE AS SELECT", "tableName", ident.toString()));
    }
    return TableStaging.stage(this, ident, columns, partitions, properties, TableCreation.Kind.CREATE);
  }

  @Override
  public StagedTable stageReplace(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties) throws NoSuchNamespaceException, NoSuchTableException {
    if (!tableExists(ident)) {
      throw new NoSuchTableException(ident);
    }
    return TableStaging.replace(this, ident, columns, partitions, properties, TableCreation.Kind.REPLACE);
  }

  @Override
  public StagedTable stageCreateOrReplace(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties) throws NoSuchNamespaceException {
    return TableStaging.replace(this, ident, columns, partitions, properties, TableCreation.Kind.CREATE_OR_REPLACE);
  }

  /**
   * Registers a Delta table's name in the session catalog: provider {@code delta}, no columns
   * (the log has the schema, as Delta registers its tables), the location when it was given.
   *
   * @param ident the name
   * @param location the explicit location, or null for a managed table
   * @throws TableAlreadyExistsException when the name is taken
   */
  void register(Identifier ident, String location) throws TableAlreadyExistsException {
    Map<String, String> props = new HashMap<>();
    props.put(TableCatalog.PROP_PROVIDER, "delta");
    if (location != null) {
      props.put(TableCatalog.PROP_LOCATION, location);
    }
    try {
      super.createTable(ident, new Column[0], new Transform[0], props);
    } catch (NoSuchNamespaceException e) {
      throw ErrorClass.SCHEMA_NOT_FOUND.error("No such schema for table " + ident + ": " + e.getMessage(),
          Map.of("schemaName", String.join(".", ident.namespace())));
    }
  }

  /** Drops a name from the session catalog (a managed table's directory with it), for a failed creation. */
  void unregister(Identifier ident) {
    super.dropTable(ident);
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    Table table = loadTable(ident);
    if (!(table instanceof FileCommitTable t)) {
      return super.alterTable(ident, changes);
    }
    Guard.run(session(), Map.of(), () -> {
      t.check(TableChanges.privilege(changes));
      TableChanges.apply(session(), t, changes);
      return null;
    });
    return loadTable(ident);
  }

  @Override
  public boolean dropTable(Identifier ident) {
    if (TableLookup.pathOf(ident) != null) {
      throw ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION.error("DROP TABLE needs a table name, not a path: "
          + ident, Map.of("operation", "DROP TABLE"));
    }
    Table table;
    try {
      table = loadTable(ident); // its location inside the roots, READ
    } catch (NoSuchTableException e) {
      return false;
    }
    if (table instanceof FileCommitTable t) {
      t.check(Privilege.OWNER);
      DropChecks.noPendingStagedCommits(session(), ident, t.path(), sessionEntry(ident));
    }
    return super.dropTable(ident);
  }

  /** The session catalog's own entry of a table (a {@code V1Table}), or null when there is none. */
  Table sessionEntry(Identifier ident) {
    try {
      return sessionTable(ident);
    } catch (NoSuchTableException e) {
      return null;
    }
  }

  /**
   * The session catalog's own table of a name, as it has it (a {@code V1Table}; no table of ours made of it).
   *
   * @param ident the name
   * @return the table
   * @throws NoSuchTableException when the session catalog has no such name
   */
  Table sessionTable(Identifier ident) throws NoSuchTableException {
    return super.loadTable(ident);
  }

  /**
   * The session catalog's own table of a name at a version ({@code VERSION AS OF} of a table not ours).
   *
   * @param ident the name
   * @param version the version, as the statement gave it
   * @return the table
   * @throws NoSuchTableException when the session catalog has no such name
   */
  Table sessionTable(Identifier ident, String version) throws NoSuchTableException {
    return super.loadTable(ident, version);
  }

  /**
   * CREATE DATABASE / SCHEMA: a {@code LOCATION} must lie inside the allowed roots (and the
   * session's principal hold OWNER on it), as every table location; then the session catalog
   * creates it.
   *
   * @param namespace the database
   * @param metadata its properties ({@code location} among them when given)
   * @throws io.filecommit.errors.FileCommitException (as the client's type) {@code
   *     FILECOMMIT_PATH_NOT_ALLOWED} for a location outside the roots, before anything is created
   */
  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata)
      throws org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException {
    checkNamespaceLocation(metadata.get(org.apache.spark.sql.connector.catalog.SupportsNamespaces.PROP_LOCATION));
    super.createNamespace(namespace, metadata);
  }

  /**
   * ALTER DATABASE ... SET LOCATION: the new location is checked as {@link #createNamespace}'s.
   *
   * @param namespace the database
   * @param changes the changes
   * @throws NoSuchNamespaceException when it does not exist
   */
  @Override
  public void alterNamespace(String[] namespace, org.apache.spark.sql.connector.catalog.NamespaceChange... changes)
      throws NoSuchNamespaceException {
    for (org.apache.spark.sql.connector.catalog.NamespaceChange c : changes) {
      if (c instanceof org.apache.spark.sql.connector.catalog.NamespaceChange.SetProperty p
          && p.property().equals(org.apache.spark.sql.connector.catalog.SupportsNamespaces.PROP_LOCATION)) {
        checkNamespaceLocation(p.value());
      }
    }
    super.alterNamespace(namespace, changes);
  }

  /**
   * DROP DATABASE / SCHEMA: refused when the database's location (which CASCADE deletes) lies
   * outside the allowed roots, or the session's principal lacks OWNER on it.
   *
   * @param namespace the database
   * @param cascade whether its tables go with it
   * @return whether it was dropped
   * @throws NoSuchNamespaceException when it does not exist
   */
  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade)
      throws NoSuchNamespaceException, org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException {
    checkNamespaceLocation(loadNamespaceMetadata(namespace)
        .get(org.apache.spark.sql.connector.catalog.SupportsNamespaces.PROP_LOCATION));
    if (cascade) {
      DropChecks.cascade(this, namespace);
    }
    return super.dropNamespace(namespace, cascade);
  }

  private static void checkNamespaceLocation(String location) {
    if (location != null && !location.isBlank()) {
      Guard.errors(() -> AllowedRoots.allowedPath(location, session(), Privilege.OWNER));
    }
  }
}
