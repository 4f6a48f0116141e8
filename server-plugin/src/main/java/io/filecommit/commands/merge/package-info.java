/**
 * {@code MERGE INTO} as one table version: {@link MergeIntoCommand} (Delta's {@code
 * MergeIntoCommand}: touched files found in a first pass, only they rewritten in the second, with
 * change rows), its WHEN clauses ({@link MergeClause}, Delta's {@code DeltaMergeIntoClause}), and
 * on tables that take deletion vectors {@code MergeWithDeletionVectors} (Delta's {@code
 * ClassicMergeExecutor} with {@code shouldWriteDeletionVectors}). Protocol "Add File and Remove
 * File", "Change Data Files", "Deletion Vectors".
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): part of the {@code commands} layer; may import {@code commands} and
 * every package below it, never {@code connect}.
 */
package io.filecommit.commands.merge;
