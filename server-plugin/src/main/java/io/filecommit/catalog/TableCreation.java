package io.filecommit.catalog;

import io.filecommit.txn.CommandResult;
import io.filecommit.commands.WriteIntoDelta;
import io.filecommit.commands.WriteMode;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.IdentityColumns;
import io.filecommit.delta.Snapshot;
import io.filecommit.errors.ErrorClass;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A CREATE / REPLACE / CREATE OR REPLACE of a Delta table by name or path, with or without AS
 * SELECT (Delta's {@code CreateDeltaTableCommand}, staged as Spark's {@code StagingTableCatalog}
 * asks). One commit: the SELECT's rows with the declared partitioning and TBLPROPERTIES, or no rows
 * and the declared schema, through {@code WriteIntoDelta} (mode error-if-exists for CREATE,
 * overwrite with {@code overwriteSchema} for a replace). A new name is registered in the session
 * catalog before the commit and dropped again when the commit fails, so a failed CREATE leaves no
 * name and no files (a managed table's directory goes with its name). {@code LOCATION} of an
 * existing Delta table without a declared schema registers that table as it is (Delta's
 * behaviour); with a schema, the schema must be the table's. A replace of a table whose protocol
 * lists {@code clustering} by a partitioned one is refused before anything is written ({@code
 * DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE}, as Delta's {@code CreateDeltaTableCommand}).
 */
final class TableCreation implements StagedTable, SupportsWrite {
  /** What the statement asks. */
  enum Kind {
    /** CREATE TABLE [AS SELECT]. */
    CREATE,
    /** REPLACE TABLE [AS SELECT]. */
    REPLACE,
    /** CREATE OR REPLACE TABLE [AS SELECT]. */
    CREATE_OR_REPLACE
  }

  private final FileCommitCatalog catalog;
  private final Identifier ident;
  private final boolean byPath;
  private final boolean registered;
  private final boolean external;
  private final String location;
  private final StructType schema;
  private final List<String> partitionBy;
  private final Map<String, String> properties;
  private final Kind kind;
  private boolean written;
  private boolean registeredHere;

  TableCreation(FileCommitCatalog catalog, Identifier ident, boolean byPath, boolean registered, boolean external,
      String location, StructType schema, List<String> partitionBy, Map<String, String> properties, Kind kind) {
    this.catalog = catalog;
    this.ident = ident;
    this.byPath = byPath;
    this.registered = registered;
    this.external = external;
    this.location = location;
    this.schema = schema;
    this.partitionBy = partitionBy;
    this.properties = properties;
    this.kind = kind;
  }

  @Override
  public String name() {
    return ident.toString();
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Transform[] partitioning() {
    return partitionBy.stream().map(Expressions::identity).toArray(Transform[]::new);
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.V1_BATCH_WRITE, TableCapability.TRUNCATE, TableCapability.OVERWRITE_BY_FILTER,
        TableCapability.ACCEPT_ANY_SCHEMA);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    Map<String, String> options = new HashMap<>(info.options().asCaseSensitiveMap());
    return new Replacing() {
      @Override
      public org.apache.spark.sql.connector.write.Write build() {
        return new org.apache.spark.sql.connector.write.V1Write() {
          @Override
          public org.apache.spark.sql.sources.InsertableRelation toInsertableRelation() {
            return (data, ignored) -> {
              if (!(data instanceof Dataset<Row> rows)) {
                throw ErrorClass.FILECOMMIT_INVALID_ARGUMENT.error("Not a server-side DataFrame: " + data.getClass());
              }
              commit(rows, options);
            };
          }
        };
      }
    };
  }

  /** The write of a new or replacing table: Spark's truncate or overwrite of it is the replace itself. */
  private abstract static class Replacing implements WriteBuilder,
      org.apache.spark.sql.connector.write.SupportsTruncate, org.apache.spark.sql.connector.write.SupportsOverwriteV2 {
    @Override
    public WriteBuilder truncate() {
      return this;
    }

    @Override
    public WriteBuilder overwrite(org.apache.spark.sql.connector.expressions.filter.Predicate[] predicates) {
      return this;
    }
  }

  /** Registers the name (a new one), then writes the commit; a failed write drops the name again. */
  private void commit(Dataset<Row> rows, Map<String, String> options) {
    SparkSession session = FileCommitCatalog.session();
    Snapshot existing = DeltaLog.forTable(session, location).snapshot();
    if (kind == Kind.CREATE && existing.exists() && rows == null) {
      if (schema.isEmpty() || sameColumns(existing.metadata().schema(), schema)) {
        register();
        written = true;
        return;
      }
      throw ErrorClass.DELTA_METADATA_MISMATCH.error("The schema declared for " + ident + " differs from the schema "
          + "of the Delta table at " + location + ": declared " + schema.simpleString() + ", table "
          + existing.metadata().schema().simpleString());
    }
    Map<String, String> writeOptions = new HashMap<>(options);
    WriteMode mode = WriteMode.ERROR_IF_EXISTS;
    if (kind != Kind.CREATE && existing.exists()) {
      mode = WriteMode.OVERWRITE;
      writeOptions.put(WriteIntoDelta.OVERWRITE_SCHEMA, "true");
      if (!partitionBy.isEmpty() && io.filecommit.delta.Clustering.clustered(existing.protocol())) {
        // Delta's CreateDeltaTableCommand.validatePrerequisitesForClusteredTable (its protocol, not its columns)
        throw ErrorClass.DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE.error("Replacing the clustered Delta "
            + "table " + ident + " with a table partitioned by " + partitionBy + " is not allowed");
      }
    }
    Dataset<Row> data = rows != null ? withoutIdentity(rows)
        : (Dataset<Row>) session.createDataFrame(java.util.List.<Row>of(), schema);
    register();
    try {
      CommandResult r = TableWrites.write(session, data, location, mode, partitionBy, writeOptions, properties);
      written = r.committed() || written;
    } catch (RuntimeException | Error e) {
      if (registeredHere) {
        catalog.unregister(ident);
        registeredHere = false;
      }
      throw e;
    }
    written = true;
  }

  /**
   * The schema a CREATE declares (Delta's {@code CreateDeltaTableCommand} with {@code
   * IdentityColumn}; protocol "Identity Columns"): Spark's columns as a schema, each column
   * declared {@code GENERATED ALWAYS | BY DEFAULT AS IDENTITY} carrying {@code
   * delta.identity.start}, {@code delta.identity.step} and {@code
   * delta.identity.allowExplicitInsert} in its metadata (and not Spark's own {@code identity.*}
   * keys). The commit's protocol then lists the {@code identityColumns} writer feature.
   *
   * @param columns the declared columns
   * @param partitionBy the declared partition columns
   * @return the table schema
   * @throws io.filecommit.errors.FileCommitException {@code
   *     DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE} for an identity column that is not {@code
   *     BIGINT}, {@code DELTA_IDENTITY_COLUMNS_ILLEGAL_STEP} for step 0, {@code
   *     DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED} for a partition column that is one
   */
  static StructType declaredSchema(org.apache.spark.sql.connector.catalog.Column[] columns, List<String> partitionBy) {
    StructField[] fields = org.apache.spark.sql.connector.catalog.CatalogV2Util.v2ColumnsToStructType(columns).fields();
    org.apache.spark.sql.catalyst.util.IdentityColumn$ spark = org.apache.spark.sql.catalyst.util.IdentityColumn$.MODULE$;
    for (int i = 0; i < fields.length; i++) {
      org.apache.spark.sql.connector.catalog.IdentityColumnSpec spec = columns[i].identityColumnSpec();
      if (spec == null) {
        continue;
      }
      StructField f = fields[i];
      if (partitionBy.stream().anyMatch(p -> p.equalsIgnoreCase(f.name()))) {
        throw ErrorClass.DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED.error("PARTITIONED BY IDENTITY column "
            + f.name() + " is not supported", Map.of("colName", f.name()));
      }
      org.apache.spark.sql.types.MetadataBuilder plain = new org.apache.spark.sql.types.MetadataBuilder()
          .withMetadata(f.metadata());
      for (String k : List.of(spark.IDENTITY_INFO_START(), spark.IDENTITY_INFO_STEP(),
          spark.IDENTITY_INFO_ALLOW_EXPLICIT_INSERT())) {
        plain.remove(k);
      }
      fields[i] = IdentityColumns.declare(new StructField(f.name(), f.dataType(), f.nullable(), plain.build()),
          spec.getStart(), spec.getStep(), spec.isAllowExplicitInsert());
    }
    return new StructType(fields);
  }

  /**
   * The rows of a CREATE ... AS SELECT without identity metadata: a query's identity column
   * becomes a plain column of the new table, as in Delta.
   */
  private static Dataset<Row> withoutIdentity(Dataset<Row> rows) {
    StructType plain = IdentityColumns.withoutIdentity(rows.schema());
    if (plain == rows.schema()) {
      return rows;
    }
    org.apache.spark.sql.Column[] cols = new org.apache.spark.sql.Column[plain.fields().length];
    for (int i = 0; i < cols.length; i++) {
      StructField f = plain.fields()[i];
      cols[i] = org.apache.spark.sql.functions.col(io.filecommit.schema.SchemaUtils.quote(f.name()))
          .as(f.name(), f.metadata());
    }
    return rows.select(cols);
  }

  private static boolean sameColumns(StructType a, StructType b) {
    return a.fields().length == b.fields().length && a.fieldNames().length == b.fieldNames().length
        && java.util.Arrays.equals(a.fieldNames(), b.fieldNames())
        && java.util.stream.IntStream.range(0, a.fields().length).allMatch(i -> a.fields()[i].dataType()
            .sameType(b.fields()[i].dataType()));
  }

  private void register() {
    if (byPath || registered || registeredHere) {
      return;
    }
    try {
      catalog.register(ident, external ? location : null);
      registeredHere = true;
    } catch (TableAlreadyExistsException e) {
      throw ErrorClass.DELTA_TABLE_ALREADY_EXISTS.error("Table " + ident + " already exists",
          Map.of("tableName", ident.toString()));
    }
  }

  @Override
  public void commitStagedChanges() {
    if (!written) {
      commit(null, Map.of());
    }
  }

  @Override
  public void abortStagedChanges() {
    // Nothing is published before commitStagedChanges or a successful write: nothing to undo.
  }
}
