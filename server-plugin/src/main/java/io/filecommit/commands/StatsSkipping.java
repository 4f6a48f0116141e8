package io.filecommit.commands;

import io.filecommit.read.TableScan;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.read.DataSkipping;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;

/**
 * Data skipping for the candidate files of DELETE, UPDATE and MERGE (Delta's {@code
 * OptimisticTransaction.filterFiles} with the command's data predicates, as {@code DeleteCommand},
 * {@code UpdateCommand} and {@code MergeIntoCommand} call it; protocol "Per-file Statistics"): a
 * file is left out only when its {@code minValues} / {@code maxValues} / {@code nullCount} /
 * {@code numRecords} prove that no row satisfies one of the given conjuncts ({@link
 * DataSkipping#mayMatch}, the read path's rules). Conjuncts are resolved against the table alone:
 * one that references anything else (a MERGE source column) is not used; foldable parts are
 * evaluated first ({@code id > 1 + 2} becomes {@code id > 3}); column names are mapped to the
 * physical names the statistics are keyed by (protocol "Column Mapping"). Files without
 * statistics, and conjuncts the rules do not decide, keep every file.
 */
final class StatsSkipping {
  private final List<Expression> filters;

  private StatsSkipping(List<Expression> filters) {
    this.filters = filters;
  }

  /**
   * The skipping filters of {@code conjuncts}.
   *
   * @param emptyTarget the table's rows as {@link TableScan#read} gives them for no file (aliased
   *     when the conjuncts name the table by an alias)
   * @param physicalName a column's physical name (statistics key) from its logical name (protocol
   *     "Column Mapping"); may throw for a name that is not a table column
   * @param conjuncts parts of the condition that must all hold for a row to be affected
   * @return the filter; {@link #keeps} is true for every file when no conjunct could be used
   */
  static StatsSkipping of(Dataset<Row> emptyTarget, UnaryOperator<String> physicalName, List<Column> conjuncts) {
    return of(emptyTarget, physicalName, conjuncts, java.util.Set.of());
  }

  /**
   * The skipping filters of {@code conjuncts}, leaving out every conjunct that names one of {@code
   * hidden}: the materialized row-tracking columns (protocol "Row Tracking"; {@link
   * io.filecommit.delta.MaterializedRowTracking}) hold NULL for a row whose value is the default
   * one ({@code baseRowId} + row index, {@code defaultRowCommitVersion}), so their statistics say
   * nothing about the values a predicate sees, and such a conjunct keeps every file.
   *
   * @param emptyTarget as {@link #of(Dataset, UnaryOperator, List)}
   * @param physicalName as {@link #of(Dataset, UnaryOperator, List)}
   * @param conjuncts as {@link #of(Dataset, UnaryOperator, List)}
   * @param hidden column names whose statistics are not used (logical or physical, exact)
   * @return the filter
   */
  static StatsSkipping of(Dataset<Row> emptyTarget, UnaryOperator<String> physicalName, List<Column> conjuncts,
      java.util.Set<String> hidden) {
    List<Expression> out = new ArrayList<>();
    for (Column c : conjuncts) {
      Expression resolved;
      try {
        LogicalPlan plan = emptyTarget.filter(c).queryExecution().analyzed();
        if (!(plan instanceof Filter f) || !f.condition().deterministic()) {
          continue;
        }
        resolved = f.condition();
      } catch (Exception e) { // AnalysisException: names a column of something else
        continue;
      }
      if (names(resolved, hidden)) {
        continue;
      }
      out.add(physical(fold(resolved), physicalName));
    }
    return new StatsSkipping(out);
  }

  /** The filters used, resolved, folded and named physically (for tests and logs). */
  List<Expression> filters() {
    return filters;
  }

  /** Whether the file may hold a row satisfying every conjunct (false only when its statistics prove none does). */
  boolean keeps(AddFile f) {
    return DataSkipping.mayMatch(f.stats(), filters);
  }

  /** The files {@link #keeps} keeps, in the given order. */
  List<AddFile> filter(List<AddFile> files) {
    return filters.isEmpty() ? files : files.stream().filter(this::keeps).toList();
  }

  /** Whether {@code e} references a column named in {@code hidden}. */
  private static boolean names(Expression e, java.util.Set<String> hidden) {
    if (hidden.isEmpty()) {
      return false;
    }
    if (e instanceof AttributeReference a) {
      return hidden.contains(a.name());
    }
    for (Expression c : scala.jdk.javaapi.CollectionConverters.asJava(e.children())) {
      if (names(c, hidden)) {
        return true;
      }
    }
    return false;
  }

  /** Replaces every foldable non-literal subexpression by its value (Spark's {@code ConstantFolding}, on one expression). */
  private static Expression fold(Expression e) {
    if (e instanceof Literal) {
      return e;
    }
    if (e.foldable()) {
      try {
        return new Literal(e.eval(null), e.dataType());
      } catch (RuntimeException failed) { // e.g. an ANSI overflow: left as is, and so undecided
        return e;
      }
    }
    List<Expression> children = scala.jdk.javaapi.CollectionConverters.asJava(e.children());
    if (children.isEmpty()) {
      return e;
    }
    List<Expression> folded = new ArrayList<>();
    for (Expression c : children) {
      folded.add(fold(c));
    }
    return e.withNewChildren(scala.jdk.javaapi.CollectionConverters.asScala(folded).toSeq());
  }

  /** Top-level column references renamed to their physical names (statistics keys). */
  private static Expression physical(Expression e, UnaryOperator<String> physicalName) {
    if (e instanceof AttributeReference a) {
      String name;
      try {
        name = physicalName.apply(a.name());
      } catch (RuntimeException unknown) {
        return e;
      }
      return name.equals(a.name()) ? e : a.withName(name);
    }
    List<Expression> children = scala.jdk.javaapi.CollectionConverters.asJava(e.children());
    if (children.isEmpty()) {
      return e;
    }
    List<Expression> renamed = new ArrayList<>();
    for (Expression c : children) {
      renamed.add(physical(c, physicalName));
    }
    return e.withNewChildren(scala.jdk.javaapi.CollectionConverters.asScala(renamed).toSeq());
  }
}
