package io.filecommit.read;

import io.filecommit.delta.ColumnMapping;
import io.filecommit.delta.actions.Metadata;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The data columns as the table's Parquet files store them (protocol "Column Mapping": physical
 * names and nested physical names, no partition columns) and where each logical column of a read
 * comes from.
 *
 * @param dataSchema stored data columns (nullable, without metadata)
 * @param columnOf logical column name -> stored column name (partition columns map to themselves)
 */
record StoredColumns(StructType dataSchema, Map<String, String> columnOf) {

  /**
   * @param md the table's metadata
   * @param schema its logical schema
   * @param partitionColumns its partition columns (as the schema spells them)
   */
  static StoredColumns of(Metadata md, StructType schema, List<String> partitionColumns) {
    boolean mapped = ColumnMapping.enabled(md);
    List<StructField> stored = new ArrayList<>();
    Map<String, String> columnOf = new HashMap<>();
    for (StructField f : md.schema().fields()) {
      if (partitionColumns.contains(f.name())) {
        columnOf.put(f.name(), f.name());
        continue;
      }
      StructField p = mapped ? ColumnMapping.physical(f) : f;
      stored.add(new StructField(p.name(), p.dataType(), true, org.apache.spark.sql.types.Metadata.empty()));
      columnOf.put(f.name(), p.name());
    }
    return new StoredColumns(new StructType(stored.toArray(new StructField[0])), columnOf);
  }

  /** The data schema with one more stored column. */
  StructType with(StructField extra) {
    return dataSchema.add(extra);
  }
}
