package io.filecommit.delta.storage;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.AWSUnsupportedFeatureException;
import org.apache.hadoop.fs.s3a.RemoteFileChangedException;
import software.amazon.awssdk.awscore.exception.AwsServiceException;

/**
 * The one class that touches Hadoop S3A and the AWS SDK (compiled against, never bundled): an
 * object written whole with S3's conditional write {@code If-None-Match: *} through S3A's {@code
 * createFile} builder (Hadoop 3.5.0: mandatory option {@code fs.option.create.conditional.overwrite},
 * enabled by {@code fs.s3a.create.conditional.enabled}, true by default; a refused condition is S3's
 * {@code 412 PreconditionFailed}, which S3A raises as {@link RemoteFileChangedException} and does
 * not retry). Loaded only from {@link S3ConditionalLogStore}, i.e. only for S3 paths, so servers
 * without the S3A jars never load it.
 */
final class S3ConditionalPut {
  /** Hadoop's createFile option asking for a create that fails when the object exists. */
  static final String CONDITIONAL = "fs.option.create.conditional.overwrite";
  /** S3A's switch that skips its own HEAD/LIST existence checks on create. */
  static final String PERFORMANCE = "fs.s3a.create.performance";

  private S3ConditionalPut() {}

  /** What an S3 store answered to a conditional write it did not carry out. */
  enum Refusal {
    /** 412: the object exists. */
    EXISTS,
    /** 400 / 405 / 501: the store does not know conditional writes. */
    UNSUPPORTED
  }

  /**
   * Writes {@code lines} (each followed by a newline, UTF-8) as the object {@code path} only if no
   * object of that name exists: one {@code PUT} with {@code If-None-Match: *} (no existence check
   * before it). The lines are streamed into S3A's output stream through a 64 KiB buffer, never
   * held whole: S3A buffers the object in blocks of {@code fs.s3a.multipart.size} (default 64 MiB)
   * as {@code fs.s3a.fast.upload.buffer} says (default {@code disk}: files under {@code
   * fs.s3a.buffer.dir}); an object larger than one block goes up as a multipart upload whose
   * completion carries the condition. A failure while the lines are produced or written aborts
   * the stream: nothing is uploaded.
   *
   * @param fs the path's S3A file system
   * @param path the object to create
   * @param lines its lines
   * @throws FileAlreadyExistsException when the store answered 412 (the object exists)
   * @throws IOException any other failure (409 ConditionalRequestConflict, 5xx, timeouts, lost
   *     responses): the object may or may not have landed; or, before anything is sent, when the
   *     file system cannot make the write conditional (then nothing is written)
   */
  static void create(FileSystem fs, Path path, java.util.Iterator<String> lines) throws IOException {
    if (!fs.hasPathCapability(path, CONDITIONAL)) {
      throw new NotConditional("The file system of " + path + " cannot write conditionally (S3A with "
          + "fs.s3a.create.conditional.enabled=true is needed); nothing was written");
    }
    FSDataOutputStreamBuilder<?, ?> builder = fs.createFile(path);
    builder.overwrite(true);
    builder.recursive();
    builder.must(CONDITIONAL, true);
    builder.opt(PERFORMANCE, true);
    FSDataOutputStream out = builder.build();
    if (!out.hasCapability(CONDITIONAL)) {
      out.abort();
      throw new NotConditional("S3A will not make the write of " + path + " conditional (is "
          + "fs.s3a.create.conditional.enabled false?); nothing was written");
    }
    boolean closing = false;
    try {
      writeLines(out, lines);
      closing = true;
      out.close();
    } catch (RemoteFileChangedException e) {
      if (refusal(e) == Refusal.EXISTS) {
        FileAlreadyExistsException exists = new FileAlreadyExistsException(path.toString(), null,
            "the object exists (412 PreconditionFailed)");
        exists.initCause(e);
        throw exists;
      }
      throw e;
    } catch (IOException | RuntimeException | Error e) {
      if (!closing) {
        out.abort();
      }
      throw e;
    }
  }

  /**
   * Writes each line and a newline, UTF-8, through a 64 KiB buffer, and flushes it (the caller
   * closes {@code out}).
   *
   * @param out the stream
   * @param lines the lines
   * @throws IOException when the stream fails
   */
  static void writeLines(java.io.OutputStream out, java.util.Iterator<String> lines) throws IOException {
    java.io.BufferedOutputStream buf = new java.io.BufferedOutputStream(out, 1 << 16);
    while (lines.hasNext()) {
      buf.write(lines.next().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      buf.write('\n');
    }
    buf.flush();
  }

  /** S3A cannot send the write with its condition; nothing was written. */
  static final class NotConditional extends IOException {
    NotConditional(String message) {
      super(message);
    }
  }

  /**
   * {@return how the store refused a conditional write, or null when the failure says nothing
   * certain (a 409 conflict, a 5xx, a lost response: the write may have landed)}
   *
   * @param e a failure of {@link #create}
   */
  static Refusal refusal(Throwable e) {
    if (e instanceof FileAlreadyExistsException) {
      return Refusal.EXISTS;
    }
    if (e instanceof AWSUnsupportedFeatureException || e instanceof NotConditional) {
      return Refusal.UNSUPPORTED;
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof AwsServiceException s) {
        int status = s.statusCode();
        if (status == 412) {
          return Refusal.EXISTS;
        }
        if (status == 400 || status == 405 || status == 501) {
          return Refusal.UNSUPPORTED;
        }
        return null;
      }
    }
    return null;
  }
}
