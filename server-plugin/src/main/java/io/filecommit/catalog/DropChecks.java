package io.filecommit.catalog;

import io.filecommit.delta.DeltaLog;
import io.filecommit.errors.ClientExceptions;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.staging.PendingStagedCommits;
import java.util.Map;
import org.apache.spark.sql.catalyst.catalog.CatalogTableType;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.V1Table;

/**
 * What {@code DROP TABLE} and {@code DROP DATABASE ... CASCADE} check before the session catalog
 * drops a managed table, whose files Spark's {@code SessionCatalog.dropTable} deletes at once: the
 * table has no pending staged commit ({@link PendingStagedCommits#count}), because publishing one would
 * reference deleted files and aborting it is its stager's choice. External tables keep their files,
 * so nothing is checked for them.
 */
final class DropChecks {
  private DropChecks() {}

  /**
   * Refuses the drop of a managed table with pending staged commits.
   *
   * @param session the command's session
   * @param ident the table's name
   * @param path the table's location
   * @param v1 the session catalog's table entry (its type tells managed from external)
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMITS_PENDING}
   *     naming the table and the count (parameters {@code table}, {@code pending}), before anything
   *     is dropped
   */
  static void noPendingStagedCommits(SparkSession session, Identifier ident, String path, Table v1) {
    if (!(v1 instanceof V1Table t) || t.v1Table().tableType() != CatalogTableType.MANAGED()) {
      return;
    }
    int pending = Guard.errors(() -> PendingStagedCommits.count(DeltaLog.forTable(session, path)));
    if (pending > 0) {
      throw ClientExceptions.rethrow(ErrorClass.FILECOMMIT_STAGED_COMMITS_PENDING.error("Cannot drop the managed table "
          + ident + ": " + pending + " staged commits of it are pending, and dropping it deletes their files; publish "
          + "or abort them first (nothing was dropped)",
          Map.of("table", ident.toString(), "pending", Integer.toString(pending))));
    }
  }

  /**
   * {@code DROP DATABASE ... CASCADE}: every table of ours in the database needs OWNER and, when
   * managed, no pending staged commit ({@link #noPendingStagedCommits}).
   *
   * @param catalog the catalog
   * @param namespace the database
   * @throws io.filecommit.errors.FileCommitException (as the client's type) {@code
   *     FILECOMMIT_PERMISSION_DENIED} or {@code FILECOMMIT_STAGED_COMMITS_PENDING}, before anything is dropped
   * @throws org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException when it does not exist
   */
  static void cascade(FileCommitCatalog catalog, String[] namespace)
      throws org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException {
    for (Identifier ident : catalog.listTables(namespace)) {
      if (!java.util.Arrays.equals(ident.namespace(), namespace)) {
        continue; // not a table of this database (a name the listing returned that no table of it has)
      }
      Table table;
      try {
        table = catalog.loadTable(ident);
      } catch (org.apache.spark.sql.AnalysisException notLoadable) {
        continue; // dropped meanwhile, or no table this catalog can load: none of ours
      }
      if (table instanceof FileCommitTable t) {
        t.check(io.filecommit.security.Privilege.OWNER);
        noPendingStagedCommits(FileCommitCatalog.session(), ident, t.path(), catalog.sessionEntry(ident));
      }
    }
  }
}
