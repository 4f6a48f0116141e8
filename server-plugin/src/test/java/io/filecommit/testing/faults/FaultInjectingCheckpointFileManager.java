package io.filecommit.testing.faults;

import io.filecommit.testing.faults.FaultPlan.Point;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.CancellableFSDataOutputStream;
import org.apache.spark.sql.execution.streaming.checkpointing.FileContextBasedCheckpointFileManager;

/**
 * Spark's {@link FileContextBasedCheckpointFileManager} (how a streaming sink's {@code
 * _spark_metadata} log writes its batch files: a temporary file renamed into place without
 * overwrite when the stream is closed), failing the closes a {@link FaultPlan} rule arms:
 *
 * <ul>
 *   <li>{@code sink.before}: the temporary file is discarded ({@code cancel}), nothing is renamed,
 *       {@link IOException};
 *   <li>{@code sink.after}: the batch file is renamed into place, then {@link IOException} (a lost
 *       response).
 * </ul>
 *
 * <p>Set with {@code spark.sql.streaming.checkpointFileManagerClass} in the test server's conf;
 * with no rule armed it is exactly Spark's class.
 */
public class FaultInjectingCheckpointFileManager extends FileContextBasedCheckpointFileManager {
  /**
   * @param path the checkpoint (metadata log) directory
   * @param hadoopConf Hadoop configuration
   */
  public FaultInjectingCheckpointFileManager(Path path, Configuration hadoopConf) {
    super(path, hadoopConf);
  }

  @Override
  public CancellableFSDataOutputStream createAtomic(Path path, boolean overwriteIfPossible) {
    CancellableFSDataOutputStream inner = super.createAtomic(path, overwriteIfPossible);
    return new CancellableFSDataOutputStream(inner) {
      private boolean done;

      @Override
      public void cancel() {
        if (!done) {
          done = true;
          inner.cancel();
        }
      }

      @Override
      public void close() throws IOException {
        if (done) {
          return;
        }
        done = true;
        if (FaultPlan.fires(Point.SINK_BEFORE, path)) {
          inner.cancel();
          throw new IOException(FaultPlan.message(Point.SINK_BEFORE, path));
        }
        inner.close();
        if (FaultPlan.fires(Point.SINK_AFTER, path)) {
          throw new IOException(FaultPlan.message(Point.SINK_AFTER, path));
        }
      }
    };
  }
}
