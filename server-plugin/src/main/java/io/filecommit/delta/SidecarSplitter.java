package io.filecommit.delta;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.types.BooleanType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;

/**
 * Splits the action batches of a checkpoint into the file actions ({@code add}, {@code remove}),
 * handed out as chunks of at most a given number of actions, one chunk per sidecar file, and the
 * other actions, kept as JSON lines for the checkpoint file itself (protocol "V2 Spec": "all the
 * non-file actions ... must be part of the v2 spec checkpoint itself"; "Sidecar Files": only add
 * and remove actions, each in its own struct column). Mirrors how Delta's {@code Checkpoints}
 * writes a V2 checkpoint's sidecars from one pass over the snapshot's actions.
 *
 * <p>Memory: one source batch at a time (plus the non-file lines, a handful per table); the chunks
 * are views of that batch (a selection vector and the two file-action columns).
 */
final class SidecarSplitter implements Closeable {
  private final CloseableIterator<FilteredColumnarBatch> source;
  private final List<String> nonFileActions = new ArrayList<>();
  private ColumnarBatch data;
  private StructType schema;
  private boolean[] fileRow;
  private int pos;
  private long fileActions;
  private long adds;

  /**
   * @param source checkpoint batches in Kernel's checkpoint schema (closed by {@link #close})
   */
  SidecarSplitter(CloseableIterator<FilteredColumnarBatch> source) {
    this.source = source;
  }

  /** {@return whether a file action remains} Reads source batches until one has one. */
  boolean hasFileActions() {
    while (true) {
      if (data != null) {
        while (pos < fileRow.length && !fileRow[pos]) {
          pos++;
        }
        if (pos < fileRow.length) {
          return true;
        }
        data = null;
      }
      if (!source.hasNext()) {
        return false;
      }
      load(source.next());
    }
  }

  /** Reads what is left (for the non-file actions of a checkpoint without file actions). */
  void drain() {
    while (hasFileActions()) {
      pos = fileRow.length;
    }
  }

  /**
   * The next chunk of at most {@code max} file actions, as batches of two columns ({@code add},
   * {@code remove}) with a selection vector; consumed lazily (one Parquet file write).
   *
   * @param max most file actions in the chunk, > 0
   * @return the chunk's batches
   */
  CloseableIterator<FilteredColumnarBatch> nextChunk(int max) {
    return new CloseableIterator<>() {
      private int left = max;

      @Override
      public boolean hasNext() {
        return left > 0 && hasFileActions();
      }

      @Override
      public FilteredColumnarBatch next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        boolean[] keep = new boolean[fileRow.length];
        int i = pos;
        for (; i < fileRow.length && left > 0; i++) {
          if (fileRow[i]) {
            keep[i] = true;
            left--;
            fileActions++;
          }
        }
        pos = i;
        return new FilteredColumnarBatch(fileColumns(data), Optional.of(selection(keep)));
      }

      @Override
      public void close() {}
    };
  }

  /** {@return the non-file actions read so far, one JSON line each} */
  List<String> nonFileActions() {
    return nonFileActions;
  }

  /** {@return the schema of the source batches (Kernel's checkpoint schema), null before the first} */
  StructType schema() {
    return schema;
  }

  /** {@return file actions handed out in chunks so far} */
  long fileActions() {
    return fileActions;
  }

  /** {@return add actions among the rows read so far} */
  long adds() {
    return adds;
  }

  @Override
  public void close() throws IOException {
    source.close();
  }

  private void load(FilteredColumnarBatch batch) {
    data = batch.getData();
    int n = data.getSize();
    fileRow = new boolean[n];
    pos = 0;
    StructType schema = data.getSchema();
    this.schema = schema;
    int add = schema.indexOf("add");
    int remove = schema.indexOf("remove");
    Optional<ColumnVector> sel = batch.getSelectionVector();
    for (int r = 0; r < n; r++) {
      if (sel.isPresent() && (sel.get().isNullAt(r) || !sel.get().getBoolean(r))) {
        continue;
      }
      if (add >= 0 && !data.getColumnVector(add).isNullAt(r)) {
        fileRow[r] = true;
        adds++;
        continue;
      }
      if (remove >= 0 && !data.getColumnVector(remove).isNullAt(r)) {
        fileRow[r] = true;
        continue;
      }
      for (int c = 0; c < schema.length(); c++) {
        ColumnVector v = data.getColumnVector(c);
        if (!v.isNullAt(r)) {
          nonFileActions.add(KernelInternals.actionJson(schema.at(c), v, r));
          break;
        }
      }
    }
  }

  /** The batch with only its {@code add} and {@code remove} columns. */
  private static ColumnarBatch fileColumns(ColumnarBatch batch) {
    ColumnarBatch out = batch;
    StructType schema = batch.getSchema();
    for (int c = schema.length() - 1; c >= 0; c--) {
      String name = schema.at(c).getName();
      if (!name.equals("add") && !name.equals("remove")) {
        out = out.withDeletedColumnAt(c);
      }
    }
    return out;
  }

  /**
   * A Kernel selection vector over {@code keep} (row {@code i} selected when {@code keep[i]}), for a
   * {@code FilteredColumnarBatch} of {@code keep.length} rows; never null.
   */
  static ColumnVector selection(boolean[] keep) {
    return new ColumnVector() {
      @Override
      public DataType getDataType() {
        return BooleanType.BOOLEAN;
      }

      @Override
      public int getSize() {
        return keep.length;
      }

      @Override
      public void close() {}

      @Override
      public boolean isNullAt(int rowId) {
        return false;
      }

      @Override
      public boolean getBoolean(int rowId) {
        return keep[rowId];
      }
    };
  }
}
