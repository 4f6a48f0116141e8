package io.filecommit.files;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * Per-file statistics for the {@code add.stats} field, read from the Parquet footer that Spark's
 * writer produced (protocol "Per-file Statistics").
 *
 * <p>Shape: {@code {"numRecords":N,"minValues":{..},"maxValues":{..},"nullCount":{..}}}. Only
 * top-level primitive columns among the first {@code numIndexedCols} leaf columns get entries.
 * min/max are written only where the value is exact and safe for data skipping: integers, floats
 * (not NaN/infinite), dates ({@code yyyy-MM-dd}), and strings (min truncated to a 32-character
 * prefix, which is still a lower bound; max only when at most 32 characters). Other types get a
 * null count only. A column without footer statistics gets no entry. A column with a row group
 * that has non-null values but no min/max (a float chunk with NaN: Parquet writers and parquet-mr's
 * reader drop such bounds) gets no min/max for the file, as NaN is greater than every value in
 * Spark's order and a bound without it would skip rows.
 */
public final class ParquetStats {
  private static final int STRING_PREFIX_LENGTH = 32;
  private static final ObjectMapper MAPPER = io.filecommit.delta.actions.Actions.MAPPER;

  private ParquetStats() {}

  /**
   * Reads the footer of a Parquet data file and returns its statistics JSON.
   *
   * @param conf Hadoop configuration used to open the file
   * @param status the file's status (path and length)
   * @param numIndexedCols how many leaf columns get min/max/nullCount (negative: all)
   * @return the statistics JSON string
   * @throws IOException if the footer cannot be read
   */
  public static String collect(Configuration conf, FileStatus status, int numIndexedCols) throws IOException {
    ParquetMetadata footer;
    // Read options from the given configuration: the default options would build (and parse) a new one.
    try (ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromStatus(status, conf),
        org.apache.parquet.HadoopReadOptions.builder(conf, status.getPath()).build())) {
      footer = reader.getFooter();
    }
    return fromFooter(footer, numIndexedCols);
  }

  /**
   * The statistics JSON of a Parquet data file from its footer, already read (as {@link #collect}).
   *
   * @param footer the file's footer
   * @param numIndexedCols how many leaf columns get min/max/nullCount (negative: all)
   * @return the statistics JSON string
   * @throws IOException if the JSON cannot be written
   */
  public static String fromFooter(ParquetMetadata footer, int numIndexedCols) throws IOException {
    List<Type> fields = footer.getFileMetaData().getSchema().getFields();
    Map<String, PrimitiveType> indexed = new LinkedHashMap<>();
    int leaves = 0;
    for (Type field : fields) {
      int fieldLeaves = countLeaves(field);
      if (numIndexedCols >= 0 && leaves >= numIndexedCols) {
        break;
      }
      leaves += fieldLeaves;
      if (field.isPrimitive() && field.getRepetition() != Type.Repetition.REPEATED) {
        indexed.put(field.getName(), field.asPrimitiveType());
      }
    }
    long numRecords = 0;
    Map<String, Statistics<?>> merged = new LinkedHashMap<>();
    Map<String, Boolean> complete = new LinkedHashMap<>();
    java.util.Set<String> unbounded = new java.util.HashSet<>();
    for (BlockMetaData block : footer.getBlocks()) {
      numRecords += block.getRowCount();
      for (ColumnChunkMetaData chunk : block.getColumns()) {
        if (chunk.getPath().size() != 1) {
          continue;
        }
        String name = chunk.getPath().toArray()[0];
        PrimitiveType type = indexed.get(name);
        if (type == null) {
          continue;
        }
        Statistics<?> s = chunk.getStatistics();
        if (s == null || s.isEmpty() && block.getRowCount() > 0) {
          complete.put(name, false);
          continue;
        }
        complete.putIfAbsent(name, true);
        if (!s.hasNonNullValue() && (!s.isNumNullsSet() || s.getNumNulls() < chunk.getValueCount())) {
          // Values without bounds (a float chunk with NaN: writers and readers drop its min/max).
          unbounded.add(name);
        }
        merged.computeIfAbsent(name, n -> Statistics.createStats(type)).mergeStatistics(s);
      }
    }
    ObjectNode root = MAPPER.createObjectNode();
    root.put("numRecords", numRecords);
    ObjectNode min = root.putObject("minValues");
    ObjectNode max = root.putObject("maxValues");
    ObjectNode nulls = root.putObject("nullCount");
    for (Map.Entry<String, PrimitiveType> e : indexed.entrySet()) {
      String name = e.getKey();
      Statistics<?> s = merged.get(name);
      if (numRecords == 0 || s == null || !complete.getOrDefault(name, false)) {
        continue;
      }
      if (s.isNumNullsSet()) {
        nulls.put(name, s.getNumNulls());
      }
      if (s.hasNonNullValue() && !unbounded.contains(name)) {
        putValue(min, name, e.getValue(), s.genericGetMin(), true);
        putValue(max, name, e.getValue(), s.genericGetMax(), false);
      }
    }
    return MAPPER.writeValueAsString(root);
  }

  private static int countLeaves(Type t) {
    if (t.isPrimitive()) {
      return 1;
    }
    int n = 0;
    for (Type child : t.asGroupType().getFields()) {
      n += countLeaves(child);
    }
    return n;
  }

  private static void putValue(ObjectNode target, String name, PrimitiveType type, Object v, boolean isMin) {
    LogicalTypeAnnotation logical = type.getLogicalTypeAnnotation();
    switch (type.getPrimitiveTypeName()) {
      case INT32 -> {
        if (logical == null || logical instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation) {
          target.put(name, (Integer) v);
        } else if (logical instanceof LogicalTypeAnnotation.DateLogicalTypeAnnotation) {
          target.put(name, LocalDate.ofEpochDay((Integer) v).toString());
        }
      }
      case INT64 -> {
        if (logical == null || logical instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation) {
          target.put(name, (Long) v);
        }
      }
      case FLOAT -> {
        float f = (Float) v;
        if (!Float.isNaN(f) && !Float.isInfinite(f)) {
          target.put(name, f);
        }
      }
      case DOUBLE -> {
        double d = (Double) v;
        if (!Double.isNaN(d) && !Double.isInfinite(d)) {
          target.put(name, d);
        }
      }
      case BINARY -> {
        if (logical instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation) {
          String s = ((Binary) v).toStringUsingUTF8();
          int codePoints = s.codePointCount(0, s.length());
          if (codePoints <= STRING_PREFIX_LENGTH) {
            target.put(name, s);
          } else if (isMin) {
            target.put(name, s.substring(0, s.offsetByCodePoints(0, STRING_PREFIX_LENGTH)));
          }
        }
      }
      default -> {
        // booleans, decimals, timestamps, binaries: null count only
      }
    }
  }
}
