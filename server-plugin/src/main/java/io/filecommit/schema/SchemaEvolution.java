package io.filecommit.schema;

import io.filecommit.errors.ErrorClass;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;

/**
 * Schema evolution of a write ({@code mergeSchema}), as Delta's {@code
 * SchemaMergingUtils.mergeSchemas} and {@code TypeWidening} define it: the table's fields keep
 * their order, names (matched case-insensitively), nullability and metadata; fields only the data
 * has are appended, nullable, at the end of their struct (nested structs too, inside arrays and maps as well);
 * {@code byte}, {@code short} and {@code int} merge to the wider of the two (Parquet stores all
 * three as INT32); a {@code void} (null-typed) side takes the other's type; any other type
 * difference is a widening the table must allow ({@code delta.enableTypeWidening}, protocol "Type
 * Widening", the changes Delta's {@code isTypeChangeSupportedForSchemaEvolution} lists), recorded in
 * the field's {@code delta.typeChanges} metadata, or a refusal.
 */
public final class SchemaEvolution {
  /** Field metadata key of the type change history (protocol "Type Change Metadata"). */
  public static final String TYPE_CHANGES = "delta.typeChanges";

  private SchemaEvolution() {}

  /**
   * The table schema merged with a write's data schema.
   *
   * @param table the table's schema
   * @param data the data's schema (without change-data columns)
   * @param typeWidening whether the table allows widening a column's type
   * @param partitionColumns the table's partition columns (their types are never widened)
   * @return the merged schema (equal to {@code table} when the data adds nothing)
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_FAILED_TO_MERGE_FIELDS} naming the
   *     field and both types when they cannot be merged (incompatible types, a widening without
   *     {@code delta.enableTypeWidening=true}, a narrowing, a partition column's type)
   */
  public static StructType merge(StructType table, StructType data, boolean typeWidening,
      List<String> partitionColumns) {
    return mergeStruct(table, data, typeWidening, partitionColumns, "");
  }

  private static StructType mergeStruct(StructType table, StructType data, boolean typeWidening,
      List<String> partitionColumns, String prefix) {
    Map<String, StructField> byName = new LinkedHashMap<>();
    for (StructField f : data.fields()) {
      byName.put(f.name().toLowerCase(Locale.ROOT), f);
    }
    List<StructField> merged = new ArrayList<>();
    for (StructField t : table.fields()) {
      StructField d = byName.remove(t.name().toLowerCase(Locale.ROOT));
      if (d == null) {
        merged.add(t);
        continue;
      }
      String path = prefix + t.name();
      List<String[]> changes = new ArrayList<>();
      DataType type = mergeType(t.dataType(), d.dataType(), typeWidening, path, "", changes);
      if (!changes.isEmpty() && prefix.isEmpty() && SchemaUtils.containsIgnoreCase(partitionColumns, t.name())) {
        throw failed(path, t.dataType(), d.dataType(), "the type of a partition column cannot change");
      }
      merged.add(new StructField(t.name(), type, t.nullable(), withTypeChanges(t.metadata(), changes)));
    }
    for (StructField added : byName.values()) {
      merged.add(new StructField(added.name(), nullable(added.dataType()), true, added.metadata()));
    }
    return new StructType(merged.toArray(new StructField[0]));
  }

  private static DataType mergeType(DataType t, DataType d, boolean typeWidening, String path, String fieldPath,
      List<String[]> changes) {
    if (t instanceof StructType ts && d instanceof StructType ds) {
      return mergeStruct(ts, ds, typeWidening, List.of(), path + ".");
    }
    if (t instanceof ArrayType ta && d instanceof ArrayType da) {
      return new ArrayType(mergeType(ta.elementType(), da.elementType(), typeWidening, path,
          join(fieldPath, "element"), changes), ta.containsNull());
    }
    if (t instanceof MapType tm && d instanceof MapType dm) {
      return new MapType(mergeType(tm.keyType(), dm.keyType(), typeWidening, path, join(fieldPath, "key"), changes),
          mergeType(tm.valueType(), dm.valueType(), typeWidening, path, join(fieldPath, "value"), changes),
          tm.valueContainsNull());
    }
    if (SchemaUtils.sameTypeForWrite(t, d) || d instanceof NullType) {
      return t;
    }
    if (t instanceof NullType) {
      return d;
    }
    if (isInt32(t) && isInt32(d)) {
      return t.defaultSize() >= d.defaultSize() ? t : d;
    }
    if (wideningForEvolution(t, d)) {
      if (!typeWidening) {
        throw failed(path, t, d, "widening it needs table property delta.enableTypeWidening=true");
      }
      changes.add(new String[] {t.typeName(), d.typeName(), fieldPath});
      return d;
    }
    if (wideningForEvolution(d, t)) {
      // Narrower data is written as the table's type (Delta's mergeSchemas keeps the wider table type
      // only for INT32 types; for the others it would fail: the same here).
      throw failed(path, t, d, "the data's type is narrower than the table's");
    }
    throw failed(path, t, d, "the types are incompatible");
  }

  private static String join(String a, String b) {
    return a.isEmpty() ? b : a + "." + b;
  }

  private static boolean isInt32(DataType t) {
    return t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType;
  }

  private static boolean integral(DataType t) {
    return isInt32(t) || t instanceof LongType;
  }

  /**
   * Whether {@code from -> to} is a widening that schema evolution applies by itself (Delta's
   * {@code TypeWidening.isTypeChangeSupportedForSchemaEvolution}): integral to wider integral, float
   * to double, decimal to a wider decimal (precision and scale both not smaller, integer digits not
   * fewer), date to timestamp without time zone.
   *
   * @param from the table's type
   * @param to the data's type
   * @return true when the change is such a widening
   */
  public static boolean wideningForEvolution(DataType from, DataType to) {
    if (integral(from) && integral(to)) {
      return from.defaultSize() < to.defaultSize();
    }
    if (from instanceof FloatType && to instanceof DoubleType) {
      return true;
    }
    if (from instanceof DateType && to instanceof TimestampNTZType) {
      return true;
    }
    if (from instanceof DecimalType f && to instanceof DecimalType t) {
      return !f.equals(t) && t.scale() >= f.scale() && t.precision() - t.scale() >= f.precision() - f.scale();
    }
    return false;
  }

  private static Metadata withTypeChanges(Metadata md, List<String[]> changes) {
    if (changes.isEmpty()) {
      return md;
    }
    List<Metadata> history = new ArrayList<>();
    if (md.contains(TYPE_CHANGES)) {
      history.addAll(List.of(md.getMetadataArray(TYPE_CHANGES)));
    }
    for (String[] c : changes) {
      MetadataBuilder b = new MetadataBuilder().putString("fromType", c[0]).putString("toType", c[1]);
      if (!c[2].isEmpty()) {
        b.putString("fieldPath", c[2]);
      }
      history.add(b.build());
    }
    return new MetadataBuilder().withMetadata(md).putMetadataArray(TYPE_CHANGES, history.toArray(new Metadata[0]))
        .build();
  }

  private static RuntimeException failed(String path, DataType table, DataType data, String why) {
    return ErrorClass.DELTA_FAILED_TO_MERGE_FIELDS.error("Failed to merge field '" + path + "': table type "
        + table.simpleString() + ", data type " + data.simpleString() + " (" + why + ")");
  }

  /**
   * The expression that turns a data value of type {@code from} into the table's type {@code to}
   * for writing: struct fields by name (case-insensitive) in the table's order, fields the data
   * lacks as typed nulls, a null struct staying null; array elements and map values the same way;
   * atomic values cast to the table's type. Used after {@link #merge}, so the data never has a field
   * the table lacks.
   *
   * @param value the data value
   * @param from its type
   * @param to the table's type
   * @return {@code value} itself when the types already agree
   */
  public static Column project(Column value, DataType from, DataType to) {
    if (SchemaUtils.sameTypeForWrite(from, to)) {
      return value;
    }
    if (from instanceof StructType fs && to instanceof StructType ts) {
      List<Column> fields = new ArrayList<>();
      for (StructField t : ts.fields()) {
        Column field = SchemaUtils.findField(fs, t.name())
            .map(f -> project(value.getField(f.name()), f.dataType(), t.dataType()))
            .orElseGet(() -> functions.lit(null).cast(t.dataType()));
        fields.add(field.as(t.name()));
      }
      return functions.when(value.isNull(), functions.lit(null).cast(to))
          .otherwise(functions.struct(fields.toArray(new Column[0])));
    }
    if (from instanceof ArrayType fa && to instanceof ArrayType ta) {
      return functions.transform(value, e -> project(e, fa.elementType(), ta.elementType()));
    }
    if (from instanceof MapType fm && to instanceof MapType tm && SchemaUtils.sameTypeForWrite(fm.keyType(),
        tm.keyType())) {
      return functions.transform_values(value, (k, v) -> project(v, fm.valueType(), tm.valueType()));
    }
    return value.cast(to);
  }

  /** A type with every nested field, element and value nullable (Delta adds new fields as nullable). */
  private static DataType nullable(DataType t) {
    if (t instanceof StructType s) {
      List<StructField> fields = new ArrayList<>();
      for (StructField f : s.fields()) {
        fields.add(new StructField(f.name(), nullable(f.dataType()), true, f.metadata()));
      }
      return new StructType(fields.toArray(new StructField[0]));
    }
    if (t instanceof ArrayType a) {
      return new ArrayType(nullable(a.elementType()), true);
    }
    if (t instanceof MapType m) {
      return new MapType(m.keyType(), nullable(m.valueType()), true);
    }
    return t;
  }
}
