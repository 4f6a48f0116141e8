package io.filecommit.connect;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;

/**
 * The object-store requests of one command: the growth of the request counters of the table's
 * Hadoop file system ({@code IOStatisticsSource.getIOStatistics()}, Hadoop's IOStatistics API; for
 * S3A the counters of S3A's {@code Statistic} enum, e.g. {@code object_put_request},
 * {@code object_list_request}, {@code object_metadata_request} (HEAD), {@code
 * action_http_get_request} (GET), {@code object_delete_request}) from when the command resolved its
 * table path to when it answers.
 *
 * <p>The counters belong to the file system instance, which Hadoop shares among every command of
 * the server on that bucket: with other commands running at once on the same bucket, their
 * requests are counted too (the counts are then an upper bound). Requests of executors in other
 * JVMs (a cluster's executors writing data files) are not counted; in local mode they are. File
 * systems without IOStatistics (the local one) count nothing: the map stays empty.
 *
 * <p>Per thread: {@link #open} starts a command's scope (the plugin's dispatch), {@link #watch}
 * takes the starting counters of the command's table file system, {@link #counts} reads the growth.
 */
final class ObjectStoreRequests {
  private static final ThreadLocal<Scope> SCOPE = new ThreadLocal<>();

  private ObjectStoreRequests() {}

  /** The scope of one command on this thread; closing it ends the command's counting. */
  static final class Scope implements AutoCloseable {
    private final Scope outer;
    private IOStatistics stats;
    private Map<String, Long> start;

    private Scope(Scope outer) {
      this.outer = outer;
    }

    @Override
    public void close() {
      SCOPE.set(outer);
    }
  }

  /**
   * Starts counting a command on this thread.
   *
   * @return the scope, to close when the command answered
   */
  static Scope open() {
    Scope s = new Scope(SCOPE.get());
    SCOPE.set(s);
    return s;
  }

  /**
   * Takes the starting counters of {@code path}'s file system (the first path of the command only;
   * later calls do nothing). Never fails: a file system that cannot be opened counts nothing.
   *
   * @param path the command's qualified table path
   * @param conf the Hadoop conf the command opens its file system with
   */
  static void watch(String path, Configuration conf) {
    Scope s = SCOPE.get();
    if (s == null || s.stats != null || path == null || path.isBlank()) {
      return;
    }
    try {
      FileSystem fs = new Path(path).getFileSystem(conf);
      IOStatistics stats = IOStatisticsSupport.retrieveIOStatistics(fs);
      if (stats != null) {
        s.stats = stats;
        s.start = new TreeMap<>(stats.counters());
      }
    } catch (IOException | RuntimeException e) {
      // Counting is best effort: the command itself reports the file system's failure.
    }
  }

  /**
   * The requests counted so far in this thread's command: counter name -> growth, only the
   * counters naming requests ({@code *_request}, and their {@code .failures}) that grew.
   *
   * @return the counts, empty when nothing was counted
   */
  static Map<String, Long> counts() {
    Scope s = SCOPE.get();
    Map<String, Long> out = new TreeMap<>();
    if (s == null || s.stats == null) {
      return out;
    }
    s.stats.counters().forEach((name, value) -> {
      if (name.contains("_request")) {
        long grew = value - s.start.getOrDefault(name, 0L);
        if (grew > 0) {
          out.put(name, grew);
        }
      }
    });
    return out;
  }
}
