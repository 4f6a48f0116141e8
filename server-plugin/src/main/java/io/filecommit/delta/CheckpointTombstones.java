package io.filecommit.delta;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.types.StructType;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Keeps a checkpoint consistent when a file that was removed is added again (RESTORE re-adds the
 * exact (path, deletion vector) pairs an earlier commit removed): protocol "Checkpoints" says a
 * checkpoint holds the reconciled state, so a {@code remove} tombstone of a (path, DV) pair that
 * the checkpoint also lists as an {@code add} must not be in it. Delta Kernel 4.4's checkpoint
 * iterator keeps such tombstones, and Delta on Spark then drops the live file when it reads the
 * checkpoint; these helpers collect the checkpoint's add keys and unselect those tombstones.
 */
final class CheckpointTombstones {
  private CheckpointTombstones() {}

  /**
   * Adds the (path, DV) key of every selected {@code add} row of a checkpoint batch to {@code keys}.
   *
   * @param batch a batch of Kernel's checkpoint iterator
   * @param keys receives the keys
   */
  static void collectAdds(FilteredColumnarBatch batch, Set<String> keys) {
    forEach(batch, "add", (row, key) -> keys.add(key));
  }

  /**
   * The number of selected {@code add} rows of a checkpoint batch.
   *
   * @param batch a batch of Kernel's checkpoint iterator
   * @return its add actions
   */
  static long countAdds(FilteredColumnarBatch batch) {
    long[] n = {0};
    forEach(batch, "add", (row, key) -> n[0]++);
    return n[0];
  }

  /**
   * The batch with the {@code remove} rows whose key is in {@code addKeys} unselected.
   *
   * @param batch a batch of Kernel's checkpoint iterator
   * @param addKeys the keys of the checkpoint's adds
   * @return the batch, or a copy with a narrower selection
   */
  static FilteredColumnarBatch withoutReAdded(FilteredColumnarBatch batch, Set<String> addKeys) {
    ColumnarBatch data = batch.getData();
    int n = data.getSize();
    boolean[] keep = new boolean[n];
    for (int i = 0; i < n; i++) {
      keep[i] = selected(batch, i);
    }
    boolean[] changed = {false};
    forEach(batch, "remove", (row, key) -> {
      if (addKeys.contains(key)) {
        keep[row] = false;
        changed[0] = true;
      }
    });
    if (!changed[0]) {
      return batch;
    }
    ColumnVector selection = SidecarSplitter.selection(keep);
    return new FilteredColumnarBatch(data, Optional.of(selection));
  }

  private static boolean selected(FilteredColumnarBatch batch, int row) {
    Optional<ColumnVector> sel = batch.getSelectionVector();
    return sel.isEmpty() || (!sel.get().isNullAt(row) && sel.get().getBoolean(row));
  }

  /** Calls {@code action(row, key)} for each selected non-null row of the {@code column} struct. */
  private static void forEach(FilteredColumnarBatch batch, String column, BiConsumer<Integer, String> action) {
    ColumnarBatch data = batch.getData();
    int ordinal = data.getSchema().indexOf(column);
    if (ordinal < 0) {
      return;
    }
    ColumnVector v = data.getColumnVector(ordinal);
    StructType type = (StructType) v.getDataType();
    ColumnVector path = v.getChild(type.indexOf("path"));
    int dvOrdinal = type.indexOf("deletionVector");
    ColumnVector dv = dvOrdinal < 0 ? null : v.getChild(dvOrdinal);
    for (int i = 0; i < data.getSize(); i++) {
      if (v.isNullAt(i) || !selected(batch, i) || path.isNullAt(i)) {
        continue;
      }
      action.accept(i, path.getString(i) + "\u0000" + dvKey(dv, i));
    }
  }

  private static String dvKey(ColumnVector dv, int row) {
    if (dv == null || dv.isNullAt(row)) {
      return "";
    }
    StructType t = (StructType) dv.getDataType();
    ColumnVector storage = dv.getChild(t.indexOf("storageType"));
    ColumnVector id = dv.getChild(t.indexOf("pathOrInlineDv"));
    ColumnVector offset = dv.getChild(t.indexOf("offset"));
    return storage.getString(row) + id.getString(row) + "@" + (offset.isNullAt(row) ? "" : offset.getInt(row));
  }
}
