package io.filecommit.files.nativewriter;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.LocalInputFile;
import org.apache.spark.SparkEnv;

/**
 * How {@link NativeTaskWriter} puts a native-written file on object storage ({@code s3a:}): the
 * native writer encodes it into a local temporary file ({@link #localFile}: a temporary block file
 * of Spark's {@code DiskBlockManager}, under {@code spark.local.dir}, never inside the table), and
 * {@link #upload} reads its footer there (parquet-mr's {@code ParquetFileReader} on the local file),
 * copies it to the name the committer handed out: a file of up to one part ({@code
 * fs.s3a.multipart.size}) through Hadoop's {@code FileSystem.create} (S3A's block output stream,
 * one PUT), a longer one as a multipart upload of parts read from the local file ({@link
 * MultipartFileUpload}); then it leaves length and footer with the {@link FileRecorder} (the files
 * package's {@code WrittenFiles}, so the committer
 * sends no HEAD and no footer GET) and deletes the local file. Uploads run beside the task's encoding
 * ({@link Uploads}); the local disk holds at most {@value Uploads#IN_FLIGHT} finished files per task.
 *
 * <p><b>No debris.</b> A failed upload completes no object: a single PUT that fails writes nothing,
 * and a failed multipart upload is aborted by its handle, at once or, when the store cannot be
 * reached then, before a later upload of this JVM ({@link MultipartFileUpload}). The committer's
 * {@code abortTask} deletes the task's handed-out names, after the task's uploads ended ({@link
 * Uploads#settle}).
 */
final class StagedUpload {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StagedUpload.class);

  private StagedUpload() {}

  /**
   * Whether a file of this path is written by the native writer straight to its place (the local
   * file system: no scheme or {@code file:}) rather than staged locally and uploaded.
   *
   * @param target the file the committer handed out
   * @return true on the local file system
   */
  static boolean direct(Path target) {
    String scheme = target.toUri().getScheme();
    return scheme == null || scheme.equals("file");
  }

  /**
   * A new local temporary file for one native-written file (not created): a temporary block file of
   * the executor's {@code DiskBlockManager} (Spark's local directories), or under {@code
   * java.io.tmpdir} without a Spark environment.
   *
   * @return the absolute file
   */
  static File localFile() {
    SparkEnv env = SparkEnv.get();
    File f;
    if (env != null && env.blockManager() != null) {
      f = env.blockManager().diskBlockManager().createTempLocalBlock()._2();
    } else {
      f = new File(System.getProperty("java.io.tmpdir"), "filecommit-native-" + UUID.randomUUID() + ".parquet");
    }
    return f.getAbsoluteFile();
  }

  /**
   * A new local file written by {@code writer} (given its absolute path); deleted when that fails.
   *
   * @param writer writes the file
   * @return the written local file
   * @throws RuntimeException the writer's failure
   */
  static File encode(java.util.function.Consumer<String> writer) {
    File local = localFile();
    try {
      writer.accept(local.getPath());
      return local;
    } catch (RuntimeException e) {
      if (!local.delete() && local.exists()) {
        LOG.warn("filecommit: could not delete the local file " + local);
      }
      throw e;
    }
  }

  /**
   * Uploads a finished local Parquet file to {@code target}, records its length and footer with
   * {@code recorder} and deletes the local file (in every outcome).
   *
   * @param local the local Parquet file, complete
   * @param target the committer's absolute path string of the file
   * @param conf the task's Hadoop configuration
   * @param recorder where the file's length and footer go
   * @throws UncheckedIOException when the footer cannot be read or the upload fails; no object of
   *     {@code target} is completed then and its pending uploads are aborted (see the class comment)
   */
  static void upload(File local, String target, Configuration conf, FileRecorder recorder) {
    Path dest = new Path(target);
    try {
      MultipartFileUpload.abortOrphans(conf);
      ParquetMetadata footer;
      try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(local.toPath()))) {
        footer = r.getFooter();
      }
      long length = local.length();
      FileSystem fs = dest.getFileSystem(conf);
      if (MultipartFileUpload.wanted(length, conf)) {
        MultipartFileUpload.upload(fs, local, dest, conf);
      } else {
        // A unique new name: no overwrite check needed (S3A then skips its HEAD/LIST probes).
        try (InputStream in = Files.newInputStream(local.toPath());
            FSDataOutputStream out = (FSDataOutputStream) fs.createFile(dest).overwrite(true)
                .opt("fs.s3a.create.performance", true).build()) {
          in.transferTo(out);
        }
      }
      recorder.record(target, length, footer);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot upload the native writer's file to " + target + ": " + e, e);
    } finally {
      if (!local.delete() && local.exists()) {
        LOG.warn("filecommit: could not delete the local file " + local);
      }
    }
  }

  /**
   * One task's uploads, run on a shared pool of daemon threads while the task goes on encoding its
   * next file: at most {@value #IN_FLIGHT} files of the task wait or upload at once (the local disk
   * holds at most that many finished files per task; {@link #submit} waits for the oldest).
   * {@link #finish} waits for all and throws the first failure; so does {@link #settle}, which the
   * task calls before its files are deleted on abort (no upload may complete after that).
   */
  static final class Uploads {
    static final int IN_FLIGHT = 2;
    private final java.util.ArrayDeque<java.util.concurrent.Future<?>> pending = new java.util.ArrayDeque<>();
    private final Configuration conf;
    private final FileRecorder recorder;

    Uploads(Configuration conf, FileRecorder recorder) {
      this.conf = conf;
      this.recorder = recorder;
    }

    /**
     * Uploads {@code local} to {@code target} in the background ({@link StagedUpload#upload}).
     *
     * @param local the finished local file (deleted when done)
     * @param target the committer's absolute path string of the file
     * @throws UncheckedIOException when an earlier upload of the task failed
     */
    void submit(File local, String target) {
      try {
        while (pending.size() >= IN_FLIGHT) {
          await(pending.poll());
        }
        pending.add(POOL.submit(() -> upload(local, target, conf, recorder)));
      } catch (RuntimeException e) {
        local.delete();
        throw e;
      }
    }

    /** Waits for every upload of the task; throws the first failure (all have ended by then). */
    void finish() {
      RuntimeException first = null;
      while (!pending.isEmpty()) {
        try {
          await(pending.poll());
        } catch (RuntimeException e) {
          first = first == null ? e : first;
        }
      }
      if (first != null) {
        throw first;
      }
    }

    /** Waits for every upload of the task, failures ignored (the task is failing already). */
    void settle() {
      try {
        finish();
      } catch (RuntimeException e) {
        LOG.debug("filecommit: upload of an aborted task failed: " + e);
      }
    }

    private static void await(java.util.concurrent.Future<?> f) {
      boolean interrupted = false;
      try {
        while (true) {
          try {
            f.get();
            return;
          } catch (InterruptedException e) {
            interrupted = true; // an upload must end before its task does: wait on
          } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
          }
        }
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  private static final java.util.concurrent.ExecutorService POOL = java.util.concurrent.Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "filecommit-native-upload");
    t.setDaemon(true);
    return t;
  });

}
