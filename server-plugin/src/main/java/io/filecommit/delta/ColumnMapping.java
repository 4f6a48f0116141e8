package io.filecommit.delta;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Writing into tables with column mapping (protocol "Column Mapping", modes {@code name} and
 * {@code id}): data files store every column under its physical name
 * ({@code delta.columnMapping.physicalName}) with its field id ({@code delta.columnMapping.id})
 * as the Parquet field id; {@code partitionValues} and statistics are keyed by physical names;
 * files go under random prefixes instead of partition directories (as Delta's writer does for
 * such tables). The logical schema stays the table's; only the written files are physical.
 */
public final class ColumnMapping {
  /** Table property of the mode: {@code none}, {@code name} or {@code id}. */
  public static final String MODE = TableFeatures.COLUMN_MAPPING_MODE;
  /** Column metadata key of the physical name. */
  public static final String PHYSICAL_NAME = "delta.columnMapping.physicalName";
  /** Column metadata key of the field id. */
  public static final String ID = "delta.columnMapping.id";
  /** Spark's column metadata key for the Parquet field id it writes. */
  static final String PARQUET_FIELD_ID = "parquet.field.id";

  private ColumnMapping() {}

  /** Whether the table maps columns ({@code name} or {@code id} mode). */
  public static boolean enabled(Metadata md) {
    String mode = md.configuration().get(MODE);
    return mode != null && !mode.toLowerCase(Locale.ROOT).equals("none");
  }

  /**
   * The physical name of a top-level column.
   *
   * @param md the table metadata
   * @param logical the logical column name (case-insensitive)
   * @return its physical name; the name itself without column mapping
   * @throws IllegalStateException when a mapped table's column has no physical name
   */
  public static String physicalName(Metadata md, String logical) {
    if (!enabled(md)) {
      return logical;
    }
    for (StructField f : md.schema().fields()) {
      if (f.name().equalsIgnoreCase(logical)) {
        return physical(f).name();
      }
    }
    return logical;
  }

  /**
   * Renames the table's columns of {@code data} (already normalized to the logical schema) to
   * their physical names, nested struct fields included, with Parquet field ids. Columns that are
   * not in the table schema (the change-data columns) pass through unchanged.
   *
   * @param md the table metadata (column mapping enabled)
   * @param data rows with the logical column names
   * @return the same rows with physical column names and field ids
   */
  public static Dataset<Row> toPhysical(Metadata md, Dataset<Row> data) {
    StructType schema = md.schema();
    List<Column> cols = new ArrayList<>();
    for (StructField in : data.schema().fields()) {
      StructField table = null;
      for (StructField f : schema.fields()) {
        if (f.name().equals(in.name())) {
          table = f;
        }
      }
      Column c = functions.col("`" + in.name().replace("`", "``") + "`");
      if (table == null) {
        cols.add(c);
      } else {
        StructField p = physical(table);
        cols.add(c.cast(p.dataType()).as(p.name(), p.metadata()));
      }
    }
    return data.select(cols.toArray(new Column[0]));
  }

  /** The physical form of a field: physical name, Parquet field id, physical nested types. */
  static StructField physical(StructField f) {
    if (!f.metadata().contains(PHYSICAL_NAME)) {
      throw new IllegalStateException("Column '" + f.name() + "' of a column-mapped table has no " + PHYSICAL_NAME);
    }
    MetadataBuilder mb = new MetadataBuilder();
    if (f.metadata().contains(ID)) {
      mb.putLong(PARQUET_FIELD_ID, f.metadata().getLong(ID));
    }
    return new StructField(f.metadata().getString(PHYSICAL_NAME), physicalType(f.dataType()), f.nullable(), mb.build());
  }

  private static DataType physicalType(DataType t) {
    if (t instanceof StructType s) {
      StructField[] fields = new StructField[s.fields().length];
      for (int i = 0; i < fields.length; i++) {
        fields[i] = physical(s.fields()[i]);
      }
      return new StructType(fields);
    }
    if (t instanceof ArrayType a) {
      return new ArrayType(physicalType(a.elementType()), a.containsNull());
    }
    if (t instanceof MapType m) {
      return new MapType(physicalType(m.keyType()), physicalType(m.valueType()), m.valueContainsNull());
    }
    return t;
  }
}
