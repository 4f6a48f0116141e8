/**
 * Staged commits (write, audit, publish): a transaction's commit held back and later published as
 * one table version, or aborted. {@link StageRequest} is the {@link io.filecommit.txn.CommitStager}
 * a command hands its transaction; it stores a {@link StagedCommit} (the read version, what the
 * transaction read, and its actions exactly as the commit will write them; protocol "Actions")
 * with {@link StagingStore} under {@code _delta_log/_staged}, a folder Delta readers and writers
 * never list (protocol "Delta Log Entries"). {@link StagedPublish} commits one or several staged
 * commits through the transaction's {@link io.filecommit.txn.CommitLoop}, judged by Delta's
 * conflict rules against every version since each read version (protocol "Optimistic Concurrency
 * Control"); publish and abort are ordered by one put-if-absent claim per staged commit ({@code
 * StagingClaims}), and abort and expiry ({@code StagingSweeper}) delete the files only when no
 * version holds them. {@link StagedFiles} says which files VACUUM must keep for the records and how their paths
 * are stored (protocol "Add File and Remove File", "Deletion Vector Descriptor Schema"); {@link
 * PendingStagedCommits} bounds the records per table. Delta has no commit held back for a client:
 * its coordinated commits hold a commit only until the coordinator backfills it.
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build): part of the {@code txn} layer; may import
 * {@code txn} and every package below it, never {@code files} or a package above it. {@code txn}
 * never imports it: the transaction reaches it only through the {@code CommitStager} it is handed.
 */
package io.filecommit.txn.staging;
