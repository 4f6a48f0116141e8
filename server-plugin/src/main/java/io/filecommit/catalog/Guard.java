package io.filecommit.catalog;

import io.filecommit.delta.DeltaLogCache;
import io.filecommit.errors.ClientExceptions;
import io.filecommit.errors.FileCommitException;
import io.filecommit.txn.InFlightWrites;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.classic.SparkSession;

/**
 * What every catalog and SQL entry point does around the plugin's commands, as the contract's
 * command plugin and the {@code format("delta")} data source do: refuse a session that changed a
 * server-owned setting or writer options naming one ({@code CANNOT_MODIFY_STATIC_CONFIG}), keep
 * the command's writes visible to VACUUM while they run ({@code InFlightWrites}), and raise the
 * plugin's errors as the JVM types Delta raises for their classes ({@code ClientExceptions}, so
 * pyspark sees {@code AnalysisException}, {@code IllegalArgumentException}, ...).
 */
final class Guard {
  private Guard() {}

  /**
   * Runs a command body.
   *
   * @param session the session
   * @param options writer options the client sent (checked against server-owned settings)
   * @param body the command
   * @param <T> its result
   * @return the body's result
   */
  static <T> T run(SparkSession session, Map<String, String> options, Supplier<T> body) {
    try (InFlightWrites.Scope scope = InFlightWrites.openScope()) {
      DeltaLogCache.checkOptions(DeltaLogCache.sessionHadoopConf(session), options);
      return body.get();
    } catch (FileCommitException e) {
      throw ClientExceptions.rethrow(e);
    }
  }

  /**
   * Runs a check or a load that commits nothing, its errors of the client's types.
   *
   * @param body the code
   * @param <T> its result
   * @return the body's result
   */
  static <T> T errors(Supplier<T> body) {
    try {
      return body.get();
    } catch (FileCommitException e) {
      throw ClientExceptions.rethrow(e);
    }
  }
}
