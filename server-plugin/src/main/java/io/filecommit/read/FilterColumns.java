package io.filecommit.read;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringContains;
import org.apache.spark.sql.sources.StringEndsWith;
import org.apache.spark.sql.sources.StringStartsWith;

/**
 * Spark's pushed data source filters ({@code org.apache.spark.sql.sources.Filter}, Spark's {@code
 * DataSourceStrategy.translateFilter} output) back as columns, so that the scan underneath sees
 * them as partition filters (partition pruning), data filters (data skipping, Parquet row-group
 * pushdown). A filter it does not know is left out: Spark evaluates every pushed filter again on
 * the rows (the relation reports them all as unhandled), so leaving one out only reads more.
 */
final class FilterColumns {
  private FilterColumns() {}

  /** The columns of the filters it knows (attribute names as Spark pushed them). */
  static List<Column> of(Filter[] filters) {
    List<Column> out = new ArrayList<>();
    for (Filter f : filters) {
      Column c = column(f);
      if (c != null) {
        out.add(c);
      }
    }
    return out;
  }

  private static Column column(Filter f) {
    if (f instanceof EqualTo e) {
      return functions.col(e.attribute()).equalTo(functions.lit(e.value()));
    }
    if (f instanceof EqualNullSafe e) {
      return functions.col(e.attribute()).eqNullSafe(functions.lit(e.value()));
    }
    if (f instanceof GreaterThan e) {
      return functions.col(e.attribute()).gt(functions.lit(e.value()));
    }
    if (f instanceof GreaterThanOrEqual e) {
      return functions.col(e.attribute()).geq(functions.lit(e.value()));
    }
    if (f instanceof LessThan e) {
      return functions.col(e.attribute()).lt(functions.lit(e.value()));
    }
    if (f instanceof LessThanOrEqual e) {
      return functions.col(e.attribute()).leq(functions.lit(e.value()));
    }
    if (f instanceof In e) {
      return functions.col(e.attribute()).isin(e.values());
    }
    if (f instanceof IsNull e) {
      return functions.col(e.attribute()).isNull();
    }
    if (f instanceof IsNotNull e) {
      return functions.col(e.attribute()).isNotNull();
    }
    if (f instanceof StringStartsWith e) {
      return functions.col(e.attribute()).startsWith(e.value());
    }
    if (f instanceof StringEndsWith e) {
      return functions.col(e.attribute()).endsWith(e.value());
    }
    if (f instanceof StringContains e) {
      return functions.col(e.attribute()).contains(e.value());
    }
    if (f instanceof And a) {
      Column l = column(a.left());
      Column r = column(a.right());
      return l == null ? r : r == null ? l : l.and(r);
    }
    if (f instanceof Or o) {
      Column l = column(o.left());
      Column r = column(o.right());
      return l == null || r == null ? null : l.or(r);
    }
    if (f instanceof Not n) {
      Column c = column(n.child());
      return c == null || hasDroppedPart(n.child()) ? null : functions.not(c);
    }
    return null;
  }

  /** Whether a filter's column left out a part of it (an AND with an unknown side): not negatable. */
  private static boolean hasDroppedPart(Filter f) {
    if (f instanceof And a) {
      return column(a.left()) == null || column(a.right()) == null || hasDroppedPart(a.left())
          || hasDroppedPart(a.right());
    }
    if (f instanceof Or o) {
      return hasDroppedPart(o.left()) || hasDroppedPart(o.right());
    }
    if (f instanceof Not n) {
      return hasDroppedPart(n.child());
    }
    return false;
  }
}
