/**
 * Transactions on a Delta table (protocol "Optimistic Concurrency Control", "Conflict detection",
 * "Commit Provenance Information"): {@link OptimisticTransaction} (Delta's {@code
 * OptimisticTransaction}: read version, metadata and protocol changes, what was read) commits
 * through its {@link CommitLoop}, which publishes through {@code LogPublisher}, which decides every outcome by reading the version
 * back (Delta's {@code doCommit} with {@code detectIdempotentSelfCommit}); {@code ConflictChecker}
 * judges a lost race against a {@link WinningCommitSummary} (Delta's classes of those names);
 * {@link Operation} is the {@code commitInfo} of one command (Delta's {@code DeltaOperations});
 * {@code PostCommitHooks} (Delta's {@code PostCommitHook}s: snapshot cache, checkpoints, log
 * clean-up) and {@code GroupCommit} (blind appends of one table published as one version) run
 * around commits. A transaction given a {@link CommitStager} (as Delta hands its transaction a
 * {@code CommitCoordinatorClient}) stores its commit there instead of publishing it; the staging
 * sub-package implements it, and publishes a staged commit later through a {@link CommitLoop}.
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import {@code constraints}, {@code schema}, {@code
 * deletionvectors}, {@code delta} and {@code errors} and, on its own layer, {@code read}; never
 * {@code files} or a package above it, nor its staging sub-package (which imports it).
 */
package io.filecommit.txn;
