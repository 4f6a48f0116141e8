package io.filecommit.schema;

import io.filecommit.errors.ErrorClass;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.VariantType;

/**
 * Schema rules shared by table writes and batch-id sinks (Delta's {@code SchemaUtils} and
 * {@code SchemaMergingUtils} where they apply): case-insensitive field lookup, Spark SQL quoting of
 * names, column-name and partition-column checks, and the type comparison a write into an existing
 * table uses.
 */
public final class SchemaUtils {
  /** Characters Delta refuses in column names (without column mapping). */
  private static final String INVALID_NAME_CHARS = " ,;{}()\n\t=";

  private SchemaUtils() {}

  /**
   * A column name quoted for Spark SQL ({@code `a``b`}).
   *
   * @param name a column name
   * @return it in backquotes, inner backquotes doubled
   */
  public static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  /** Column metadata key of a column's default expression (SQL text), as Spark and Delta store it. */
  public static final String CURRENT_DEFAULT = "CURRENT_DEFAULT";

  /**
   * The value a row gets for a column it lacks (protocol "Default Columns"; Spark's {@code
   * ResolveDefaultColumns}): the column's {@code CURRENT_DEFAULT} SQL expression, cast to the column
   * type, when it has one, else a typed null.
   *
   * @param f a table column
   * @return the default value expression
   */
  public static org.apache.spark.sql.Column defaultValue(StructField f) {
    if (f.metadata().contains(CURRENT_DEFAULT)) {
      return org.apache.spark.sql.functions.expr(f.metadata().getString(CURRENT_DEFAULT)).cast(f.dataType());
    }
    return org.apache.spark.sql.functions.lit(null).cast(f.dataType());
  }

  /**
   * Whether a column has a default expression ({@code CURRENT_DEFAULT} in its metadata).
   *
   * @param f a table column
   * @return true when it has one
   */
  public static boolean hasDefault(StructField f) {
    return f.metadata().contains(CURRENT_DEFAULT);
  }

  /**
   * Case-insensitive lookup of a top-level field.
   *
   * @param schema the schema
   * @param name the field name, any case
   * @return the field, or empty
   */
  public static Optional<StructField> findField(StructType schema, String name) {
    for (StructField f : schema.fields()) {
      if (f.name().equalsIgnoreCase(name)) {
        return Optional.of(f);
      }
    }
    return Optional.empty();
  }

  /**
   * Whether {@code name} is one of {@code columns}, case-insensitively.
   *
   * @param columns column names
   * @param name a column name
   * @return true when one of them equals it ignoring case
   */
  public static boolean containsIgnoreCase(List<String> columns, String name) {
    return columns.stream().anyMatch(c -> c.equalsIgnoreCase(name));
  }

  /**
   * Checks a table schema with its partition columns.
   *
   * @param schema the table schema
   * @param partitionColumns partition column names
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES}
   *     for a name with one of {@code " ,;{}()\n\t="}, {@code DELTA_DUPLICATE_COLUMNS_FOUND} for
   *     duplicate names (case-insensitive), {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE} for a
   *     {@code VARIANT} column, also nested (it needs the {@code variantType} table feature, protocol
   *     "Variant Data Type", which filecommit does not write), and the classes of {@link
   *     #checkPartitionColumns}
   */
  public static void validateSchemaAndPartitioning(StructType schema, List<String> partitionColumns) {
    Set<String> seen = new HashSet<>();
    for (StructField f : schema.fields()) {
      if (f.dataType().existsRecursively(t -> t instanceof VariantType)) {
        throw ErrorClass.DELTA_UNSUPPORTED_FEATURES_FOR_WRITE.error("Column '" + f.name() + "' is of type "
            + f.dataType().simpleString() + ": a VARIANT column needs table feature(s) [variantType] that filecommit "
            + "does not support", java.util.Map.of("unsupported", "variantType", "column", f.name()));
      }
      for (char c : INVALID_NAME_CHARS.toCharArray()) {
        if (f.name().indexOf(c) >= 0) {
          throw ErrorClass.DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES.error(
              "Column name '" + f.name() + "' contains an invalid character among ' ,;{}()\\n\\t='");
        }
      }
      if (!seen.add(f.name().toLowerCase(Locale.ROOT))) {
        throw ErrorClass.DELTA_DUPLICATE_COLUMNS_FOUND.error("Duplicate column name (case-insensitive): '" + f.name() + "'");
      }
    }
    checkPartitionColumns(schema, partitionColumns, "table");
  }

  /**
   * Resolves partition columns against a schema (Delta's and Spark's partitioning rules).
   *
   * @param schema the data or table schema
   * @param partitionBy partition columns in directory order, matched case-insensitively
   * @param what "table" or "sink", for the message
   * @return the columns with the schema's exact names
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_PARTITION_COLUMN_NOT_FOUND} for
   *     an empty name or one the schema lacks, {@code
   *     DELTA_INVALID_PARTITION_COLUMN_TYPE} (complex type), {@code DELTA_DUPLICATE_COLUMNS_FOUND}
   *     (given twice), {@code DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION}
   */
  public static List<String> checkPartitionColumns(StructType schema, List<String> partitionBy, String what) {
    List<String> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (String p : partitionBy) {
      if (p == null || p.isEmpty()) {
        throw ErrorClass.DELTA_PARTITION_COLUMN_NOT_FOUND.error("Partition column names must be non-empty, got '" + p
            + "'", java.util.Map.of("columnName", String.valueOf(p)));
      }
      StructField match = findField(schema, p).orElseThrow(() -> ErrorClass.DELTA_PARTITION_COLUMN_NOT_FOUND.error(
          "Partition column '" + p + "' is not in the data; columns: " + List.of(schema.fieldNames())));
      DataType t = match.dataType();
      if (t instanceof StructType || t instanceof ArrayType || t instanceof MapType) {
        throw ErrorClass.DELTA_INVALID_PARTITION_COLUMN_TYPE.error(
            "Partition column '" + p + "' has complex type " + t.simpleString() + "; only atomic types can partition");
      }
      if (!seen.add(match.name().toLowerCase(Locale.ROOT))) {
        throw ErrorClass.DELTA_DUPLICATE_COLUMNS_FOUND.error("Partition column '" + p + "' is given twice");
      }
      out.add(match.name());
    }
    if (!out.isEmpty() && out.size() >= schema.fields().length) {
      throw ErrorClass.DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION.error(
          "Cannot write a " + what + " where every column is a partition column: " + partitionBy);
    }
    return out;
  }

  /**
   * The schema without the top-level field {@code name} (exact case).
   *
   * @param schema the schema
   * @param name the field to leave out
   * @return the other fields, in order
   */
  public static StructType withoutField(StructType schema, String name) {
    List<StructField> kept = new ArrayList<>();
    for (StructField f : schema.fields()) {
      if (!f.name().equals(name)) {
        kept.add(f);
      }
    }
    return new StructType(kept.toArray(new StructField[0]));
  }

  /**
   * The schema with every explicitly collated {@code UTF8_BINARY} string (Spark 4 gives Python UDF
   * results that type) as the plain {@code string} Delta's schema language has; other collations
   * are kept (their readers need them). Nullability and field metadata are unchanged.
   *
   * @param schema a schema
   * @return the schema with those strings plain
   */
  public static StructType defaultCollationAsPlainString(StructType schema) {
    return (StructType) normalizeType(schema, false);
  }

  /**
   * Whether two types are equal for a write into an existing table: collation {@code UTF8_BINARY}
   * as plain strings, nullability and field metadata ignored.
   *
   * @param a the table's type
   * @param b the data's type
   * @return true when they are equal so
   */
  public static boolean sameTypeForWrite(DataType a, DataType b) {
    return normalizeType(a, true).equals(normalizeType(b, true));
  }

  /**
   * A type with explicitly collated {@code UTF8_BINARY} strings as plain strings, nested types
   * included; with {@code plain}, also nullable everywhere and without field metadata.
   */
  private static DataType normalizeType(DataType t, boolean plain) {
    if (t instanceof org.apache.spark.sql.types.StringType st && st.collationId() == 0) {
      return DataTypes.StringType;
    }
    if (t instanceof StructType s) {
      List<StructField> fields = new ArrayList<>();
      for (StructField f : s.fields()) {
        fields.add(new StructField(f.name(), normalizeType(f.dataType(), plain), plain || f.nullable(),
            plain ? org.apache.spark.sql.types.Metadata.empty() : f.metadata()));
      }
      return new StructType(fields.toArray(new StructField[0]));
    }
    if (t instanceof ArrayType a) {
      return new ArrayType(normalizeType(a.elementType(), plain), plain || a.containsNull());
    }
    if (t instanceof MapType m) {
      return new MapType(normalizeType(m.keyType(), plain), normalizeType(m.valueType(), plain),
          plain || m.valueContainsNull());
    }
    return t;
  }
}
