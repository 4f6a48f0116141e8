package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * Delta {@code metaData} action (protocol "Change Metadata"; Delta's {@code Metadata}).
 *
 * @param id table id (a UUID string)
 * @param name table name or null
 * @param description description or null
 * @param format the data format, always Parquet
 * @param schemaString the table schema as Spark StructType JSON
 * @param partitionColumns partition column names, in directory order
 * @param configuration table properties (e.g. {@code delta.enableChangeDataFeed})
 * @param createdTime creation time, ms since the Unix epoch, or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"id", "name", "description", "format", "schemaString", "partitionColumns", "configuration",
    "createdTime"})
public record Metadata(
    String id,
    String name,
    String description,
    Format format,
    String schemaString,
    List<String> partitionColumns,
    Map<String, String> configuration,
    Long createdTime) implements Action {

  /**
   * The {@code format} of a metaData action (protocol "Format Specification").
   *
   * @param provider always {@code parquet}
   * @param options format options, empty
   */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Format(String provider, Map<String, String> options) {
    /** Parquet without options. */
    public static final Format PARQUET = new Format("parquet", Map.of());

    /**
     * Normalizes null fields.
     *
     * @param provider the format name; null becomes {@code parquet}
     * @param options format options; null becomes empty
     */
    public Format {
      provider = provider == null ? "parquet" : provider;
      options = options == null ? Map.of() : Map.copyOf(options);
    }
  }

  /**
   * Normalizes the collections into unmodifiable copies.
   *
   * @param id table id (a UUID string)
   * @param name table name or null
   * @param description description or null
   * @param format the data format; null becomes Parquet
   * @param schemaString the table schema as Spark StructType JSON
   * @param partitionColumns partition column names, in directory order; null becomes empty
   * @param configuration table properties; null becomes empty
   * @param createdTime creation time, ms since the Unix epoch, or null
   */
  public Metadata {
    format = format == null ? Format.PARQUET : format;
    partitionColumns = partitionColumns == null ? List.of() : List.copyOf(partitionColumns);
    configuration = Collections.unmodifiableMap(new LinkedHashMap<>(configuration == null ? Map.of() : configuration));
  }

  /**
   * Metadata in Parquet format.
   *
   * @param id table id (a UUID string)
   * @param name table name or null
   * @param description description or null
   * @param schemaString the table schema as Spark StructType JSON
   * @param partitionColumns partition column names, in directory order
   * @param configuration table properties
   * @param createdTime creation time, ms since the Unix epoch, or null
   * @see #Metadata(String, String, String, Format, String, List, Map, Long)
   */
  public Metadata(String id, String name, String description, String schemaString, List<String> partitionColumns,
      Map<String, String> configuration, Long createdTime) {
    this(id, name, description, Format.PARQUET, schemaString, partitionColumns, configuration, createdTime);
  }

  /** {@return the table schema parsed from {@link #schemaString()}} */
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
    return new Metadata(id, name, description, format, schemaString, partitionColumns, newConfiguration, createdTime);
  }

  @Override
  public String actionName() {
    return "metaData";
  }
}
