package io.filecommit.connect;

import io.filecommit.delta.IdentityColumns;
import io.filecommit.delta.TableFeatures;
import io.filecommit.errors.ErrorClass;
import io.filecommit.proto.delta.connect.CreateDeltaTable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.UnresolvedIdentifier;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.ColumnDefinition;
import org.apache.spark.sql.catalyst.plans.logical.ColumnDefinition$;
import org.apache.spark.sql.catalyst.plans.logical.CreateTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.OptionList;
import org.apache.spark.sql.catalyst.plans.logical.ReplaceTable;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedTableSpec;
import org.apache.spark.sql.classic.Dataset$;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.common.DataTypeProtoConverter$;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connector.expressions.LogicalExpressions;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Delta Connect's {@code CREATE_DELTA_TABLE} command ({@code delta.connect.CreateDeltaTable}):
 * what delta-spark's {@code DeltaTable.create / createIfNotExists / replace / createOrReplace(spark)
 * ...execute()} sends. Served as Delta's {@code io.delta.tables.DeltaTableBuilder.execute} does it:
 * the declaration becomes Spark's {@code CreateTable} (create; {@code ignoreIfExists} for
 * createIfNotExists) or {@code ReplaceTable} ({@code orCreate} for createOrReplace) of provider
 * {@code delta}, named by the table name or, without one, {@code delta.`<location>`}, and the
 * session runs it. The server's {@code spark_catalog} plugin (the catalog package's {@code
 * FileCommitCatalog}) then writes the table's first (or replacing) commit, with the checks of SQL
 * CREATE / REPLACE TABLE: the allowed roots and OWNER on the location, the existing-table errors,
 * partition and clustering columns, table properties and features.
 *
 * <p>The columns are Delta's {@code DeltaColumnBuilder.build} fields: the type (a DDL string,
 * parsed by the session's parser, or Spark Connect's {@code DataType}), the nullability, and
 * column metadata {@code delta.generationExpression} (protocol "Generated Columns"), {@code
 * delta.identity.start / step / allowExplicitInsert} (protocol "Identity Columns") and {@code
 * comment}; the table comment becomes the metadata's {@code description}.
 *
 * <p>Errors, raised before anything is committed: {@code FILECOMMIT_MALFORMED_COMMAND} for a
 * message without a mode, {@code DELTA_CREATE_TABLE_MISSING_TABLE_NAME_OR_LOCATION} for neither a
 * name nor a location, {@code DELTA_CREATE_TABLE_IDENTIFIER_LOCATION_MISMATCH} for a {@code
 * delta.`path`} name whose path differs from the location, {@code
 * DELTA_IDENTITY_COLUMNS_WITH_GENERATED_EXPRESSION} for a column both generated and identity, {@code DELTA_CLUSTER_BY_WITH_PARTITIONED_BY},
 * the identity classes of {@link IdentityColumns#declare} and {@code
 * DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED}, the generated-column classes of {@code
 * checkGenerated} (Delta's {@code GeneratedColumn.validateGeneratedColumns}), {@code
 * FILECOMMIT_PATH_NOT_ALLOWED} for a location outside the roots, {@code
 * FILECOMMIT_DELTA_CONNECT_UNSUPPORTED} on a server without the filecommit catalog; Spark's and
 * the catalog's classes otherwise (a bad type: {@code
 * UNSUPPORTED_DATATYPE} / {@code PARSE_SYNTAX_ERROR}; an existing table: {@code
 * TABLE_OR_VIEW_ALREADY_EXISTS}; a replace of a missing one: {@code TABLE_OR_VIEW_NOT_FOUND}). As
 * with Delta's catalog, a Delta table at the path of a table by path exists: create raises {@code
 * TABLE_OR_VIEW_ALREADY_EXISTS}, createIfNotExists commits nothing, whatever it declares, replace
 * replaces it, and createOrReplace checks the declaration against it and commits nothing (Delta's
 * {@code CreateDeltaTableCommand} for a table by path: a different schema is refused, here with
 * {@code DELTA_METADATA_MISMATCH}, Delta's {@code DELTA_CREATE_TABLE_SCHEME_MISMATCH}).
 */
final class DeltaConnectCreate {
  private DeltaConnectCreate() {}

  /**
   * Creates or replaces the table a {@code CreateDeltaTable} declares, in one commit.
   *
   * @param c the message
   * @param planner the session's planner
   * @throws io.filecommit.errors.FileCommitException the classes the class comment lists
   */
  static void execute(CreateDeltaTable c, SparkConnectPlanner planner) {
    SparkSession session = planner.session();
    CreateDeltaTable.Mode mode = c.getMode();
    if (mode == CreateDeltaTable.Mode.MODE_UNSPECIFIED || mode == CreateDeltaTable.Mode.UNRECOGNIZED) {
      throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("delta.connect.CreateDeltaTable without a mode");
    }
    if (!c.hasTableName() && !c.hasLocation()) {
      throw ErrorClass.DELTA_CREATE_TABLE_MISSING_TABLE_NAME_OR_LOCATION.error("DeltaTable.create/replace needs a "
          + "table name or a location (tableName(...) or location(...))");
    }
    if (!session.sessionState().catalogManager().v2SessionCatalog().getClass().getSimpleName()
        .equals("FileCommitCatalog")) {
      throw DeltaConnectTables.unsupported("CREATE_DELTA_TABLE on a server whose spark.sql.catalog.spark_catalog "
          + "is not filecommit's FileCommitCatalog");
    }
    String location = c.hasLocation() ? c.getLocation() : null;
    if (location != null) {
      AllowedRoots.allowedPath(location, session); // before anything is read; the catalog checks OWNER too
    }
    String identifier = c.hasTableName() ? c.getTableName() : "delta.`" + location.replace("`", "``") + "`";
    List<String> parts = nameParts(session, identifier);
    if (c.hasTableName() && location != null && parts.size() == 2 && parts.get(0).equalsIgnoreCase("delta")
        && !parts.get(1).equals(location)) {
      throw ErrorClass.DELTA_CREATE_TABLE_IDENTIFIER_LOCATION_MISMATCH.error("Creating the path-based Delta table "
          + identifier + " with the different location " + location + " is not supported",
          Map.of("identifier", identifier, "location", location));
    }
    boolean byPath = parts.size() == 2 && parts.get(0).equalsIgnoreCase("delta")
        && (parts.get(1).startsWith("/") || parts.get(1).contains(":/")); // delta.`/path`, as Delta reads it
    String path = !c.hasTableName() ? location : byPath ? parts.get(1) : null;
    boolean existsAtPath = path != null
        && io.filecommit.delta.DeltaLog.forTable(session, AllowedRoots.allowedPath(path, session)).snapshot().exists();
    if (existsAtPath) { // as Spark's Create / ReplaceTableExec run with Delta's catalog, which has the path's table
      switch (mode) {
        case MODE_CREATE -> throw DeltaConnectCreate.<RuntimeException>sneaky(org.apache.spark.sql.errors
            .QueryCompilationErrors.tableAlreadyExistsError(
                org.apache.spark.sql.connector.catalog.Identifier.of(new String[] {"delta"}, path)));
        case MODE_CREATE_IF_NOT_EXISTS -> {
          return;
        }
        // Delta's CREATE OR REPLACE of an existing table by path: a CREATE over its location (no
        // commit when the declaration is the table's, else a schema mismatch)
        case MODE_CREATE_OR_REPLACE -> mode = CreateDeltaTable.Mode.MODE_CREATE;
        default -> mode = CreateDeltaTable.Mode.MODE_CREATE_OR_REPLACE; // replace: the table exists
      }
    }
    List<String> partitionBy = c.getPartitioningColumnsList();
    List<String> clusterBy = c.getClusteringColumnsList();
    if (!partitionBy.isEmpty() && !clusterBy.isEmpty()) {
      throw ErrorClass.DELTA_CLUSTER_BY_WITH_PARTITIONED_BY.error("Clustering and partitioning cannot both be "
          + "specified: partitionedBy " + partitionBy + ", clusterBy " + clusterBy);
    }
    ParserInterface parser = session.sessionState().sqlParser();
    List<StructField> fields = new ArrayList<>();
    for (CreateDeltaTable.Column col : c.getColumnsList()) {
      fields.add(field(col, parser));
    }
    checkGenerated(session, fields);
    List<ColumnDefinition> columns = new ArrayList<>();
    for (int i = 0; i < fields.size(); i++) {
      CreateDeltaTable.Column col = c.getColumns(i);
      StructField f = fields.get(i);
      if (col.hasIdentityInfo() && partitionBy.stream().anyMatch(p -> p.equalsIgnoreCase(f.name()))) {
        throw ErrorClass.DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED.error("PARTITIONED BY IDENTITY column "
            + f.name() + " is not supported", Map.of("colName", f.name()));
      }
      columns.add(ColumnDefinition$.MODULE$.fromV1Column(f, parser));
    }
    List<Transform> partitioning = new ArrayList<>();
    for (String p : partitionBy) {
      partitioning.add(LogicalExpressions.identity(LogicalExpressions.parseReference(p)));
    }
    if (!clusterBy.isEmpty()) {
      partitioning.add(LogicalExpressions.clusterBy(clusterBy.stream().map(LogicalExpressions::parseReference)
          .toArray(NamedReference[]::new)));
    }
    Map<String, String> properties = new LinkedHashMap<>(c.getPropertiesMap());
    UnresolvedTableSpec spec = new UnresolvedTableSpec(scalaMap(properties), Option.apply("delta"),
        new OptionList(CollectionConverters.asScala(List.<scala.Tuple2<String,
            org.apache.spark.sql.catalyst.expressions.Expression>>of()).toList()),
        Option.apply(location), c.hasComment() ? Option.apply(c.getComment()) : Option.empty(), Option.empty(),
        Option.empty(), false, CollectionConverters.asScala(
            List.<org.apache.spark.sql.catalyst.expressions.TableConstraint>of()).toList());
    UnresolvedIdentifier name = new UnresolvedIdentifier(CollectionConverters.asScala(parts).toList(), false);
    scala.collection.immutable.Seq<ColumnDefinition> cols = CollectionConverters.asScala(columns).toList();
    scala.collection.immutable.Seq<Transform> transforms = CollectionConverters.asScala(partitioning).toList();
    LogicalPlan plan = switch (mode) {
      case MODE_CREATE -> new CreateTable(name, cols, transforms, spec, false);
      case MODE_CREATE_IF_NOT_EXISTS -> new CreateTable(name, cols, transforms, spec, true);
      case MODE_REPLACE -> new ReplaceTable(name, cols, transforms, spec, false);
      default -> new ReplaceTable(name, cols, transforms, spec, true);
    };
    Dataset$.MODULE$.ofRows(session, plan).queryExecution().assertCommandExecuted();
  }

  /**
   * A declared column as Delta's {@code DeltaColumnBuilder.build} makes it.
   *
   * @param col the message's column
   * @param parser the session's SQL parser (a type given as a DDL string)
   * @return the field with its metadata
   */
  private static StructField field(CreateDeltaTable.Column col, ParserInterface parser) {
    if (!col.hasDataType()) {
      throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("The data type of the column " + col.getName()
          + " is not provided");
    }
    DataType type;
    try {
      type = col.getDataType().hasUnparsed() ? parser.parseDataType(col.getDataType().getUnparsed().getDataTypeString())
          : DataTypeProtoConverter$.MODULE$.toCatalystType(col.getDataType());
    } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
      throw DeltaConnectCreate.<RuntimeException>sneaky(e); // Spark's class as it is (PARSE_SYNTAX_ERROR, ...)
    }
    MetadataBuilder md = new MetadataBuilder();
    if (col.hasGeneratedAlwaysAs()) {
      if (col.hasIdentityInfo()) {
        throw ErrorClass.DELTA_IDENTITY_COLUMNS_WITH_GENERATED_EXPRESSION.error("Column " + col.getName()
            + " cannot be both a generated column and an identity column", Map.of("column", col.getName()));
      }
      md.putString(TableFeatures.GENERATION_EXPRESSION, col.getGeneratedAlwaysAs());
    }
    if (col.hasComment()) {
      md.putString("comment", col.getComment());
    }
    StructField f = new StructField(col.getName(), type, col.getNullable(), md.build());
    if (col.hasIdentityInfo()) {
      CreateDeltaTable.Column.IdentityInfo id = col.getIdentityInfo();
      f = IdentityColumns.declare(f, id.getStart(), id.getStep(), id.getAllowExplicitInsert());
    }
    return f;
  }

  /**
   * Delta's {@code GeneratedColumn.validateGeneratedColumns} at declaration: each generation
   * expression resolves over the declared columns and has the column's type (protocol "Generated
   * Columns"), else {@code DELTA_INVALID_GENERATED_COLUMN_REFERENCES} (an unknown column), {@code
   * DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN} (any other analysis error) or {@code
   * DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH}.
   */
  private static void checkGenerated(SparkSession session, List<StructField> fields) {
    if (fields.stream().noneMatch(f -> f.metadata().contains(TableFeatures.GENERATION_EXPRESSION))) {
      return;
    }
    org.apache.spark.sql.types.StructType schema = new org.apache.spark.sql.types.StructType(
        fields.toArray(new StructField[0]));
    org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> empty = session.createDataFrame(
        List.<org.apache.spark.sql.Row>of(), schema);
    for (StructField f : fields) {
      if (!f.metadata().contains(TableFeatures.GENERATION_EXPRESSION)) {
        continue;
      }
      String expr = f.metadata().getString(TableFeatures.GENERATION_EXPRESSION);
      Map<String, String> params = Map.of("columnName", f.name(), "expression", expr);
      DataType type;
      try {
        type = empty.select(org.apache.spark.sql.functions.expr(expr)).schema().fields()[0].dataType();
      } catch (Exception e) {
        String cond = e instanceof org.apache.spark.SparkThrowable t ? t.getCondition() : null;
        ErrorClass cls = cond != null && cond.startsWith("UNRESOLVED_COLUMN")
            ? ErrorClass.DELTA_INVALID_GENERATED_COLUMN_REFERENCES
            : ErrorClass.DELTA_UNSUPPORTED_EXPRESSION_GENERATED_COLUMN;
        throw cls.error("The generation expression of column " + f.name() + " (" + expr + ") does not resolve "
            + "over the declared columns: " + e.getMessage(), e, params);
      }
      if (!type.sameType(f.dataType())) {
        throw ErrorClass.DELTA_GENERATED_COLUMNS_EXPR_TYPE_MISMATCH.error("The expression type of the generated column "
            + f.name() + " is " + type.sql() + ", but the column type is " + f.dataType().sql(),
            Map.of("columnName", f.name(), "expressionType", type.sql(), "columnType", f.dataType().sql()));
      }
    }
  }

  /** A table name's parts, {@code INVALID_SCHEMA_OR_RELATION_NAME} when it does not parse. */
  private static List<String> nameParts(SparkSession session, String name) {
    try {
      return CollectionConverters.asJava(session.sessionState().sqlParser().parseMultipartIdentifier(name));
    } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
      throw ErrorClass.INVALID_SCHEMA_OR_RELATION_NAME.error("Not a table name: '" + name + "'", Map.of("name", name));
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }

  private static scala.collection.immutable.Map<String, String> scalaMap(Map<String, String> m) {
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(m));
  }
}
