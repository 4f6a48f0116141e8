package io.filecommit.testing.faults;

import io.delta.storage.CloseableIterator;
import io.delta.storage.LogStore;
import io.filecommit.delta.storage.HardLinkLocalLogStore;
import io.filecommit.testing.faults.FaultPlan.Point;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.Iterator;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * A delta-storage {@link LogStore} for local tables that delegates every call to {@link
 * HardLinkLocalLogStore} and fails the calls a {@link FaultPlan} rule arms:
 *
 * <ul>
 *   <li>{@code commit.before}: a commit's {@code write}, nothing written, {@link IOException};
 *   <li>{@code commit.after}: the commit is published, then {@link IOException} (the store lost the
 *       response);
 *   <li>{@code commit.exists}: the commit is published, then {@link FileAlreadyExistsException} (a
 *       store that retried a put which had landed);
 *   <li>{@code commit.error.before} / {@code commit.error.after}: a commit's {@code write} throws
 *       {@link StackOverflowError} before anything is written / after the commit is published;
 *   <li>{@code commit.hold}: a commit's {@code write} waits first until the test disarms the rule
 *       (or its {@code timeout_ms} passed), then writes normally;
 *   <li>{@code commit.read}: a commit's {@code read}, {@link IOException};
 *   <li>{@code list}: {@code listFrom} in the table's log, {@link IOException};
 *   <li>{@code last_checkpoint.before} / {@code .after}: the {@code _last_checkpoint} write, before
 *       or after it lands;
 *   <li>{@code checkpoint.before}: {@code isPartialWriteVisible} of a checkpoint Parquet file,
 *       which Delta Kernel asks before writing it, or the {@code write} of a JSON checkpoint file
 *       (a V2 checkpoint's {@code <v>.checkpoint.<uuid>.json}): {@link IOException}, nothing
 *       written.
 * </ul>
 *
 * <p>With no rule armed it is exactly {@link HardLinkLocalLogStore}. The test server sets it with
 * {@code spark.delta.logStore.file.impl} in its static conf, so every local table goes through it
 * (our commits, and Kernel's reads, listings and checkpoints, which get the same class name).
 */
public class FaultInjectingLogStore extends LogStore {
  private final HardLinkLocalLogStore delegate;

  /**
   * @param hadoopConf Hadoop configuration, passed to the delegate
   */
  public FaultInjectingLogStore(Configuration hadoopConf) {
    super(hadoopConf);
    this.delegate = new HardLinkLocalLogStore(hadoopConf);
  }

  @Override
  public CloseableIterator<String> read(Path path, Configuration hadoopConf) throws IOException {
    if (FaultPlan.commitVersion(path).isPresent() && FaultPlan.fires(Point.COMMIT_READ, path)) {
      throw new IOException(FaultPlan.message(Point.COMMIT_READ, path));
    }
    return delegate.read(path, hadoopConf);
  }

  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
      throws IOException {
    if (FaultPlan.commitVersion(path).isPresent()) {
      FaultPlan.holdIfArmed(path);
      if (FaultPlan.fires(Point.COMMIT_BEFORE, path)) {
        throw new IOException(FaultPlan.message(Point.COMMIT_BEFORE, path));
      }
      if (FaultPlan.fires(Point.COMMIT_ERROR_BEFORE, path)) {
        throw new StackOverflowError(FaultPlan.message(Point.COMMIT_ERROR_BEFORE, path));
      }
      delegate.write(path, actions, overwrite, hadoopConf);
      if (FaultPlan.fires(Point.COMMIT_ERROR_AFTER, path)) {
        throw new StackOverflowError(FaultPlan.message(Point.COMMIT_ERROR_AFTER, path));
      }
      if (FaultPlan.fires(Point.COMMIT_AFTER, path)) {
        throw new IOException(FaultPlan.message(Point.COMMIT_AFTER, path));
      }
      if (FaultPlan.fires(Point.COMMIT_EXISTS, path)) {
        throw new FileAlreadyExistsException(path.toString(), null, FaultPlan.message(Point.COMMIT_EXISTS, path));
      }
      return;
    }
    if (path.getName().equals("_last_checkpoint")) {
      if (FaultPlan.fires(Point.LAST_CHECKPOINT_BEFORE, path)) {
        throw new IOException(FaultPlan.message(Point.LAST_CHECKPOINT_BEFORE, path));
      }
      delegate.write(path, actions, overwrite, hadoopConf);
      if (FaultPlan.fires(Point.LAST_CHECKPOINT_AFTER, path)) {
        throw new IOException(FaultPlan.message(Point.LAST_CHECKPOINT_AFTER, path));
      }
      return;
    }
    if (path.getName().contains(".checkpoint.") && FaultPlan.fires(Point.CHECKPOINT_BEFORE, path)) {
      throw new IOException(FaultPlan.message(Point.CHECKPOINT_BEFORE, path));
    }
    delegate.write(path, actions, overwrite, hadoopConf);
  }

  @Override
  public Iterator<org.apache.hadoop.fs.FileStatus> listFrom(Path path, Configuration hadoopConf) throws IOException {
    if (FaultPlan.fires(Point.LIST, path)) {
      throw new IOException(FaultPlan.message(Point.LIST, path));
    }
    return delegate.listFrom(path, hadoopConf);
  }

  @Override
  public Path resolvePathOnPhysicalStorage(Path path, Configuration hadoopConf) throws IOException {
    return delegate.resolvePathOnPhysicalStorage(path, hadoopConf);
  }

  @Override
  public Boolean isPartialWriteVisible(Path path, Configuration hadoopConf) throws IOException {
    if (path.getName().contains(".checkpoint") && path.getName().endsWith(".parquet")
        && FaultPlan.fires(Point.CHECKPOINT_BEFORE, path)) {
      throw new IOException(FaultPlan.message(Point.CHECKPOINT_BEFORE, path));
    }
    return delegate.isPartialWriteVisible(path, hadoopConf);
  }
}
