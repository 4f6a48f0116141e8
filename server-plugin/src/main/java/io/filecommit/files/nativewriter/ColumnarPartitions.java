package io.filecommit.files.nativewriter;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Groups the rows of one Spark {@link ColumnarBatch} by partition directory, for {@link
 * NativeTaskWriter}'s columnar path: each row's partition values are looked up in a cache of
 * directories already rendered (rendering, by the given function, only for values not seen yet),
 * and the row's index is appended to its directory's group (a dictionary-encoded partition column
 * of Spark's Parquet reader is looked up once per dictionary id and batch). Groups come out in the order their
 * directories first appear in the batch; row indexes in each group ascend (the batch's order).
 */
final class ColumnarPartitions {
  /** Distinct partition values cached at most; the cache starts over when full. */
  static final int MAX_CACHED = 4096;
  private static final Object NULL = new Object();

  /** The rows of one directory in the current batch: {@code rows[0..count)}. */
  static final class Group {
    final String dir;
    int[] rows = new int[64];
    int count;

    Group(String dir) {
      this.dir = dir;
    }
  }

  private final int[] ordinals;
  private final DataType[] types;
  private final Function<InternalRow, String> render;
  private final Map<Object, String> dirs = new HashMap<>();
  private final Map<String, Group> groups = new HashMap<>();
  private final List<Group> active = new ArrayList<>();
  /** For one dictionary-encoded partition column: the group of each dictionary id in this batch. */
  private Group[] byId = new Group[0];

  /**
   * @param ordinals the partition columns' ordinals in the batches
   * @param types their Spark types (string, integral or boolean)
   * @param render a row's partition directory (as Spark's writer renders it)
   */
  ColumnarPartitions(int[] ordinals, DataType[] types, Function<InternalRow, String> render) {
    this.ordinals = ordinals;
    this.types = types;
    this.render = render;
  }

  /**
   * Groups a batch's rows by directory.
   *
   * @param batch the batch (all columns of the written schema)
   * @return the groups of this batch, valid until the next call
   */
  List<Group> group(ColumnarBatch batch) {
    for (Group g : active) {
      g.count = 0;
    }
    active.clear();
    int n = batch.numRows();
    Group last = null;
    Object lastKey = null;
    // Spark's Parquet reader keeps a dictionary-encoded column as ids: one lookup per id and batch.
    WritableColumnVector ids = ordinals.length == 1 && batch.column(ordinals[0]) instanceof WritableColumnVector w
        && w.hasDictionary() ? w.getDictionaryIds() : null;
    if (ids != null) {
      java.util.Arrays.fill(byId, null);
    }
    ColumnVector single = ordinals.length == 1 ? batch.column(ordinals[0]) : null;
    for (int r = 0; r < n; r++) {
      int id = ids == null || single.isNullAt(r) ? -1 : ids.getDictId(r);
      if (id >= 0 && id < byId.length && byId[id] != null) {
        Group g = byId[id];
        if (g.count == g.rows.length) {
          g.rows = Arrays.copyOf(g.rows, g.rows.length * 2);
        }
        g.rows[g.count++] = r;
        continue;
      }
      Object key = key(batch, r);
      Group g;
      if (last != null && key.equals(lastKey)) {
        g = last;
      } else {
        String dir = dirs.get(key);
        if (dir == null) {
          if (dirs.size() >= MAX_CACHED) {
            dirs.clear();
          }
          dir = render.apply(batch.getRow(r));
          dirs.put(copy(key), dir);
        }
        g = groups.get(dir);
        if (g == null) {
          if (groups.size() >= MAX_CACHED) {
            groups.clear();
            for (Group a : active) {
              groups.put(a.dir, a);
            }
          }
          g = new Group(dir);
          groups.put(dir, g);
        }
        if (g.count == 0) {
          active.add(g);
        }
        last = g;
        lastKey = key;
      }
      if (id >= 0) {
        if (id >= byId.length) {
          byId = Arrays.copyOf(byId, Math.max(id + 1, byId.length * 2));
        }
        byId[id] = g;
      }
      if (g.count == g.rows.length) {
        g.rows = Arrays.copyOf(g.rows, g.rows.length * 2);
      }
      g.rows[g.count++] = r;
    }
    return active;
  }

  /** The row's partition values: one value, or a list for several columns ({@link #NULL} for null). */
  private Object key(ColumnarBatch batch, int r) {
    if (ordinals.length == 1) {
      return value(batch.column(ordinals[0]), r, types[0]);
    }
    Object[] values = new Object[ordinals.length];
    for (int i = 0; i < ordinals.length; i++) {
      values[i] = value(batch.column(ordinals[i]), r, types[i]);
    }
    return Arrays.asList(values);
  }

  private static Object value(ColumnVector c, int r, DataType t) {
    if (c.isNullAt(r)) {
      return NULL;
    } else if (t.equals(DataTypes.StringType)) {
      return c.getUTF8String(r);
    } else if (t.equals(DataTypes.IntegerType)) {
      return c.getInt(r);
    } else if (t.equals(DataTypes.LongType)) {
      return c.getLong(r);
    } else if (t.equals(DataTypes.ShortType)) {
      return c.getShort(r);
    } else if (t.equals(DataTypes.ByteType)) {
      return c.getByte(r);
    } else if (t.equals(DataTypes.BooleanType)) {
      return c.getBoolean(r);
    }
    throw new IllegalStateException("Not a native partition column type: " + t);
  }

  /** A key that owns its bytes (a string value may be a view of the batch's memory). */
  private static Object copy(Object key) {
    if (key instanceof UTF8String s) {
      return s.clone();
    } else if (key instanceof List<?> l) {
      Object[] values = l.toArray();
      for (int i = 0; i < values.length; i++) {
        if (values[i] instanceof UTF8String s) {
          values[i] = s.clone();
        }
      }
      return Arrays.asList(values);
    }
    return key;
  }
}
