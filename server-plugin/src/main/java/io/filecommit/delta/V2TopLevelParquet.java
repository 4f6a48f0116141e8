package io.filecommit.delta;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.MapType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.apache.hadoop.fs.Path;

/**
 * Writes the checkpoint file of a V2 checkpoint as Parquet (protocol "V2 Spec": the checkpoint file
 * may be JSON or Parquet; "Checkpoint Schema"), as Delta writes it under {@code
 * spark.databricks.delta.checkpointV2.topLevelFileFormat = parquet}: one row per action, one struct
 * column per action kind, Kernel's checkpoint columns ({@code txn}, {@code add}, {@code remove},
 * {@code metaData}, {@code protocol}, {@code domainMetadata}; {@code add} and {@code remove} stay
 * null: file actions live in the sidecars) plus {@code checkpointMetadata} (version, tags) and
 * {@code sidecar} (path, sizeInBytes, modificationTime, tags). The JSON lines of the actions are
 * parsed into that schema by Kernel's JSON handler and written by Kernel's Parquet writer
 * ({@code writeParquetFileAtomically}: the file appears complete or not at all).
 */
final class V2TopLevelParquet {
  private static final MapType TAGS = new MapType(StringType.STRING, StringType.STRING, true);
  /** The {@code checkpointMetadata} action's columns (protocol "Checkpoint Metadata"). */
  static final StructType CHECKPOINT_METADATA = new StructType()
      .add("version", LongType.LONG)
      .add("tags", TAGS);
  /** The {@code sidecar} action's columns (protocol "Sidecar File Information"). */
  static final StructType SIDECAR = new StructType()
      .add("path", StringType.STRING)
      .add("sizeInBytes", LongType.LONG)
      .add("modificationTime", LongType.LONG)
      .add("tags", TAGS);

  private V2TopLevelParquet() {}

  /**
   * The Parquet schema of a V2 checkpoint file: {@code base} (Kernel's checkpoint schema) plus the
   * {@code checkpointMetadata} and {@code sidecar} columns when missing.
   *
   * @param base Kernel's checkpoint schema (of the batches the checkpoint was made from)
   * @return the schema
   */
  static StructType schema(StructType base) {
    StructType s = base;
    if (s.indexOf("checkpointMetadata") < 0) {
      s = s.add("checkpointMetadata", CHECKPOINT_METADATA);
    }
    if (s.indexOf("sidecar") < 0) {
      s = s.add("sidecar", SIDECAR);
    }
    return s;
  }

  /**
   * Writes {@code lines} (one action each, as JSON) as the Parquet file {@code path}.
   *
   * @param engine the table's engine
   * @param path the checkpoint file
   * @param base Kernel's checkpoint schema (of the batches the checkpoint was made from)
   * @param lines the actions, in order
   * @throws IOException when writing fails or the file exists ({@code FileAlreadyExistsException})
   */
  static void write(Engine engine, Path path, StructType base, List<String> lines) throws IOException {
    ColumnarBatch batch = engine.getJsonHandler().parseJson(strings(lines), schema(base), Optional.empty());
    try (CloseableIterator<FilteredColumnarBatch> data = one(new FilteredColumnarBatch(batch, Optional.empty()))) {
      engine.getParquetHandler().writeParquetFileAtomically(path.toString(), data);
    }
  }

  /**
   * A Kernel iterator over one item.
   *
   * @param item the item
   * @param <T> its type
   * @return the iterator (close does nothing)
   */
  static <T> CloseableIterator<T> one(T item) {
    return new CloseableIterator<>() {
      private boolean done;

      @Override
      public boolean hasNext() {
        return !done;
      }

      @Override
      public T next() {
        if (done) {
          throw new java.util.NoSuchElementException();
        }
        done = true;
        return item;
      }

      @Override
      public void close() {}
    };
  }

  private static ColumnVector strings(List<String> values) {
    return new ColumnVector() {
      @Override
      public DataType getDataType() {
        return StringType.STRING;
      }

      @Override
      public int getSize() {
        return values.size();
      }

      @Override
      public void close() {}

      @Override
      public boolean isNullAt(int rowId) {
        return values.get(rowId) == null;
      }

      @Override
      public String getString(int rowId) {
        return values.get(rowId);
      }
    };
  }
}
