package io.filecommit.delta.storage;

import io.delta.storage.CloseableIterator;
import io.delta.storage.HadoopFileSystemLogStore;
import io.delta.storage.S3SingleDriverLogStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * LogStore for S3 ({@code s3}, {@code s3a}) whose put-if-absent holds across writers (other
 * servers, delta-rs): a new log file ({@code _delta_log/<version>.json}) is one {@code PUT} with the
 * conditional header {@code If-None-Match: *} (S3 "conditional writes"; Hadoop S3A's conditional
 * create, {@link S3ConditionalPut}), which the store refuses with {@code 412 PreconditionFailed}
 * when the object exists. That refusal is reported as {@link FileAlreadyExistsException}; every
 * other failure (a {@code 409 ConditionalRequestConflict} of two racing writes, 5xx, timeouts, a
 * lost response) as a plain {@link IOException}, whose outcome the committer reads from the log.
 * Overwrites ({@code _last_checkpoint}) are plain {@code PUT}s, which S3 makes visible whole or not
 * at all. Reading and listing are delta-storage's {@link HadoopFileSystemLogStore} (S3 lists and
 * reads consistently after a write). delta-rs commits the same way, so both can share a table.
 *
 * <p>This class (the "auto" mode) asks each bucket once whether it honours the condition: a probe
 * object {@code _delta_log/.s3-conditional-probe.<uuid>} is created conditionally twice and must be
 * refused the second time (then deleted). A bucket that ignores or rejects the condition gets
 * delta-storage's {@link S3SingleDriverLogStore} instead (safe only while one server writes the
 * table), with a warning. {@link Required} skips the probe and never falls back.
 *
 * <p>Chosen by {@link LogStores}. The S3A classes are used only through {@link S3ConditionalPut},
 * so loading this class needs no S3A jars.
 */
public class S3ConditionalLogStore extends HadoopFileSystemLogStore {
  private static final Logger LOG = LoggerFactory.getLogger(S3ConditionalLogStore.class);
  /** Per bucket ({@code scheme://bucket}): whether it honours {@code If-None-Match: *}. */
  private static final Map<String, Boolean> SUPPORT = new ConcurrentHashMap<>();

  private final S3SingleDriverLogStore fallback;

  /**
   * @param hadoopConf Hadoop configuration (S3A settings of the server)
   */
  public S3ConditionalLogStore(Configuration hadoopConf) {
    super(hadoopConf);
    this.fallback = new S3SingleDriverLogStore(hadoopConf);
  }

  /**
   * Writes {@code actions}, one per line, as the object {@code path}.
   *
   * @throws FileAlreadyExistsException when {@code overwrite} is false and the object exists (412)
   * @throws IOException any other failure; the object may or may not exist afterwards
   */
  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
      throws IOException {
    FileSystem fs = path.getFileSystem(hadoopConf);
    if (!conditional(fs, path)) {
      fallback.write(path, actions, overwrite, hadoopConf);
      return;
    }
    StringBuilder sb = new StringBuilder();
    while (actions.hasNext()) {
      sb.append(actions.next()).append('\n');
    }
    byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
    if (Boolean.TRUE.equals(overwrite)) {
      try (var out = fs.create(path, true)) {
        out.write(bytes);
      }
      return;
    }
    S3ConditionalPut.create(fs, path, bytes);
  }

  @Override
  public CloseableIterator<String> read(Path path, Configuration hadoopConf) throws IOException {
    return usesFallback(path) ? fallback.read(path, hadoopConf) : super.read(path, hadoopConf);
  }

  @Override
  public Iterator<FileStatus> listFrom(Path path, Configuration hadoopConf) throws IOException {
    return usesFallback(path) ? fallback.listFrom(path, hadoopConf) : super.listFrom(path, hadoopConf);
  }

  /** False: an S3 object appears whole or not at all. */
  @Override
  public Boolean isPartialWriteVisible(Path path, Configuration hadoopConf) {
    return false;
  }

  /**
   * Whether new log files under {@code path}'s bucket are written conditionally; probes the bucket
   * on first use.
   *
   * @param fs the path's file system
   * @param path a log file about to be written
   * @return true for a conditional write, false for the single-driver fallback
   * @throws IOException when the probe itself fails without an answer (store unreachable, 5xx)
   */
  protected boolean conditional(FileSystem fs, Path path) throws IOException {
    String bucket = bucket(path);
    Boolean known = SUPPORT.get(bucket);
    if (known != null) {
      return known;
    }
    boolean supported = probe(fs, path.getParent());
    SUPPORT.put(bucket, supported);
    if (!supported) {
      LOG.warn("filecommit: the S3 store of " + bucket + " does not honour conditional writes (If-None-Match: *);"
          + " its commits use S3SingleDriverLogStore, safe only while this server is the table's one writer");
    }
    return supported;
  }

  /**
   * {@return whether reads and listings of {@code path} go through the single-driver fallback (its
   * bucket was probed and does not honour the condition)}
   *
   * @param path a log file
   */
  protected boolean usesFallback(Path path) {
    return Boolean.FALSE.equals(SUPPORT.get(bucket(path)));
  }

  /**
   * {@return whether new log files under {@code path}'s bucket are known to be written
   * conditionally (probed and honoured, or required), so that a commit of a version another writer
   * took is refused; false before the probe and with the single-driver fallback}
   *
   * @param path a log file or the log directory
   */
  public boolean knownConditional(Path path) {
    return this instanceof Required || Boolean.TRUE.equals(SUPPORT.get(bucket(path)));
  }

  /** {@return {@code scheme://bucket} of a path} */
  static String bucket(Path path) {
    java.net.URI u = path.toUri();
    return String.valueOf(u.getScheme()).toLowerCase(Locale.ROOT) + "://" + u.getAuthority();
  }

  /** Forgets what was learnt of every bucket (tests). */
  static void forgetProbes() {
    SUPPORT.clear();
  }

  /**
   * Creates a probe object in {@code dir} conditionally twice: the store honours the condition when
   * the first create lands and the second is refused with 412.
   */
  private static boolean probe(FileSystem fs, Path dir) throws IOException {
    Path probe = new Path(dir, ".s3-conditional-probe." + UUID.randomUUID());
    byte[] bytes = "probe\n".getBytes(StandardCharsets.UTF_8);
    try {
      try {
        S3ConditionalPut.create(fs, probe, bytes);
      } catch (IOException e) {
        if (S3ConditionalPut.refusal(e) == S3ConditionalPut.Refusal.UNSUPPORTED) {
          return false;
        }
        throw e;
      }
      try {
        S3ConditionalPut.create(fs, probe, bytes);
        return false;
      } catch (IOException e) {
        S3ConditionalPut.Refusal r = S3ConditionalPut.refusal(e);
        if (r == null) {
          throw e;
        }
        return r == S3ConditionalPut.Refusal.EXISTS;
      }
    } finally {
      try {
        fs.delete(probe, false);
      } catch (IOException e) {
        LOG.warn("filecommit: cannot delete the conditional-write probe " + probe, e);
      }
    }
  }

  /**
   * The operator's choice {@code spark.filecommit.s3.conditionalWrites=true}: every new log file is
   * written conditionally, without a probe and without a fallback; a store that ignores the
   * condition is the operator's risk, one that rejects it fails every commit (nothing committed).
   */
  public static final class Required extends S3ConditionalLogStore {
    /**
     * @param hadoopConf Hadoop configuration (S3A settings of the server)
     */
    public Required(Configuration hadoopConf) {
      super(hadoopConf);
    }

    /** Always true: no probe. */
    @Override
    protected boolean conditional(FileSystem fs, Path path) {
      return true;
    }

    /** Never: no fallback. */
    @Override
    protected boolean usesFallback(Path path) {
      return false;
    }
  }
}
