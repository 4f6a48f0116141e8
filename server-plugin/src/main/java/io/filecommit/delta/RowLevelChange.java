package io.filecommit.delta;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.actions.AddCDCFile;
import io.filecommit.actions.AddFile;
import io.filecommit.actions.FileAction;
import io.filecommit.actions.RemoveFile;
import io.filecommit.errors.ErrorClass;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.LongAccumulator;

/**
 * What DELETE, UPDATE and MERGE share (seed TransactionalWrite.txt: these commands are callers of
 * {@code writeFiles}; protocol "Add File and Remove File", "Change Data Files"): one transaction on
 * an existing table; candidate files found by partition pruning (the conjuncts of a condition that
 * reference partition columns only, evaluated on {@code partitionValues}); the rows of the files a
 * change touches rewritten through {@link TransactionalWrite#writeFiles} with {@code
 * DelayedCommitProtocol}, change rows ({@code delete}, {@code update_preimage}/{@code
 * update_postimage}, {@code insert}) written to {@code _change_data/} through the {@code __is_cdc}
 * partition when the table has the change data feed on; {@code remove} of every touched file,
 * {@code add} and {@code cdc} of the new ones committed in one version.
 *
 * <p>Output rows are built as an array of structs per input row ({@link #output}) and exploded, so
 * one pass produces the new row and its change rows; the struct carries the row's kind ({@link
 * Kind}) for the row metrics and, per generated column, whether it must be computed from the new
 * values (as Delta recomputes generated columns on UPDATE and MERGE).
 *
 * <p>What the transaction read is registered for the {@link ConflictChecker}: the partition
 * predicate and candidate files, or the whole table when nothing was pruned.
 */
final class RowLevelChange {
  /** Kinds of output rows; {@link #DROP} rows only count a deleted row and are not written. */
  enum Kind {
    COPY, UPDATE, DELETE, INSERT, CHANGE_ONLY, DROP
  }

  /** Name of the struct column of {@link #output} rows before they are flattened. */
  private static final String OUT = "__fc_out";
  private static final String KIND = "__fc_kind";
  private static final String GEN_PREFIX = "__fc_gen_";

  final SparkSession session;
  final DeltaLog log;
  final TransactionalWrite txn;
  final Snapshot snapshot;
  final Metadata md;
  final String table;
  final boolean cdf;
  final long start = System.currentTimeMillis();
  private final boolean skipped;
  private final List<String> generated;

  /**
   * Candidate files of a change.
   *
   * @param files the active files that may hold affected rows
   * @param onPartitionsOnly whether the whole condition is on partition columns (or absent): every
   *     row of the candidate files matches
   */
  record Candidates(List<AddFile> files, boolean onPartitionsOnly) {}

  private RowLevelChange(SparkSession session, DeltaLog log, TransactionalWrite txn, boolean skipped) {
    this.session = session;
    this.log = log;
    this.txn = txn;
    this.snapshot = txn.snapshot();
    this.md = snapshot.metadata();
    this.table = log.tablePath().toString();
    this.cdf = md != null && TableProperties.isTrue(md.configuration(), TableProperties.ENABLE_CDF);
    this.skipped = skipped;
    this.generated = md == null ? List.of() : TableFeatures.generatedColumns(md.schema());
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
   * @return the change; {@link #skipped()} when {@code txnId} was already applied
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_INVALID_ARGUMENT} for an
   *     empty path, {@code DELTA_MISSING_DELTA_TABLE} when there is no table, {@code
   *     DELTA_UNSUPPORTED_FEATURES_FOR_WRITE}, {@code DELTA_CANNOT_MODIFY_APPEND_ONLY}
   */
  static RowLevelChange open(SparkSession session, String path, String operation, WriteIntoDelta.Txn txnId,
      boolean removesRows) {
    if (path == null || path.isBlank()) {
      throw ErrorClass.FILECOMMIT_INVALID_ARGUMENT.error("Table path must not be empty, got '" + path + "'");
    }
    DeltaLog log = DeltaLog.forTable(session, path);
    TransactionalWrite txn = new TransactionalWrite(session, log);
    Snapshot snapshot = txn.snapshot();
    String table = log.tablePath().toString();
    if (!snapshot.exists()) {
      throw ErrorClass.DELTA_MISSING_DELTA_TABLE.error(table + " is not a Delta table: " + operation + " needs an existing table");
    }
    TableFeatures.checkWritable(snapshot.protocol(), snapshot.metadata(), table);
    if (removesRows && TableProperties.isTrue(snapshot.metadata().configuration(), TableProperties.APPEND_ONLY)) {
      throw ErrorClass.DELTA_CANNOT_MODIFY_APPEND_ONLY.error("Table " + table + " is append-only ("
          + TableProperties.APPEND_ONLY + "=true): " + operation + " of existing rows is not allowed",
          Map.of("table_name", table, "config", TableProperties.APPEND_ONLY + "=false"));
    }
    boolean skipped = txnId != null && txn.setTransaction(txnId.appId(), txnId.version());
    return new RowLevelChange(session, log, txn, skipped);
  }

  /** Whether the application transaction was already applied: nothing must be written. */
  boolean skipped() {
    return skipped;
  }

  /** The result of a change that commits nothing (skipped txn, or no row affected without txn). */
  WriteIntoDelta.Result nothingCommitted() {
    return new WriteIntoDelta.Result(snapshot.version(), false, table, List.of(), List.of(), List.of(), 0, 0,
        System.currentTimeMillis() - start, 0, WriteIntoDelta.RowMetrics.NONE);
  }

  /**
   * The top-level AND-ed parts of a condition (the session's converter parses SQL-text columns
   * such as {@code functions.expr(...)} first).
   */
  static List<Column> conjuncts(SparkSession session, Column condition) {
    List<Expression> parts = new ArrayList<>();
    split(session.expression(condition), parts);
    return parts.stream().map(ExpressionUtils::column).toList();
  }

  private static void split(Expression e, List<Expression> out) {
    if (e instanceof And and) {
      split(and.left(), out);
      split(and.right(), out);
    } else {
      out.add(e);
    }
  }

  /**
   * The files that may hold rows satisfying {@code condition}: every active file, or those whose
   * partition values satisfy the condition's partition-only conjuncts. Registers the read with the
   * transaction ({@link TransactionalWrite#readPartitions} or {@link TransactionalWrite#readWholeTable}).
   *
   * @param condition the change's condition, or null for every row
   * @param alias the table's name in {@code condition}, or null
   * @return the candidates
   */
  Candidates candidates(Column condition, String alias) {
    Column pruning = null;
    boolean all = true;
    if (condition != null) {
      for (Column c : md.partitionColumns().isEmpty() ? List.<Column>of() : conjuncts(session, condition)) {
        if (PartitionPredicates.onPartitionsOnly(session, md, c, alias)) {
          pruning = pruning == null ? c : pruning.and(c);
        } else {
          all = false;
        }
      }
      all = all && pruning != null;
    }
    List<AddFile> active = new ArrayList<>(snapshot.allFiles());
    if (pruning == null) {
      txn.readWholeTable();
      return new Candidates(active, condition == null);
    }
    Set<String> matching = PartitionPredicates.matching(session, md, active, pruning, alias);
    List<AddFile> files = active.stream().filter(f -> matching.contains(f.path())).toList();
    txn.readPartitions(pruning, alias, matching);
    return new Candidates(files, all);
  }

  /**
   * Pass 1 of DELETE and UPDATE: the candidate files that hold rows satisfying {@code matches},
   * with how many, and how many other rows they hold. Only matching rows are aggregated (Parquet
   * filter pushdown skips what it can); the other rows are counted from the files' statistics
   * ({@code numRecords} minus deletion-vector cardinality), or by a count when a file has none.
   *
   * @param candidates the files to scan
   * @param matches the condition, NULL treated as false
   * @return touched files (snapshot order), matching rows, other rows of the touched files
   */
  Touched touched(List<AddFile> candidates, Column matches) {
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

  /** Rows in {@code files}: from their statistics ({@link TableScan#statsRowCount}), else counted. */
  long rowCount(List<AddFile> files) {
    long total = TableScan.statsRowCount(files);
    return total >= 0 ? total : files.isEmpty() ? 0 : scan(files).count();
  }

  /** commitInfo {@code operationParameters.predicate}: a JSON array of the condition's SQL, as Delta writes. */
  static String predicateParameter(Column condition) {
    return ActionJson.MAPPER.createArrayNode().add(sql(condition)).toString();
  }

  /**
   * Files a DELETE or UPDATE rewrites.
   *
   * @param files the touched files
   * @param matched rows in them that satisfy the condition
   * @param others rows in them that do not (copied into the new files)
   */
  record Touched(List<AddFile> files, long matched, long others) {}

  /** The rows of {@code files} ({@link TableScan#read}). */
  Dataset<Row> scan(Collection<AddFile> files) {
    return TableScan.read(session, log, md, files);
  }

  /** The active files of the snapshot with these log paths, in snapshot order. */
  List<AddFile> files(java.util.Collection<String> paths) {
    Set<String> wanted = paths instanceof Set<String> set ? set : new java.util.HashSet<>(paths);
    return snapshot.allFiles().stream().filter(f -> wanted.contains(f.path())).toList();
  }

  /** The table's columns. */
  StructField[] columns() {
    return md.schema().fields();
  }

  /** The table column named {@code name} (case-insensitive). */
  StructField column(String name, String operation) {
    return TransactionalWrite.findField(md.schema(), name).orElseThrow(() ->
        ErrorClass.DELTA_MERGE_UNRESOLVED_EXPRESSION.error(operation + ": cannot resolve column '" + name
            + "' of the assignment in the table columns " + List.of(md.schema().fieldNames()) + " of " + table));
  }

  /**
   * Assignments keyed by the table's column names.
   *
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MERGE_UNRESOLVED_EXPRESSION} for
   *     an unknown column or a column assigned twice
   */
  Map<String, Column> assignments(Map<String, Column> given, String operation) {
    Map<String, Column> out = new LinkedHashMap<>();
    given.forEach((name, value) -> {
      StructField f = column(name, operation);
      if (out.put(f.name(), value) != null) {
        throw ErrorClass.DELTA_MERGE_UNRESOLVED_EXPRESSION.error(operation + ": column '" + f.name()
            + "' is assigned more than once", Map.of("column", f.name()));
      }
    });
    return out;
  }

  /** Whether a column is a generated column (computed on update and insert unless assigned). */
  boolean isGenerated(String column) {
    return generated.contains(column);
  }

  /**
   * One output row: {@code values} (one per table column, in schema order, cast to the column
   * types), the change type (null for table data), the kind, and which generated columns must be
   * computed from the new values.
   *
   * @param values the row's values, one per table column
   * @param changeType {@code delete}, {@code update_preimage}, {@code update_postimage}, {@code insert} or null
   * @param kind what the row is, for the metrics
   * @param recompute generated columns to compute from the row's other values
   * @return a struct column
   */
  Column output(List<Column> values, String changeType, Kind kind, Set<String> recompute) {
    StructField[] fields = columns();
    List<Column> parts = new ArrayList<>();
    for (int i = 0; i < fields.length; i++) {
      parts.add(values.get(i).cast(fields[i].dataType()).as(fields[i].name()));
    }
    parts.add(functions.lit(changeType).cast(DataTypes.StringType).as(TransactionalWrite.CDC_TYPE_COLUMN));
    parts.add(functions.lit(kind.ordinal()).as(KIND));
    for (int g = 0; g < generated.size(); g++) {
      parts.add(functions.lit(recompute.contains(generated.get(g))).as(GEN_PREFIX + g));
    }
    return functions.struct(parts.toArray(new Column[0]));
  }

  /** The output rows of an updated row: the new row, and with the change data feed its pre and post images. */
  List<Column> updated(List<Column> before, List<Column> after, Set<String> recompute) {
    List<Column> out = new ArrayList<>();
    out.add(output(after, null, Kind.UPDATE, recompute));
    if (cdf) {
      out.add(output(before, "update_preimage", Kind.CHANGE_ONLY, Set.of()));
      out.add(output(after, "update_postimage", Kind.CHANGE_ONLY, recompute));
    }
    return out;
  }

  /** The output rows of a deleted row: its {@code delete} change row, or a row that only counts. */
  List<Column> deleted(List<Column> before) {
    return List.of(cdf ? output(before, "delete", Kind.DELETE, Set.of()) : output(before, null, Kind.DROP, Set.of()));
  }

  /** The output rows of an inserted row: the row, and with the change data feed its {@code insert} change row. */
  List<Column> inserted(List<Column> values, Set<String> recompute) {
    List<Column> out = new ArrayList<>();
    out.add(output(values, null, Kind.INSERT, recompute));
    if (cdf) {
      out.add(output(values, "insert", Kind.CHANGE_ONLY, recompute));
    }
    return out;
  }

  /** The output row of an unchanged row of a rewritten file. */
  List<Column> copied(List<Column> before) {
    return List.of(output(before, null, Kind.COPY, Set.of()));
  }

  /** An array column of output rows. */
  static Column array(List<Column> outputs) {
    return functions.array(outputs.toArray(new Column[0]));
  }

  /**
   * Flattens exploded output rows into what {@link TransactionalWrite#writeFiles} takes: the table
   * columns (generated columns computed where asked), plus {@code _change_type} with the change
   * data feed on. With {@code counters}, each row's kind is counted first.
   *
   * @param rows rows with one column {@value #OUT} (from {@code explode} of {@link #array})
   * @param counters accumulators indexed by {@link Kind#ordinal()}, or null
   * @return rows to write
   */
  Dataset<Row> finish(Dataset<Row> rows, LongAccumulator[] counters) {
    Dataset<Row> flat = rows.select(functions.col(OUT + ".*"));
    if (counters != null) {
      UserDefinedFunction count = functions.udf((UDF1<Integer, Boolean>) k -> {
        counters[k].add(1);
        return true;
      }, DataTypes.BooleanType).asNondeterministic();
      flat = flat.filter(count.apply(functions.col(KIND)));
    }
    flat = flat.filter(functions.col(KIND).notEqual(functions.lit(Kind.DROP.ordinal())));
    List<Column> cols = new ArrayList<>();
    for (StructField f : columns()) {
      int g = generated.indexOf(f.name());
      Column c = functions.col(TransactionalWrite.quote(f.name()));
      if (g >= 0) {
        String expr = f.metadata().getString(TableFeatures.GENERATION_EXPRESSION);
        c = functions.when(functions.col(GEN_PREFIX + g), functions.expr(expr).cast(f.dataType())).otherwise(c);
      }
      cols.add(c.as(f.name()));
    }
    if (cdf) {
      cols.add(functions.col(TransactionalWrite.CDC_TYPE_COLUMN));
    }
    return flat.select(cols.toArray(new Column[0]));
  }

  /**
   * The rows of rewritten files after an UPDATE without change data: one projection (no output
   * array), matching rows with their new values, generated columns in {@code recompute} computed
   * from them.
   *
   * @param scan rows of the touched files ({@link #scan})
   * @param matches the condition, NULL treated as false
   * @param after new values, one per table column
   * @param recompute generated columns to compute for updated rows
   * @return the table's columns
   */
  Dataset<Row> updatedInPlace(Dataset<Row> scan, Column matches, List<Column> after, Set<String> recompute) {
    StructField[] fields = columns();
    List<Column> cols = new ArrayList<>();
    for (int i = 0; i < fields.length; i++) {
      Column before = ref(null, fields[i].name());
      cols.add(functions.when(matches, after.get(i).cast(fields[i].dataType())).otherwise(before).as(fields[i].name()));
    }
    if (recompute.isEmpty()) {
      return scan.select(cols.toArray(new Column[0]));
    }
    String flag = "__fc_updated";
    cols.add(matches.as(flag));
    Dataset<Row> stage = scan.select(cols.toArray(new Column[0]));
    List<Column> out = new ArrayList<>();
    for (StructField f : fields) {
      Column c = ref(null, f.name());
      if (recompute.contains(f.name())) {
        c = functions.when(functions.col(flag),
            functions.expr(f.metadata().getString(TableFeatures.GENERATION_EXPRESSION)).cast(f.dataType())).otherwise(c);
      }
      out.add(c.as(f.name()));
    }
    return stage.select(out.toArray(new Column[0]));
  }

  /** Accumulators for the row kinds, registered with the session's SparkContext. */
  LongAccumulator[] counters(String operation) {
    LongAccumulator[] acc = new LongAccumulator[Kind.values().length];
    for (Kind k : Kind.values()) {
      acc[k.ordinal()] = session.sparkContext().longAccumulator("filecommit " + operation + " " + k);
    }
    return acc;
  }

  /** Drops the scan's location columns. */
  static Dataset<Row> withoutLocation(Dataset<Row> rows) {
    return rows.drop(TableScan.FILE_COLUMN, TableScan.ROW_COLUMN);
  }

  /**
   * Writes {@code rows} (table columns, plus {@code _change_type} when the table has the change
   * data feed on), removes {@code removed}, and commits; deletes the written files if the commit
   * does not land.
   *
   * @param rows the rows to write, or null when only files are removed and nothing is written
   * @param removed the files leaving the table
   * @param options Spark Parquet writer options
   * @param operation the commitInfo operation (DELETE, UPDATE, MERGE)
   * @param parameters commitInfo operationParameters
   * @param rowMetrics the row metrics, asked for after the write job ran
   * @param metricNames Delta's operationMetrics names for deleted, updated, inserted, copied rows
   *     (null entries are left out)
   * @return what was committed
   */
  WriteIntoDelta.Result writeAndCommit(Dataset<Row> rows, Collection<AddFile> removed, Map<String, String> options,
      String operation, Map<String, String> parameters, java.util.function.Supplier<WriteIntoDelta.RowMetrics> rowMetrics,
      String[] metricNames) {
    return writeAndCommit(rows, removed, null, options, operation, parameters, rowMetrics, metricNames);
  }

  /**
   * As {@link #writeAndCommit(Dataset, Collection, Map, String, Map, java.util.function.Supplier, String[])},
   * with deletion vectors: {@code dvs} writes its DV file after the rows and its {@code add}s (the
   * files kept with new DVs) join the commit; the DV file is deleted when the commit does not land.
   *
   * @param dvs the change's deletion vectors, or null
   */
  WriteIntoDelta.Result writeAndCommit(Dataset<Row> rows, Collection<AddFile> removed, DeletionVectorWriter dvs,
      Map<String, String> options, String operation, Map<String, String> parameters,
      java.util.function.Supplier<WriteIntoDelta.RowMetrics> rowMetrics, String[] metricNames) {
    try {
      List<AddFile> written = rows == null ? List.of() : txn.writeFiles(rows, options, cdf);
      List<AddFile> kept = dvs == null ? List.of() : dvs.write();
      List<AddFile> adds = new ArrayList<>(written);
      adds.addAll(kept);
      WriteIntoDelta.RowMetrics metrics = rowMetrics.get();
      List<AddCDCFile> cdc = txn.changeFiles();
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
      long[] totals = WriteIntoDelta.rowsAndBytes(written);
      long rowsWritten = totals[0];
      long bytes = totals[1];
      ObjectNode info = ActionJson.MAPPER.createObjectNode();
      info.put("operation", operation);
      ObjectNode params = info.putObject("operationParameters");
      parameters.forEach(params::put);
      ObjectNode m = info.putObject("operationMetrics");
      long[] values = {metrics.deleted(), metrics.updated(), metrics.inserted(), metrics.copied()};
      for (int i = 0; i < values.length; i++) {
        if (metricNames[i] != null) {
          m.put(metricNames[i], Long.toString(values[i]));
        }
      }
      boolean merge = operation.equals("MERGE");
      m.put(merge ? "numTargetFilesRemoved" : "numRemovedFiles", Integer.toString(removes.size()));
      m.put(merge ? "numTargetFilesAdded" : "numAddedFiles", Integer.toString(adds.size()));
      m.put(merge ? "numTargetChangeFilesAdded" : "numAddedChangeFiles", Integer.toString(cdc.size()));
      m.put("numOutputRows", Long.toString(rowsWritten));
      m.put("numOutputBytes", Long.toString(bytes));
      m.put("executionTimeMs", Long.toString(System.currentTimeMillis() - start));
      info.put("engineInfo", "filecommit/0.1.0 Apache-Spark/" + session.version());
      long version = txn.commit(actions, info, false);
      if (!txn.committed()) {
        txn.deleteWrittenFiles();
        if (dvs != null) {
          dvs.deleteWritten();
        }
        return new WriteIntoDelta.Result(version, false, table, List.of(), List.of(), List.of(), 0, 0,
            System.currentTimeMillis() - start, txn.attempts(), WriteIntoDelta.RowMetrics.NONE);
      }
      return new WriteIntoDelta.Result(version, true, table, adds, removes, cdc, rowsWritten, bytes,
          System.currentTimeMillis() - start, txn.attempts(), metrics);
    } catch (RuntimeException | Error e) {
      txn.deleteWrittenFiles();
      if (dvs != null) {
        dvs.deleteWritten();
      }
      throw e;
    }
  }

  /**
   * Whether this change marks rows deleted with deletion vectors instead of rewriting files: the
   * table takes new DVs ({@link DeletionVectorWriter#enabled}) and every candidate file has the
   * {@code numRecords} statistic a file with a DV must carry.
   */
  boolean usesDeletionVectors(List<AddFile> candidates) {
    return DeletionVectorWriter.enabled(snapshot.protocol(), md)
        && candidates.stream().allMatch(DeletionVectorWriter::hasRowCount);
  }

  /**
   * Pass 1 with deletion vectors: the row indexes of the rows satisfying {@code matches}, per file.
   *
   * @return the matching rows per file
   */
  Marked matchingRows(List<AddFile> candidates, Column matches) {
    Map<String, long[]> out = new LinkedHashMap<>();
    long count = 0;
    for (Row r : scan(candidates).filter(matches).groupBy(TableScan.FILE_COLUMN)
        .agg(functions.collect_list(TableScan.ROW_COLUMN)).collectAsList()) {
      List<Long> rows = r.getList(1);
      out.put(r.getString(0), rows.stream().mapToLong(Long::longValue).toArray());
      count += rows.size();
    }
    return new Marked(out, files(out.keySet()), count);
  }

  /**
   * Matching rows of a change that writes deletion vectors.
   *
   * @param rows log path -> row indexes of the matching rows
   * @param files the files holding them (snapshot order)
   * @param count matching rows in all
   */
  record Marked(Map<String, long[]> rows, List<AddFile> files, long count) {}

  /**
   * The deletion vectors of a change that deletes (or moves out) the given rows, and the files to
   * remove: every touched file (its current (path, DV) pair); those that keep rows come back with
   * their new DV from {@link DeletionVectorWriter#write}.
   */
  DeletionVectorWriter deletionVectors(Marked marked) {
    DeletionVectorWriter dvs = new DeletionVectorWriter(log);
    for (AddFile f : marked.files()) {
      dvs.delete(f, marked.rows().get(f.path()));
    }
    return dvs;
  }

  /** The SQL text of a condition for commitInfo ({@code true} for none). */
  static String sql(Column condition) {
    return condition == null ? "true" : condition.toString();
  }

  /** A column reference to {@code name}, qualified with {@code alias} when given. */
  static Column ref(String alias, String name) {
    return functions.col((alias == null ? "" : TransactionalWrite.quote(alias) + ".") + TransactionalWrite.quote(name));
  }


  /** Row values of the table's columns read from a (possibly aliased) scan. */
  List<Column> targetValues(String alias) {
    List<Column> out = new ArrayList<>();
    for (StructField f : columns()) {
      out.add(ref(alias, f.name()));
    }
    return out;
  }

}
