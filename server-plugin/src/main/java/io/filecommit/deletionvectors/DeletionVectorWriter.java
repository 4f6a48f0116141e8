package io.filecommit.deletionvectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.KernelInternals;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.zip.CRC32;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.roaringbitmap.RoaringBitmap;

/**
 * Writes deletion vectors (protocol "Deletion Vectors", "Deletion Vector Format", "Deletion Vector
 * File Storage Format"): for each file a change deletes rows from, the union of its current
 * deletion vector and the newly deleted row indexes is serialized as a 64-bit RoaringBitmap in the
 * portable format (little endian, prefixed by the magic number 1681511377, every key's top bit 0),
 * and all DVs of one change go into one file {@code deletion_vector_<uuid>.bin} under the table
 * root: version byte 1, then per DV its size (int32, big endian), the bitmap and its CRC-32 (big
 * endian). Descriptors use storage type {@code u} with the Z85-encoded UUID and the offset of the
 * DV's size field.
 *
 * <p>The new {@code add} keeps the file's path, size, partition values and statistics, with {@code
 * tightBounds=false} (the min/max values may now be wider than the valid rows); {@code numRecords}
 * stays the physical row count, as the protocol requires.
 */
public final class DeletionVectorWriter {
  /** Magic number of the serialized bitmap (protocol "Deletion Vector Format"). */
  static final int MAGIC = 1681511377;

  private final DeltaLog log;
  private final List<byte[]> bitmaps = new ArrayList<>();
  private final List<Pending> pending = new ArrayList<>();
  private final UUID uuid = UUID.randomUUID();
  private Path written;

  private record Pending(AddFile file, long cardinality, int index) {}

  /** A writer for one change of the table of {@code log}. */
  public DeletionVectorWriter(DeltaLog log) {
    this.log = log;
  }

  /**
   * Adds deleted rows for one file.
   *
   * @param file the active file (possibly with a DV already), with a trustworthy row count
   * @param deletedRows 0-based row indexes newly deleted
   * @return false when every row of the file is now deleted (remove the file instead)
   */
  public boolean delete(AddFile file, long[] deletedRows) {
    long[] all = file.deletionVector() == null ? deletedRows
        : union(KernelInternals.deletedRowIndexes(log.engine(), log.tablePath().toString(), file.deletionVector()),
            deletedRows);
    if (all.length >= file.numPhysicalRecords().orElse(Long.MAX_VALUE)) {
      return false;
    }
    bitmaps.add(serialize(all));
    pending.add(new Pending(file, all.length, bitmaps.size() - 1));
    return true;
  }

  /**
   * Writes the DV file (if any DV was added) and returns the new {@code add}s: each file with its
   * new deletion vector.
   *
   * @return the AddFiles, one per file given to {@link #delete} that keeps rows
   * @throws UncheckedIOException when the file cannot be written
   */
  public List<AddFile> write() {
    if (bitmaps.isEmpty()) {
      return List.of();
    }
    written = new Path(log.tablePath(), "deletion_vector_" + uuid + ".bin");
    int[] offsets = new int[bitmaps.size()];
    try (FSDataOutputStream out = log.fs().create(written, false); DataOutputStream data = new DataOutputStream(out)) {
      data.writeByte(1);
      int position = 1;
      for (int i = 0; i < bitmaps.size(); i++) {
        byte[] b = bitmaps.get(i);
        offsets[i] = position;
        data.writeInt(b.length);
        data.write(b);
        CRC32 crc = new CRC32();
        crc.update(b);
        data.writeInt((int) crc.getValue());
        position += 4 + b.length + 4;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the deletion vectors " + written, e);
    }
    String encoded = KernelInternals.encodeUuid(uuid);
    List<AddFile> adds = new ArrayList<>();
    for (Pending p : pending) {
      DeletionVectorDescriptor dv = new DeletionVectorDescriptor("u", encoded, offsets[p.index()],
          bitmaps.get(p.index()).length, p.cardinality());
      adds.add(p.file().withDeletionVector(dv, wideBounds(p.file().stats())));
    }
    return adds;
  }

  /** The DV file {@link #write} wrote, or null. */
  public Path writtenFile() {
    return written;
  }

  /** Statistics with {@code tightBounds=false}. */
  static String wideBounds(String stats) {
    try {
      JsonNode n = Actions.MAPPER.readTree(stats);
      ((ObjectNode) n).put("tightBounds", false);
      return Actions.MAPPER.writeValueAsString(n);
    } catch (IOException e) {
      throw new UncheckedIOException("Unreadable statistics " + stats, e);
    }
  }

  private static long[] union(long[] a, long[] b) {
    long[] all = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return Arrays.stream(all).sorted().distinct().toArray();
  }

  /**
   * The portable 64-bit RoaringBitmap of {@code rows} with the magic number, little endian
   * (protocol "Deletion Vector Format").
   *
   * @param rows row indexes, each in [0, 2^63)
   * @return the serialized bitmap
   */
  static byte[] serialize(long[] rows) {
    TreeMap<Integer, RoaringBitmap> buckets = new TreeMap<>();
    for (long r : rows) {
      if (r < 0) {
        throw new IllegalArgumentException("Row index must be >= 0, got " + r);
      }
      buckets.computeIfAbsent((int) (r >>> 32), k -> new RoaringBitmap()).add((int) r);
    }
    int size = 4 + 8;
    for (RoaringBitmap b : buckets.values()) {
      b.runOptimize();
      size += 4 + b.serializedSizeInBytes();
    }
    ByteBuffer buffer = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    buffer.putInt(MAGIC);
    buffer.putLong(buckets.size());
    for (Map.Entry<Integer, RoaringBitmap> e : buckets.entrySet()) {
      buffer.putInt(e.getKey());
      e.getValue().serialize(buffer);
    }
    return buffer.array();
  }
}
