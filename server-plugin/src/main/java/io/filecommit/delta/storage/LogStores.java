package io.filecommit.delta.storage;

import io.filecommit.errors.ErrorClass;
import io.delta.storage.LogStore;
import io.filecommit.conf.FileCommitConf;
import java.lang.reflect.InvocationTargetException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;

/**
 * Chooses the {@code io.delta:delta-storage} {@link LogStore} that publishes commits of a table,
 * by the scheme of its path, as Delta Lake does (Delta's "Storage configuration" documentation).
 *
 * <p>Order of lookup:
 * <ol>
 *   <li>{@code spark.delta.logStore.<scheme>.impl} (Spark conf of the server or session);
 *   <li>{@code spark.delta.logStore.class} (one class for every scheme, Delta's older key);
 *   <li>the default of the scheme: {@code s3 s3a} -> {@link S3ConditionalLogStore} (commits as S3
 *       conditional writes, {@code If-None-Match: *}) as {@link FileCommitConf#S3_CONDITIONAL_WRITES} says: {@code
 *       auto} (default) asks each bucket once whether it honours the condition and falls back to
 *       {@link io.delta.storage.S3SingleDriverLogStore} where it does not; {@code true} always
 *       writes conditionally ({@link S3ConditionalLogStore.Required}); {@code false} is
 *       {@code S3SingleDriverLogStore}; {@code s3n} (no conditional create) ->
 *       {@code S3SingleDriverLogStore};
 *       {@code abfs abfss adl wasb wasbs} -> {@link io.delta.storage.AzureLogStore}; {@code gs} ->
 *       {@link io.delta.storage.GCSLogStore}; {@code file} -> {@link HardLinkLocalLogStore}; any
 *       other scheme ({@code hdfs}, {@code viewfs}, ...) -> {@link io.delta.storage.HDFSLogStore}.
 * </ol>
 *
 * <p>Deviation, on purpose: for {@code file} Delta defaults to {@link
 * io.delta.storage.LocalLogStore}, whose put-if-absent is an exists-check plus rename guarded by a
 * lock of one JVM, so two processes (our server and delta-rs, say) can both "win" a version. The
 * default here publishes with a hard link instead, atomic across processes; set
 * {@code spark.delta.logStore.file.impl=io.delta.storage.LocalLogStore} for Delta's behaviour.
 *
 * <p>Delta's Spark-side class names ({@code org.apache.spark.sql.delta.storage.S3SingleDriverLogStore}
 * etc.) are accepted and mapped to their {@code io.delta.storage} equivalents. S3 with several
 * writing clusters needs {@code io.delta.storage.S3DynamoDBLogStore}, which lives in
 * {@code io.delta:delta-storage-s3-dynamodb} (with the AWS SDK): add those jars to the server to
 * use it; a configured class that is absent is refused with an error naming it.
 *
 * <p>One instance per class is shared in the JVM ({@code LocalLogStore} locks on its instance).
 */
public final class LogStores {
  /** Spark conf prefix of the per-scheme key. */
  public static final String SCHEME_KEY_PREFIX = "spark.delta.logStore.";
  /** Spark conf key naming one LogStore class for every scheme. */
  public static final String CLASS_KEY = "spark.delta.logStore.class";

  static final Set<String> S3 = Set.of("s3", "s3a", "s3n");
  static final Set<String> AZURE = Set.of("abfs", "abfss", "adl", "wasb", "wasbs");
  static final Set<String> GCS = Set.of("gs");

  private static final Map<String, String> SPARK_NAMES = Map.of(
      "org.apache.spark.sql.delta.storage.S3SingleDriverLogStore", "io.delta.storage.S3SingleDriverLogStore",
      "org.apache.spark.sql.delta.storage.AzureLogStore", "io.delta.storage.AzureLogStore",
      "org.apache.spark.sql.delta.storage.GCSLogStore", "io.delta.storage.GCSLogStore",
      "org.apache.spark.sql.delta.storage.HDFSLogStore", "io.delta.storage.HDFSLogStore",
      "org.apache.spark.sql.delta.storage.LocalLogStore", "io.delta.storage.LocalLogStore");

  private static final Map<String, LogStore> INSTANCES = new ConcurrentHashMap<>();

  private LogStores() {}

  /**
   * The LogStore class name for a scheme.
   *
   * @param scheme the path's URI scheme (null means the default file system's, taken as {@code file})
   * @param sparkConf lookup of Spark conf keys (returns null when unset)
   * @return a fully qualified class name
   */
  public static String className(String scheme, Function<String, String> sparkConf) {
    String s = scheme == null ? "file" : scheme.toLowerCase(Locale.ROOT);
    String configured = sparkConf.apply(SCHEME_KEY_PREFIX + s + ".impl");
    if (configured == null || configured.isBlank()) {
      configured = sparkConf.apply(CLASS_KEY);
    }
    if (configured != null && !configured.isBlank()) {
      String name = configured.trim();
      return SPARK_NAMES.getOrDefault(name, name);
    }
    if (S3.contains(s)) {
      return s3ClassName(s, sparkConf.apply(FileCommitConf.S3_CONDITIONAL_WRITES.key()));
    }
    if (AZURE.contains(s)) {
      return "io.delta.storage.AzureLogStore";
    }
    if (GCS.contains(s)) {
      return "io.delta.storage.GCSLogStore";
    }
    if (s.equals("file")) {
      return HardLinkLocalLogStore.class.getName();
    }
    return "io.delta.storage.HDFSLogStore";
  }

  private static String s3ClassName(String scheme, String mode) {
    String m = mode == null || mode.isBlank() ? "auto" : mode.trim().toLowerCase(Locale.ROOT);
    if (scheme.equals("s3n") || m.equals("false")) {
      return "io.delta.storage.S3SingleDriverLogStore";
    }
    if (m.equals("true")) {
      return S3ConditionalLogStore.Required.class.getName();
    }
    if (m.equals("auto")) {
      return S3ConditionalLogStore.class.getName();
    }
    throw ErrorClass.FILECOMMIT_LOGSTORE_UNAVAILABLE.error(FileCommitConf.S3_CONDITIONAL_WRITES.key() + " must be true, false or auto, not '"
        + mode + "'");
  }

  /**
   * {@return whether {@code store} publishes a commit in one atomic step (a hard link, one
   * conditional {@code PUT}), so that a commit which cannot be opened does not exist and reading
   * it needs no listing of the log}
   *
   * @param store a LogStore
   */
  public static boolean publishesAtomically(LogStore store) {
    return store instanceof HardLinkLocalLogStore || store instanceof S3ConditionalLogStore;
  }

  /**
   * The shared LogStore instance of a class, created with {@code hadoopConf} on first use.
   *
   * @param className a {@link LogStore} subclass with a public {@code (Configuration)} constructor
   * @param hadoopConf Hadoop configuration for the first instance
   * @return the instance
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) when the class is absent, not a LogStore, or cannot be built;
   *     the message names the class
   */
  public static LogStore instance(String className, Configuration hadoopConf) {
    return INSTANCES.computeIfAbsent(className, n -> create(n, hadoopConf));
  }

  private static LogStore create(String className, Configuration hadoopConf) {
    Class<?> cls;
    try {
      cls = Class.forName(className, true, LogStores.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw ErrorClass.FILECOMMIT_LOGSTORE_UNAVAILABLE.error("LogStore class " + className + " is not on the server's classpath"
          + (className.contains("DynamoDB") ? " (add io.delta:delta-storage-s3-dynamodb and the AWS SDK jars)" : ""), e);
    }
    if (!LogStore.class.isAssignableFrom(cls)) {
      throw ErrorClass.FILECOMMIT_LOGSTORE_UNAVAILABLE.error("LogStore class " + className + " does not extend " + LogStore.class.getName());
    }
    try {
      return (LogStore) cls.getConstructor(Configuration.class).newInstance(hadoopConf);
    } catch (NoSuchMethodException | InstantiationException | IllegalAccessException e) {
      throw ErrorClass.FILECOMMIT_LOGSTORE_UNAVAILABLE.error("LogStore class " + className + " has no public (Configuration) constructor", e);
    } catch (InvocationTargetException e) {
      throw ErrorClass.FILECOMMIT_LOGSTORE_UNAVAILABLE.error("LogStore class " + className + " failed to start: " + e.getCause(), e.getCause());
    }
  }
}
