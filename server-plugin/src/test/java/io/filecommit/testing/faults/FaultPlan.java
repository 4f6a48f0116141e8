package io.filecommit.testing.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.Path;

/**
 * The faults armed for the storage wrappers of this package, read from a directory that only the
 * server's operator names: {@value #CONF_KEY} in the server's static Spark conf ({@code SparkEnv}),
 * else the JVM system property {@value #PROPERTY}. Nothing a client sets in its session reaches it.
 *
 * <p>Each file {@code <dir>/<name>.json} arms one rule:
 *
 * <pre>
 * {"table": "/abs/table/root",   // a table root (or sink root); matches files under it
 *  "point": "commit.after",      // the step that fails, see {@link Point}
 *  "version": 3,                 // optional: only commit files of this version (commit.*)
 *  "skip": 0,                    // matching calls to let through first (default 0)
 *  "times": 1}                   // how many matching calls fail after those (default 1; -1 = all)
 * </pre>
 *
 * <p>Every firing appends one line {@code <point> <path>} to {@code <dir>/<name>.fired}, so the
 * test process can check that the fault it armed was hit. Counters live in this JVM, keyed by the
 * rule's name and content: to re-arm, write a rule under a new name (write to a temporary name and
 * rename, so a half-written rule is never read); to disarm, delete the file. Decisions are taken
 * under one lock, so concurrent callers consume a rule's count exactly once each.
 */
public final class FaultPlan {
  /** Static server conf naming the faults directory. */
  public static final String CONF_KEY = "spark.filecommit.test.faultsDir";
  /** JVM system property naming the faults directory (when there is no Spark conf). */
  public static final String PROPERTY = "filecommit.test.faultsDir";


  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Pattern COMMIT = Pattern.compile("^(\\d{20})\\.json$");
  private static final Object LOCK = new Object();
  /** name + "\n" + content -> calls that matched so far. */
  private static final Map<String, Long> MATCHED = new HashMap<>();

  /** The injectable steps. */
  public enum Point {
    /** LogStore.write of a commit file: nothing written, IOException. */
    COMMIT_BEFORE("commit.before"),
    /** LogStore.write of a commit file: the commit is published, then IOException (a lost response). */
    COMMIT_AFTER("commit.after"),
    /**
     * LogStore.write of a commit file: the commit is published, then FileAlreadyExistsException (a
     * store that retried a put which had landed, as GCS or S3 + DynamoDB can).
     */
    COMMIT_EXISTS("commit.exists"),
    /** LogStore.write of a commit file: nothing written, {@link StackOverflowError} (an Error, not an IOException). */
    COMMIT_ERROR_BEFORE("commit.error.before"),
    /** LogStore.write of a commit file: the commit is published, then {@link StackOverflowError}. */
    COMMIT_ERROR_AFTER("commit.error.after"),
    /** LogStore.read of a commit file: IOException. */
    COMMIT_READ("commit.read"),
    /**
     * LogStore.write of a commit file: waits, before writing, until the rule is disarmed (its file
     * deleted) or {@code timeout_ms} (default 120000) passed, then writes normally. Holds a command
     * between everything it checked and its commit.
     */
    COMMIT_HOLD("commit.hold"),
    /** LogStore.listFrom in the table's log: IOException. */
    LIST("list"),
    /** LogStore.write of {@code _last_checkpoint}: nothing written, IOException. */
    LAST_CHECKPOINT_BEFORE("last_checkpoint.before"),
    /** LogStore.write of {@code _last_checkpoint}: written, then IOException. */
    LAST_CHECKPOINT_AFTER("last_checkpoint.after"),
    /**
     * A checkpoint Parquet file: Kernel asks the LogStore {@code isPartialWriteVisible} before it
     * writes one; IOException there, nothing written.
     */
    CHECKPOINT_BEFORE("checkpoint.before"),
    /** A {@code _spark_metadata} batch file (CheckpointFileManager.createAtomic): not renamed into place, IOException. */
    SINK_BEFORE("sink.before"),
    /** A {@code _spark_metadata} batch file: renamed into place, then IOException (a lost response). */
    SINK_AFTER("sink.after");

    private final String id;

    Point(String id) {
      this.id = id;
    }

    /** The name used in rule files. */
    public String id() {
      return id;
    }

    static Point of(String id) {
      for (Point p : values()) {
        if (p.id.equals(id)) {
          return p;
        }
      }
      throw new IllegalArgumentException("unknown fault point '" + id + "'; one of "
          + Arrays.stream(values()).map(Point::id).toList());
    }
  }

  private FaultPlan() {}

  /** The faults directory, or null when none is configured (then nothing is ever injected). */
  static File directory() {
    String dir = null;
    try {
      org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
      if (env != null) {
        dir = env.conf().get(CONF_KEY, null);
      }
    } catch (RuntimeException | LinkageError e) {
      dir = null;
    }
    if (dir == null || dir.isBlank()) {
      dir = System.getProperty(PROPERTY);
    }
    return dir == null || dir.isBlank() ? null : new File(dir);
  }

  /** The version of a commit file name, if {@code path} is one. */
  static Optional<Long> commitVersion(Path path) {
    Matcher m = COMMIT.matcher(path.getName());
    return m.matches() ? Optional.of(Long.parseLong(m.group(1))) : Optional.empty();
  }

  /**
   * Whether the call at {@code point} on {@code path} must fail now; records the firing.
   *
   * @param point the step
   * @param path the file (or listed directory prefix) of the call
   * @return true when an armed rule fires
   */
  public static boolean fires(Point point, Path path) {
    return firing(point, path) != null;
  }

  /**
   * For {@link Point#COMMIT_HOLD}: when an armed rule fires on {@code path}, waits until its file
   * is deleted or its {@code timeout_ms} passed.
   *
   * @param path the commit file about to be written
   */
  public static void holdIfArmed(Path path) {
    File rule = firing(Point.COMMIT_HOLD, path);
    if (rule == null) {
      return;
    }
    long timeout = 120_000;
    try {
      timeout = MAPPER.readTree(Files.readString(rule.toPath(), StandardCharsets.UTF_8)).path("timeout_ms")
          .asLong(timeout);
    } catch (IOException e) {
      return; // disarmed meanwhile
    }
    long deadline = System.currentTimeMillis() + timeout;
    while (rule.exists() && System.currentTimeMillis() < deadline) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** The rule file that fires for the call, recorded, or null. */
  private static File firing(Point point, Path path) {
    File dir = directory();
    if (dir == null || !dir.isDirectory()) {
      return null;
    }
    String local = localPath(path);
    if (local == null) {
      return null;
    }
    synchronized (LOCK) {
      File[] files = dir.listFiles((d, n) -> n.endsWith(".json") && !n.startsWith("."));
      if (files == null) {
        return null;
      }
      Arrays.sort(files);
      for (File f : files) {
        String content;
        JsonNode rule;
        try {
          content = Files.readString(f.toPath(), StandardCharsets.UTF_8);
          rule = MAPPER.readTree(content);
        } catch (IOException e) {
          continue; // deleted while we listed: disarmed
        }
        if (rule == null || !point.id().equals(rule.path("point").asText())) {
          continue;
        }
        String table = stripSlash(rule.path("table").asText(""));
        if (table.isEmpty() || !(local.equals(table) || local.startsWith(table + "/"))) {
          continue;
        }
        if (rule.hasNonNull("version")) {
          Optional<Long> v = commitVersion(path);
          if (v.isEmpty() || v.get() != rule.get("version").asLong()) {
            continue;
          }
        }
        String key = f.getName() + "\n" + content;
        long seen = MATCHED.merge(key, 1L, Long::sum);
        long skip = rule.path("skip").asLong(0);
        long times = rule.path("times").asLong(1);
        if (seen <= skip || (times >= 0 && seen > skip + times)) {
          continue;
        }
        record(new File(dir, f.getName().substring(0, f.getName().length() - ".json".length()) + ".fired"),
            point.id() + " " + local + "\n");
        return f;
      }
    }
    return null;
  }

  private static void record(File fired, String line) {
    try {
      Files.writeString(fired.toPath(), line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND, StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot record an injected fault in " + fired, e);
    }
  }

  private static String localPath(Path path) {
    java.net.URI uri = path.toUri();
    if (uri.getScheme() != null && !"file".equals(uri.getScheme())) {
      return null;
    }
    return stripSlash(uri.getPath());
  }

  private static String stripSlash(String s) {
    return s.length() > 1 && s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
  }

  /** The message of every injected exception, so logs show what was injected (never matched on). */
  static String message(Point point, Path path) {
    return "filecommit test fault " + point.id() + " injected at " + path;
  }
}
