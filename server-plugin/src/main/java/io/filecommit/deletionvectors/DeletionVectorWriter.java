package io.filecommit.deletionvectors;

import io.filecommit.delta.KernelInternals;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.zip.CRC32;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Writes the deletion vectors of one task into one DV file under the table root (protocol "Deletion
 * Vector File Storage Format"; Delta's {@code DeletionVectorWriter}, one file per task): the
 * version byte 1, then per DV its {@code dataSize} (int32, big endian), the serialized bitmap
 * ({@link DeletionVectorStore#serialize}) and its CRC-32 (int32, big endian). Each DV is described
 * by a {@code u} descriptor: the Z85-encoded UUID of the file, the offset of the DV's {@code
 * dataSize} field, its {@code sizeInBytes} and cardinality (protocol "Deletion Vector Descriptor
 * Schema").
 *
 * <p>Runs on executors; holds one DV's bytes at a time. The file is created on the first {@link
 * #write} and named with the command's token ({@link DeletionVectorStore#newUuid}); because
 * offsets are int32, a DV that would start beyond 2^31 - 1 bytes goes into a second file. Not
 * thread-safe: one writer per task.
 */
public final class DeletionVectorWriter implements Closeable {
  private final FileSystem fs;
  private final Path tableRoot;
  private final String token;
  private final List<Path> files = new ArrayList<>();
  private FSDataOutputStream out;
  private String encodedUuid;
  private long position;

  /**
   * A writer for one task of the command with {@code token}.
   *
   * @param fs the table's file system
   * @param tableRoot the table root (DV files go directly under it)
   * @param token the command's token ({@link DeletionVectorStore#newToken})
   */
  public DeletionVectorWriter(FileSystem fs, Path tableRoot, String token) {
    this.fs = fs;
    this.tableRoot = tableRoot;
    this.token = token;
  }

  /**
   * Appends one file's deletion vector.
   *
   * @param rows the file's marked row indexes (all of them: earlier DV and new marks), non-empty
   * @return its descriptor: storage type {@code u}, offset in bytes of its {@code dataSize} field,
   *     {@code sizeInBytes} of the serialized bitmap, cardinality (rows marked)
   * @throws IOException when the DV file cannot be created or written
   * @throws IllegalArgumentException when {@code rows} is empty or holds a negative index
   */
  public DeletionVectorDescriptor write(Roaring64NavigableMap rows) throws IOException {
    if (rows.isEmpty()) {
      throw new IllegalArgumentException("A deletion vector marks at least one row");
    }
    byte[] data = DeletionVectorStore.serialize(rows);
    if (out != null && position + 8L + data.length > Integer.MAX_VALUE) {
      out.close();
      out = null;
    }
    if (out == null) {
      UUID uuid = DeletionVectorStore.newUuid(token);
      Path file = DeletionVectorStore.file(tableRoot, uuid);
      files.add(file);
      out = fs.create(file, false);
      out.writeByte(DeletionVectorStore.FILE_FORMAT_VERSION);
      position = 1;
      encodedUuid = KernelInternals.encodeUuid(uuid);
    }
    int offset = (int) position;
    CRC32 crc = new CRC32();
    crc.update(data);
    out.writeInt(data.length);
    out.write(data);
    out.writeInt((int) crc.getValue());
    position += 4L + data.length + 4L;
    return new DeletionVectorDescriptor("u", encodedUuid, offset, data.length, rows.getLongCardinality());
  }

  /** {@return the DV file the last {@link #write} went to, or null before the first} */
  public Path currentFile() {
    return files.isEmpty() ? null : files.get(files.size() - 1);
  }

  /** {@return the DV files this writer created, in order (usually one)} */
  public List<Path> files() {
    return List.copyOf(files);
  }

  /**
   * Closes the current file.
   *
   * @throws IOException when the file system cannot finish it
   */
  @Override
  public void close() throws IOException {
    if (out != null) {
      FSDataOutputStream o = out;
      out = null;
      o.close();
    }
  }

  /** Closes and deletes every file of this writer, for a failed task. Best effort, never throws. */
  public void abort() {
    try {
      close();
    } catch (IOException | RuntimeException e) {
      // the delete below is what matters
    }
    for (Path f : files) {
      try {
        fs.delete(f, false);
      } catch (IOException | RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(DeletionVectorWriter.class).warn(
            "filecommit: could not delete " + f + " of a failed task: " + e);
      }
    }
  }
}
