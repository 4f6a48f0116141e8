package io.filecommit.commands.optimize;

import io.filecommit.delta.DeltaLog;
import io.filecommit.conf.FileCommitConf;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.PostCommitHook;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.classic.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Auto compaction after a write (Delta's {@code AutoCompact} post-commit hook), on tables with
 * {@code delta.autoOptimize.autoCompact=true}: after a committed write that added files, the
 * partitions it added files to that now hold at least {@link FileCommitConf#AUTO_COMPACT_MIN_NUM_FILES} (default 50)
 * files smaller than {@link FileCommitConf#AUTO_COMPACT_MIN_FILE_SIZE} (default half the target) are compacted into
 * files of up to {@link FileCommitConf#AUTO_COMPACT_MAX_FILE_SIZE} (default 128 MiB), as OPTIMIZE does ({@link
 * OptimizeExecutor}), in a commit of its own with operation {@code OPTIMIZE} and parameter {@code
 * auto=true}. This follows Delta's defaults with its modified-partitions-only and early-skip rules
 * ({@code AutoCompactUtils}), counting the files in the post-commit snapshot.
 *
 * <p>A failure of the compaction (a conflict with a concurrent writer, a storage error) never fails
 * the write: it is logged and the write's result stands. While one auto compaction of a table runs
 * on this server, writes that finish meanwhile skip theirs (Delta reserves partitions for the same
 * reason, {@code AutoCompactPartitionReserve}): the next write after it compacts what is left.
 */
public final class AutoCompact {
  /**
   * The post-commit hook that write and row-level commands register on their transaction ({@code
   * OptimisticTransaction.registerPostCommitHook}, as Delta registers its {@code AutoCompact} hook):
   * runs {@link #afterCommit} with the transaction's landed actions.
   */
  public static final PostCommitHook HOOK = new PostCommitHook() {
    @Override
    public String name() {
      return "auto compaction";
    }

    @Override
    public void run(PostCommitHook.Committed c) {
      List<AddFile> added = c.actions().stream().filter(a -> a instanceof AddFile).map(a -> (AddFile) a).toList();
      afterCommit(c.session(), c.log().tablePath().toString(), c.version(), added);
    }
  };

  private static final Logger LOG = LoggerFactory.getLogger(AutoCompact.class);
  /** Tables an auto compaction of this server is running on: others skip them instead of racing it. */
  private static final Set<String> RESERVED = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private AutoCompact() {}

  /**
   * Compacts after a command's commit when the table asks for it; never throws.
   *
   * @param session the command's session
   * @param table the table path
   * @param version the version the command committed
   * @param added the files it added (nothing happens when it added none)
   * @return the compaction's result, or null when none ran or it failed
   */
  static OptimizeCommand.Result afterCommit(SparkSession session, String table, long version, List<AddFile> added) {
    if (added.isEmpty()) {
      return null;
    }
    if (!RESERVED.add(table)) {
      return null; // another command of this server is compacting the table (Delta's AutoCompactPartitionReserve)
    }
    try {
      return compact(session, table, version, added);
    } catch (RuntimeException e) {
      LOG.warn("filecommit: auto compaction of " + table + " after version " + version + " failed; the write stands: " + e);
      return null;
    } finally {
      RESERVED.remove(table);
    }
  }

  private static OptimizeCommand.Result compact(SparkSession session, String table, long version, List<AddFile> added) {
    long start = System.currentTimeMillis();
    DeltaLog log = DeltaLog.forTable(session, table);
    // The common case: the table's setting from the state this server cached at its commit, no request.
    io.filecommit.delta.actions.Metadata md = io.filecommit.delta.LogProbe.cachedMetadata(log, version);
    if (md == null) {
      Snapshot latest = log.snapshot();
      md = latest.exists() ? latest.metadata() : null;
    }
    if (md == null || !TableConfig.AUTO_COMPACT.fromMetadata(md)) {
      return null;
    }
    OptimisticTransaction txn = new OptimisticTransaction(session, log);
    Snapshot snapshot = txn.snapshot();
    SparkConf conf = session.sparkContext().getConf();
    long maxFileSize = FileCommitConf.AUTO_COMPACT_MAX_FILE_SIZE.bytes(conf, 0);
    long minFileSize = FileCommitConf.AUTO_COMPACT_MIN_FILE_SIZE.bytes(conf, maxFileSize / 2);
    int minNumFiles = (int) FileCommitConf.AUTO_COMPACT_MIN_NUM_FILES.longValue();
    Set<Map<String, String>> written = new LinkedHashSet<>();
    added.forEach(a -> written.add(a.partitionValues()));
    Map<Map<String, String>, Integer> small = new HashMap<>();
    for (AddFile f : snapshot.allFiles()) {
      if (f.size() < minFileSize && written.contains(f.partitionValues())) {
        small.merge(f.partitionValues(), 1, Integer::sum);
      }
    }
    Set<Map<String, String>> chosen = new LinkedHashSet<>();
    small.forEach((p, n) -> {
      if (n >= minNumFiles) {
        chosen.add(p);
      }
    });
    if (chosen.isEmpty()) {
      return null;
    }
    OptimizeExecutor.Request request = new OptimizeExecutor.Request(f -> chosen.contains(f.partitionValues()),
        predicates(snapshot.metadata(), chosen), minFileSize, maxFileSize,
        FileCommitConf.OPTIMIZE_MAX_DELETED_ROWS_RATIO.doubleValue(conf), List.of(), true, false);
    OptimizeCommand.Result r = OptimizeExecutor.run(session, log, txn, request, start);
    LOG.info("filecommit: auto compaction of " + table + " committed version " + r.commit().version()
        + ": " + r.operationMetrics());
    return r;
  }

  /** The chosen partitions as one SQL predicate (none for an unpartitioned table), for commitInfo. */
  private static List<String> predicates(Metadata md, Set<Map<String, String>> partitions) {
    if (md.partitionColumns().isEmpty()) {
      return List.of();
    }
    List<String> branches = new ArrayList<>();
    for (Map<String, String> p : partitions) {
      List<String> terms = new ArrayList<>();
      p.forEach((k, v) -> terms.add("`" + k.replace("`", "``") + "` <=> "
          + (v == null ? "NULL" : "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'")));
      branches.add("(" + String.join(" AND ", terms) + ")");
    }
    return List.of(String.join(" OR ", branches));
  }
}
