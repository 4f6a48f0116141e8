package io.filecommit.connect;

import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Checks the server's configuration when the server starts (Spark's {@code SparkPlugin}, whose
 * driver side is initialised while the {@code SparkContext} starts; register with {@code
 * spark.plugins=io.filecommit.connect.ServerStartCheck}, which {@code filecommit.local_session}
 * does): a server where both filecommit and delta-spark would answer {@code format("delta")}
 * fails to start with a message naming {@code spark.filecommit.read.deltaFormat} ({@link
 * DeltaFormatSource#name}), instead of failing each data source lookup later. It also sets the
 * server's object-store defaults ({@link io.filecommit.delta.storage.ObjectStoreDefaults}) on the
 * Hadoop conf before any file system is made.
 */
public final class ServerStartCheck implements SparkPlugin {
  /** Public no-arg constructor, used by Spark's plugin loader. */
  public ServerStartCheck() {}

  /** {@return the driver side, which runs the checks in {@code init}} */
  @Override
  public DriverPlugin driverPlugin() {
    return new DriverPlugin() {
      /**
       * Runs the checks.
       *
       * @throws IllegalStateException naming the setting to change (the server does not start)
       */
      @Override
      public Map<String, String> init(SparkContext sc, PluginContext pluginContext) {
        DeltaFormatSource.name(sc.conf(), DeltaFormatSource.deltaSparkPresent());
        io.filecommit.delta.storage.ObjectStoreDefaults.apply(sc.hadoopConfiguration());
        return Map.of();
      }
    };
  }

  /** {@return null: nothing runs on executors} */
  @Override
  public ExecutorPlugin executorPlugin() {
    return null;
  }
}
