package io.filecommit.catalog;

import io.filecommit.commands.ClusterByCommand;
import io.filecommit.commands.SetTablePropertiesCommand;
import io.filecommit.commands.WriteIntoDelta;
import io.filecommit.commands.WriteMode;
import io.filecommit.errors.ErrorClass;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.constraints.Check;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * ALTER TABLE on a Delta table (Delta's {@code AlterTableSetPropertiesDeltaCommand}, {@code
 * AlterTableAddColumnsDeltaCommand}, {@code AlterTableAddConstraintDeltaCommand}), each through the
 * plugin's commands:
 *
 * <ul>
 *   <li>SET TBLPROPERTIES: {@link SetTablePropertiesCommand} (one commit for all properties);
 *   <li>ADD CONSTRAINT name CHECK (expr): the property {@code delta.constraints.<name>} through
 *       {@link SetTablePropertiesCommand}, which checks the table's rows against it first;
 *   <li>CLUSTER BY (cols) / CLUSTER BY NONE: {@link ClusterByCommand} (domain metadata only);
 *   <li>ADD COLUMNS: a commit of the widened schema and no files through {@link WriteIntoDelta}
 *       with {@code mergeSchema} (new top-level nullable columns, at the end).
 * </ul>
 *
 * Anything else (UNSET TBLPROPERTIES, RENAME / DROP / ALTER COLUMN) is refused
 * with {@code FILECOMMIT_UNSUPPORTED_OPERATION} before anything is committed.
 */
final class TableChanges {
  private TableChanges() {}

  /**
   * The privilege ALTER TABLE changes need: MAINTAIN for table properties and constraints, OWNER
   * for anything else (columns, clustering), as {@code security.Privilege} lists them.
   *
   * @param changes Spark's changes
   * @return the highest privilege any of them needs
   */
  static io.filecommit.security.Privilege privilege(TableChange... changes) {
    io.filecommit.security.Privilege needed = io.filecommit.security.Privilege.MAINTAIN;
    for (TableChange c : changes) {
      boolean reserved = c instanceof TableChange.SetProperty p && org.apache.spark.sql.connector.catalog.CatalogV2Util
          .TABLE_RESERVED_PROPERTIES().contains(p.property().toLowerCase(java.util.Locale.ROOT)); // location, owner, ...
      if (reserved || !(c instanceof TableChange.SetProperty || c instanceof TableChange.AddConstraint
          || c instanceof TableChange.DropConstraint)) {
        needed = io.filecommit.security.Privilege.OWNER;
      }
    }
    return needed;
  }

  /**
   * Applies ALTER TABLE changes.
   *
   * @param session the session
   * @param table the table
   * @param changes Spark's changes
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_UNSUPPORTED_OPERATION} for
   *     a change listed above as refused, and what the commands throw
   */
  static void apply(SparkSession session, FileCommitTable table, TableChange... changes) {
    Map<String, String> properties = new LinkedHashMap<>();
    StructType added = new StructType();
    List<String> clusterBy = null;
    for (TableChange c : changes) {
      if (c instanceof TableChange.ClusterBy cb) {
        clusterBy = java.util.Arrays.stream(cb.clusteringColumns()).map(r -> String.join(".", r.fieldNames())).toList();
      } else if (c instanceof TableChange.SetProperty p) {
        properties.put(p.property(), p.value());
      } else if (c instanceof TableChange.AddConstraint a && a.constraint() instanceof Check check) {
        io.filecommit.commands.CheckConstraintCommand.add(session, table.path(), check.name(), check.predicateSql());
      } else if (c instanceof TableChange.DropConstraint d) {
        io.filecommit.commands.CheckConstraintCommand.drop(session, table.path(), d.name(), d.ifExists());
      } else if (c instanceof TableChange.AddColumn a && a.fieldNames().length == 1 && a.position() == null
          && a.defaultValue() == null) {
        Metadata md = a.comment() == null ? Metadata.empty()
            : new MetadataBuilder().putString("comment", a.comment()).build();
        added = added.add(new StructField(a.fieldNames()[0], a.dataType(), true, md));
      } else {
        throw ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION.error("ALTER TABLE " + table.name() + ": " + c
            + " is not supported on Delta tables by this server", Map.of("operation", "ALTER TABLE"));
      }
    }
    if (clusterBy != null) {
      ClusterByCommand.run(session, table.path(), clusterBy);
    }
    if (!properties.isEmpty()) {
      SetTablePropertiesCommand.run(session, table.path(), properties, null, null);
    }
    if (added.fields().length > 0) {
      StructType schema = table.schema();
      for (StructField f : added.fields()) {
        schema = schema.add(f);
      }
      Dataset<Row> empty = (Dataset<Row>) session.createDataFrame(List.<Row>of(), schema);
      WriteIntoDelta.run(session, empty, table.path(), WriteMode.APPEND, List.of(),
          Map.of(WriteIntoDelta.MERGE_SCHEMA, "true"), Map.of(), false, null, null);
    }
  }
}
