package io.filecommit.catalog;

import io.filecommit.commands.SetTablePropertiesCommand;
import io.filecommit.connect.AllowedRoots;
import io.filecommit.errors.ErrorClass;
import io.filecommit.security.Privilege;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
import org.apache.spark.sql.connector.catalog.V1Table;
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
 *       OF} load the table pinned to that version or timestamp.
 *   <li>CREATE TABLE / CTAS / REPLACE / CREATE OR REPLACE with {@code USING delta} write the table's
 *       first (or replacing) commit with the plugin's {@code WriteIntoDelta} ({@link TableCreation}),
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
  private static final Pattern VERSION_SUFFIX = Pattern.compile("^(.+)@v(\\d+)$");
  private static final Pattern TIMESTAMP_SUFFIX = Pattern.compile("^(.+)@(\\d{17})$");

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

  /** The table root of a path identifier ({@code delta.`/path`}), or null for a catalog name. */
  static String pathOf(Identifier ident) {
    String[] ns = ident.namespace();
    if (ns.length == 1 && ours(ns[0]) && (ident.name().startsWith("/") || ident.name().contains(":/"))) {
      return AllowedRoots.allowedPath(ident.name(), session());
    }
    return null;
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

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return guarded(ident, Map.of());
  }

  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    return guarded(ident, Map.of("versionAsOf", version));
  }

  @Override
  public Table loadTable(Identifier ident, long timestampMicros) throws NoSuchTableException {
    return guarded(ident, Map.of("timestampAsOf", timestamp(timestampMicros)));
  }

  private Table guarded(Identifier ident, Map<String, String> readOptions) throws NoSuchTableException {
    try {
      return load(ident, readOptions);
    } catch (io.filecommit.errors.FileCommitException e) {
      throw io.filecommit.errors.ClientExceptions.rethrow(e);
    }
  }

  /** A timestamp in microseconds since the epoch as the reader's option text, in the session time zone. */
  private static String timestamp(long micros) {
    Instant at = Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L);
    return LocalDateTime.ofInstant(at, java.time.ZoneId.of(session().sessionState().conf().sessionLocalTimeZone()))
        .toString().replace('T', ' ');
  }

  private Table load(Identifier ident, Map<String, String> readOptions) throws NoSuchTableException {
    String path = pathOf(ident);
    if (path != null) {
      FileCommitTable.check(session(), null, path, Privilege.READ);
      FileCommitTable t = new FileCommitTable(session(), path, ident, readOptions);
      if (!t.exists()) {
        throw ErrorClass.DELTA_MISSING_DELTA_TABLE.error(path + " is not a Delta table (no _delta_log commits)",
            Map.of("tableName", path));
      }
      return t;
    }
    Table table;
    try {
      table = super.loadTable(ident);
    } catch (NoSuchTableException e) {
      Matcher v = VERSION_SUFFIX.matcher(ident.name());
      if (readOptions.isEmpty() && v.matches()) {
        return load(Identifier.of(ident.namespace(), v.group(1)), Map.of("versionAsOf", v.group(2)));
      }
      Matcher ts = TIMESTAMP_SUFFIX.matcher(ident.name());
      if (readOptions.isEmpty() && ts.matches()) {
        String d = ts.group(2);
        String text = d.substring(0, 4) + "-" + d.substring(4, 6) + "-" + d.substring(6, 8) + " " + d.substring(8, 10)
            + ":" + d.substring(10, 12) + ":" + d.substring(12, 14) + "." + d.substring(14);
        return load(Identifier.of(ident.namespace(), ts.group(1)), Map.of("timestampAsOf", text));
      }
      throw e;
    }
    String location = locationOf(table);
    if (location == null) {
      if (!readOptions.isEmpty()) {
        return readOptions.containsKey("versionAsOf") ? super.loadTable(ident, readOptions.get("versionAsOf"))
            : super.loadTable(ident);
      }
      return table;
    }
    // The location a metastore holds (another server's, or one written by Spark's V1 commands such
    // as CREATE TABLE LIKE ... LOCATION) is checked as every path is: inside the allowed roots.
    String allowed = AllowedRoots.allowedPath(location, session());
    String qualified = qualified(ident);
    FileCommitTable.check(session(), qualified, allowed, Privilege.READ);
    return new FileCommitTable(session(), allowed, ident, qualified, readOptions);
  }

  /** The name grants name a table of this catalog by: {@code spark_catalog.db.t}, lower case. */
  String qualified(Identifier ident) {
    String ns = ident.namespace().length == 0 ? String.join(".", session().sessionState().catalogManager()
        .currentNamespace()) : String.join(".", ident.namespace());
    return (name() + "." + ns + "." + ident.name()).toLowerCase(Locale.ROOT);
  }

  /** The location of a table of ours in the session catalog, or null for any other table. */
  static String locationOf(Table table) {
    if (table instanceof V1Table v1 && v1.v1Table().provider().isDefined() && ours(v1.v1Table().provider().get())
        && v1.v1Table().storage().locationUri().isDefined()) {
      return new org.apache.hadoop.fs.Path(v1.v1Table().storage().locationUri().get()).toString();
    }
    if (table instanceof FileCommitTable t) {
      return t.path();
    }
    return null;
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
        return stage(ident, columns, partitions, properties, TableCreation.Kind.CREATE);
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
    return stage(ident, columns, partitions, properties, TableCreation.Kind.CREATE);
  }

  @Override
  public StagedTable stageReplace(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties) throws NoSuchNamespaceException, NoSuchTableException {
    if (!tableExists(ident)) {
      throw new NoSuchTableException(ident);
    }
    return stageOrRefuse(ident, columns, partitions, properties, TableCreation.Kind.REPLACE);
  }

  @Override
  public StagedTable stageCreateOrReplace(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties) throws NoSuchNamespaceException {
    return stageOrRefuse(ident, columns, partitions, properties, TableCreation.Kind.CREATE_OR_REPLACE);
  }

  private StagedTable stageOrRefuse(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties, TableCreation.Kind kind) {
    if (!ours(properties.get(TableCatalog.PROP_PROVIDER))) {
      throw ErrorClass.DELTA_TABLE_ONLY_OPERATION.error("REPLACE TABLE is supported for Delta tables only "
          + "(USING delta), not for provider " + properties.get(TableCatalog.PROP_PROVIDER),
          Map.of("operation", "REPLACE TABLE", "tableName", ident.toString()));
    }
    try {
      return stage(ident, columns, partitions, properties, kind);
    } catch (TableAlreadyExistsException e) {
      throw new IllegalStateException(e);
    }
  }

  private TableCreation stage(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties, TableCreation.Kind kind) throws TableAlreadyExistsException {
    try {
      return stageChecked(ident, columns, partitions, properties, kind);
    } catch (io.filecommit.errors.FileCommitException e) {
      throw io.filecommit.errors.ClientExceptions.rethrow(e);
    }
  }

  private TableCreation stageChecked(Identifier ident, Column[] columns, Transform[] partitions,
      Map<String, String> properties, TableCreation.Kind kind) throws TableAlreadyExistsException {
    String path = pathOf(ident);
    boolean registered = path == null && tableExists(ident);
    if (kind == TableCreation.Kind.CREATE && registered) {
      throw new TableAlreadyExistsException(ident);
    }
    String explicit = properties.get(TableCatalog.PROP_LOCATION);
    String location;
    if (path != null) {
      location = path;
    } else if (registered) {
      location = AllowedRoots.allowedPath(existingLocation(ident), session());
    } else if (explicit != null) {
      location = AllowedRoots.allowedPath(explicit, session());
    } else {
      location = AllowedRoots.allowedPath(session().sessionState().catalog().defaultTablePath(
          new org.apache.spark.sql.catalyst.TableIdentifier(ident.name(),
              scala.Option.apply(ident.namespace().length == 0 ? null : ident.namespace()[ident.namespace().length - 1])))
          .toString(), session());
    }
    // Creating, replacing: OWNER on the table (its name, for a registered one) or its location.
    FileCommitTable.check(session(), registered ? qualified(ident) : null, location, Privilege.OWNER);
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
    if (clusterBy != null) {
      props.put(io.filecommit.delta.Clustering.PROPERTY, io.filecommit.delta.Clustering.toProperty(clusterBy));
    }
    return new TableCreation(this, ident, path != null, registered, explicit != null, location,
        TableCreation.declaredSchema(columns, partitionBy), partitionBy, props, kind);
  }

  private String existingLocation(Identifier ident) {
    try {
      String l = locationOf(super.loadTable(ident));
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
    if (pathOf(ident) != null) {
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
      return super.loadTable(ident);
    } catch (NoSuchTableException e) {
      return null;
    }
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

  /**
   * Sets table properties through the plugin's command.
   *
   * @param path the table root
   * @param properties the properties
   */
  static void setProperties(String path, Map<String, String> properties) {
    SetTablePropertiesCommand.run(session(), path, properties, null, null);
  }
}
