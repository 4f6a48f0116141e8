package io.filecommit.files.nativewriter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.execution.arrow.ArrowWriter$;
import org.apache.spark.sql.execution.vectorized.Dictionary;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils$;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.Test;

/**
 * The columnar copy gives the Arrow values of Spark's own row conversion ({@code ArrowWriter},
 * the reference), for every type the native writer takes, with nulls, row selections and Spark
 * Parquet reader-style dictionary-encoded columns whose dictionary changes between batches.
 */
class ArrowColumnCopyTest {
  private static final int ROWS = 1000;
  private static final StructType SCHEMA = new StructType()
      .add("bo", DataTypes.BooleanType).add("by", DataTypes.ByteType).add("sh", DataTypes.ShortType)
      .add("i", DataTypes.IntegerType).add("l", DataTypes.LongType).add("d", DataTypes.DateType)
      .add("ts", DataTypes.TimestampType).add("ntz", DataTypes.TimestampNTZType)
      .add("d9", DataTypes.createDecimalType(9, 2)).add("d15", DataTypes.createDecimalType(15, 2))
      .add("d30", DataTypes.createDecimalType(30, 5)).add("s", DataTypes.StringType)
      .add("bin", DataTypes.BinaryType).add("f", DataTypes.FloatType).add("db", DataTypes.DoubleType)
      .add("ds", DataTypes.StringType);

  /** Strings of a dictionary, decoded by id. */
  private record Words(String... words) implements Dictionary {
    @Override
    public int decodeToInt(int id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long decodeToLong(int id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public float decodeToFloat(int id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public double decodeToDouble(int id) {
      throw new UnsupportedOperationException();
    }

    @Override
    public byte[] decodeToBinary(int id) {
      return words[id].getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  private static ColumnarBatch batch(int seed, Words words) {
    OnHeapColumnVector[] cols = OnHeapColumnVector.allocateColumns(ROWS, SCHEMA);
    for (int r = 0; r < ROWS; r++) {
      long v = (long) r * 7919 + seed;
      boolean isNull = (r + seed) % 9 == 0;
      for (int c = 0; c < cols.length - 1; c++) {
        if (isNull && c % 2 == 0) {
          cols[c].putNull(r);
          continue;
        }
        switch (c) {
          case 0 -> cols[c].putBoolean(r, v % 3 == 0);
          case 1 -> cols[c].putByte(r, (byte) v);
          case 2 -> cols[c].putShort(r, (short) v);
          case 3, 5 -> cols[c].putInt(r, (int) (v - 5000));
          case 4, 6, 7 -> cols[c].putLong(r, v * 1_000_003L - 99_999_999L);
          case 8 -> cols[c].putInt(r, (int) (v % 1_000_000_000L) - 500_000);
          case 9 -> cols[c].putLong(r, v * 12_345L - 7_000_000L);
          case 10 -> cols[c].putDecimal(r, Decimal.apply(new BigDecimal(v + "123456789.00001").negate()), 30);
          case 11 -> cols[c].putByteArray(r, ("value-" + v + "-é").repeat(r % 4).getBytes(
              java.nio.charset.StandardCharsets.UTF_8));
          case 12 -> cols[c].putByteArray(r, new byte[] {(byte) v, 0, (byte) (v >> 8)});
          case 13 -> cols[c].putFloat(r, r % 17 == 0 ? Float.NaN : (v - 4000) / 3f);
          case 14 -> cols[c].putDouble(r, r % 13 == 0 ? -0.0 : r % 11 == 0 ? Double.NEGATIVE_INFINITY : v / -7.0);
          default -> throw new IllegalStateException();
        }
      }
    }
    OnHeapColumnVector ds = cols[cols.length - 1];
    ds.setDictionary(words);
    OnHeapColumnVector ids = (OnHeapColumnVector) ds.reserveDictionaryIds(ROWS);
    for (int r = 0; r < ROWS; r++) {
      if ((r + seed) % 5 == 0) {
        ds.putNull(r);
      } else {
        ids.putInt(r, (r * 31 + seed) % words.words().length);
      }
    }
    ColumnarBatch b = new ColumnarBatch(cols);
    b.setNumRows(ROWS);
    return b;
  }

  /** The reference: Spark's row-by-row ArrowWriter over the selected rows of each batch. */
  private static List<List<Object>> viaArrowWriter(BufferAllocator a, List<ColumnarBatch> batches, int[] rows) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(arrowSchema(), a)) {
      ArrowWriter w = ArrowWriter$.MODULE$.create(root);
      for (ColumnarBatch b : batches) {
        for (int r : rows) {
          w.write(b.getRow(r));
        }
      }
      w.finish();
      return values(root);
    }
  }

  private static List<List<Object>> viaCopy(BufferAllocator a, List<ColumnarBatch> batches, int[] rows) {
    ArrowColumnCopy[] copies = new ArrowColumnCopy[SCHEMA.fields().length];
    for (int c = 0; c < copies.length; c++) {
      copies[c] = ArrowColumnCopy.of(SCHEMA.fields()[c].dataType());
    }
    try (VectorSchemaRoot root = VectorSchemaRoot.create(arrowSchema(), a)) {
      int n = batches.size() * (rows == null ? ROWS : rows.length);
      for (FieldVector v : root.getFieldVectors()) {
        v.setInitialCapacity(n);
        v.allocateNew();
      }
      int at = 0;
      for (ColumnarBatch b : batches) {
        int count = rows == null ? ROWS : rows.length;
        for (int c = 0; c < copies.length; c++) {
          copies[c].newBatch();
          copies[c].copy(b.column(c), rows, 0, count, root.getVector(c), at);
        }
        at += count;
      }
      root.setRowCount(at);
      return values(root);
    }
  }

  private static org.apache.arrow.vector.types.pojo.Schema arrowSchema() {
    return ArrowUtils$.MODULE$.toArrowSchema(SCHEMA, "UTC", true, false, ArrowUtils$.MODULE$.toArrowSchema$default$5());
  }

  private static List<List<Object>> values(VectorSchemaRoot root) {
    List<List<Object>> out = new ArrayList<>();
    for (int r = 0; r < root.getRowCount(); r++) {
      List<Object> row = new ArrayList<>();
      for (FieldVector v : root.getFieldVectors()) {
        Object o = v.getObject(r);
        row.add(o instanceof byte[] b ? java.util.HexFormat.of().formatHex(b) : o == null ? null : o.toString());
      }
      out.add(row);
    }
    return out;
  }

  @Test
  void copiesAsSparksArrowWriterDoes() {
    try (BufferAllocator a = new RootAllocator()) {
      // The second batch has another dictionary: values decoded from the first must not be reused.
      List<ColumnarBatch> batches = List.of(batch(0, new Words("AIR", "MAIL", "SHIP", "TRUCK")),
          batch(3, new Words("x", "yy", "zzz")));
      int[] all = new int[ROWS];
      for (int r = 0; r < ROWS; r++) {
        all[r] = r;
      }
      List<List<Object>> want = viaArrowWriter(a, batches, all);
      assertEquals(2 * ROWS, want.size());
      assertEquals(want, viaCopy(a, batches, null));
      int[] some = {0, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 999};
      assertEquals(viaArrowWriter(a, batches, some), viaCopy(a, batches, some));
      batches.forEach(ColumnarBatch::close);
    }
  }

  @Test
  void groupsRowsByPartitionDirectory() {
    ColumnarBatch b = batch(1, new Words("AIR", "MAIL", "SHIP"));
    DataType[] types = {DataTypes.StringType};
    int ds = SCHEMA.fields().length - 1;
    for (int[] ordinals : new int[][] {{ds}, {ds, 3}}) {
      DataType[] t = ordinals.length == 1 ? types : new DataType[] {DataTypes.StringType, DataTypes.IntegerType};
      ColumnarPartitions parts = new ColumnarPartitions(ordinals, t, row -> {
        StringBuilder dir = new StringBuilder();
        for (int o : ordinals) {
          dir.append(row.isNullAt(o) ? "null" : o == ds ? row.getUTF8String(o).toString() : row.getInt(o)).append('/');
        }
        return dir.toString();
      });
      for (int round = 0; round < 2; round++) {
        Map<String, List<Integer>> want = new TreeMap<>();
        for (int r = 0; r < ROWS; r++) {
          StringBuilder dir = new StringBuilder();
          for (int o : ordinals) {
            ColumnVector c = b.column(o);
            dir.append(c.isNullAt(r) ? "null" : o == ds ? c.getUTF8String(r).toString() : c.getInt(r)).append('/');
          }
          want.computeIfAbsent(dir.toString(), k -> new ArrayList<>()).add(r);
        }
        Map<String, List<Integer>> got = new TreeMap<>();
        for (ColumnarPartitions.Group g : parts.group(b)) {
          List<Integer> rows = new ArrayList<>();
          for (int i = 0; i < g.count; i++) {
            rows.add(g.rows[i]);
          }
          assertEquals(null, got.put(g.dir, rows), g.dir);
        }
        assertEquals(want, got);
      }
    }
    b.close();
  }
}
