package io.filecommit.delta;

import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.ErrorClass;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
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
  /** Table property of the highest field id given out (protocol "Column Mapping"). */
  public static final String MAX_COLUMN_ID = "delta.columnMapping.maxColumnId";
  /** Spark's column metadata key for the Parquet field id it writes. */
  public static final String PARQUET_FIELD_ID = "parquet.field.id";

  private ColumnMapping() {}

  /**
   * Whether the table maps columns ({@code name} or {@code id} mode).
   *
   * @param md the table's metadata
   * @return true when {@code delta.columnMapping.mode} is {@code name} or {@code id}
   */
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

  /**
   * The physical form of a field: physical name, Parquet field id, physical nested types.
   *
   * @param f a logical field of a column-mapped table's schema
   * @return the field as data files store it
   */
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

  /**
   * The metadata a commit writes, with every field of a column-mapped schema given a physical name
   * and a field id (protocol "Column Mapping": "writers must assign" both, and keep {@code
   * delta.columnMapping.maxColumnId} at the highest id), as Delta's {@code
   * DeltaColumnMapping.verifyAndUpdateMetadataChange} does: fields of a new table or fields added
   * later get {@code col-<uuid>}; when an existing table moves from {@code none} to {@code name}, its
   * fields keep their own names as physical names (its files were written with them). Fields that
   * already have a physical name and id keep them.
   *
   * @param before the table's metadata, or null for a new table
   * @param md the metadata about to be committed
   * @return {@code md}, or a copy with the mapping filled in
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE}
   *     for any mode change of an existing table other than {@code none} to {@code name}
   */
  public static Metadata assign(Metadata before, Metadata md) {
    String oldMode = before == null ? "none" : TableConfig.COLUMN_MAPPING_MODE.fromMetadata(before);
    String newMode = TableConfig.COLUMN_MAPPING_MODE.fromMetadata(md);
    boolean upgrade = before != null && !oldMode.equals(newMode);
    if (upgrade && !(oldMode.equals("none") && newMode.equals("name"))) {
      throw ErrorClass.DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE.error("Changing column mapping mode from '"
          + oldMode + "' to '" + newMode + "' is not supported (only 'none' to 'name' on an existing table)");
    }
    if (newMode.equals("none")) {
      return md;
    }
    long[] maxId = {Math.max(parseLong(md.configuration().get(MAX_COLUMN_ID)), maxId(md.schema()))};
    StructType mapped = (StructType) assignType(md.schema(), maxId, upgrade);
    Map<String, String> conf = new LinkedHashMap<>(md.configuration());
    conf.put(MAX_COLUMN_ID, Long.toString(maxId[0]));
    if (mapped.equals(md.schema()) && conf.equals(md.configuration())) {
      return md;
    }
    return new Metadata(md.id(), md.name(), md.description(), md.format(), mapped.json(), md.partitionColumns(), conf,
        md.createdTime());
  }

  private static long parseLong(String v) {
    try {
      return v == null ? 0 : Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static long maxId(DataType t) {
    long max = 0;
    if (t instanceof StructType s) {
      for (StructField f : s.fields()) {
        if (f.metadata().contains(ID)) {
          max = Math.max(max, f.metadata().getLong(ID));
        }
        max = Math.max(max, maxId(f.dataType()));
      }
    } else if (t instanceof ArrayType a) {
      max = maxId(a.elementType());
    } else if (t instanceof MapType m) {
      max = Math.max(maxId(m.keyType()), maxId(m.valueType()));
    }
    return max;
  }

  private static DataType assignType(DataType t, long[] maxId, boolean ownNames) {
    if (t instanceof StructType s) {
      StructField[] fields = new StructField[s.fields().length];
      for (int i = 0; i < fields.length; i++) {
        StructField f = s.fields()[i];
        MetadataBuilder mb = new MetadataBuilder().withMetadata(f.metadata());
        if (!f.metadata().contains(ID)) {
          mb.putLong(ID, ++maxId[0]);
        }
        if (!f.metadata().contains(PHYSICAL_NAME)) {
          mb.putString(PHYSICAL_NAME, ownNames ? f.name() : "col-" + UUID.randomUUID());
        }
        fields[i] = new StructField(f.name(), assignType(f.dataType(), maxId, ownNames), f.nullable(), mb.build());
      }
      return new StructType(fields);
    }
    if (t instanceof ArrayType a) {
      return new ArrayType(assignType(a.elementType(), maxId, ownNames), a.containsNull());
    }
    if (t instanceof MapType m) {
      return new MapType(assignType(m.keyType(), maxId, ownNames), assignType(m.valueType(), maxId, ownNames),
          m.valueContainsNull());
    }
    return t;
  }
}
