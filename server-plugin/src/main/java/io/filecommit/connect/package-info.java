/**
 * The Spark Connect side, the top layer: {@code FileCommitPlugin} (Spark's {@code
 * org.apache.spark.sql.connect.plugin.CommandPlugin}) unpacks the {@code filecommit.v1} commands
 * of {@code Command.extension}, checks paths against the allowed roots ({@code AllowedRoots}) and
 * session settings against the server-owned ones ({@code ServerSettings}), builds the inputs with
 * the session's planner ({@code CommandInput}, Spark Connect's {@code SparkConnectPlanner}), hands
 * each command family to its handler ({@code TableCommands}, {@code RowLevelCommands}, {@code
 * StagingCommands}, {@code SinkCommands}), and streams the answers back as {@code
 * ExecutePlanResponse.extension} messages ({@code ResponseStream}); {@code ProtoConversions}
 * converts between contract messages and domain records. Delta Connect's messages (delta-spark's
 * {@code DeltaTable} API over Spark Connect, {@code proto/delta/connect}) are answered by {@code
 * DeltaConnectRelations} (a {@code RelationPlugin}) and {@code DeltaConnectCommands} through the same
 * commands and checks ({@code DeltaConnectTables}), and left to delta-spark's own plugins when those
 * are on the server.
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import every package below it; the only package that uses the
 * generated contract classes ({@code proto/filecommit/v1}, {@code proto/delta/connect}); nothing
 * imports it.
 */
package io.filecommit.connect;
