package io.filecommit.commands.merge;

import io.filecommit.commands.DMLUtils;
import io.filecommit.commands.RowLevelChange;
import io.filecommit.commands.RowLevelOutput;
import io.filecommit.delta.IdentityColumns;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.read.TableScan;
import io.filecommit.schema.SchemaEvolution;
import io.filecommit.schema.SchemaUtils;
import io.filecommit.txn.CommandResult;
import io.filecommit.txn.Operation;
import io.filecommit.txn.RowMetrics;
import io.filecommit.txn.TransactionId;
import io.filecommit.txn.staging.StageRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.LongAccumulator;

/**
 * {@code MERGE INTO table AS t USING source AS s ON condition WHEN ...} as one table version
 * (Delta's {@code MergeIntoCommand}, a caller of {@code TransactionalWrite.writeFiles}; protocol
 * "Add File and Remove File", "Change Data Files").
 *
 * <p>Two passes, as Delta's merge:
 *
 * <ol>
 *   <li><b>Touched files.</b> The candidate target files (pruned by the ON condition's conjuncts on
 *       partition columns) are joined with the source: a file is touched when one of its rows is
 *       matched by a source row (and there are MATCHED clauses), or is not matched and satisfies a
 *       NOT MATCHED BY SOURCE clause's condition. A target row matched by several source rows is
 *       refused ({@code DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE}) when a MATCHED
 *       clause may change it, unless the only MATCHED clause is an unconditional DELETE (Delta's
 *       rule); nothing has been written then.
 *   <li><b>Rewrite.</b> The rows of the touched files, each with its matching source row if any
 *       (left outer join), go through the MATCHED or NOT MATCHED BY SOURCE clauses in order (the
 *       first whose condition holds applies; none: the row is copied). Source rows without a match
 *       in the target go through the NOT MATCHED clauses (insert). One output pass writes new rows
 *       and, with the change data feed on, the change rows ({@code update_preimage}/{@code
 *       update_postimage}, {@code delete}, {@code insert}).
 * </ol>
 *
 * A MERGE with only NOT MATCHED clauses touches no file and is allowed on append-only tables.
 * Row metrics (inserted, updated, deleted, copied) are counted by accumulators during the write.
 */
public final class MergeIntoCommand {
  private static final String SOURCE_PRESENT = "__fc_src";

  private MergeIntoCommand() {}

  /**
   * Runs the merge.
   *
   * @param session Spark session
   * @param path table root
   * @param source the source rows
   * @param sourceAlias the source's name in expressions
   * @param targetAlias the table's name in expressions
   * @param on the ON condition
   * @param clauses the WHEN clauses, at least one
   * @param options Spark Parquet writer options for written files
   * @param txnId application transaction of an idempotent change, or null
   * @param stage when not null, the commit is staged ({@link CommandResult#staged()}), not published
   * @param schemaEvolution whether source columns the table lacks are added to it (Delta's {@code
   *     withSchemaEvolution}): those an {@code UPDATE SET *} / {@code INSERT *} clause takes, and
   *     those an assignment names; merged as {@code mergeSchema} merges ({@link SchemaEvolution})
   * @return what was committed; row metrics: deleted, updated, inserted, copied rows
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MERGE_MISSING_WHEN} without
   *     clauses, {@code DELTA_NON_LAST_*_CLAUSE_OMIT_CONDITION}, {@code
   *     DELTA_MERGE_UNRESOLVED_EXPRESSION}, {@code
   *     DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE}, {@code DELTA_MISSING_DELTA_TABLE},
   *     {@code DELTA_CANNOT_MODIFY_APPEND_ONLY}, {@code DELTA_FAILED_TO_MERGE_FIELDS} when an evolved
   *     column's types cannot be merged, the table's constraint classes, conflict classes;
   *     Spark's analysis errors for expressions that do not resolve
   */
  public static CommandResult run(SparkSession session, String path, Dataset<Row> source, String sourceAlias,
      String targetAlias, Column on, List<MergeClause> clauses, Map<String, String> options, TransactionId txnId,
      StageRequest stage, boolean schemaEvolution) {
    MergeClause.check(clauses);
    if (on == null) {
      throw DeltaErrors.malformed("MERGE into " + path + " needs an ON condition");
    }
    String s = sourceAlias == null || sourceAlias.isEmpty() ? ownAlias(source) : sourceAlias;
    String t = targetAlias == null || targetAlias.isEmpty() ? "target" : targetAlias;
    if (s.equalsIgnoreCase(t)) {
      throw ErrorClass.FILECOMMIT_DUPLICATE_MERGE_ALIAS.error("MERGE source and target aliases must differ, both are '"
          + s + "'", Map.of("alias", s));
    }
    boolean hasMatched = clauses.stream().anyMatch(c -> c.kind().matched());
    boolean hasBySource = clauses.stream().anyMatch(c -> c.kind().bySource());
    boolean hasInsert = clauses.stream().anyMatch(c -> c.kind() == MergeClause.Kind.NOT_MATCHED_INSERT);
    RowLevelChange change = RowLevelChange.open(session, path, "MERGE", txnId, hasMatched || hasBySource, stage);
    if (change.skipped()) {
      return change.nothingCommitted();
    }
    // The source is read by both passes: materialized once, so both see the same rows even when
    // its plan is not deterministic (as Delta's merge.materializeSource).
    Dataset<Row> materialized = source.persist(org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK());
    try {
      if (schemaEvolution) {
        evolve(change, materialized.schema(), clauses);
      }
      return run(change, materialized, s, t, on, clauses, options, hasMatched, hasBySource, hasInsert);
    } finally {
      materialized.unpersist();
    }
  }

  /**
   * Adds to the table schema the source columns a clause takes: every source column for {@code
   * UPDATE SET *} / {@code INSERT *}, the source column of the same name for an assignment to a
   * column the table lacks (Delta's MERGE schema evolution).
   */
  private static void evolve(RowLevelChange change, StructType source, List<MergeClause> clauses) {
    StructType table = change.md.schema();
    List<StructField> taken = new ArrayList<>();
    boolean all = clauses.stream().anyMatch(c -> c.allColumns() && !c.kind().delete());
    for (MergeClause c : clauses) {
      for (String name : c.assignments().keySet()) {
        if (SchemaUtils.findField(table, name).isEmpty()) {
          SchemaUtils.findField(source, name).ifPresent(taken::add);
        }
      }
    }
    StructType from = all ? source : new StructType(taken.toArray(new StructField[0]));
    change.evolveSchema(SchemaEvolution.merge(table, from, TableConfig.ENABLE_TYPE_WIDENING.fromMetadata(change.md),
        change.md.partitionColumns()));
  }

  /**
   * The source's name in expressions when none is given: the source DataFrame's own alias ({@code
   * df.alias("s")}, as in Delta's {@code DeltaTable.merge(source.as("s"), ...)}), else {@code source}.
   */
  static String ownAlias(Dataset<Row> source) {
    return source.queryExecution().analyzed() instanceof org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias a
        ? a.alias() : "source";
  }

  private static CommandResult run(RowLevelChange change, Dataset<Row> source, String s, String t, Column on,
      List<MergeClause> clauses, Map<String, String> options, boolean hasMatched, boolean hasBySource, boolean hasInsert) {
    Dataset<Row> src = IdentityInserts.withValues(change, source, hasInsert).withColumn(SOURCE_PRESENT, functions.lit(true)).as(s);
    Column present = functions.col(SOURCE_PRESENT).isNotNull();
    Dataset<Row> emptyTarget = change.scan(List.of()).as(t);
    requireDeterministic(emptyTarget.crossJoin(src), on, clauses);

    // Output rows per clause, built (and so resolved) before any work.
    List<Column> targetRow = change.targetValues(t);
    Column targetOutputs = null;
    Column insertOutputs = null;
    for (MergeClause c : clauses) {
      Column when = c.kind().matched() ? present : c.kind().bySource() ? functions.not(present) : functions.lit(true);
      if (c.condition() != null) {
        when = when.and(functions.coalesce(c.condition(), functions.lit(false)));
      }
      List<Column> outputs;
      if (c.kind().delete()) {
        outputs = change.output().deleted(targetRow);
      } else {
        Set<String> recompute = new HashSet<>();
        List<Column> values = values(change, c, targetRow, src, s, recompute);
        outputs = c.kind() == MergeClause.Kind.NOT_MATCHED_INSERT
            ? change.output().inserted(values, recompute) : change.output().updated(targetRow, values, recompute);
      }
      Column array = RowLevelOutput.array(outputs);
      if (c.kind() == MergeClause.Kind.NOT_MATCHED_INSERT) {
        insertOutputs = insertOutputs == null ? functions.when(when, array) : insertOutputs.when(when, array);
      } else {
        targetOutputs = targetOutputs == null ? functions.when(when, array) : targetOutputs.when(when, array);
      }
    }
    Column copy = RowLevelOutput.array(change.output().copied(targetRow));
    targetOutputs = targetOutputs == null ? copy : targetOutputs.otherwise(copy);
    emptyTarget.join(src, on, "left_outer").select(targetOutputs);
    if (insertOutputs != null) {
      src.select(insertOutputs);
    }

    RowLevelChange.Candidates candidates = change.candidates(pruning(change, t, on, clauses, hasBySource, hasInsert), t);
    Dataset<Row> target = change.scan(candidates.files()).as(t);
    boolean multipleAllowed = !hasMatched || (clauses.stream().filter(c -> c.kind().matched()).count() == 1
        && clauses.stream().anyMatch(c -> c.kind() == MergeClause.Kind.MATCHED_DELETE && c.condition() == null));
    if ((hasMatched || hasBySource) && change.usesDeletionVectors(candidates.files())) {
      return MergeWithDeletionVectors.run(change, new MergeWithDeletionVectors.Plan(candidates.files(), target, src, t, on, clauses,
          targetOutputs, insertOutputs, present, hasMatched, hasBySource, multipleAllowed), options);
    }

    // Pass 1: the touched files.
    Set<String> touched = new HashSet<>();
    if (hasMatched || hasBySource) {
      Column bySourceHit = functions.lit(false);
      for (MergeClause c : clauses) {
        if (c.kind().bySource()) {
          bySourceHit = bySourceHit.or(c.condition() == null ? functions.lit(true)
              : functions.coalesce(c.condition(), functions.lit(false)));
        }
      }
      Dataset<Row> joined = target.join(src, on, hasBySource ? "left_outer" : "inner");
      Dataset<Row> perRow = joined.groupBy(functions.col(TableScan.FILE_COLUMN), functions.col(TableScan.ROW_COLUMN))
          .agg(functions.count(functions.col(SOURCE_PRESENT)).as("n"),
              functions.max(bySourceHit.cast("int")).as("bs"));
      List<Row> perFile = perRow.groupBy(TableScan.FILE_COLUMN)
          .agg(functions.max("n").as("max_n"),
              functions.max(functions.when(functions.col("n").gt(0), 1).otherwise(0)).as("matched"),
              functions.max(functions.when(functions.col("n").equalTo(0).and(functions.col("bs").equalTo(1)), 1)
                  .otherwise(0)).as("by_source"))
          .collectAsList();
      for (Row r : perFile) {
        if (hasMatched && !multipleAllowed && r.getLong(1) > 1) {
          throw multipleMatches(change, r.getString(0));
        }
        if ((hasMatched && r.getInt(2) == 1) || (hasBySource && r.getInt(3) == 1)) {
          touched.add(r.getString(0));
        }
      }
    }
    List<AddFile> rewritten = change.files(touched);

    // Pass 2: rewrite the touched files, insert the unmatched source rows.
    Dataset<Row> out = null;
    Dataset<Row> touchedTarget = change.scan(rewritten).as(t);
    if (!rewritten.isEmpty()) {
      Dataset<Row> rows = touchedTarget.join(src, on, "left_outer");
      if (multipleAllowed) {
        rows = rows.dropDuplicates(new String[] {TableScan.FILE_COLUMN, TableScan.ROW_COLUMN});
      }
      out = rows.select(functions.explode(targetOutputs).as(RowLevelOutput.OUT));
    }
    if (hasInsert) {
      Dataset<Row> against = hasMatched ? touchedTarget : target;
      Dataset<Row> unmatched = src.join(against, on, "left_anti");
      Dataset<Row> inserts = unmatched.select(functions.explode(insertOutputs).as(RowLevelOutput.OUT));
      out = out == null ? inserts : out.union(inserts);
    }
    LongAccumulator[] counters = RowLevelOutput.counters(change.session, "MERGE");
    Dataset<Row> toWrite = out == null ? null : change.output().finish(out, counters);
    return change.writeAndCommit(toWrite, rewritten, List.of(), options, operation(on, clauses), metrics(counters));
  }

  /** The commit's operation: the ON condition and the clauses as Delta describes them. */
  static java.util.function.Function<Operation.RowLevelStats, Operation> operation(Column on, List<MergeClause> clauses) {
    String predicate = DMLUtils.sql(on);
    String matched = MergeClause.describe(clauses, true, false);
    String notMatched = MergeClause.describe(clauses, false, false);
    String bySource = MergeClause.describe(clauses, false, true);
    return stats -> new Operation.Merge(predicate, matched, notMatched, bySource, stats);
  }

  /** The row metrics, read after the write job ran: the accumulators count its output rows. */
  static java.util.function.Supplier<RowMetrics> metrics(LongAccumulator[] counters) {
    return () -> new RowMetrics(
        counters[RowLevelOutput.Kind.DELETE.ordinal()].value() + counters[RowLevelOutput.Kind.DROP.ordinal()].value(),
        counters[RowLevelOutput.Kind.UPDATE.ordinal()].value(), counters[RowLevelOutput.Kind.INSERT.ordinal()].value(),
        counters[RowLevelOutput.Kind.COPY.ordinal()].value());
  }

  /** Refusal of a target row matched by several source rows (nothing written or committed). */
  static RuntimeException multipleMatches(RowLevelChange change, String file) {
    return ErrorClass.DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE.error("Cannot perform MERGE into "
        + change.table + ": several source rows matched the same target row (in file " + file
        + ") and a MATCHED clause could change it in conflicting ways; deduplicate the source. Nothing was committed",
        Map.of("file", file));
  }

  /**
   * What the candidate target files are pruned by (Delta's {@code ClassicMergeExecutor.findTouchedFiles}
   * with {@code MergeIntoCommandBase.getTargetOnlyPredicates}): nothing when there are NOT MATCHED BY
   * SOURCE clauses (every target row may be changed by them); else the ON condition, whose conjuncts
   * on the target alone prune by partition values and statistics, and, when there are only MATCHED
   * clauses, the OR over them of the target-only conjuncts of their conditions (a row none of them
   * can change is not touched).
   */
  private static Column pruning(RowLevelChange change, String t, Column on, List<MergeClause> clauses,
      boolean hasBySource, boolean hasInsert) {
    if (hasBySource) {
      return null;
    }
    if (hasInsert) {
      return on;
    }
    Column any = null;
    for (MergeClause c : clauses) {
      Column targetOnly = functions.lit(true);
      if (c.condition() != null) {
        for (Column part : DMLUtils.conjuncts(change.session, c.condition())) {
          if (change.onTableOnly(part, t)) {
            targetOnly = targetOnly.and(part);
          }
        }
      }
      any = any == null ? targetOnly : any.or(targetOnly);
    }
    return any == null ? on : on.and(any);
  }

  /**
   * Refuses non-deterministic expressions in the ON condition and the clause conditions (Delta's
   * {@code PreprocessTableMerge.checkCondition}) and in the assignments: a row's output and its
   * change rows are separate expressions, so a non-deterministic value would differ between the
   * table and its change data. Checked on {@code target x source} (filters and projections there
   * allow non-deterministic expressions, so the check, not Spark's join analysis, decides).
   *
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED}
   */
  private static void requireDeterministic(Dataset<Row> both, Column on, List<MergeClause> clauses) {
    ErrorClass cls = ErrorClass.DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED;
    DMLUtils.requireDeterministic(both.filter(on), cls, "the search condition of MERGE");
    for (MergeClause c : clauses) {
      String what = c.kind().matched() ? "WHEN MATCHED" : c.kind().bySource() ? "WHEN NOT MATCHED BY SOURCE"
          : "WHEN NOT MATCHED";
      if (c.condition() != null) {
        DMLUtils.requireDeterministic(both.filter(c.condition()), cls, "the " + what + " condition of MERGE");
      }
      if (!c.assignments().isEmpty()) {
        DMLUtils.requireDeterministic(both.select(c.assignments().values().toArray(new Column[0])), cls,
            "the " + what + " assignments of MERGE");
      }
    }
  }

  /** The values of an update or insert clause, one per table column. */
  private static List<Column> values(RowLevelChange change, MergeClause c, List<Column> targetRow, Dataset<Row> src,
      String sourceAlias, Set<String> recompute) {
    Map<String, Column> set = change.assignments(c.assignments(), "MERGE");
    boolean insert = c.kind() == MergeClause.Kind.NOT_MATCHED_INSERT;
    IdentityInserts.check(change, set.keySet(), insert);
    List<Column> values = new ArrayList<>();
    StructField[] fields = change.columns();
    for (int i = 0; i < fields.length; i++) {
      StructField f = fields[i];
      Column v = set.get(f.name());
      if (v == null && insert && c.allColumns() && IdentityColumns.isIdentity(f) && !IdentityInserts.givenByStar(f)
          && sourceColumn(src, f.name()) != null) {
        // Delta's INSERT * takes the source's same-named column: a value for a GENERATED ALWAYS column
        IdentityInserts.check(change, List.of(f.name()), true);
      }
      if (v == null && IdentityColumns.isIdentity(f) && !(insert && c.allColumns()
          && IdentityInserts.givenByStar(f) && sourceColumn(src, f.name()) != null)) {
        // protocol "Identity Columns": an inserted row gets the new value made for its source row;
        // an updated (or copied) row keeps its value (UPDATE SET * included)
        values.add(insert ? IdentityInserts.value(sourceAlias, f) : targetRow.get(i));
        continue;
      }
      if (v == null && c.allColumns()) {
        String name = sourceColumn(src, f.name());
        if (name != null) {
          v = DMLUtils.ref(sourceAlias, name);
          if (change.evolved()) {
            // Fitted to the evolved type (nested fields the source lacks as nulls), never narrowed.
            v = SchemaEvolution.project(v, src.schema().apply(name).dataType(), f.dataType());
          }
        } else if (!change.isGenerated(f.name()) && !(insert && SchemaUtils.hasDefault(f))) {
          throw ErrorClass.DELTA_MERGE_UNRESOLVED_EXPRESSION.error("MERGE " + (insert ? "INSERT *" : "UPDATE SET *")
              + ": the source has no column '" + f.name() + "' of the table " + change.table + "; source columns: "
              + List.of(src.columns()), Map.of("column", f.name()));
        }
      }
      if (v == null) {
        if (change.isGenerated(f.name())) {
          recompute.add(f.name());
        }
        // protocol "Default Columns": an inserted row lacking a column gets its default (else null)
        v = insert ? SchemaUtils.defaultValue(f) : targetRow.get(i);
      }
      values.add(v);
    }
    return values;
  }

  private static String sourceColumn(Dataset<Row> src, String name) {
    for (String c : src.columns()) {
      if (c.equalsIgnoreCase(name) && !c.equals(SOURCE_PRESENT)) {
        return c;
      }
    }
    return null;
  }
}
