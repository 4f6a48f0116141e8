package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.io.Serializable;

/**
 * Deletion vector descriptor of a data file (protocol "Deletion Vectors", "Deletion Vector
 * Descriptor Schema"; Delta's {@code DeletionVectorDescriptor}): which rows of the file are deleted.
 *
 * @param storageType {@code u} (relative path from a UUID), {@code i} (inline) or {@code p}
 *     (absolute path)
 * @param pathOrInlineDv the encoded UUID/path, or the inline bitmap (Base85)
 * @param offset byte offset of the DV in its file, or null (inline DVs)
 * @param sizeInBytes size of the serialized DV, bytes
 * @param cardinality number of deleted rows
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"storageType", "pathOrInlineDv", "offset", "sizeInBytes", "cardinality"})
public record DeletionVectorDescriptor(
    String storageType, String pathOrInlineDv, Integer offset, int sizeInBytes, long cardinality)
    implements Serializable {}
