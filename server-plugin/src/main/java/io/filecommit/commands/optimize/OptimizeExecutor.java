package io.filecommit.commands.optimize;

import io.filecommit.txn.CommandResult;
import io.filecommit.read.TableScan;
import io.filecommit.delta.Clustering;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.files.TransactionalWrite;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.hash.Murmur3_x86_32;

/**
 * Runs one OPTIMIZE (Delta's {@code OptimizeExecutor.optimize}) in its own transaction: selects the
 * files ({@link OptimizePlan}), rewrites every bin through the transactional write path ({@link
 * TransactionalWrite}: statistics, column mapping, partition values as for any write; rows deleted
 * by a deletion vector are left out, {@link TableScan}) and commits the new files and the removal
 * of the old ones with {@code dataChange=false}. No change data is written.
 *
 * <p>Isolation (Delta's OPTIMIZE commits under {@code SnapshotIsolation}): the transaction records
 * every candidate file as read and no predicate, so concurrent appends (blind or not) never
 * conflict with it, while a concurrent remove of a candidate file fails it with {@code
 * DELTA_CONCURRENT_DELETE_READ} (Delta's {@code ConcurrentDeleteReadException}).
 *
 * <p>Bin-packing writes all bins in one Spark job: each bin's rows go to their own shuffle
 * partition (a key per bin whose {@code hash} lands on the bin's partition), so each task writes one
 * file. Z-order writes one job per partition ({@link ZOrder}).
 */
final class OptimizeExecutor {
  private static final String BIN_COLUMN = "__fc_bin";
  /** The initial hash value (42) Spark gives {@code Murmur3Hash} in {@code HashPartitioning}. */
  private static final int SPARK_HASH_INIT = 42;

  private OptimizeExecutor() {}

  /**
   * What to optimize and how.
   *
   * @param candidates selects the candidate files (partition filter)
   * @param predicates the partition predicates' SQL, for {@code commitInfo}
   * @param minFileSize files below this are compacted, bytes
   * @param maxFileSize target file size, bytes
   * @param maxDeletedRowsRatio files with a larger deleted-row share are rewritten
   * @param zOrderBy Z-order columns (resolved names), empty for bin-packing
   * @param auto whether auto compaction runs it
   * @param hilbert whether {@code zOrderBy} are a clustered table's clustering columns: the files are
   *     laid out along the Hilbert curve ({@link Hilbert}) and marked {@code clusteringProvider:
   *     liquid} (protocol "Clustered Table")
   */
  record Request(Predicate<AddFile> candidates, List<String> predicates, long minFileSize, long maxFileSize,
      double maxDeletedRowsRatio, List<String> zOrderBy, boolean auto, boolean hilbert) {}

  /**
   * Optimizes in a new transaction on the latest snapshot.
   *
   * @param session Spark session
   * @param log the table's log
   * @param txn a new transaction on the table (its snapshot is the one optimized)
   * @param request what to do
   * @param start when the command started, ms since the epoch
   * @return the commit ({@code committed=false} when no bin had anything to rewrite) and Delta's
   *     OPTIMIZE metrics (empty when nothing was committed)
   */
  static OptimizeCommand.Result run(SparkSession session, DeltaLog log, OptimisticTransaction txn, Request request,
      long start) {
    TableScan.requireStrictReads(session, "OPTIMIZE");
    Snapshot snapshot = txn.snapshot();
    TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), txn.table());
    List<AddFile> candidates = snapshot.allFiles().stream().filter(request.candidates()).toList();
    boolean multiDim = !request.zOrderBy().isEmpty();
    List<AddFile> toProcess = OptimizePlan.toProcess(candidates, request.minFileSize(), request.maxDeletedRowsRatio(),
        multiDim);
    List<OptimizePlan.Bin> bins = OptimizePlan.bins(toProcess, request.maxFileSize(), multiDim);
    if (bins.isEmpty()) {
      return new OptimizeCommand.Result(CommandResult.nothingCommitted(snapshot.version(), txn.table(), start, 0),
          Map.of());
    }
    txn.readPartitions(functions.lit(false), null, candidates.stream().map(AddFile::path).toList());
    try {
      List<AddFile> added = multiDim ? writeZOrdered(session, log, txn, bins, request) : writeBins(session, log, txn, bins);
      long now = System.currentTimeMillis();
      List<RemoveFile> removed = new ArrayList<>();
      for (OptimizePlan.Bin b : bins) {
        for (AddFile f : b.files()) {
          removed.add(new RemoveFile(f.path(), now, false, true, f.partitionValues(), f.size(), f.deletionVector(),
              f.baseRowId(), f.defaultRowCommitVersion()));
        }
      }
      List<DeletionVectorDescriptor> dvs = toProcess.stream().map(AddFile::deletionVector)
          .filter(java.util.Objects::nonNull).toList();
      Map<String, String> metrics = OptimizePlan.metrics(added, removed, dvs);
      List<FileAction> actions = new ArrayList<>(added);
      actions.addAll(removed);
      long version = txn.commit(actions, new Operation.Optimize(request.predicates(),
          request.hilbert() ? List.of() : request.zOrderBy(),
          request.auto(), metrics));
      long[] totals = CommandResult.rowsAndBytes(added);
      return new OptimizeCommand.Result(new CommandResult(version, txn.committed(), txn.table(), added, removed,
          List.of(), totals[0], totals[1], System.currentTimeMillis() - start, txn.attempts(), RowMetrics.NONE),
          metrics);
    } catch (RuntimeException | Error e) {
      txn.abort();
      throw e;
    }
  }

  /** Bin-packing: every bin's rows in one task of one job, written as one file. */
  private static List<AddFile> writeBins(SparkSession session, DeltaLog log, OptimisticTransaction txn,
      List<OptimizePlan.Bin> bins) {
    Metadata md = txn.metadata();
    int n = bins.size();
    int[] keys = binKeys(n);
    List<AddFile> files = new ArrayList<>();
    List<Row> fileBins = new ArrayList<>();
    for (int b = 0; b < n; b++) {
      for (AddFile f : bins.get(b).files()) {
        files.add(f);
        fileBins.add(RowFactory.create(f.path(), keys[b]));
      }
    }
    StructType binSchema = new StructType(new StructField[] {
        new StructField(TableScan.FILE_COLUMN, DataTypes.StringType, false, org.apache.spark.sql.types.Metadata.empty()),
        new StructField(BIN_COLUMN, DataTypes.IntegerType, false, org.apache.spark.sql.types.Metadata.empty())});
    Dataset<Row> rows = TableScan.read(session, log, md, files);
    Dataset<Row> data;
    if (n == 1) {
      data = rows.drop(TableScan.FILE_COLUMN, TableScan.ROW_COLUMN).repartition(1);
    } else {
      data = rows.join(functions.broadcast(session.createDataFrame(fileBins, binSchema)),
              scala.jdk.javaapi.CollectionConverters.asScala(List.of(TableScan.FILE_COLUMN)).toSeq(), "inner")
          .repartition(n, functions.col(BIN_COLUMN)).drop(BIN_COLUMN, TableScan.FILE_COLUMN, TableScan.ROW_COLUMN);
    }
    return withoutDataChange(new TransactionalWrite(txn).writeFiles(data, Map.of(), false));
  }

  /** Z-order: per partition, its rows clustered into about (bytes / target size) files. */
  private static List<AddFile> writeZOrdered(SparkSession session, DeltaLog log, OptimisticTransaction txn,
      List<OptimizePlan.Bin> bins, Request request) {
    List<AddFile> out = new ArrayList<>();
    for (OptimizePlan.Bin b : bins) {
      int numFiles = (int) Math.max(1, Math.min(Integer.MAX_VALUE, b.bytes() / request.maxFileSize()));
      Dataset<Row> rows = TableScan.read(session, log, txn.metadata(), b.files())
          .drop(TableScan.FILE_COLUMN, TableScan.ROW_COLUMN);
      Dataset<Row> laidOut = request.hilbert() ? Hilbert.cluster(rows, request.zOrderBy(), numFiles)
          : ZOrder.cluster(rows, request.zOrderBy(), numFiles);
      for (AddFile a : withoutDataChange(new TransactionalWrite(txn).writeFiles(laidOut, Map.of(), false))) {
        out.add(request.hilbert() ? a.withClusteringProvider(Clustering.PROVIDER) : a);
      }
    }
    return out;
  }

  private static List<AddFile> withoutDataChange(List<AddFile> adds) {
    List<AddFile> out = new ArrayList<>(adds.size());
    for (AddFile a : adds) {
      out.add(a.withDataChange(false));
    }
    return out;
  }

  /**
   * For each of {@code n} bins an int key that Spark's hash partitioning into {@code n} partitions
   * sends to partition {@code b} ({@code pmod(murmur3(key, 42), n) == b}, Spark's {@code
   * HashPartitioning.partitionIdExpression} for one int column), so that no two bins share a task.
   */
  static int[] binKeys(int n) {
    int[] keys = new int[n];
    Map<Integer, Integer> free = new HashMap<>();
    for (int b = 0; b < n; b++) {
      free.put(b, b);
    }
    for (int k = 0; !free.isEmpty(); k++) {
      int p = Math.floorMod(Murmur3_x86_32.hashInt(k, SPARK_HASH_INIT), n);
      if (free.remove(p) != null) {
        keys[p] = k;
      }
    }
    return keys;
  }
}
