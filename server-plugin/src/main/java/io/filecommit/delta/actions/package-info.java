/**
 * Every action of a Delta commit as a Jackson-serialized record (protocol "Actions"; Delta's
 * {@code SingleAction} and action classes): {@link AddFile}, {@link RemoveFile}, {@link
 * AddCDCFile}, {@link Protocol}, {@link Metadata}, {@link SetTransaction}, {@link CommitInfo},
 * {@link DomainMetadata} and the {@link DeletionVectorDescriptor} of a file, with {@link Actions}
 * reading and writing the one-action-per-line JSON of a commit file. Field names and presence follow
 * the protocol; unknown fields and action types of other writers are ignored when reading.
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): part of the {@code delta} layer; may import {@code delta} and {@code
 * errors}, never a package above them.
 *
 * <p>The file actions are {@code Serializable} only to travel from write tasks to the driver of
 * the same server; their Java serialized form (a record's is its components) is no format of the
 * project, so it is left out of the generated documentation.
 *
 * @serial exclude
 */
package io.filecommit.delta.actions;
