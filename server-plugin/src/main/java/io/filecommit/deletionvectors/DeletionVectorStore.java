package io.filecommit.deletionvectors;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The on-disk form of deletion vectors (protocol "Deletion Vector Format", "Deletion Vector File
 * Storage Format"; Delta's {@code DeletionVectorStore}) and the names of the DV files one command
 * writes.
 *
 * <p>A bitmap is serialized as the magic number 1681511377 (int32, little endian) followed by the
 * 64-bit RoaringBitmap in its portable format: the number of 32-bit buckets (int64, little endian),
 * then per bucket its key (the high 32 bits of its row indexes, int32 little endian) and the
 * bucket's 32-bit RoaringBitmap in the portable format (RoaringBitmap's {@link
 * Roaring64NavigableMap#serializePortable}). Row indexes are below 2^63, so every key's top bit is 0.
 *
 * <p>Every DV file of one command is named {@code deletion_vector_<uuid>.bin} under the table root,
 * and the first three groups of every such UUID ({@code xxxxxxxx-xxxx-xxxx}, 64 random bits) are the
 * command's token, as {@code files.DelayedCommitProtocol} names data files: a command that does not
 * commit finds the DV files of all its tasks by name ({@link #sweep}), also those of tasks whose
 * result never reached the driver.
 */
public final class DeletionVectorStore {
  /** Magic number that starts every serialized bitmap (protocol "Deletion Vector Format"). */
  public static final int MAGIC = 1681511377;
  /** Format version byte that starts a DV file (protocol "Deletion Vector File Storage Format"). */
  public static final byte FILE_FORMAT_VERSION = 1;
  private static final String PREFIX = "deletion_vector_";
  private static final String SUFFIX = ".bin";

  private DeletionVectorStore() {}

  /**
   * The serialized form of a deletion vector's bitmap: the magic number, then the portable 64-bit
   * RoaringBitmap (see the class comment).
   *
   * @param rows the marked row indexes (0-based, each in [0, 2^63)); left unchanged
   * @return the bytes the protocol calls {@code bitmapData}; as many as the bitmap needs (one file's
   *     bitmap, never more)
   * @throws IllegalArgumentException when a row index is negative
   */
  public static byte[] serialize(Roaring64NavigableMap rows) {
    if (!rows.isEmpty() && rows.getReverseLongIterator().next() < 0) {
      throw new IllegalArgumentException("Row indexes must be >= 0, got " + rows.getReverseLongIterator().next());
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(Integer.reverseBytes(MAGIC));
      rows.serializePortable(out);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot serialize a deletion vector", e);
    }
    return bytes.toByteArray();
  }

  /** {@return a new command token: 16 random hex digits as {@code xxxxxxxx-xxxx-xxxx}} */
  public static String newToken() {
    String hex = String.format("%016x", new SecureRandom().nextLong());
    return hex.substring(0, 8) + "-" + hex.substring(8, 12) + "-" + hex.substring(12, 16);
  }

  /**
   * A fresh DV file UUID of the command with {@code token}: the token's 64 bits, then 64 random bits.
   *
   * @param token a token from {@link #newToken}
   * @return the UUID
   * @throws IllegalArgumentException when {@code token} is not of that form
   */
  public static UUID newUuid(String token) {
    return UUID.fromString(token + UUID.randomUUID().toString().substring(18));
  }

  /**
   * The DV file of {@code uuid} under {@code tableRoot} (protocol "Deletion Vector File Storage Format").
   *
   * @param tableRoot the table root
   * @param uuid the DV file's UUID
   * @return {@code <tableRoot>/deletion_vector_<uuid>.bin}
   */
  public static Path file(Path tableRoot, UUID uuid) {
    return new Path(tableRoot, PREFIX + uuid + SUFFIX);
  }

  /**
   * Deletes the DV files of the command with {@code token} under {@code tableRoot}, except those
   * named in {@code keep}: the files of a command that does not commit ({@code keep} empty), or
   * files of failed or duplicate task attempts that no descriptor of the command names. Lists the
   * table root once (DV files are written there, never in subdirectories). Must never run for a
   * file that a committed version references. Best effort: failures are logged, never thrown.
   *
   * @param fs the table's file system
   * @param tableRoot the table root
   * @param token the command's token
   * @param keep file names (not paths) to leave
   * @return the files deleted
   */
  public static List<Path> sweep(FileSystem fs, Path tableRoot, String token, Set<String> keep) {
    Pattern ours = Pattern.compile(Pattern.quote(PREFIX + token) + "-[0-9a-f]{4}-[0-9a-f]{12}" + Pattern.quote(SUFFIX));
    List<Path> deleted = new ArrayList<>();
    try {
      for (FileStatus s : fs.listStatus(tableRoot, p -> ours.matcher(p.getName()).matches() && !keep.contains(p.getName()))) {
        if (fs.delete(s.getPath(), false)) {
          deleted.add(s.getPath());
        }
      }
    } catch (IOException | RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(DeletionVectorStore.class).warn(
          "filecommit: could not delete the deletion vector files of command " + token + " under " + tableRoot + ": " + e);
    }
    return deleted;
  }
}
