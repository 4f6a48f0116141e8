package io.filecommit.connect;

import io.filecommit.commands.optimize.OptimizeCommand;
import io.filecommit.txn.CommandResult;
import io.filecommit.commands.SetTablePropertiesCommand;
import io.filecommit.commands.WriteIntoDelta;
import io.filecommit.proto.v1.WriteCommand;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;

/**
 * Serves the table commands of the contract ({@code commands.proto}: {@code WriteCommand}, {@code
 * SetTablePropertiesCommand}, {@code OptimizeCommand}, {@code RestoreCommand}, {@code VacuumCommand})
 * with {@link WriteIntoDelta}, {@link SetTablePropertiesCommand} and the maintenance commands.
 */
final class TableCommands {
  private TableCommands() {}

  /** Runs a {@code WriteCommand}. */
  static CommandResult write(WriteCommand cmd, SparkConnectPlanner planner) {
    java.util.Map<String, String> options = ServerSettings.options(planner.session(), cmd.getOptionsMap());
    String path = CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.WRITE);
    CommandInput.ownerToCreate(planner.session(), path, options);
    return WriteIntoDelta.run(planner.session(),
        CommandInput.dataFrame(planner, cmd.hasInput() ? cmd.getInput() : null, "WriteCommand"), path,
        ProtoConversions.toMode(cmd.getMode()), cmd.getPartitionByList(),
        options, withClustering(cmd), cmd.getChangeData(),
        ProtoConversions.txnOf(cmd.hasTxn(), cmd.getTxn()),
        StagingCommands.stage(cmd.hasStage(), cmd.getStage(), planner));
  }

  /**
   * The table properties of a {@code WriteCommand}, with its {@code cluster_by} as {@link
   * io.filecommit.delta.Clustering#PROPERTY} (how {@link WriteIntoDelta} takes clustering columns).
   */
  static java.util.Map<String, String> withClustering(WriteCommand cmd) {
    if (cmd.getClusterByCount() == 0) {
      return cmd.getTablePropertiesMap();
    }
    java.util.Map<String, String> out = new java.util.LinkedHashMap<>(cmd.getTablePropertiesMap());
    out.put(io.filecommit.delta.Clustering.PROPERTY, io.filecommit.delta.Clustering.toProperty(cmd.getClusterByList()));
    return out;
  }

  /**
   * The table root of a command that names a table of the server's catalog instead of a path: the
   * location the session catalog ({@code spark_catalog}) has for that Delta table.
   *
   * @param path the command's path ("" when it names a table)
   * @param table the command's table name ("" when it gives a path)
   * @param planner the session's planner
   * @return the path to use (not yet checked against the allowed roots)
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} when both
   *     are given, {@code INVALID_SCHEMA_OR_RELATION_NAME} for a name that does not parse, {@code
   *     DELTA_TABLE_NOT_FOUND} for an unknown name or a table that is not a Delta table
   */
  static String tablePath(String path, String table, SparkConnectPlanner planner) {
    return tablePath(path, table, planner.session());
  }

  /** {@link #tablePath(String, String, SparkConnectPlanner)} in {@code session}. */
  static String tablePath(String path, String table, org.apache.spark.sql.classic.SparkSession session) {
    return tablePath(path, table, session, false);
  }

  /**
   * The root of a table by name, as {@link #tablePath(String, String, SparkConnectPlanner)}; with
   * {@code parquet}, of a Parquet table (a file sink's directory, {@code WriteBatchCommand.table})
   * instead of a Delta table ({@code DELTA_TABLE_NOT_FOUND} for any other table).
   */
  static String tablePath(String path, String table, org.apache.spark.sql.classic.SparkSession session,
      boolean parquet) {
    if (table == null || table.isEmpty()) {
      return path;
    }
    return named(path, table, session, parquet).location();
  }

  /**
   * A table of the session catalog by name: its qualified name ({@code spark_catalog.db.t}, lower
   * case, as grants name tables) and its location (not yet checked against the allowed roots).
   *
   * @param qualified the qualified name
   * @param location the table's root
   */
  record Named(String qualified, String location) {}

  /**
   * Resolves a table name as {@link #tablePath(String, String, org.apache.spark.sql.classic.SparkSession,
   * boolean)} does.
   *
   * @param path the command's path (must be empty)
   * @param table the table name (not empty)
   * @param session the session
   * @param parquet a Parquet table (a file sink) instead of a Delta table
   * @return the qualified name and the location
   */
  static Named named(String path, String table, org.apache.spark.sql.classic.SparkSession session, boolean parquet) {
    if (path != null && !path.isEmpty()) {
      throw io.filecommit.errors.DeltaErrors.malformed("Give either a path or a table name, not both (path '" + path
          + "', table '" + table + "')");
    }
    java.util.List<String> parts;
    try {
      parts = scala.jdk.javaapi.CollectionConverters.asJava(session.sessionState().sqlParser()
          .parseMultipartIdentifier(table));
    } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
      throw io.filecommit.errors.ErrorClass.INVALID_SCHEMA_OR_RELATION_NAME.error("Not a table name: '" + table + "'",
          java.util.Map.of("name", table));
    }
    String name = parts.get(parts.size() - 1);
    String[] ns = parts.subList(0, parts.size() - 1).toArray(new String[0]);
    if (ns.length == 0) {
      ns = session.sessionState().catalogManager().currentNamespace();
    }
    java.util.Map<String, String> notFound = java.util.Map.of("tableName", table);
    try {
      org.apache.spark.sql.connector.catalog.Table t = ((org.apache.spark.sql.connector.catalog.TableCatalog) session
          .sessionState().catalogManager().catalog("spark_catalog"))
          .loadTable(org.apache.spark.sql.connector.catalog.Identifier.of(ns, name));
      String location = t.properties().get(org.apache.spark.sql.connector.catalog.TableCatalog.PROP_LOCATION);
      String provider = t.properties().get(org.apache.spark.sql.connector.catalog.TableCatalog.PROP_PROVIDER);
      if (location == null || provider == null || !(parquet ? provider.equalsIgnoreCase("parquet")
          : provider.equalsIgnoreCase("delta") || provider.equalsIgnoreCase("filecommit"))) {
        throw io.filecommit.errors.ErrorClass.DELTA_TABLE_NOT_FOUND.error("Table " + table + " is not a "
            + (parquet ? "Parquet" : "Delta") + " table", notFound);
      }
      return new Named(("spark_catalog." + String.join(".", ns) + "." + name).toLowerCase(java.util.Locale.ROOT),
          location);
    } catch (org.apache.spark.sql.catalyst.analysis.NoSuchTableException e) {
      throw io.filecommit.errors.ErrorClass.DELTA_TABLE_NOT_FOUND.error("Table " + table + " not found", notFound);
    }
  }

  /** Runs a {@code SetTablePropertiesCommand}. */
  static CommandResult setTableProperties(io.filecommit.proto.v1.SetTablePropertiesCommand cmd,
      SparkConnectPlanner planner) {
    return SetTablePropertiesCommand.run(planner.session(),
        CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.MAINTAIN),
        cmd.getPropertiesMap(), ProtoConversions.txnOf(cmd.hasTxn(), cmd.getTxn()),
        StagingCommands.stage(cmd.hasStage(), cmd.getStage(), planner));
  }

  /** Runs an {@code OptimizeCommand} and answers like a write, with the OPTIMIZE metrics. */
  static void optimize(io.filecommit.proto.v1.OptimizeCommand cmd, SparkConnectPlanner planner) {
    io.filecommit.commands.optimize.OptimizeCommand.Result r = io.filecommit.commands.optimize.OptimizeCommand.run(planner.session(),
        CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.MAINTAIN),
        cmd.getWhereList(),
        cmd.hasTargetFileSize() ? cmd.getTargetFileSize() : null, cmd.getZorderByList());
    ResponseStream.respond(r.commit(), false, ResponseStream.of(planner), r.operationMetrics());
  }

  /** Runs a {@code RestoreCommand} and answers like a write, with the RESTORE metrics. */
  static void restore(io.filecommit.proto.v1.RestoreCommand cmd, SparkConnectPlanner planner) {
    io.filecommit.commands.optimize.OptimizeCommand.Result r = io.filecommit.commands.RestoreCommand.run(planner.session(),
        CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.MAINTAIN),
        cmd.hasVersion() ? cmd.getVersion() : null,
        cmd.hasTimestamp() ? cmd.getTimestamp() : null);
    ResponseStream.respond(r.commit(), false, ResponseStream.of(planner), r.operationMetrics());
  }

  /** Runs a {@code VacuumCommand}: the files in batches of 10,000, then the summary. */
  static void vacuum(io.filecommit.proto.v1.VacuumCommand cmd, SparkConnectPlanner planner) {
    String path = CommandInput.path(cmd.getPath(), cmd.getTable(), planner, io.filecommit.security.Privilege.MAINTAIN);
    io.filecommit.commands.VacuumCommand.Result r = io.filecommit.commands.VacuumCommand.run(planner.session(), path,
        cmd.hasRetentionHours() ? cmd.getRetentionHours() : null, cmd.getDryRun());
    java.util.function.Consumer<io.filecommit.proto.v1.VacuumResponse> out = ResponseStream.of(planner);
    for (int i = 0; i < r.files().size(); i += 10_000) {
      out.accept(io.filecommit.proto.v1.VacuumResponse.newBuilder().setFiles(io.filecommit.proto.v1.VacuumFileBatch
          .newBuilder().addAllFiles(r.files().subList(i, Math.min(r.files().size(), i + 10_000)))).build());
    }
    out.accept(io.filecommit.proto.v1.VacuumResponse.newBuilder().setSummary(io.filecommit.proto.v1.VacuumSummary
        .newBuilder().setDryRun(r.dryRun()).setNumFiles(r.files().size()).setNumBytes(r.bytes())
        .setTablePath(path).putAllObjectStoreRequests(ObjectStoreRequests.counts())).build());
  }
}
