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
   * Writes {@code bytes} as the object {@code path} only if no object of that name exists: one
   * {@code PUT} with {@code If-None-Match: *} (no existence check before it).
   *
   * @param fs the path's S3A file system
   * @param path the object to create
   * @param bytes its whole content
   * @throws FileAlreadyExistsException when the store answered 412 (the object exists)
   * @throws IOException any other failure (409 ConditionalRequestConflict, 5xx, timeouts, lost
   *     responses): the object may or may not have landed; or, before anything is sent, when the
   *     file system cannot make the write conditional (then nothing is written)
   */
  static void create(FileSystem fs, Path path, byte[] bytes) throws IOException {
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
    try {
      out.write(bytes);
      out.close();
    } catch (RemoteFileChangedException e) {
      if (refusal(e) == Refusal.EXISTS) {
        FileAlreadyExistsException exists = new FileAlreadyExistsException(path.toString(), null,
            "the object exists (412 PreconditionFailed)");
        exists.initCause(e);
        throw exists;
      }
      throw e;
    }
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
