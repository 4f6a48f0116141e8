package io.filecommit.delta;

import io.filecommit.actions.AddFile;
import io.filecommit.errors.ErrorClass;
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
import org.apache.spark.util.LongAccumulator;

/**
 * {@code MERGE INTO table AS t USING source AS s ON condition WHEN ...} as one table version
 * (Delta's MergeIntoCommand, a caller of {@code TransactionalWrite.writeFiles} in seed
 * TransactionalWrite.txt; protocol "Add File and Remove File", "Change Data Files").
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
  /** Kinds of WHEN clauses. */
  public enum ClauseKind {
    MATCHED_UPDATE, MATCHED_DELETE, NOT_MATCHED_INSERT, NOT_MATCHED_BY_SOURCE_UPDATE, NOT_MATCHED_BY_SOURCE_DELETE;

    boolean matched() {
      return this == MATCHED_UPDATE || this == MATCHED_DELETE;
    }

    boolean bySource() {
      return this == NOT_MATCHED_BY_SOURCE_UPDATE || this == NOT_MATCHED_BY_SOURCE_DELETE;
    }

    boolean delete() {
      return this == MATCHED_DELETE || this == NOT_MATCHED_BY_SOURCE_DELETE;
    }
  }

  /**
   * One WHEN clause.
   *
   * @param kind the clause kind
   * @param condition extra condition, or null for always
   * @param assignments table column (case-insensitive) -> value, for updates and inserts
   * @param allColumns {@code UPDATE SET *} / {@code INSERT *}: every table column from the
   *     source column of the same name
   */
  public record Clause(ClauseKind kind, Column condition, Map<String, Column> assignments, boolean allColumns) {}

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
   * @return what was committed; row metrics: deleted, updated, inserted, copied rows
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MERGE_MISSING_WHEN} without
   *     clauses, {@code DELTA_NON_LAST_*_CLAUSE_OMIT_CONDITION}, {@code
   *     DELTA_MERGE_UNRESOLVED_EXPRESSION}, {@code
   *     DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE}, {@code DELTA_MISSING_DELTA_TABLE},
   *     {@code DELTA_CANNOT_MODIFY_APPEND_ONLY}, the table's constraint classes, conflict classes;
   *     Spark's analysis errors for expressions that do not resolve
   */
  public static WriteIntoDelta.Result run(SparkSession session, String path, Dataset<Row> source, String sourceAlias,
      String targetAlias, Column on, List<Clause> clauses, Map<String, String> options, WriteIntoDelta.Txn txnId) {
    checkClauses(clauses);
    if (on == null) {
      throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("MERGE into " + path + " needs an ON condition");
    }
    String s = sourceAlias == null || sourceAlias.isEmpty() ? "source" : sourceAlias;
    String t = targetAlias == null || targetAlias.isEmpty() ? "target" : targetAlias;
    if (s.equalsIgnoreCase(t)) {
      throw ErrorClass.FILECOMMIT_INVALID_ARGUMENT.error("MERGE source and target aliases must differ, both are '" + s + "'");
    }
    boolean hasMatched = clauses.stream().anyMatch(c -> c.kind().matched());
    boolean hasBySource = clauses.stream().anyMatch(c -> c.kind().bySource());
    boolean hasInsert = clauses.stream().anyMatch(c -> c.kind() == ClauseKind.NOT_MATCHED_INSERT);
    RowLevelChange change = RowLevelChange.open(session, path, "MERGE", txnId, hasMatched || hasBySource);
    if (change.skipped()) {
      return change.nothingCommitted();
    }
    // The source is read by both passes: materialized once, so both see the same rows even when
    // its plan is not deterministic (as Delta's merge.materializeSource).
    Dataset<Row> materialized = source.persist(org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK());
    try {
      return run(change, materialized, s, t, on, clauses, options, hasMatched, hasBySource, hasInsert);
    } finally {
      materialized.unpersist();
    }
  }

  private static WriteIntoDelta.Result run(RowLevelChange change, Dataset<Row> source, String s, String t, Column on,
      List<Clause> clauses, Map<String, String> options, boolean hasMatched, boolean hasBySource, boolean hasInsert) {
    Dataset<Row> src = source.withColumn(SOURCE_PRESENT, functions.lit(true)).as(s);
    Column present = functions.col(SOURCE_PRESENT).isNotNull();

    // Output rows per clause, built (and so resolved) before any work.
    List<Column> targetRow = change.targetValues(t);
    Column targetOutputs = null;
    Column insertOutputs = null;
    for (Clause c : clauses) {
      Column when = c.kind().matched() ? present : c.kind().bySource() ? functions.not(present) : functions.lit(true);
      if (c.condition() != null) {
        when = when.and(functions.coalesce(c.condition(), functions.lit(false)));
      }
      List<Column> outputs;
      if (c.kind().delete()) {
        outputs = change.deleted(targetRow);
      } else {
        Set<String> recompute = new HashSet<>();
        List<Column> values = values(change, c, targetRow, src, s, recompute);
        outputs = c.kind() == ClauseKind.NOT_MATCHED_INSERT
            ? change.inserted(values, recompute) : change.updated(targetRow, values, recompute);
      }
      Column array = RowLevelChange.array(outputs);
      if (c.kind() == ClauseKind.NOT_MATCHED_INSERT) {
        insertOutputs = insertOutputs == null ? functions.when(when, array) : insertOutputs.when(when, array);
      } else {
        targetOutputs = targetOutputs == null ? functions.when(when, array) : targetOutputs.when(when, array);
      }
    }
    Column copy = RowLevelChange.array(change.copied(targetRow));
    targetOutputs = targetOutputs == null ? copy : targetOutputs.otherwise(copy);
    Dataset<Row> emptyTarget = change.scan(List.of()).as(t);
    emptyTarget.join(src, on, "left_outer").select(targetOutputs);
    if (insertOutputs != null) {
      src.select(insertOutputs);
    }

    RowLevelChange.Candidates candidates = change.candidates(on, t);
    Dataset<Row> target = change.scan(candidates.files()).as(t);
    boolean multipleAllowed = !hasMatched || (clauses.stream().filter(c -> c.kind().matched()).count() == 1
        && clauses.stream().anyMatch(c -> c.kind() == ClauseKind.MATCHED_DELETE && c.condition() == null));

    // Pass 1: the touched files.
    Set<String> touched = new HashSet<>();
    if (hasMatched || hasBySource) {
      Column bySourceHit = functions.lit(false);
      for (Clause c : clauses) {
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
          throw ErrorClass.DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE.error("Cannot perform MERGE into "
              + change.table + ": several source rows matched the same target row (in file " + r.getString(0)
              + ") and a MATCHED clause could change it in conflicting ways; deduplicate the source. Nothing was committed",
              Map.of("file", r.getString(0)));
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
      out = rows.select(functions.explode(targetOutputs).as("__fc_out"));
    }
    if (hasInsert) {
      Dataset<Row> against = hasMatched ? touchedTarget : target;
      Dataset<Row> unmatched = src.join(against, on, "left_anti");
      Dataset<Row> inserts = unmatched.select(functions.explode(insertOutputs).as("__fc_out"));
      out = out == null ? inserts : out.union(inserts);
    }
    LongAccumulator[] counters = change.counters("MERGE");
    Dataset<Row> toWrite = out == null ? null : change.finish(out, counters);

    Map<String, String> params = new LinkedHashMap<>();
    params.put("predicate", RowLevelChange.predicateParameter(on));
    params.put("matchedPredicates", describe(clauses, true, false));
    params.put("notMatchedPredicates", describe(clauses, false, false));
    params.put("notMatchedBySourcePredicates", describe(clauses, false, true));
    // Read after the write job ran: the accumulators count its output rows.
    java.util.function.Supplier<WriteIntoDelta.RowMetrics> metrics = () -> new WriteIntoDelta.RowMetrics(
        counters[RowLevelChange.Kind.DELETE.ordinal()].value() + counters[RowLevelChange.Kind.DROP.ordinal()].value(),
        counters[RowLevelChange.Kind.UPDATE.ordinal()].value(), counters[RowLevelChange.Kind.INSERT.ordinal()].value(),
        counters[RowLevelChange.Kind.COPY.ordinal()].value());
    return change.writeAndCommit(toWrite, rewritten, options, "MERGE", params, metrics,
        new String[] {"numTargetRowsDeleted", "numTargetRowsUpdated", "numTargetRowsInserted", "numTargetRowsCopied"});
  }

  /** The values of an update or insert clause, one per table column. */
  private static List<Column> values(RowLevelChange change, Clause c, List<Column> targetRow, Dataset<Row> src,
      String sourceAlias, Set<String> recompute) {
    Map<String, Column> set = change.assignments(c.assignments(), "MERGE");
    boolean insert = c.kind() == ClauseKind.NOT_MATCHED_INSERT;
    List<Column> values = new ArrayList<>();
    StructField[] fields = change.columns();
    for (int i = 0; i < fields.length; i++) {
      StructField f = fields[i];
      Column v = set.get(f.name());
      if (v == null && c.allColumns()) {
        String name = sourceColumn(src, f.name());
        if (name != null) {
          v = RowLevelChange.ref(sourceAlias, name);
        } else if (!change.isGenerated(f.name())) {
          throw ErrorClass.DELTA_MERGE_UNRESOLVED_EXPRESSION.error("MERGE " + (insert ? "INSERT *" : "UPDATE SET *")
              + ": the source has no column '" + f.name() + "' of the table " + change.table + "; source columns: "
              + List.of(src.columns()), Map.of("column", f.name()));
        }
      }
      if (v == null) {
        if (change.isGenerated(f.name())) {
          recompute.add(f.name());
        }
        v = insert ? functions.lit(null) : targetRow.get(i);
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

  /**
   * Checks the clause list (Delta's rules): at least one clause; of each kind group (MATCHED, NOT
   * MATCHED, NOT MATCHED BY SOURCE) only the last may omit its condition; deletes carry no
   * assignments; updates and inserts carry assignments or {@code allColumns}.
   */
  static void checkClauses(List<Clause> clauses) {
    if (clauses.isEmpty()) {
      throw ErrorClass.DELTA_MERGE_MISSING_WHEN.error("There must be at least one WHEN clause in a MERGE");
    }
    checkOmittedConditions(clauses.stream().filter(c -> c.kind().matched()).toList(),
        ErrorClass.DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION, "MATCHED");
    checkOmittedConditions(clauses.stream().filter(c -> c.kind() == ClauseKind.NOT_MATCHED_INSERT).toList(),
        ErrorClass.DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION, "NOT MATCHED");
    checkOmittedConditions(clauses.stream().filter(c -> c.kind().bySource()).toList(),
        ErrorClass.DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION, "NOT MATCHED BY SOURCE");
    for (Clause c : clauses) {
      if (c.kind().delete() && (!c.assignments().isEmpty() || c.allColumns())) {
        throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("MERGE " + c.kind() + " clause takes no assignments");
      }
      if (!c.kind().delete() && c.assignments().isEmpty() && !c.allColumns()) {
        throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("MERGE " + c.kind() + " clause needs assignments or all columns");
      }
    }
  }

  private static void checkOmittedConditions(List<Clause> group, ErrorClass cls, String name) {
    for (int i = 0; i < group.size() - 1; i++) {
      if (group.get(i).condition() == null) {
        throw cls.error("When there are several " + name + " clauses in a MERGE, only the last one may omit the condition");
      }
    }
  }

  private static String describe(List<Clause> clauses, boolean matched, boolean bySource) {
    StringBuilder b = new StringBuilder("[");
    for (Clause c : clauses) {
      if (c.kind().matched() == matched && c.kind().bySource() == bySource
          && (matched || bySource || c.kind() == ClauseKind.NOT_MATCHED_INSERT)) {
        if (b.length() > 1) {
          b.append(',');
        }
        String action = c.kind().delete() ? "delete" : c.kind() == ClauseKind.NOT_MATCHED_INSERT ? "insert" : "update";
        b.append("{\"predicate\":").append(c.condition() == null ? "null"
            : "\"" + c.condition().toString().replace("\\", "\\\\").replace("\"", "\\\"") + "\"")
            .append(",\"actionType\":\"").append(action).append("\"}");
      }
    }
    return b.append(']').toString();
  }
}
