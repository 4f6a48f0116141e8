package io.filecommit.delta;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.internal.SnapshotImpl;
import io.delta.kernel.internal.checkpoints.CheckpointMetaData;
import io.delta.kernel.internal.checkpoints.Checkpointer;
import io.delta.kernel.internal.data.GenericRow;
import io.delta.kernel.internal.data.StructRow;
import io.delta.kernel.internal.deletionvectors.Base85Codec;
import io.delta.kernel.internal.deletionvectors.DeletionVectorUtils;
import io.delta.kernel.internal.deletionvectors.RoaringBitmapArray;
import io.delta.kernel.internal.replay.CreateCheckpointIterator;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongPredicate;
import org.apache.hadoop.fs.Path;

/**
 * The one adapter for what filecommit needs from Delta Kernel's {@code io.delta.kernel.internal}
 * packages, which Kernel 4.4's public API does not offer: the protocol's feature lists, the
 * metadata's id and creation time, the live domain metadata, the latest {@code txn} version of an application, deletion
 * vector bitmaps and the Z85 form of a UUID, the checkpoint pieces for tables whose write-time
 * rules Kernel will not checkpoint, and the cleanup of expired log files. Keeping every such call here bounds what a Kernel upgrade can
 * break to this class.
 */
public final class KernelInternals {
  private KernelInternals() {}

  /** The protocol of a Kernel snapshot (protocol "Protocol Evolution"). */
  static Protocol protocol(io.delta.kernel.Snapshot ks) {
    io.delta.kernel.internal.actions.Protocol kp = ((SnapshotImpl) ks).getProtocol();
    return new Protocol(kp.getMinReaderVersion(), kp.getMinWriterVersion(),
        kp.supportsReaderFeatures() ? kp.getReaderFeatures() : null,
        kp.supportsWriterFeatures() ? kp.getWriterFeatures() : null);
  }

  /** The metadata of a Kernel snapshot (protocol "Change Metadata"). */
  static Metadata metadata(io.delta.kernel.Snapshot ks) {
    io.delta.kernel.internal.actions.Metadata km = ((SnapshotImpl) ks).getMetadata();
    return new Metadata(km.getId(), km.getName().orElse(null), km.getDescription().orElse(null),
        km.getSchemaString(), ks.getPartitionColumnNames(), ks.getTableProperties(),
        km.getCreatedTime().orElse(null));
  }

  /** The live domain metadata of a Kernel snapshot, tombstones left out (protocol "Domain Metadata"). */
  static java.util.List<io.filecommit.delta.actions.DomainMetadata> activeDomainMetadata(io.delta.kernel.Snapshot ks) {
    return ((SnapshotImpl) ks).getActiveDomainMetadataMap().values().stream().filter(d -> !d.isRemoved())
        .map(d -> new io.filecommit.delta.actions.DomainMetadata(d.getDomain(), d.getConfiguration(), false)).toList();
  }

  /** The latest {@code txn} version of {@code appId} at a Kernel snapshot (protocol "Transaction Identifiers"). */
  static Optional<Long> latestTransactionVersion(io.delta.kernel.Snapshot ks, Engine engine, String appId) {
    return ((SnapshotImpl) ks).getLatestTransactionVersion(engine, appId);
  }

  /**
   * The row indexes a deletion vector marks deleted (protocol "Deletion Vector Format"; inline,
   * UUID-relative and absolute DVs), read by Kernel's {@code DeletionVectorUtils.loadNewDvAndBitmap}.
   *
   * @param engine the engine that reads the DV file
   * @param tablePath the table root
   * @param dv the descriptor
   * @return deleted row indexes, ascending (one file's DV: at most that file's row count)
   * @throws RuntimeException (Kernel's) when the DV cannot be read or its checksum does not match
   */
  public static long[] deletedRowIndexes(Engine engine, String tablePath, DeletionVectorDescriptor dv) {
    return DeletionVectorUtils.loadNewDvAndBitmap(engine, tablePath, kernelDescriptor(dv))._2.toArray();
  }

  /**
   * Membership in a deletion vector, read as {@link #deletedRowIndexes} does but kept as Kernel's
   * {@code RoaringBitmapArray} (one file's bitmap).
   *
   * @param engine the engine that reads the DV file
   * @param tablePath the table root
   * @param dv the descriptor
   * @return a predicate that is true for the row indexes the DV marks
   * @throws RuntimeException (Kernel's) when the DV cannot be read or its checksum does not match
   */
  public static LongPredicate deletedRows(Engine engine, String tablePath, DeletionVectorDescriptor dv) {
    RoaringBitmapArray bitmap = DeletionVectorUtils.loadNewDvAndBitmap(engine, tablePath, kernelDescriptor(dv))._2;
    return bitmap::contains;
  }

  private static io.delta.kernel.internal.actions.DeletionVectorDescriptor kernelDescriptor(DeletionVectorDescriptor dv) {
    return new io.delta.kernel.internal.actions.DeletionVectorDescriptor(dv.storageType(), dv.pathOrInlineDv(),
        Optional.ofNullable(dv.offset()), dv.sizeInBytes(), dv.cardinality());
  }

  /**
   * The absolute path of the file that holds a deletion vector stored on disk ({@code u} or {@code
   * p}; protocol "Deletion Vector Descriptor Schema"), resolved as Kernel's {@code
   * DeletionVectorDescriptor.getAbsolutePath} does.
   *
   * @param tablePath the table root
   * @param dv the descriptor; must not be inline
   * @return the file's absolute path (a URI string)
   */
  public static String deletionVectorFile(String tablePath, DeletionVectorDescriptor dv) {
    return kernelDescriptor(dv).getAbsolutePath(tablePath);
  }

  /**
   * The Z85 form of a UUID that a {@code u} deletion vector descriptor carries (protocol "Deletion
   * Vector Descriptor Schema").
   *
   * @param uuid the DV file's UUID
   * @return its 20-character Z85 encoding
   */
  public static String encodeUuid(UUID uuid) {
    return Base85Codec.encodeUUID(uuid);
  }

  /**
   * Writes a classic checkpoint of {@code version} and {@code _last_checkpoint} with Kernel's own
   * checkpoint iterator, through the engine's public Parquet writer (protocol "Checkpoints").
   *
   * @return true when written, false when the checkpoint file already existed
   * @throws IOException when writing fails
   */
  static boolean writeCheckpoint(Engine engine, io.delta.kernel.Snapshot snapshot, Path file, long version)
      throws IOException {
    long adds;
    try (CloseableIterator<FilteredColumnarBatch> actions = checkpointActions(engine, snapshot)) {
      long[] count = {0};
      engine.getParquetHandler().writeParquetFileAtomically(file.toString(),
          actions.map(b -> {
            count[0] += CheckpointTombstones.countAdds(b);
            return b;
          }));
      adds = count[0];
    } catch (FileAlreadyExistsException e) {
      return false;
    }
    new Checkpointer(((SnapshotImpl) snapshot).getLogPath()).writeLastCheckpointFile(engine,
        new CheckpointMetaData(version, adds, Optional.empty()));
    return true;
  }

  /**
   * The actions of a checkpoint of {@code snapshot} (protocol "Checkpoints": the reconciled
   * protocol, metadata, live files, unexpired tombstones, txn and domain metadata), as batches of
   * Kernel's checkpoint iterator (one row per action, in Kernel's checkpoint schema, selected rows
   * only count), without the tombstones of files the checkpoint lists as added again ({@link
   * CheckpointTombstones}). Reads the log twice (the first pass collects the added keys); the
   * batches are streamed, one at a time.
   *
   * @param engine the table's engine
   * @param snapshot the version to checkpoint
   * @return the batches; the caller closes them
   * @throws IOException when the log cannot be read
   */
  static CloseableIterator<FilteredColumnarBatch> checkpointActions(Engine engine, io.delta.kernel.Snapshot snapshot)
      throws IOException {
    SnapshotImpl impl = (SnapshotImpl) snapshot;
    java.util.Set<String> addKeys = new java.util.HashSet<>();
    try (CreateCheckpointIterator first = impl.getCreateCheckpointIterator(engine)) {
      while (first.hasNext()) {
        CheckpointTombstones.collectAdds(first.next(), addKeys);
      }
    }
    CreateCheckpointIterator actions = impl.getCreateCheckpointIterator(engine);
    return actions.map(b -> CheckpointTombstones.withoutReAdded(b, addKeys));
  }

  /**
   * One action of a checkpoint batch as its JSON line ({@code {"<field>":{...}}}, null fields left
   * out), written by Kernel's own row serializer (protocol "Actions").
   *
   * @param field the action's column of the batch ({@code protocol}, {@code metaData}, ...)
   * @param vector that column's struct vector
   * @param row the row, not null in {@code vector}
   * @return the JSON line, without a line break
   */
  static String actionJson(StructField field, ColumnVector vector, int row) {
    return io.delta.kernel.defaults.internal.json.JsonUtils.rowToJson(new GenericRow(
        new StructType().add(field), java.util.Map.of(0, StructRow.fromStructVector(vector, row))));
  }

  /**
   * Deletes the expired commit and checkpoint files of a table with Kernel's {@code
   * MetadataCleanup.cleanupExpiredLogs} (protocol "Metadata Cleanup"): files last modified before
   * {@code now - retentionMs} are deleted only when a complete checkpoint at a later version covers
   * them, so every version from the oldest kept checkpoint on can still be read; the commit file at
   * that checkpoint's version is kept.
   *
   * @param engine the table's engine
   * @param tablePath the table root
   * @param retentionMs how long log files are kept, in ms (>= 0)
   * @return the number of files deleted
   * @throws IOException when listing or deleting fails
   */
  static long cleanupExpiredLogs(Engine engine, String tablePath, long retentionMs) throws IOException {
    return io.delta.kernel.internal.snapshot.MetadataCleanup.cleanupExpiredLogs(engine,
        System::currentTimeMillis, new io.delta.kernel.internal.fs.Path(tablePath), retentionMs);
  }
}
