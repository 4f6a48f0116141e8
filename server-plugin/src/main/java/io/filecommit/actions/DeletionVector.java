package io.filecommit.actions;

import java.io.Serializable;

/**
 * Deletion vector descriptor of a data file (protocol "Deletion Vectors", "Deletion Vector
 * Descriptor Schema"): which rows of the file are deleted. filecommit never writes deletion
 * vectors; it carries an active file's descriptor into the {@code remove} that takes the file out,
 * as the protocol requires, so readers drop the right (file, DV) pair.
 *
 * @param storageType {@code u} (relative path from a UUID), {@code i} (inline) or {@code p}
 *     (absolute path)
 * @param pathOrInlineDv the encoded UUID/path, or the inline bitmap (Base85)
 * @param offset byte offset of the DV in its file, or null (inline DVs)
 * @param sizeInBytes size of the serialized DV, bytes
 * @param cardinality number of deleted rows
 */
public record DeletionVector(
    String storageType, String pathOrInlineDv, Integer offset, int sizeInBytes, long cardinality)
    implements Serializable {}
