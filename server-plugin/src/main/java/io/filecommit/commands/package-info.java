/**
 * The table commands, each one transaction and one table version, as Delta's commands of the same
 * names: writes with Spark's save modes, {@code replaceWhere} and {@code txn} ({@link
 * WriteIntoDelta}, Delta's {@code WriteIntoDelta}); {@code ALTER TABLE ... SET TBLPROPERTIES}
 * ({@link SetTablePropertiesCommand}); DELETE and UPDATE ({@link DeleteCommand}, {@link
 * UpdateCommand}) over what they share with MERGE ({@link RowLevelChange}, {@link RowLevelOutput},
 * {@link MarkedRows} for deletion vectors, Delta's {@code DMLWithDeletionVectorsHelper}; the
 * read package's {@code TableScan}; {@code StatsSkipping}); maintenance ({@link VacuumCommand};
 * {@link RestoreCommand}; OPTIMIZE and auto compaction in the {@code commands.optimize}
 * sub-package, MERGE in {@code commands.merge}); and staged commits ({@link StageFilesCommand},
 * {@link StagedCommits}). Every check runs before any file is written, and the txn package's
 * {@code CommandResult} is what a command committed.
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import every package below it ({@code files}, {@code txn}, {@code
 * read}, {@code constraints}, {@code schema}, {@code deletionvectors}, {@code delta}, {@code
 * errors}), and {@code sink} on its own layer; never {@code connect}.
 */
package io.filecommit.commands;
