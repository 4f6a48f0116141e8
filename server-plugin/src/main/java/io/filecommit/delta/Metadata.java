package io.filecommit.delta;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * Delta {@code metaData} action (protocol section "Change Metadata").
 *
 * @param id table id (a UUID string)
 * @param name table name or null
 * @param description description or null
 * @param schemaString the table schema as Spark StructType JSON
 * @param partitionColumns partition column names, in directory order
 * @param configuration table properties (e.g. {@code delta.enableChangeDataFeed})
 * @param createdTime creation time, ms since the Unix epoch, or null
 */
public record Metadata(
    String id,
    String name,
    String description,
    String schemaString,
    List<String> partitionColumns,
    Map<String, String> configuration,
    Long createdTime) {

  /** Normalizes the collections into unmodifiable copies. */
  public Metadata {
    partitionColumns = List.copyOf(partitionColumns);
    configuration = Collections.unmodifiableMap(new LinkedHashMap<>(configuration));
  }

  /** The table schema parsed from {@link #schemaString()}. */
  public StructType schema() {
    return (StructType) DataType.fromJson(schemaString);
  }

  /**
   * A copy with other table properties.
   *
   * @param newConfiguration the full new configuration
   * @return the updated metadata (same id)
   */
  public Metadata withConfiguration(Map<String, String> newConfiguration) {
    return new Metadata(id, name, description, schemaString, partitionColumns, newConfiguration, createdTime);
  }
}
