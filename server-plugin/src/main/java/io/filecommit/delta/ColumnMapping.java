package io.filecommit.delta;

import io.filecommit.delta.actions.Metadata;
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
  /** Column metadata key of the physical name. */
  public static final String PHYSICAL_NAME = "delta.columnMapping.physicalName";
  /** Column metadata key of the field id. */
  public static final String ID = "delta.columnMapping.id";
  /** Spark's column metadata key for the Parquet field id it writes. */
  public static final String PARQUET_FIELD_ID = "parquet.field.id";

  private ColumnMapping() {}

  /** Whether the table maps columns ({@code name} or {@code id} mode). */
  public static boolean enabled(Metadata md) {
    return !TableConfig.COLUMN_MAPPING_MODE.fromMetadata(md).equals("none");
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

  /** The physical form of a field: physical name, Parquet field id, physical nested types. */
  public static StructField physical(StructField f) {
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
