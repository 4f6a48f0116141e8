package io.filecommit.files.nativewriter;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.MultipartUploader;
import org.apache.hadoop.fs.PartHandle;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.UploadHandle;

/**
 * A local file put on object storage as one multipart upload through Hadoop's {@code
 * MultipartUploader} API ({@code FileSystem.createMultipartUploader}; S3A's implements S3's
 * CreateMultipartUpload, UploadPart, CompleteMultipartUpload and AbortMultipartUpload): parts of
 * {@code fs.s3a.multipart.size} bytes (default 64 MiB, at least 5 MiB, S3's smallest part) read
 * straight from the local file (no copy into S3A's upload buffers), uploaded in parallel on the file
 * system's own upload threads, then completed. A file of one part or less is not uploaded here
 * ({@link #wanted}): S3A's output stream sends it as one PUT (and would itself start a multipart
 * upload, whose id it keeps to itself, for anything longer).
 *
 * <p>The upload's handle is kept, so a failed upload is aborted exactly (S3 lists and aborts
 * uploads by key prefix, and S3A's listing adds a {@code /} to a file's key, so it cannot find a
 * file's own uploads): at once, and when the store cannot be reached then, again before every later
 * upload of this JVM ({@link #abortOrphans}) until the abort succeeds. An upload that was never
 * completed leaves no object. A JVM that dies mid-upload leaves its pending upload to the bucket's
 * lifecycle rule ({@code AbortIncompleteMultipartUpload}) or S3A's {@code fs.s3a.multipart.purge}.
 */
final class MultipartFileUpload {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MultipartFileUpload.class);
  private static final long MIN_PART = 5L << 20;
  /** Seconds to wait for one request of the upload (S3A retries within that). */
  private static final long WAIT_SECONDS = 600;
  /** Uploads whose abort failed (the store was unreachable): target -> handle. */
  private static final Map<Path, UploadHandle> ORPHANS = new ConcurrentHashMap<>();

  private MultipartFileUpload() {}

  /**
   * Whether a file of {@code length} bytes goes up as a multipart upload.
   *
   * @param length the file's length in bytes
   * @param conf the Hadoop configuration
   * @return true when it is longer than one part
   */
  static boolean wanted(long length, Configuration conf) {
    return length > partSize(conf);
  }

  private static long partSize(Configuration conf) {
    return Math.max(MIN_PART, conf.getLongBytes("fs.s3a.multipart.size", 64L << 20));
  }

  /**
   * Uploads {@code local} to {@code dest} as one multipart upload.
   *
   * @param fs the destination's file system
   * @param local the local file (not changed)
   * @param dest the destination object
   * @param conf the Hadoop configuration (part size)
   * @throws IOException when the upload fails; it is aborted then (or kept for a later abort)
   */
  static void upload(FileSystem fs, File local, Path dest, Configuration conf) throws IOException {
    long partSize = partSize(conf);
    try (MultipartUploader uploader = fs.createMultipartUploader(dest.getParent()).build();
        FileChannel file = FileChannel.open(local.toPath(), StandardOpenOption.READ)) {
      UploadHandle handle = await(uploader.startUpload(dest));
      boolean done = false;
      List<CompletableFuture<PartHandle>> parts = new ArrayList<>();
      try {
        long length = file.size();
        for (long offset = 0; offset < length || parts.isEmpty(); offset += partSize) {
          long size = Math.min(partSize, length - offset);
          boolean last = offset + size >= length;
          parts.add(uploader.putPart(handle, parts.size() + 1, last, dest, new Part(file, offset, size), size));
        }
        Map<Integer, PartHandle> handles = new LinkedHashMap<>();
        for (int i = 0; i < parts.size(); i++) {
          handles.put(i + 1, await(parts.get(i)));
        }
        await(uploader.complete(handle, dest, handles));
        done = true;
      } finally {
        if (!done) {
          // Parts still in flight end first (a part landing after the abort would outlive it).
          for (CompletableFuture<PartHandle> f : parts) {
            try {
              await(f);
            } catch (IOException | RuntimeException e) {
              // failed or cancelled: nothing of it stays
            }
          }
          ORPHANS.put(dest, handle);
          abort(uploader, dest, handle);
        }
      }
    }
  }

  /**
   * Aborts the uploads of this JVM whose abort failed before; those that fail again stay.
   *
   * @param conf the Hadoop configuration
   */
  static void abortOrphans(Configuration conf) {
    for (Map.Entry<Path, UploadHandle> o : ORPHANS.entrySet()) {
      try (MultipartUploader uploader = o.getKey().getFileSystem(conf).createMultipartUploader(
          o.getKey().getParent()).build()) {
        abort(uploader, o.getKey(), o.getValue());
      } catch (IOException | RuntimeException e) {
        LOG.warn("filecommit: the upload of " + o.getKey() + " is not aborted yet (tried again later): " + e);
      }
    }
  }

  /** {@return how many failed uploads wait to be aborted} */
  static int orphans() {
    return ORPHANS.size();
  }

  private static void abort(MultipartUploader uploader, Path dest, UploadHandle handle) {
    try {
      await(uploader.abort(handle, dest));
      ORPHANS.remove(dest);
      LOG.info("filecommit: aborted the failed multipart upload of " + dest);
    } catch (IOException | RuntimeException e) {
      LOG.warn("filecommit: the failed upload of " + dest + " is not aborted yet (tried again later): " + e);
    }
  }

  private static <T> T await(CompletableFuture<T> f) throws IOException {
    try {
      return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted: " + e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("no answer within " + WAIT_SECONDS + " s", e);
    }
  }

  /**
   * Bytes {@code [offset, offset + size)} of the file as a stream that can be reset to any mark
   * (the SDK resets a part's body to send it again), read with positional reads; closing it leaves
   * the file open (its parts share it).
   */
  private static final class Part extends InputStream {
    private final FileChannel file;
    private final long end;
    private long pos;
    private long mark;

    Part(FileChannel file, long offset, long size) {
      this.file = file;
      this.pos = offset;
      this.mark = offset;
      this.end = offset + size;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (pos >= end) {
        return -1;
      }
      int n = file.read(ByteBuffer.wrap(b, off, (int) Math.min(len, end - pos)), pos);
      if (n > 0) {
        pos += n;
      }
      return n;
    }

    @Override
    public int available() {
      return (int) Math.min(Integer.MAX_VALUE, end - pos);
    }

    @Override
    public boolean markSupported() {
      return true;
    }

    @Override
    public synchronized void mark(int readLimit) {
      mark = pos;
    }

    @Override
    public synchronized void reset() {
      pos = mark;
    }

    @Override
    public void close() {
      // the file is closed by the upload
    }
  }
}
