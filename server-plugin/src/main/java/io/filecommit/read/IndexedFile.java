package io.filecommit.read;

import java.util.Map;

/**
 * One data file a scan may read: the file as the log names it (protocol "Add File and Remove File",
 * "Add CDC File"), the typed values of the scan's partition columns, and its statistics.
 *
 * @param path the log path (URI-encoded, relative to the table root or absolute)
 * @param size bytes
 * @param modificationTime ms since the epoch
 * @param partitionValues the file's {@code partitionValues}, keyed by physical column name (null
 *     values for NULL partitions)
 * @param stats the file's statistics JSON, or null
 * @param constants values of the scan's extra constant columns for this file (change feed:
 *     change type, commit version, commit timestamp), in the order the index's partition schema
 *     lists them after the table's partition columns; empty for a snapshot scan
 * @param key the key the scan's deletion vector filters know this entry by (the file's URI, plus
 *     the commit and change type in a change feed scan)
 */
public record IndexedFile(String path, long size, long modificationTime, Map<String, String> partitionValues,
    String stats, Object[] constants, String key) {}
