package io.filecommit.files.nativewriter;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Copies the values of one Spark {@link ColumnVector} column into one Arrow {@link FieldVector},
 * column by column (a tight loop per column and type) instead of row by row through Spark's
 * {@code ArrowFieldWriter}s. The Arrow types are those of Spark's {@code ArrowUtils.toArrowSchema}
 * (the vectors {@code ArrowWriter.createFieldWriter} would fill), and the values are the same:
 * boolean as {@code BitVector}, byte / short / int as 8 / 16 / 32-bit integers, float / double as
 * {@code Float4Vector} / {@code Float8Vector} (NaN and -0.0 as they are), long, date (days
 * since 1970-01-01) and timestamps (microseconds since the epoch) as they are stored, decimals as
 * Arrow decimal128 of the column's precision and scale (unscaled value), strings and binary as
 * their bytes. Only the types {@link NativeParquetWriter#ineligible} allows are handled.
 */
final class ArrowColumnCopy {
  private static final int BOOLEAN = 0;
  private static final int BYTE = 1;
  private static final int SHORT = 2;
  private static final int INT = 3;
  private static final int DATE = 4;
  private static final int LONG = 5;
  private static final int TIMESTAMP = 6;
  private static final int DECIMAL_LONG = 7;
  private static final int DECIMAL = 8;
  private static final int STRING = 9;
  private static final int BINARY = 10;
  private static final int FLOAT = 11;
  private static final int DOUBLE = 12;

  private final int kind;
  private final int precision;
  private final int scale;
  /** Dictionary-encoded strings decoded in the current batch: bytes by dictionary id. */
  private byte[][] decoded = new byte[0][];
  private int[] decodedIn = new int[0];
  private int batch = 1;

  private ArrowColumnCopy(int kind, int precision, int scale) {
    this.kind = kind;
    this.precision = precision;
    this.scale = scale;
  }

  /**
   * The copier of one column type.
   *
   * @param type the Spark type of the column (one the native writer allows)
   * @return its copier
   * @throws IllegalArgumentException for another type
   */
  static ArrowColumnCopy of(DataType type) {
    if (type.equals(DataTypes.BooleanType)) {
      return new ArrowColumnCopy(BOOLEAN, 0, 0);
    } else if (type.equals(DataTypes.ByteType)) {
      return new ArrowColumnCopy(BYTE, 0, 0);
    } else if (type.equals(DataTypes.ShortType)) {
      return new ArrowColumnCopy(SHORT, 0, 0);
    } else if (type.equals(DataTypes.IntegerType)) {
      return new ArrowColumnCopy(INT, 0, 0);
    } else if (type.equals(DataTypes.DateType)) {
      return new ArrowColumnCopy(DATE, 0, 0);
    } else if (type.equals(DataTypes.LongType)) {
      return new ArrowColumnCopy(LONG, 0, 0);
    } else if (type.equals(DataTypes.TimestampType) || type.equals(DataTypes.TimestampNTZType)) {
      return new ArrowColumnCopy(TIMESTAMP, 0, 0);
    } else if (type instanceof DecimalType d) {
      return new ArrowColumnCopy(d.precision() <= 18 ? DECIMAL_LONG : DECIMAL, d.precision(), d.scale());
    } else if (type.equals(DataTypes.StringType)) {
      return new ArrowColumnCopy(STRING, 0, 0);
    } else if (type.equals(DataTypes.BinaryType)) {
      return new ArrowColumnCopy(BINARY, 0, 0);
    } else if (type.equals(DataTypes.FloatType)) {
      return new ArrowColumnCopy(FLOAT, 0, 0);
    } else if (type.equals(DataTypes.DoubleType)) {
      return new ArrowColumnCopy(DOUBLE, 0, 0);
    }
    throw new IllegalArgumentException("No Arrow copy of " + type.simpleString());
  }

  /** Starts a new source batch: values decoded from the last batch's dictionaries are forgotten. */
  void newBatch() {
    batch++;
  }

  /**
   * Copies {@code count} values: source rows {@code rows[from..from+count)} (or, when {@code rows}
   * is null, {@code from..from+count}) to Arrow indexes {@code at..at+count}. The Arrow vector's
   * fixed-width buffers must hold {@code at + count} values already; variable-width data grows.
   *
   * @param src the Spark column
   * @param rows the selected source rows, or null for a contiguous range
   * @param from the first position in {@code rows}, or the first row
   * @param count how many values
   * @param dst the Arrow vector of the column's Arrow type
   * @param at the first Arrow index written
   */
  void copy(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at) {
    boolean nulls = src.hasNull();
    boolean writable = src instanceof WritableColumnVector;
    // One small method per type: each loop compiled with its calls inlined.
    switch (kind) {
      case BOOLEAN -> copyBoolean(src, rows, from, count, dst, at, nulls);
      case BYTE -> copyByte(src, rows, from, count, dst, at, nulls);
      case SHORT -> copyShort(src, rows, from, count, dst, at, nulls);
      case INT, DATE -> copyInt(src, rows, from, count, dst, at, nulls);
      case LONG, TIMESTAMP -> copyLong(src, rows, from, count, dst, at, nulls);
      case DECIMAL_LONG -> copyDecimalLong(src, rows, from, count, dst, at, nulls, writable);
      case DECIMAL -> copyDecimal(src, rows, from, count, dst, at, nulls);
      case STRING -> copyString(src, rows, from, count, dst, at, nulls, writable);
      case BINARY -> copyBinary(src, rows, from, count, dst, at, nulls);
      case FLOAT -> copyFloat(src, rows, from, count, dst, at, nulls);
      case DOUBLE -> copyDouble(src, rows, from, count, dst, at, nulls);
      default -> throw new IllegalStateException("kind " + kind);
    }
  }

  private void copyBoolean(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls) {
    BitVector v = (BitVector) dst;
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        v.setNull(at + k);
      } else {
        v.set(at + k, src.getBoolean(r) ? 1 : 0);
      }
    }
  }

  private void copyByte(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls) {
    TinyIntVector v = (TinyIntVector) dst;
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        v.setNull(at + k);
      } else {
        v.set(at + k, src.getByte(r));
      }
    }
  }

  private void copyShort(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls) {
    SmallIntVector v = (SmallIntVector) dst;
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        v.setNull(at + k);
      } else {
        v.set(at + k, src.getShort(r));
      }
    }
  }

  private void copyInt(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls) {
    // int and date (days) vectors: 4-byte values, the same buffers (IntVector.set / DateDayVector.set).
    BaseFixedWidthVector v = (BaseFixedWidthVector) dst;
    ArrowBuf data = v.getDataBuffer();
    ArrowBuf validity = v.getValidityBuffer();
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        BitVectorHelper.unsetBit(validity, at + k);
      } else {
        BitVectorHelper.setBit(validity, at + k);
        data.setInt((long) (at + k) * 4, src.getInt(r));
      }
    }
  }

  private void copyLong(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls) {
    // long and timestamp (microseconds) vectors: 8-byte values, the same buffers (BigIntVector.set /
    // TimeStampVector.set).
    BaseFixedWidthVector v = (BaseFixedWidthVector) dst;
    ArrowBuf data = v.getDataBuffer();
    ArrowBuf validity = v.getValidityBuffer();
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        BitVectorHelper.unsetBit(validity, at + k);
      } else {
        BitVectorHelper.setBit(validity, at + k);
        data.setLong((long) (at + k) * 8, src.getLong(r));
      }
    }
  }

  private void copyFloat(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls) {
    Float4Vector v = (Float4Vector) dst;
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        v.setNull(at + k);
      } else {
        v.set(at + k, src.getFloat(r));
      }
    }
  }

  private void copyDouble(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls) {
    Float8Vector v = (Float8Vector) dst;
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        v.setNull(at + k);
      } else {
        v.set(at + k, src.getDouble(r));
      }
    }
  }

  private void copyDecimalLong(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls, boolean writable) {
    DecimalVector v = (DecimalVector) dst;
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        v.setNull(at + k);
      } else if (writable) {
        // The unscaled value as Spark stores it (WritableColumnVector.getDecimal's storage).
        v.set(at + k, precision <= 9 ? src.getInt(r) : src.getLong(r));
      } else {
        // The unscaled value, sign-extended to 128 bits (the column's precision and scale).
        v.set(at + k, src.getDecimal(r, precision, scale).toUnscaledLong());
      }
    }
  }

  private void copyDecimal(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls) {
    DecimalVector v = (DecimalVector) dst;
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        v.setNull(at + k);
      } else {
        v.set(at + k, src.getDecimal(r, precision, scale).toJavaBigDecimal());
      }
    }
  }

  private void copyString(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls, boolean writable) {
    BaseVariableWidthVector v = (BaseVariableWidthVector) dst;
    WritableColumnVector ids = writable && ((WritableColumnVector) src).hasDictionary()
        ? ((WritableColumnVector) src).getDictionaryIds() : null;
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        v.setNull(at + k);
      } else if (ids != null) {
        // A dictionary-encoded column (Spark's Parquet reader): each id decoded once per batch.
        int id = ids.getDictId(r);
        byte[] b = id < decodedIn.length && decodedIn[id] == batch ? decoded[id] : decode(src, r, id);
        v.setSafe(at + k, b, 0, b.length);
      } else {
        UTF8String s = src.getUTF8String(r);
        if (s.getBaseObject() instanceof byte[] b) {
          v.setSafe(at + k, b, (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET), s.numBytes());
        } else {
          v.setSafe(at + k, s.getBytes());
        }
      }
    }
  }

  private void copyBinary(ColumnVector src, int[] rows, int from, int count, FieldVector dst, int at,
      boolean nulls) {
    BaseVariableWidthVector v = (BaseVariableWidthVector) dst;
    for (int k = 0; k < count; k++) {
      int r = rows == null ? from + k : rows[from + k];
      if (nulls && src.isNullAt(r)) {
        v.setNull(at + k);
      } else {
        v.setSafe(at + k, src.getBinary(r));
      }
    }
  }

  private byte[] decode(ColumnVector src, int r, int id) {
    if (id >= decodedIn.length) {
      int n = Math.max(id + 1, decodedIn.length * 2);
      decoded = java.util.Arrays.copyOf(decoded, n);
      decodedIn = java.util.Arrays.copyOf(decodedIn, n);
    }
    byte[] b = src.getUTF8String(r).getBytes();
    decoded[id] = b;
    decodedIn[id] = batch;
    return b;
  }
}
