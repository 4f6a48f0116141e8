/**
 * Storage under the Delta log: {@link LogStores} chooses the {@code io.delta:delta-storage}
 * {@code LogStore} that publishes a scheme's commits (as Delta's "Storage configuration"
 * documentation describes, with {@link HardLinkLocalLogStore} instead of Delta's {@code
 * LocalLogStore} for {@code file:}, so put-if-absent holds across processes), {@link FileTree}
 * lists a table one directory at a time for VACUUM and the abort sweep (as Delta's {@code
 * DeltaFileOperations.recursiveListDirs}), and {@link LocalPermissions} is Hadoop's local file
 * system setting permissions without forking {@code chmod}.
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): part of the {@code delta} layer; may import {@code delta} and {@code
 * errors}, never a package above them.
 */
package io.filecommit.delta.storage;
