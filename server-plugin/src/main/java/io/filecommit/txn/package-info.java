/**
 * Transactions on a Delta table (protocol "Optimistic Concurrency Control", "Conflict detection",
 * "Commit Provenance Information"): {@link OptimisticTransaction} (Delta's {@code
 * OptimisticTransaction}: read version, metadata and protocol changes, what was read, the commit
 * loop) publishes through {@code LogPublisher}, which decides every outcome by reading the version
 * back (Delta's {@code doCommit} with {@code detectIdempotentSelfCommit}); {@code ConflictChecker}
 * judges a lost race against a {@link WinningCommitSummary} (Delta's classes of those names);
 * {@link Operation} is the {@code commitInfo} of one command (Delta's {@code DeltaOperations});
 * {@code PostCommitHooks} (Delta's {@code PostCommitHook}s: snapshot cache, checkpoints, log
 * clean-up) and {@code GroupCommit} (blind appends of one table published as one version) run
 * around commits; {@link StagedCommit}, {@link StagingStore} and {@link StagedPublish} hold a
 * commit back until a client publishes or aborts it (Delta has no such record).
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import {@code constraints}, {@code schema}, {@code
 * deletionvectors}, {@code delta} and {@code errors} and, on its own layer, {@code read}; never
 * {@code files} or a package above it.
 */
package io.filecommit.txn;
