package io.filecommit.delta;

import io.filecommit.conf.FileCommitConf;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.hadoop.conf.Configuration;

/**
 * Which settings a client may change: the rule that keeps the file systems, committers and classes
 * of this server the server's.
 *
 * <p><b>What reaches Hadoop.</b> Spark's {@code SessionState.newHadoopConf} copies every entry of a
 * session's SQL conf ({@code SQLConf.getAllConfs}: what the client set with {@code spark.conf.set},
 * plus the server's static Spark conf that every session starts from) into a copy of the server's
 * Hadoop configuration, verbatim: no key is left out, no {@code spark.hadoop.} prefix is stripped.
 * {@code SessionState.newHadoopConfWithOptions} (and filecommit's {@link DeltaLogCache#setOptions},
 * which every writer uses: Spark write jobs, driver-side writes, batch sinks) then sets every writer
 * option except {@code path} / {@code paths}. That configuration opens the file system that reads,
 * writes and deletes the table (Hadoop's {@code FileSystem.get}: {@code fs.<scheme>.impl}, {@code
 * fs.defaultFS}, {@code fs.viewfs.mounttable.*}, ...), Delta Kernel's engine, Parquet's writer and
 * Spark's committers ({@code spark.sql.parquet.output.committer.class} is loaded by Spark's {@code
 * ParquetUtils.prepareWrite}). So every session key and every writer option reaches Hadoop.
 *
 * <p><b>The rule.</b> A key may have a client's value when {@link #mayChange} says so, or when that
 * value is the server's own ({@link #serverValues}); any other is refused with {@code
 * CANNOT_MODIFY_STATIC_CONFIG} ({@link #refusal}). {@link #mayChange} holds for:
 *
 * <ul>
 *   <li>Spark's own settings, {@code spark.*}: Hadoop, its file systems and Parquet read none of
 *       them; Spark's writers read a few from the Hadoop conf as values (e.g. {@code
 *       spark.sql.parquet.writeLegacyFormat}). Except the server's: {@code spark.filecommit.*} (but
 *       the settings of scope {@code SESSION} in {@link FileCommitConf}), {@code spark.delta.logStore.*}, {@code spark.hadoop.*} (judged as the Hadoop key it names),
 *       {@code spark.io.*} (delta-storage's LogStores read their {@code
 *       spark.io.delta.storage.*} settings, a credentials provider class among them, from the
 *       Hadoop conf), catalog plugins {@code spark.sql.catalog.*}, and every key whose last part ends in {@code
 *       class} / {@code classes} (Spark's naming for a class to load: {@code
 *       spark.sql.sources.commitProtocolClass}, {@code spark.sql.sources.outputCommitterClass}, ...).
 *   <li>Names without a dot: data source options ({@code compression}, {@code maxRecordsPerFile},
 *       {@code mergeSchema}, ...). Hadoop's, its file systems' and Parquet's settings are all
 *       dotted names in a namespace.
 *   <li>Parquet's writer settings that are values only ({@link #PARQUET_WRITER}, from parquet-hadoop's
 *       {@code ParquetOutputFormat}; also per column, {@code <key>#<column>}). Not among them: the
 *       class names ({@code parquet.write.support.class}, {@code parquet.crypto.factory.class}),
 *       encryption keys, the process-wide memory pool, summary files written beside the data.
 * </ul>
 *
 * Everything else (every other dotted key: {@code fs.*}, {@code hadoop.*}, {@code io.*}, {@code
 * dfs.*}, {@code mapreduce.*}, {@code yarn.*}, {@code parquet.*} outside the list, Kernel's {@code
 * delta.kernel.*} / {@code io.delta.kernel.*}, ...) belongs to the server: no class name, file
 * system or committer of a client is ever loaded.
 */
public final class ClientSettings {
  /**
   * Parquet writer settings a client may set (parquet-hadoop's {@code ParquetOutputFormat} and its
   * ZSTD codec level): sizes, encodings, statistics, bloom filters, checksums; each only shapes the
   * bytes of the files it writes.
   */
  public static final Set<String> PARQUET_WRITER = Set.of(
      "parquet.compression", "parquet.compression.codec.zstd.level",
      "parquet.block.size", "parquet.block.row.count.limit",
      "parquet.page.size", "parquet.page.row.count.limit", "parquet.page.value.count.threshold",
      "parquet.page.size.row.check.min", "parquet.page.size.row.check.max", "parquet.page.size.check.estimate",
      "parquet.page.write-checksum.enabled", "parquet.writer.version", "parquet.writer.max-padding",
      "parquet.dictionary.page.size", "parquet.enable.dictionary", "parquet.enable.bytestreamsplit",
      "parquet.columnindex.truncate.length", "parquet.statistics.truncate.length",
      "parquet.column.statistics.enabled", "parquet.size.statistics.enabled",
      "parquet.bloom.filter.enabled", "parquet.bloom.filter.expected.ndv", "parquet.bloom.filter.fpp",
      "parquet.bloom.filter.max.bytes", "parquet.bloom.filter.adaptive.enabled",
      "parquet.bloom.filter.candidates.number");

  private static final String SPARK_HADOOP = "spark.hadoop.";


  private ClientSettings() {}

  /**
   * Whether a client may give {@code key} a value of its own (the rule of this class's description).
   *
   * @param key a Spark SQL conf key, Hadoop key or writer option name (case-sensitive, as Hadoop's)
   * @return true for a harmless key, false for one the server owns
   */
  public static boolean mayChange(String key) {
    if (key.startsWith(SPARK_HADOOP)) {
      String hadoopKey = key.substring(SPARK_HADOOP.length());
      return !hadoopKey.startsWith("spark.") && mayChange(hadoopKey);
    }
    if (key.startsWith("spark.")) {
      String last = key.substring(key.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
      if (FileCommitConf.find(key).map(e -> e.scope() == FileCommitConf.Scope.SESSION).orElse(false)) {
        return true;
      }
      return !(key.startsWith("spark.filecommit.") || key.startsWith("spark.delta.logStore.")
          || key.startsWith("spark.io.") || key.startsWith("spark.sql.catalog.")
          || last.endsWith("class") || last.endsWith("classes"));
    }
    if (key.indexOf('.') < 0) {
      return true;
    }
    int column = key.indexOf('#');
    return PARQUET_WRITER.contains(column < 0 ? key : key.substring(0, column));
  }

  /**
   * The keys of {@code settings} a client may not have: {@link #mayChange} false and the value not
   * the server's.
   *
   * @param settings key to value (a session's SQL conf, or a writer's options)
   * @param serverValue the server's value of a key, null when it has none
   * @return the refused keys, sorted; empty when all may stay
   */
  public static List<String> refused(Map<String, String> settings, UnaryOperator<String> serverValue) {
    List<String> out = new ArrayList<>();
    settings.forEach((k, v) -> {
      if (k != null && v != null && !mayChange(k) && !v.equals(serverValue.apply(k))) {
        out.add(k);
      }
    });
    out.sort(null);
    return out;
  }

  /**
   * The server's value of a key: the static Spark conf (the SparkContext's) for {@code spark.*}
   * keys, the server's Hadoop configuration (the SparkContext's, raw: before variable expansion)
   * for the others.
   *
   * @param sparkConf the server's static Spark conf
   * @param hadoopConf the server's Hadoop configuration
   * @return key to value, null when unset
   */
  public static UnaryOperator<String> serverValues(org.apache.spark.SparkConf sparkConf, Configuration hadoopConf) {
    return k -> k.startsWith("spark.") ? sparkConf.get(k, null) : hadoopConf.getRaw(k);
  }

  /**
   * The error for refused keys: Spark's {@code CANNOT_MODIFY_STATIC_CONFIG} (SQLSTATE 46110), the
   * first key as parameter {@code key}, all of them in the message.
   *
   * @param keys the refused keys, not empty
   * @param where where they were set ({@code "session"} or {@code "write option"})
   * @return the exception to throw
   */
  public static FileCommitException refusal(List<String> keys, String where) {
    String key = keys.get(0);
    return ErrorClass.CANNOT_MODIFY_STATIC_CONFIG.error("Cannot modify the value of the static Spark config: " + key
        + (keys.size() > 1 ? " (also " + String.join(", ", keys.subList(1, keys.size())) + ")" : "")
        + ". A " + where + " reaches the Hadoop configuration of this server's reads, writes and deletes, and "
        + "this key belongs to the server (its file systems, committers and classes): set it in the server's "
        + "configuration, and unset it here (spark.conf.unset, or leave out the option)", Map.of("key", key));
  }
}
