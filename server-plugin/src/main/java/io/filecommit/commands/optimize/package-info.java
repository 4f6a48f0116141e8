/**
 * File compaction as one table version: {@link OptimizeCommand} (Delta's {@code OptimizeTableCommand}
 * and {@code OptimizeExecutor}: bins of small files per partition, {@code OPTIMIZE ... WHERE},
 * {@code ZORDER BY} through {@code ZOrder} and {@code Hilbert}, liquid clustering), the plan of its
 * bins ({@code OptimizePlan}), and auto compaction after a commit ({@link AutoCompact}, Delta's
 * {@code AutoCompact} post-commit hook, {@code delta.autoOptimize.autoCompact}). Protocol "Add File
 * and Remove File" ({@code dataChange = false}).
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build): part of the {@code commands} layer; may
 * import {@code commands} and every package below it, never {@code connect}.
 */
package io.filecommit.commands.optimize;
