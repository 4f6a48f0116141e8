package io.filecommit.read;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.InSet;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.LessThan;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Data skipping by per-file statistics (protocol "Per-file Statistics": {@code numRecords},
 * {@code minValues}, {@code maxValues}, {@code nullCount}, keyed by physical column names; Delta's
 * {@code DataSkippingReader}): whether a file may hold a row that satisfies the scan's pushed data
 * filters. The answer is conservative: anything it cannot decide (no statistics, a column without
 * them, an expression or type it does not know) keeps the file; Spark still evaluates the filters
 * on every row read.
 *
 * <p>Decided: {@code AND}, {@code OR}, {@code =}, {@code <=>}, {@code <}, {@code <=}, {@code >},
 * {@code >=}, {@code IN} between a top-level column and literals, {@code IS NULL}, {@code IS NOT
 * NULL}; on integral, decimal, date, timestamp, timestamp_ntz and string columns. Timestamps in
 * statistics are kept to the millisecond, so a maximum is widened by 999 microseconds; a string
 * maximum of 32 characters or more may be a truncated prefix and is not used.
 */
public final class DataSkipping {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int STRING_PREFIX = 32;

  private DataSkipping() {}

  /**
   * Whether a file may hold matching rows.
   *
   * @param stats the file's statistics JSON, or null
   * @param filters conjuncts over the scan's data columns (attribute names are physical names)
   * @return false only when the statistics prove no row can satisfy every filter
   */
  public static boolean mayMatch(String stats, List<Expression> filters) {
    if (stats == null || filters.isEmpty()) {
      return true;
    }
    JsonNode s;
    try {
      s = JSON.readTree(stats);
    } catch (IOException e) {
      return true;
    }
    for (Expression f : filters) {
      if (!may(s, f)) {
        return false;
      }
    }
    return true;
  }

  private static boolean may(JsonNode s, Expression e) {
    if (e instanceof And a) {
      return may(s, a.left()) && may(s, a.right());
    }
    if (e instanceof Or o) {
      return may(s, o.left()) || may(s, o.right());
    }
    if (e instanceof IsNull n && n.child() instanceof AttributeReference a) {
      JsonNode nc = s.path("nullCount").get(a.name());
      return nc == null || !nc.isNumber() || nc.asLong() > 0;
    }
    if (e instanceof IsNotNull n && n.child() instanceof AttributeReference a) {
      JsonNode nc = s.path("nullCount").get(a.name());
      JsonNode rows = s.get("numRecords");
      return nc == null || rows == null || !nc.isNumber() || nc.asLong() < rows.asLong();
    }
    if (e instanceof In in && in.value() instanceof AttributeReference a) {
      scala.collection.Iterator<Expression> it = in.list().iterator();
      while (it.hasNext()) {
        Expression v = it.next();
        if (!(v instanceof Literal lit) || mayEqual(s, a, lit.value())) {
          return true;
        }
      }
      return false;
    }
    if (e instanceof InSet in && in.child() instanceof AttributeReference a) {
      scala.collection.Iterator<Object> it = in.hset().iterator();
      while (it.hasNext()) {
        if (mayEqual(s, a, it.next())) {
          return true;
        }
      }
      return false;
    }
    if (e instanceof BinaryComparison c) {
      if (c.left() instanceof AttributeReference a && c.right() instanceof Literal l) {
        return compare(s, a, l.value(), op(c), false);
      }
      if (c.right() instanceof AttributeReference a && c.left() instanceof Literal l) {
        return compare(s, a, l.value(), op(c), true);
      }
    }
    return true;
  }

  private enum Op { EQ, LT, LE, GT, GE, OTHER }

  private static Op op(BinaryComparison c) {
    if (c instanceof EqualTo || c instanceof EqualNullSafe) {
      return Op.EQ;
    }
    if (c instanceof LessThan) {
      return Op.LT;
    }
    if (c instanceof LessThanOrEqual) {
      return Op.LE;
    }
    if (c instanceof GreaterThan) {
      return Op.GT;
    }
    if (c instanceof GreaterThanOrEqual) {
      return Op.GE;
    }
    return Op.OTHER;
  }

  private static boolean mayEqual(JsonNode s, AttributeReference a, Object value) {
    return compare(s, a, value, Op.EQ, false);
  }

  /** {@code column op value} (or {@code value op column} when flipped) may hold for some row. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static boolean compare(JsonNode s, AttributeReference a, Object value, Op op, boolean flipped) {
    if (op == Op.OTHER || value == null) {
      return true;
    }
    if (flipped) {
      op = switch (op) {
        case LT -> Op.GT;
        case LE -> Op.GE;
        case GT -> Op.LT;
        case GE -> Op.LE;
        default -> op;
      };
    }
    DataType t = a.dataType();
    Comparable v = literal(value, t);
    if (v == null) {
      return true;
    }
    JsonNode rows = s.get("numRecords");
    JsonNode nc = s.path("nullCount").get(a.name());
    if (rows != null && nc != null && nc.isNumber() && rows.asLong() > 0 && nc.asLong() == rows.asLong()) {
      return false; // only nulls: no comparison with a non-null literal holds
    }
    Comparable min = stat(s.path("minValues").get(a.name()), t, false);
    Comparable max = stat(s.path("maxValues").get(a.name()), t, true);
    return switch (op) {
      case EQ -> (min == null || min.compareTo(v) <= 0) && (max == null || max.compareTo(v) >= 0);
      case LT -> min == null || min.compareTo(v) < 0;
      case LE -> min == null || min.compareTo(v) <= 0;
      case GT -> max == null || max.compareTo(v) > 0;
      case GE -> max == null || max.compareTo(v) >= 0;
      default -> true;
    };
  }

  /** A Catalyst literal value as a comparable of the column's kind, or null when not decided. */
  private static Comparable<?> literal(Object value, DataType t) {
    if (t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType || t instanceof LongType
        || t instanceof DateType || t instanceof TimestampType || t instanceof TimestampNTZType) {
      return value instanceof Number n ? n.longValue() : null;
    }
    if (t instanceof DecimalType) {
      return value instanceof Decimal d ? d.toJavaBigDecimal() : null;
    }
    if (t instanceof StringType st && st.supportsBinaryOrdering()) {
      return value instanceof UTF8String u ? u : null;
    }
    return null;
  }

  /** A statistic as a comparable of the column's kind (Catalyst's internal units), or null. */
  private static Comparable<?> stat(JsonNode n, DataType t, boolean isMax) {
    if (n == null || n.isNull() || n.isContainerNode()) {
      return null;
    }
    try {
      if (t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType || t instanceof LongType) {
        return n.isIntegralNumber() ? n.asLong() : null;
      }
      if (t instanceof DecimalType) {
        return n.isNumber() ? n.decimalValue() : new BigDecimal(n.asText());
      }
      if (t instanceof DateType) {
        return LocalDate.parse(n.asText()).toEpochDay();
      }
      if (t instanceof TimestampType) {
        Instant i = java.time.OffsetDateTime.parse(n.asText()).toInstant();
        return micros(i) + (isMax ? 999 : 0);
      }
      if (t instanceof TimestampNTZType) {
        Instant i = LocalDateTime.parse(n.asText().replace("Z", "")).toInstant(ZoneOffset.UTC);
        return micros(i) + (isMax ? 999 : 0);
      }
      if (t instanceof StringType) {
        String text = n.asText();
        if (isMax && text.codePointCount(0, text.length()) >= STRING_PREFIX) {
          return null;
        }
        return UTF8String.fromString(text);
      }
    } catch (RuntimeException e) {
      return null;
    }
    return null;
  }

  private static long micros(Instant i) {
    return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1000);
  }
}
