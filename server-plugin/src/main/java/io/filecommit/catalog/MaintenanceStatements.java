package io.filecommit.catalog;

import io.filecommit.commands.ConvertToDeltaCommand;
import io.filecommit.commands.MaintenanceResults;
import io.filecommit.commands.optimize.OptimizeCommand;
import io.filecommit.commands.RestoreCommand;
import io.filecommit.commands.VacuumCommand;
import io.filecommit.connect.AllowedRoots;
import io.filecommit.delta.DeltaLog;
import io.filecommit.errors.ErrorClass;
import io.filecommit.security.Privilege;
import io.filecommit.read.TableDescriptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Delta's maintenance statements ({@link DeltaStatement}) as commands over the plugin's own
 * commands, each returning the rows Delta's command returns (column names and types of Delta's
 * {@code OptimizeTableCommand}, {@code VacuumTableCommand}, {@code RestoreTableCommand}, {@code
 * DescribeDeltaHistoryCommand}, {@code DescribeDeltaDetailCommand}):
 *
 * <ul>
 *   <li>OPTIMIZE: {@link OptimizeCommand} (the same commit path, conflict rules and error classes
 *       as the contract's command); one row {@code path} (string, the table root) and {@code
 *       metrics} (struct {@link MaintenanceResults#OPTIMIZE_METRICS}: file counts, sizes in bytes, times in ms since
 *       the epoch);
 *   <li>VACUUM: {@link VacuumCommand}; one row per file with DRY RUN (column {@code path}, the
 *       file's absolute URI), else one row with the table root;
 *   <li>RESTORE: {@link RestoreCommand}; one row of longs {@code table_size_after_restore} (bytes),
 *       {@code num_of_files_after_restore}, {@code num_removed_files}, {@code num_restored_files},
 *       {@code removed_files_size}, {@code restored_files_size} (bytes);
 *   <li>DESCRIBE HISTORY: the reader's history, newest first, in Delta's columns ({@link
 *       TableDescriptions#history}; provenance this server does not record is null);
 *   <li>DESCRIBE DETAIL: one row of {@link TableDescriptions#DETAIL} from the latest snapshot;
 *   <li>CONVERT TO DELTA {@code parquet.`/path`}: {@link ConvertToDeltaCommand}; no rows, as
 *       Delta's; the path needs OWNER (a convert creates a table); {@code delta.`/path`} converts nothing.
 * </ul>
 *
 * A table is named ({@code db.t}, {@code delta.`/path`}) or given as a path string; a name resolves
 * through the session's catalog when the statement runs ({@code TABLE_OR_VIEW_NOT_FOUND} when it
 * does not exist, {@code DELTA_MISSING_DELTA_TABLE} when it is not a Delta table); a path must lie
 * under the server's allowed roots. Every error is raised as the client's type ({@link Guard}).
 * A refused statement ({@link DeltaStatement.Kind#REFUSED}) fails when run with {@code
 * FILECOMMIT_UNSUPPORTED_OPERATION} (parameter {@code operation} naming it; {@code
 * DELTA_OPTIMIZE_FULL_NOT_SUPPORTED} for OPTIMIZE FULL), and one whose target is a time-travel
 * version, or OPTIMIZE / VACUUM / RESTORE of a time-travel name ({@code `t@v1`}), with {@code
 * FILECOMMIT_TIME_TRAVEL_WRITE}, before anything is read or committed.
 */
final class MaintenanceStatements {
  /** OPTIMIZE's columns ({@link MaintenanceResults#OPTIMIZE}). */
  static final StructType OPTIMIZE = MaintenanceResults.OPTIMIZE;
  static final StructType VACUUM = new StructType().add("path", DataTypes.StringType, true);
  /** RESTORE's columns ({@link MaintenanceResults#RESTORE}). */
  static final StructType RESTORE = MaintenanceResults.RESTORE;
  /** DESCRIBE HISTORY's columns ({@link TableDescriptions#HISTORY}). */
  static final StructType HISTORY = TableDescriptions.HISTORY;
  /** DESCRIBE DETAIL's columns ({@link TableDescriptions#DETAIL}). */
  static final StructType DETAIL = TableDescriptions.DETAIL;

  private MaintenanceStatements() {}

  /**
   * The command of a statement; it runs when Spark executes the plan.
   *
   * @param session the session
   * @param s the statement
   * @return the command node, output columns as described above
   */
  static LogicalPlan plan(SparkSession session, DeltaStatement s) {
    String text = s.kind() == DeltaStatement.Kind.REFUSED ? s.refused() : s.kind() + " " + s.target();
    return switch (s.kind()) {
      case OPTIMIZE -> node(text, OPTIMIZE, () -> optimize(session, s));
      case VACUUM -> node(text, VACUUM, () -> vacuum(session, s));
      case RESTORE -> node(text, RESTORE, () -> restore(session, s));
      case HISTORY -> node(text, HISTORY, () -> history(session, s));
      case DETAIL -> node(text, DETAIL, () -> detail(session, s));
      case CONVERT -> node("CONVERT TO DELTA " + s.target(), new StructType(), () -> convert(session, s));
      case REFUSED -> node(s.refused(), VACUUM, () -> Guard.errors(() -> {
        ErrorClass c = s.refused().equals("OPTIMIZE FULL") ? ErrorClass.DELTA_OPTIMIZE_FULL_NOT_SUPPORTED
            : s.refusedTimeTravel() ? ErrorClass.FILECOMMIT_TIME_TRAVEL_WRITE
            : ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION;
        throw c.error(s.refused() + " is not supported by this server; nothing was run or committed",
            Map.of("operation", s.refused()));
      }));
    };
  }

  private static LogicalPlan node(String text, StructType schema, java.util.function.Supplier<List<Row>> body) {
    @SuppressWarnings("unchecked")
    scala.collection.immutable.Seq<org.apache.spark.sql.catalyst.expressions.Attribute> out =
        (scala.collection.immutable.Seq<org.apache.spark.sql.catalyst.expressions.Attribute>) (Object)
            DataTypeUtils.toAttributes(schema);
    return new CommandNode(text, out, body);
  }

  private static List<Row> optimize(SparkSession session, DeltaStatement s) {
    long start = System.currentTimeMillis();
    return Guard.run(session, Map.of(), () -> {
      Located t = locate(session, s);
      OptimizeCommand.Result r = OptimizeCommand.run(session, t.path, s.where() == null ? List.of() : List.of(s.where()),
          null, s.zOrderBy());
      return List.of(MaintenanceResults.optimize(session, t.path, r, start));
    });
  }

  private static List<Row> vacuum(SparkSession session, DeltaStatement s) {
    return Guard.run(session, Map.of(), () -> {
      Located t = locate(session, s);
      VacuumCommand.Result r = VacuumCommand.run(session, t.path, s.retainHours(), s.dryRun());
      List<Row> rows = new ArrayList<>();
      if (s.dryRun()) {
        for (String f : r.files()) {
          rows.add(RowFactory.create(f));
        }
      } else {
        rows.add(RowFactory.create(DeltaLog.forTable(session, t.path).tablePath().toString()));
      }
      return rows;
    });
  }

  private static List<Row> restore(SparkSession session, DeltaStatement s) {
    return Guard.run(session, Map.of(), () -> {
      Located t = locate(session, s);
      return List.of(MaintenanceResults.restore(RestoreCommand.run(session, t.path, s.version(), s.timestamp())));
    });
  }

  private static List<Row> convert(SparkSession session, DeltaStatement s) {
    return Guard.run(session, Map.of(), () -> {
      ConvertToDeltaCommand.Target t = ConvertToDeltaCommand.target(s.table());
      StructType partitions = s.where() == null ? null : StructType.fromDDL(s.where());
      String path = AllowedRoots.allowedPath(t.path(), session, Privilege.OWNER);
      if (!t.delta()) {
        ConvertToDeltaCommand.run(session, path, partitions);
      }
      return List.of();
    });
  }

  private static List<Row> history(SparkSession session, DeltaStatement s) {
    return Guard.errors(() -> {
      if (s.limit() != null && s.limit() < 0) {
        throw ErrorClass.INVALID_LIMIT_LIKE_EXPRESSION.error("DESCRIBE HISTORY LIMIT must be >= 0, got " + s.limit(),
            Map.of("limit", String.valueOf(s.limit()), "name", "limit", "v", String.valueOf(s.limit())));
      }
      return TableDescriptions.history(session, locate(session, s).path, s.limit());
    });
  }

  private static List<Row> detail(SparkSession session, DeltaStatement s) {
    return Guard.errors(() -> {
      Located t = locate(session, s);
      return List.of(TableDescriptions.detail(session, t.path, t.name));
    });
  }

  /**
   * A statement's table: its root, for a catalog table its qualified name (else null), and whether
   * the name asked for a time-travel version ({@code `t@v1`}).
   */
  record Located(String path, String name, boolean timeTravel) {}

  private static Located locate(SparkSession session, DeltaStatement s) {
    // OPTIMIZE, VACUUM, RESTORE maintain the table; DESCRIBE HISTORY / DETAIL read it.
    Privilege needed = s.kind() == DeltaStatement.Kind.HISTORY || s.kind() == DeltaStatement.Kind.DETAIL
        ? Privilege.READ : Privilege.MAINTAIN;
    if (s.path() != null) {
      return new Located(AllowedRoots.allowedPath(s.path(), session, needed), null, false);
    }
    Located l = locate(session, s.table(), needed);
    if (l.timeTravel && s.kind() != DeltaStatement.Kind.HISTORY && s.kind() != DeltaStatement.Kind.DETAIL) {
      throw ErrorClass.FILECOMMIT_TIME_TRAVEL_WRITE.error(s.kind() + " on a time-travel version of " + s.target()
          + "; nothing was run or committed", Map.of("operation", s.kind() + DeltaStatement.ON_TIME_TRAVEL,
          "table", s.target()));
    }
    return l;
  }

  /**
   * The root of a table by name: {@code delta.`/path`} (under the allowed roots), else the
   * session catalog's Delta table.
   *
   * @param session the session
   * @param parts the name's parts
   * @param needed the privilege the statement needs on the table (its name or location)
   * @return the root and the qualified name (null for a path)
   * @throws NoSuchTableException (thrown unchecked) when the name is not a table
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MISSING_DELTA_TABLE} when it is
   *     not a Delta table
   */
  static Located locate(SparkSession session, List<String> parts, Privilege needed) {
    if (parts.size() == 2 && FileCommitCatalog.ours(parts.get(0))
        && (parts.get(1).startsWith("/") || parts.get(1).contains(":/"))) {
      return new Located(AllowedRoots.allowedPath(parts.get(1), session, needed), null, false);
    }
    CatalogManager manager = session.sessionState().catalogManager();
    CatalogPlugin catalog = manager.currentCatalog();
    List<String> rest = parts;
    if (parts.size() > 1 && manager.isCatalogRegistered(parts.get(0))) {
      catalog = manager.catalog(parts.get(0));
      rest = parts.subList(1, parts.size());
    }
    String[] namespace = rest.size() == 1 ? manager.currentNamespace()
        : rest.subList(0, rest.size() - 1).toArray(new String[0]);
    Identifier ident = Identifier.of(namespace, rest.get(rest.size() - 1));
    if (!(catalog instanceof TableCatalog tables)) {
      throw ErrorClass.DELTA_MISSING_DELTA_TABLE.error(String.join(".", parts) + " is not a Delta table",
          Map.of("tableName", String.join(".", parts)));
    }
    Table table;
    try {
      table = tables.loadTable(ident);
    } catch (NoSuchTableException e) {
      throw sneaky(e);
    }
    String location = TableLookup.locationOf(table);
    if (location == null) {
      throw ErrorClass.DELTA_MISSING_DELTA_TABLE.error(String.join(".", parts) + " is not a Delta table",
          Map.of("tableName", String.join(".", parts)));
    }
    if (table instanceof FileCommitTable t) {
      t.check(needed); // its location is inside the roots: the catalog checked it when loading
    } else {
      location = AllowedRoots.allowedPath(location, session, needed);
    }
    List<String> qualified = new ArrayList<>();
    qualified.add(catalog.name());
    qualified.addAll(java.util.Arrays.asList(namespace));
    qualified.add(ident.name());
    return new Located(location, String.join(".", qualified),
        table instanceof FileCommitTable t && !t.readOptions().isEmpty());
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> RuntimeException sneaky(Throwable e) throws E {
    throw (E) e;
  }
}
