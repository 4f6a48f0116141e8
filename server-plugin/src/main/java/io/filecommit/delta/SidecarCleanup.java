package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.engine.FileReadResult;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.filecommit.delta.actions.Actions;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * Deletes the sidecar files no checkpoint references any more (protocol "Metadata Cleanup", steps 4
 * and 5; Delta's {@code MetadataCleanup.identifyAndDeleteUnreferencedSidecarFiles}): the sidecars of
 * checkpoints that metadata cleanup deleted, and those of checkpoint attempts that failed before
 * their checkpoint file was published. A file in {@code _delta_log/_sidecars} is deleted only when
 * it was last modified before the cut-off (midnight UTC of {@code now - delta.logRetentionDuration},
 * so an attempt in progress keeps its files) and no checkpoint file in {@code _delta_log} (JSON or
 * Parquet, UUID-named or classic single-file) lists it in a {@code sidecar} action. When a
 * checkpoint file cannot be read, nothing is deleted.
 */
final class SidecarCleanup {
  /** Checkpoint files that may hold sidecar actions: UUID-named and classic single-file. */
  private static final Pattern CHECKPOINT = Pattern.compile(
      "\\d{20}\\.checkpoint(\\.[0-9a-fA-F-]{36})?\\.(json|parquet)");
  private static final StructType SIDECAR_PATH = new StructType()
      .add("sidecar", new StructType().add("path", StringType.STRING));

  private SidecarCleanup() {}

  /**
   * The cut-off of sidecar files: {@code now - retentionMs}, truncated to midnight UTC (as Delta's
   * metadata cleanup truncates it to the day).
   *
   * @param nowMs the current time, ms since epoch
   * @param retentionMs the log retention, ms (>= 0)
   * @return the cut-off, ms since epoch; files modified before it may go
   */
  static long cutOff(long nowMs, long retentionMs) {
    return Instant.ofEpochMilli(nowMs - retentionMs).atZone(ZoneOffset.UTC).truncatedTo(ChronoUnit.DAYS)
        .toInstant().toEpochMilli();
  }

  /**
   * Deletes the unreferenced sidecar files last modified before {@code cutOffMs}.
   *
   * @param log the table's log
   * @param cutOffMs the cut-off, ms since epoch ({@link #cutOff})
   * @return the number of sidecar files deleted
   * @throws IOException when listing or reading the log fails (then nothing was deleted) or a delete fails
   */
  static long deleteUnreferenced(DeltaLog log, long cutOffMs) throws IOException {
    Path dir = new Path(log.logPath(), "_sidecars");
    if (!log.fs().exists(dir)) {
      return 0;
    }
    List<FileStatus> old = new ArrayList<>();
    for (FileStatus f : log.fs().listStatus(dir)) {
      if (f.isFile() && f.getModificationTime() < cutOffMs) {
        old.add(f);
      }
    }
    if (old.isEmpty()) {
      return 0;
    }
    Set<String> referenced = referenced(log);
    long deleted = 0;
    for (FileStatus f : old) {
      if (!referenced.contains(f.getPath().getName()) && log.fs().delete(f.getPath(), false)) {
        deleted++;
      }
    }
    return deleted;
  }

  /** The file names of the sidecars every checkpoint file in the log lists. */
  private static Set<String> referenced(DeltaLog log) throws IOException {
    Set<String> names = new HashSet<>();
    for (FileStatus f : log.fs().listStatus(log.logPath())) {
      String name = f.getPath().getName();
      if (!f.isFile() || !CHECKPOINT.matcher(name).matches()) {
        continue;
      }
      if (name.endsWith(".json")) {
        try (io.delta.storage.CloseableIterator<String> lines = log.logStore().read(f.getPath(), log.conf())) {
          while (lines.hasNext()) {
            JsonNode path = Actions.MAPPER.readTree(lines.next()).path("sidecar").path("path");
            if (path.isTextual()) {
              names.add(new Path(path.asText()).getName());
            }
          }
        }
      } else {
        readParquet(log, f, names);
      }
    }
    return names;
  }

  private static void readParquet(DeltaLog log, FileStatus f, Set<String> names) throws IOException {
    io.delta.kernel.utils.FileStatus file = io.delta.kernel.utils.FileStatus.of(f.getPath().toString(), f.getLen(),
        f.getModificationTime());
    try (CloseableIterator<FileReadResult> results = log.engine().getParquetHandler().readParquetFiles(
        V2TopLevelParquet.one(file), SIDECAR_PATH, Optional.empty())) {
      while (results.hasNext()) {
        ColumnarBatch batch = results.next().getData();
        ColumnVector sidecar = batch.getColumnVector(0);
        ColumnVector path = sidecar.getChild(0);
        for (int r = 0; r < batch.getSize(); r++) {
          if (!sidecar.isNullAt(r) && !path.isNullAt(r)) {
            names.add(new Path(path.getString(r)).getName());
          }
        }
      }
    }
  }
}
