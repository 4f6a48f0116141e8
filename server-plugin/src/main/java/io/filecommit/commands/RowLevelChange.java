package io.filecommit.commands;

import io.filecommit.commands.optimize.AutoCompact;
import io.filecommit.delta.ColumnMapping;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.MaterializedRowTracking;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.files.TransactionalWrite;
import io.filecommit.read.TableScan;
import io.filecommit.schema.PartitionPredicates;
import io.filecommit.schema.SchemaEvolution;
import io.filecommit.schema.SchemaUtils;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.RowMetrics;
import io.filecommit.txn.TransactionId;
import io.filecommit.txn.staging.StageRequest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * What DELETE, UPDATE and MERGE share (Delta's {@code DeleteCommand}, {@code UpdateCommand} and {@code
 * MergeIntoCommand} as callers of {@code TransactionalWrite.writeFiles}; protocol "Add File and Remove File", "Change
 * Data Files"): one transaction on an existing table; candidate files found by partition pruning (the conjuncts of a
 * condition on partition columns only, evaluated on {@code partitionValues}); the rows of the files a change touches
 * rewritten through {@link TransactionalWrite}, change rows written to {@code _change_data/} when the table has the
 * change data feed on; {@code remove} of every touched file, {@code add} and {@code cdc} of the new ones committed in
 * one version. Candidate files are also skipped by their statistics ({@link StatsSkipping}: min/max values, null
 * counts, as Delta's {@code filterFiles}). What the transaction read is registered for its conflict checks: the
 * partition predicate and the files it matched, or the whole table when no partition was pruned.
 *
 * <p>Over 400 lines: the state of one row-level command's transaction and the steps DELETE,
 * UPDATE and MERGE share (Delta's DeltaCommand and DMLUtils); split further, one transaction's
 * state would be scattered.
 */
public final class RowLevelChange {
  /** The command's session. */ public final SparkSession session;
  /** The table's log. */ public final DeltaLog log;
  /** The change's transaction. */ public final OptimisticTransaction txn;
  /** The snapshot it read. */ public final Snapshot snapshot;
  /** The table's metadata at that snapshot. */ public final Metadata md;
  /** The table root, for messages. */ public final String table;
  /** Whether the change data feed is on (change rows are written). */ public final boolean cdf;
  /** When the change started, ms since the epoch. */ public final long start = System.currentTimeMillis();
  private final boolean skipped;
  private RowLevelOutput output;
  /** The schema rows are written with: the table's, or an evolved one ({@link #evolveSchema}). */
  private StructType writeSchema;

  /**
   * Candidate files of a change.
   *
   * @param files the active files that may hold affected rows
   * @param onPartitionsOnly whether the whole condition is on partition columns (or absent): every
   *     row of the candidate files matches
   */
  public record Candidates(List<AddFile> files, boolean onPartitionsOnly) {}

  private RowLevelChange(SparkSession session, DeltaLog log, OptimisticTransaction txn, boolean skipped) {
    this.session = session;
    this.log = log;
    this.txn = txn;
    this.snapshot = txn.snapshot();
    this.md = snapshot.metadata();
    this.table = txn.table();
    this.cdf = TableConfig.ENABLE_CHANGE_DATA_FEED.fromMetadata(md);
    this.skipped = skipped;
    this.output = md == null ? null : new RowLevelOutput(md.schema(), cdf, MaterializedRowTracking.of(md).orElse(null));
    this.writeSchema = md == null ? null : md.schema();
  }

  /**
   * Evolves the table schema for this change (MERGE with schema evolution, as Delta's {@code
   * MergeIntoCommand} with {@code withSchemaEvolution}): the new metadata is part of the commit;
   * {@link #columns()}, {@link #targetValues} and {@link #output()} follow the new schema, and
   * target rows read NULL for the columns they do not have.
   *
   * @param schema the merged schema ({@code SchemaEvolution.merge} of the table's and the source's)
   */
  public void evolveSchema(StructType schema) {
    if (schema.equals(writeSchema)) {
      return;
    }
    txn.updateMetadata(new Metadata(md.id(), md.name(), md.description(), md.format(), schema.json(),
        md.partitionColumns(), md.configuration(), md.createdTime()));
    writeSchema = txn.metadata().schema();
    output = new RowLevelOutput(writeSchema, cdf, MaterializedRowTracking.of(md).orElse(null));
  }

  /**
   * Starts a row-level change of the table at {@code path}.
   *
   * @param session Spark session
   * @param path table root
   * @param operation DELETE, UPDATE or MERGE, for messages
   * @param txnId idempotent write's application transaction, or null
   * @param removesRows whether the change may update or delete existing rows (refused on
   *     append-only tables)
   * @param stage when not null, the commit is staged ({@link CommandResult#staged()}), not published
   * @return the change; {@link #skipped()} when {@code txnId} was already applied
   * @throws io.filecommit.errors.FileCommitException {@code INVALID_EMPTY_LOCATION} for an empty
   *     path, {@code DELTA_MISSING_DELTA_TABLE} when there is no table, {@code
   *     DELTA_UNSUPPORTED_FEATURES_FOR_WRITE}, {@code DELTA_CANNOT_MODIFY_APPEND_ONLY}
   */
  public static RowLevelChange open(SparkSession session, String path, String operation, TransactionId txnId,
      boolean removesRows, StageRequest stage) {
    if (path == null || path.isBlank()) {
      throw DeltaErrors.blankPath(path);
    }
    TableScan.requireStrictReads(session, operation);
    DeltaLog log = DeltaLog.forTable(session, path);
    OptimisticTransaction txn = new OptimisticTransaction(session, log);
    txn.registerPostCommitHook(AutoCompact.HOOK);
    if (stage != null) {
      txn.stageInstead(stage);
    }
    Snapshot snapshot = txn.snapshot();
    String table = txn.table();
    if (!snapshot.exists()) {
      throw DeltaErrors.missingTable(table, operation);
    }
    TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), table);
    if (removesRows && TableConfig.APPEND_ONLY.fromMetadata(snapshot.metadata())) {
      throw DeltaErrors.appendOnly(table, TableConfig.APPEND_ONLY.key(), operation + " of existing rows is not allowed");
    }
    boolean skipped = txnId != null && txn.setTransaction(txnId);
    return new RowLevelChange(session, log, txn, skipped);
  }

  /** {@return whether the application transaction was already applied: nothing must be written} */
  public boolean skipped() {
    return skipped;
  }

  /** {@return the builder of this change's output rows} */
  public RowLevelOutput output() {
    return output;
  }

  /** {@return the result of a change that commits nothing (skipped txn, or no row affected without txn)} */
  public CommandResult nothingCommitted() {
    return CommandResult.nothingCommitted(snapshot.version(), table, start, 0);
  }


  /**
   * The files that may hold rows satisfying {@code condition}: every active file, or those whose
   * partition values satisfy the condition's partition-only conjuncts, less those whose statistics
   * prove that no row satisfies the conjuncts on the table's columns ({@link StatsSkipping}).
   * Registers the read with the transaction.
   *
   * @param condition the change's condition, or null for every row
   * @param alias the table's name in {@code condition}, or null
   * @return the candidates
   */
  public Candidates candidates(Column condition, String alias) {
    Column pruning = null;
    boolean all = true;
    if (condition != null) {
      for (Column c : md.partitionColumns().isEmpty() ? List.<Column>of() : DMLUtils.conjuncts(session, condition)) {
        if (PartitionPredicates.onPartitionsOnly(session, md, c, alias)) {
          pruning = pruning == null ? c : pruning.and(c);
        } else {
          all = false;
        }
      }
      all = all && pruning != null;
    }
    List<AddFile> active = new ArrayList<>(snapshot.allFiles());
    List<AddFile> files;
    if (pruning == null) {
      txn.readWholeTable();
      files = active;
    } else {
      Set<String> matching = PartitionPredicates.matching(session, md, active, pruning, alias);
      files = active.stream().filter(f -> matching.contains(f.path())).toList();
      txn.readPartitions(pruning, alias, matching);
    }
    if (condition == null || all) {
      return new Candidates(files, condition == null || all);
    }
    // Data skipping by the files' statistics (Delta's filterFiles with the data predicates): the
    // read registered above stays the partition-level one, a superset for conflict checks.
    Dataset<Row> empty = scan(List.of());
    StatsSkipping skipping = StatsSkipping.of(alias == null ? empty : empty.as(alias),
        name -> ColumnMapping.physicalName(md, name), DMLUtils.conjuncts(session, condition),
        MaterializedRowTracking.of(md).map(rt -> java.util.Set.of(rt.rowId(), rt.rowCommitVersion())).orElse(java.util.Set.of()));
    return new Candidates(skipping.filter(files), false);
  }

  /**
   * {@return whether {@code c} names only the table's columns (resolves against the table alone, as Delta's
   * {@code references.subsetOf(target.outputSet)})}
   *
   * @param c a predicate
   * @param alias the table's name in {@code c}, or null
   */
  public boolean onTableOnly(Column c, String alias) {
    Dataset<Row> empty = scan(List.of());
    try {
      (alias == null ? empty : empty.as(alias)).filter(c).queryExecution().assertAnalyzed();
      return true;
    } catch (Exception e) { // AnalysisException: names a column of something else
      return false;
    }
  }

  /**
   * Files a DELETE or UPDATE rewrites.
   *
   * @param files the touched files
   * @param matched rows in them that satisfy the condition
   * @param others rows in them that do not (copied into the new files)
   */
  public record Touched(List<AddFile> files, long matched, long others) {}

  /**
   * Pass 1 of DELETE and UPDATE: the candidate files that hold rows satisfying {@code matches},
   * with how many, and how many other rows they hold. Only matching rows are aggregated (Parquet
   * filter pushdown skips what it can); the other rows are counted from the files' statistics, or
   * by a count when a file has no trustworthy one.
   *
   * @param candidates the files to scan
   * @param matches the condition, NULL treated as false
   * @return touched files (snapshot order), matching rows, other rows of the touched files
   */
  public Touched touched(List<AddFile> candidates, Column matches) {
    List<Row> perFile = scan(candidates).filter(matches).groupBy(TableScan.FILE_COLUMN).count().collectAsList();
    Map<String, Long> counts = new LinkedHashMap<>();
    long matched = 0;
    for (Row r : perFile) {
      counts.put(r.getString(0), r.getLong(1));
      matched += r.getLong(1);
    }
    List<AddFile> files = files(counts.keySet());
    return new Touched(files, matched, rowCount(files) - matched);
  }

  /** {@return the rows in {@code files}: from their statistics ({@link TableScan#statsRowCount}), else counted}
   * @param files active files of the table */
  public long rowCount(List<AddFile> files) {
    long total = TableScan.statsRowCount(files);
    return total >= 0 ? total : files.isEmpty() ? 0 : scan(files).count();
  }

  /** {@return the rows of {@code files} ({@link TableScan#read})}
   * @param files active files of the table */
  public Dataset<Row> scan(Collection<AddFile> files) {
    return TableScan.read(session, log, md, files);
  }

  /** {@return the active files of the snapshot with these log paths, in snapshot order}
   * @param paths log paths */
  public List<AddFile> files(Collection<String> paths) {
    Set<String> wanted = paths instanceof Set<String> set ? set : new HashSet<>(paths);
    return snapshot.allFiles().stream().filter(f -> wanted.contains(f.path())).toList();
  }

  /** {@return whether {@link #evolveSchema} changed the schema this change writes} */
  public boolean evolved() {
    return !writeSchema.equals(md.schema());
  }

  /** {@return the table's columns (after {@link #evolveSchema}: the evolved schema's)} */
  public StructField[] columns() {
    return writeSchema.fields();
  }

  /**
   * {@return assignments keyed by the table's column names}
   * @param given column name (any case) -> value
   * @param operation the command, for the error
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MERGE_UNRESOLVED_EXPRESSION} for
   *     an unknown column or a column assigned twice
   */
  public Map<String, Column> assignments(Map<String, Column> given, String operation) {
    Map<String, Column> out = new LinkedHashMap<>();
    given.forEach((name, value) -> {
      StructField f = SchemaUtils.findField(writeSchema, name).orElseThrow(() ->
          DeltaErrors.unresolvedAssignment(operation, name, false, List.of(writeSchema.fieldNames())));
      if (out.put(f.name(), value) != null) {
        throw DeltaErrors.unresolvedAssignment(operation, f.name(), true, List.of());
      }
    });
    return out;
  }

  /** {@return whether a column is a generated column (computed on update and insert unless assigned)}
   * @param column a column name */
  public boolean isGenerated(String column) {
    return output.isGenerated(column);
  }

  /**
   * Writes {@code rows} (table columns, plus {@code _change_type} with the change data feed on),
   * removes {@code removed}, adds back {@code kept} (files with new deletion vectors, from {@link
   * MarkedRows}), and commits; if anything fails before the commit landed, the transaction deletes
   * what was written (data files, and the DV files {@link MarkedRows#mark} registered).
   *
   * @param rows the rows to write, or null when only files are removed and nothing is written
   * @param removed the files leaving the table (or coming back with a new deletion vector)
   * @param kept the removed files that come back with their new deletion vector (empty for none)
   * @param options Spark Parquet writer options
   * @param operation the commit's operation, given what was written
   * @param rowMetrics the row metrics, asked for after the write job ran
   * @return what was committed
   */
  public CommandResult writeAndCommit(Dataset<Row> rows, Collection<AddFile> removed, List<AddFile> kept,
      Map<String, String> options, Function<Operation.RowLevelStats, Operation> operation,
      Supplier<RowMetrics> rowMetrics) {
    return writeAndCommit(rows, removed, kept, null, true, options, operation, rowMetrics);
  }

  /**
   * {@link #writeAndCommit(Dataset, Collection, List, Map, Function, Supplier)} of a change that
   * marked rows in deletion vectors.
   *
   * @param rows the rows to write, or null when nothing is written
   * @param marked the rows marked ({@link MarkedRows}), whose touched files are removed and kept
   *     files added back
   * @param touchedAreRemoved how the removed-files metric counts, as Delta's command does: every
   *     touched file (UPDATE), or only the files that leave whole (DELETE, MERGE)
   * @param options Spark Parquet writer options
   * @param operation the commit's operation, given what was written
   * @param rowMetrics the row metrics, asked for after the write job ran
   * @return what was committed
   */
  public CommandResult writeAndCommit(Dataset<Row> rows, MarkedRows marked, boolean touchedAreRemoved,
      Map<String, String> options, Function<Operation.RowLevelStats, Operation> operation,
      Supplier<RowMetrics> rowMetrics) {
    return writeAndCommit(rows, marked.files(), marked.kept(), marked, touchedAreRemoved, options, operation,
        rowMetrics);
  }

  private CommandResult writeAndCommit(Dataset<Row> rows, Collection<AddFile> removed, List<AddFile> kept,
      MarkedRows marked, boolean touchedAreRemoved, Map<String, String> options,
      Function<Operation.RowLevelStats, Operation> operation, Supplier<RowMetrics> rowMetrics) {
    try {
      TransactionalWrite writer = new TransactionalWrite(txn);
      List<AddFile> written = rows == null ? List.of() : writer.writeFiles(rows, options, cdf);
      List<AddFile> adds = new ArrayList<>(written);
      adds.addAll(kept);
      RowMetrics metrics = rowMetrics.get();
      List<AddCDCFile> cdc = writer.changeFiles();
      long now = System.currentTimeMillis();
      List<RemoveFile> removes = new ArrayList<>();
      for (AddFile f : removed) {
        removes.add(f.toRemove(now));
      }
      if (adds.isEmpty() && cdc.isEmpty() && removes.isEmpty() && !txn.hasTransactionId()) {
        return nothingCommitted();
      }
      List<FileAction> actions = new ArrayList<>(removes);
      actions.addAll(adds);
      actions.addAll(cdc);
      long[] totals = CommandResult.rowsAndBytes(written);
      // With deletion vectors Delta's DELETE and MERGE count as removed only the files that leave
      // whole; all count as added only the files written (a file back with a new DV is counted by the
      // deletion-vector metrics).
      int removedFiles = marked == null || touchedAreRemoved ? removes.size() : marked.everyRow().size();
      int addedFiles = marked == null ? adds.size() : written.size();
      long version = txn.commit(actions, operation.apply(new Operation.RowLevelStats(metrics, removedFiles,
          addedFiles, cdc.size(), totals[0], totals[1], System.currentTimeMillis() - start,
          marked == null ? null : marked.deletionVectorCounts())));
      if (!txn.committed()) {
        txn.abort();
        return CommandResult.nothingCommitted(version, table, start, txn.attempts());
      }
      return new CommandResult(version, true, table, adds, removes, cdc, totals[0], totals[1],
          System.currentTimeMillis() - start, txn.attempts(), metrics, txn.staged());
    } catch (RuntimeException | Error e) {
      txn.abort();
      throw e;
    }
  }

  /**
   * {@return whether this change marks rows deleted with deletion vectors instead of rewriting files: the
   * table takes new DVs and every candidate file has the trustworthy {@code numRecords} statistic a
   * file with a DV must carry}
   * @param candidates the candidate files
   */
  public boolean usesDeletionVectors(List<AddFile> candidates) {
    return TableFeatures.deletionVectorsWritable(snapshot.protocol(), md)
        && candidates.stream().allMatch(f -> f.numPhysicalRecords().isPresent());
  }

  /**
   * Pass 1 with deletion vectors: marks the rows of {@code candidates} satisfying {@code matches} in
   * new DVs written on the executors ({@link MarkedRows#mark}).
   *
   * @param candidates files to scan
   * @param matches the condition, NULL treated as false
   * @return the touched files, their new DVs and the number of rows marked
   */
  public MarkedRows markRows(List<AddFile> candidates, Column matches) {
    return MarkedRows.mark(this, candidates, matches);
  }

  /** {@return row values of the table's columns read from a (possibly aliased) scan}
   * @param alias the scan's alias, or null */
  public List<Column> targetValues(String alias) {
    List<Column> out = new ArrayList<>();
    StructType read = md.schema();
    for (StructField f : columns()) {
      out.add(SchemaUtils.findField(read, f.name())
          .map(r -> SchemaEvolution.project(DMLUtils.ref(alias, f.name()), r.dataType(), f.dataType()))
          .orElseGet(() -> functions.lit(null).cast(f.dataType())));
    }
    return out;
  }
}
