package io.filecommit.txn;

import io.filecommit.constraints.ConstraintValidation;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.ErrorClass;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The table-property checks of a metadata change ({@link OptimisticTransaction#updateMetadata};
 * Delta's {@code OptimisticTransaction.updateMetadata} and {@code DeltaConfigs.validateConfigurations}).
 */
final class MetadataChecks {
  private MetadataChecks() {}

  /**
   * Checks the properties {@code metadata} changes against the snapshot's: known values, retention
   * floors, CHECK constraint expressions; a constraint added to an existing table only once the
   * transaction checked its rows ({@link OptimisticTransaction#readAllRowsForConstraints}) or while
   * it holds no files; in-commit timestamps only on a new table.
   *
   * @param session the session (constraint expressions are resolved in it)
   * @param snapshot the snapshot the transaction read
   * @param metadata the new metadata
   * @param table the table path, for messages
   * @param readAllAndEmpty records that the transaction read every file; true when its rows were
   *     checked or there are none
   * @throws io.filecommit.errors.FileCommitException the property classes of {@link TableConfig};
   *     {@code DELTA_ADD_CONSTRAINTS} for a constraint on a table with unchecked data, {@code
   *     FILECOMMIT_FEATURE_ONLY_ON_NEW_TABLE} for in-commit timestamps switched on for an existing table
   */
  static void checkProperties(SparkSession session, Snapshot snapshot, Metadata metadata, String table,
      BooleanSupplier readAllAndEmpty) {
    Map<String, String> changed = TableConfig.changed(
        snapshot.exists() ? snapshot.metadata().configuration() : Map.of(), metadata.configuration());
    TableConfig.validate(changed);
    TableConfig.validateRetentions(changed, metadata.configuration(), RetentionFloor.ms(session));
    ConstraintValidation.validateConstraintProperties(session, metadata.schema(), changed);
    if (snapshot.exists() && changed.keySet().stream().anyMatch(k -> k.startsWith(TableConfig.CONSTRAINT_PREFIX))
        && !readAllAndEmpty.getAsBoolean()) {
      throw ErrorClass.DELTA_ADD_CONSTRAINTS.error("A CHECK constraint added to the existing table "
          + table + " by this command, whose rows it does not check; use ALTER TABLE ADD CONSTRAINT or "
          + "set_table_properties", java.util.Map.of("operation", "ADD CONSTRAINT"));
    }
    if (snapshot.exists() && TableConfig.IN_COMMIT_TIMESTAMPS.fromConfiguration(changed)) {
      throw ErrorClass.FILECOMMIT_FEATURE_ONLY_ON_NEW_TABLE.error("Enabling " + TableConfig.IN_COMMIT_TIMESTAMPS
          + " on the existing table " + table + " is not supported by filecommit; set it when the table is created",
          java.util.Map.of("property", TableConfig.IN_COMMIT_TIMESTAMPS.key(), "table", table));
    }
  }
}
