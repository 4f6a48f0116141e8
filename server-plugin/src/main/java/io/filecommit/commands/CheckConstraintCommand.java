package io.filecommit.commands;

import io.filecommit.txn.CommandResult;
import io.filecommit.read.TableScan;
import io.filecommit.constraints.ConstraintValidation;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;

/**
 * ALTER TABLE ADD / DROP CONSTRAINT of a CHECK constraint on an existing Delta table, each one
 * metadata-only commit of the table property {@code delta.constraints.<name>} (protocol "Check
 * Constraints"; Delta's {@code AlterTableAddConstraintDeltaCommand} and {@code
 * AlterTableDropConstraintDeltaCommand}).
 *
 * <p>ADD, in one {@link OptimisticTransaction}: the name (kept lower-case in the property, as Delta
 * does) must be new (case-insensitive); the expression is validated ({@link ConstraintValidation});
 * every row of the snapshot the transaction read ({@link TableScan}: deletion vectors honoured) is
 * checked, a row whose expression is false or null violating it (Delta's rule); the transaction
 * records that it read every file, so an append that lands between the check and the commit makes
 * the commit fail with {@code DELTA_CONCURRENT_APPEND} (as Delta's does) instead of committing a
 * constraint the new rows may violate. The commit raises the protocol as the constraint requires
 * (writer version 3, or the {@code checkConstraints} writer feature on a table with features).
 */
public final class CheckConstraintCommand {
  private CheckConstraintCommand() {}

  /**
   * Adds a CHECK constraint.
   *
   * @param session Spark session
   * @param path table root
   * @param name the constraint's name as given
   * @param expr the SQL boolean expression over the table's columns
   * @return the commit (no file actions)
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_TABLE_NOT_FOUND} without a table,
   *     {@code DELTA_CONSTRAINT_ALREADY_EXISTS} (parameters {@code constraintName}, {@code
   *     oldConstraint}), the expression classes of {@link ConstraintValidation}, {@code
   *     DELTA_NEW_CHECK_CONSTRAINT_VIOLATION} (parameters {@code numRows}, {@code tableName},
   *     {@code checkConstraint}) when rows violate it, {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE},
   *     conflict classes ({@code DELTA_CONCURRENT_APPEND} when rows were appended meanwhile); all
   *     before anything is committed
   */
  public static CommandResult add(SparkSession session, String path, String name, String expr) {
    long start = System.currentTimeMillis();
    OptimisticTransaction txn = open(session, path);
    Snapshot snapshot = txn.snapshot();
    Map<String, String> conf = new LinkedHashMap<>(snapshot.metadata().configuration());
    String existing = find(conf, name);
    if (existing != null) {
      throw ErrorClass.DELTA_CONSTRAINT_ALREADY_EXISTS.error("Constraint '" + name + "' already exists on "
          + txn.table() + " (" + conf.get(existing) + "); drop it first",
          Map.of("constraintName", name, "oldConstraint", conf.get(existing)));
    }
    String key = TableConfig.CONSTRAINT_PREFIX + name.toLowerCase(Locale.ROOT);
    checkRows(session, txn, Map.of(key, expr));
    conf.put(key, expr);
    txn.updateMetadata(snapshot.metadata().withConfiguration(conf));
    long version = txn.commit(List.of(), new Operation.Constraint(true, name, expr));
    return result(txn, version, start);
  }

  /**
   * Drops a CHECK constraint; with {@code ifExists}, a missing one still commits the unchanged
   * metadata, as Delta does ({@code existed=false} in the commit's parameters).
   *
   * @param session Spark session
   * @param path table root
   * @param name the constraint's name (case-insensitive)
   * @param ifExists whether a missing constraint is no error
   * @return the commit (no file actions)
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_TABLE_NOT_FOUND}, {@code
   *     DELTA_CONSTRAINT_DOES_NOT_EXIST} (parameters {@code constraintName}, {@code tableName})
   *     without {@code ifExists}, conflict classes; all before anything is committed
   */
  public static CommandResult drop(SparkSession session, String path, String name, boolean ifExists) {
    long start = System.currentTimeMillis();
    OptimisticTransaction txn = open(session, path);
    Snapshot snapshot = txn.snapshot();
    Map<String, String> conf = new LinkedHashMap<>(snapshot.metadata().configuration());
    String key = find(conf, name);
    if (key == null && !ifExists) {
      throw ErrorClass.DELTA_CONSTRAINT_DOES_NOT_EXIST.error("Cannot drop nonexistent constraint " + name + " from "
          + txn.table() + "; nothing was committed (use IF EXISTS)",
          Map.of("constraintName", name, "tableName", txn.table()));
    }
    String expr = key == null ? null : conf.remove(key);
    txn.updateMetadata(snapshot.metadata().withConfiguration(conf));
    long version = txn.commit(List.of(), new Operation.Constraint(false, name, expr));
    return result(txn, version, start);
  }

  /**
   * Checks the rows of the snapshot a transaction read against CHECK constraints it is about to add
   * and records that it read every file ({@link OptimisticTransaction#readAllRowsForConstraints}).
   *
   * @param session Spark session
   * @param txn the transaction
   * @param added {@code delta.constraints.<name>} -> expression, the constraints added or changed
   * @throws io.filecommit.errors.FileCommitException the expression classes of {@link
   *     ConstraintValidation}; {@code DELTA_NEW_CHECK_CONSTRAINT_VIOLATION} with the count of
   *     violating rows of the first violated constraint
   */
  static void checkRows(SparkSession session, OptimisticTransaction txn, Map<String, String> added) {
    Snapshot snapshot = txn.snapshot();
    ConstraintValidation.validateConstraintProperties(session, snapshot.metadata().schema(), added);
    txn.readAllRowsForConstraints();
    if (snapshot.allFiles().isEmpty()) {
      return;
    }
    var rows = TableScan.read(session, txn.deltaLog(), snapshot.metadata(), snapshot.allFiles());
    for (Map.Entry<String, String> c : added.entrySet()) {
      long bad = rows.filter(functions.not(functions.coalesce(functions.expr(c.getValue()), functions.lit(false))))
          .count();
      if (bad > 0) {
        throw ErrorClass.DELTA_NEW_CHECK_CONSTRAINT_VIOLATION.error(bad + " rows in " + txn.table()
            + " violate the new CHECK constraint (" + c.getValue() + "); nothing was committed",
            Map.of("numRows", Long.toString(bad), "tableName", txn.table(), "checkConstraint", c.getValue()));
      }
    }
  }

  private static OptimisticTransaction open(SparkSession session, String path) {
    OptimisticTransaction txn = new OptimisticTransaction(session, DeltaLog.forTable(session, path));
    if (!txn.snapshot().exists()) {
      throw ErrorClass.DELTA_TABLE_NOT_FOUND.error("No Delta table at " + txn.table() + " to change constraints of");
    }
    TableFeatures.checkWritable(txn.snapshot().protocol(), txn.snapshot().metadata(), txn.table());
    return txn;
  }

  /** The property key of a constraint name in a configuration (case-insensitive), or null. */
  private static String find(Map<String, String> conf, String name) {
    String wanted = TableConfig.CONSTRAINT_PREFIX + name;
    for (String k : conf.keySet()) {
      if (k.equalsIgnoreCase(wanted)) {
        return k;
      }
    }
    return null;
  }

  private static CommandResult result(OptimisticTransaction txn, long version, long start) {
    return new CommandResult(version, txn.committed(), txn.table(), List.of(), List.of(), List.of(), 0, 0,
        System.currentTimeMillis() - start, txn.attempts(), RowMetrics.NONE, txn.staged());
  }
}
