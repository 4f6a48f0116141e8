package io.filecommit.delta;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.MapValue;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.utils.CloseableIterator;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The active files of a snapshot from Kernel's public scan of the log (protocol "Action
 * Reconciliation"; no data is read), as our {@link AddFile}s with statistics and deletion vectors.
 */
final class ScanFiles {
  private ScanFiles() {}

  /**
   * Reads the active files.
   *
   * @param ks Kernel's snapshot
   * @param engine the engine
   * @param table the table path, for the error
   * @return the active AddFiles
   * @throws UncheckedIOException when the log cannot be read
   */
  static List<AddFile> activeFiles(io.delta.kernel.Snapshot ks, Engine engine, String table) {
    List<AddFile> files = new ArrayList<>();
    try (CloseableIterator<FilteredColumnarBatch> batches = ks.getScanBuilder().build().getScanFiles(engine, true)) {
      while (batches.hasNext()) {
        try (CloseableIterator<Row> rows = batches.next().getRows()) {
          while (rows.hasNext()) {
            Row scanFile = rows.next();
            files.add(toAddFile(scanFile.getStruct(scanFile.getSchema().indexOf("add"))));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the active files of " + table, e);
    }
    return files;
  }

  private static AddFile toAddFile(Row add) {
    int pv = add.getSchema().indexOf("partitionValues");
    int tags = add.getSchema().indexOf("tags");
    int dv = add.getSchema().indexOf("deletionVector");
    int stats = add.getSchema().indexOf("stats");
    int baseRowId = add.getSchema().indexOf("baseRowId");
    int commitVersion = add.getSchema().indexOf("defaultRowCommitVersion");
    return new AddFile(
        add.getString(add.getSchema().indexOf("path")),
        toMap(add.isNullAt(pv) ? null : add.getMap(pv)),
        add.getLong(add.getSchema().indexOf("size")),
        add.getLong(add.getSchema().indexOf("modificationTime")),
        add.getBoolean(add.getSchema().indexOf("dataChange")),
        stats < 0 || add.isNullAt(stats) ? null : add.getString(stats),
        toMap(tags < 0 || add.isNullAt(tags) ? null : add.getMap(tags)),
        dv < 0 || add.isNullAt(dv) ? null : toDeletionVector(add.getStruct(dv)),
        baseRowId < 0 || add.isNullAt(baseRowId) ? null : add.getLong(baseRowId),
        commitVersion < 0 || add.isNullAt(commitVersion) ? null : add.getLong(commitVersion),
        null);
  }

  private static DeletionVectorDescriptor toDeletionVector(Row dv) {
    int offset = dv.getSchema().indexOf("offset");
    return new DeletionVectorDescriptor(
        dv.getString(dv.getSchema().indexOf("storageType")),
        dv.getString(dv.getSchema().indexOf("pathOrInlineDv")),
        dv.isNullAt(offset) ? null : dv.getInt(offset),
        dv.getInt(dv.getSchema().indexOf("sizeInBytes")),
        dv.getLong(dv.getSchema().indexOf("cardinality")));
  }

  private static Map<String, String> toMap(MapValue m) {
    Map<String, String> out = new LinkedHashMap<>();
    if (m == null) {
      return out;
    }
    ColumnVector keys = m.getKeys();
    ColumnVector values = m.getValues();
    for (int i = 0; i < m.getSize(); i++) {
      out.put(keys.getString(i), values.isNullAt(i) ? null : values.getString(i));
    }
    return out;
  }
}
