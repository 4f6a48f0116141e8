package io.filecommit.read;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The change data feed of a range of versions (protocol "Change Data Files", Delta's {@code
 * CDCReader}): the table's columns (schema of the range's last version) plus {@code _change_type}
 * ({@code insert}, {@code delete}, {@code update_preimage}, {@code update_postimage}), {@code
 * _commit_version} (long) and {@code _commit_timestamp} (timestamp, the commit's timestamp as
 * {@link CommitTimestamps} gives it). A version with {@code cdc} actions reads them; a version
 * without derives its changes from its {@code add} / {@code remove} actions with {@code
 * dataChange = true}: an added file's rows are inserts, a removed file's rows deletes (both
 * without the rows their own deletion vector marks); a file removed and added again in one commit
 * with a new deletion vector yields as deletes the rows the new vector marks and the old did not.
 */
final class ChangeFeed {
  /** Column of the change type. */
  static final String CHANGE_TYPE = "_change_type";
  /** Column of the commit version. */
  static final String VERSION = "_commit_version";
  /** Column of the commit timestamp. */
  static final String TIMESTAMP = "_commit_timestamp";

  private ChangeFeed() {}

  /**
   * The relation of the changes of versions {@code start..end}.
   *
   * @param session the session
   * @param log the table's log
   * @param start first version (inclusive)
   * @param end last version (inclusive), at most the latest
   * @param timestamps commit timestamps of the versions in the log
   * @return the relation
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MISSING_CHANGE_DATA} when the
   *     feed is not enabled at some version of the range, {@code DELTA_LOG_FILE_NOT_FOUND} when a
   *     commit of the range is no longer in the log
   */
  static BaseRelation relation(SparkSession session, DeltaLog log, long start, long end,
      TreeMap<Long, Long> timestamps) {
    for (long v = start; v <= end; v++) {
      if (!timestamps.containsKey(v)) {
        throw ErrorClass.DELTA_LOG_FILE_NOT_FOUND.error("Cannot read the change data feed of " + log.tablePath()
            + " from version " + start + " to " + end + ": commit " + v + " is no longer in the log (commits available: "
            + timestamps.firstKey() + " to " + timestamps.lastKey() + ")", Map.of("version", String.valueOf(v),
            "logPath", log.logPath().toString()));
      }
    }
    Snapshot atStart = log.snapshotAsOfVersion(start);
    Snapshot atEnd = log.snapshotAsOfVersion(end);
    SnapshotRead.checkReadable(atEnd, log);
    Metadata md = atEnd.metadata();
    if (!cdfEnabled(atStart.metadata())) {
      throw missing(log, start, start, end);
    }
    StructType tableSchema = SnapshotRead.plain(md.schema());
    List<String> partitionColumns = SnapshotRead.partitionColumns(md);
    StoredColumns stored = StoredColumns.of(md, tableSchema, partitionColumns);

    List<IndexedFile> changes = new ArrayList<>();
    List<IndexedFile> cdcFiles = new ArrayList<>();
    Map<String, DeletionVectorDescriptor> drop = new HashMap<>();
    Map<String, DeletionVectorDescriptor> keepOnly = new HashMap<>();
    for (long v = start; v <= end; v++) {
      List<Action> actions = log.readCommit(v);
      long micros = timestamps.get(v) * 1000L;
      Map<String, AddFile> adds = new LinkedHashMap<>();
      Map<String, RemoveFile> removes = new LinkedHashMap<>();
      boolean hasCdc = false;
      for (Action a : actions) {
        if (a instanceof Metadata m && v > start && !cdfEnabled(m)) {
          throw missing(log, v, start, end);
        } else if (a instanceof AddCDCFile c) {
          hasCdc = true;
          cdcFiles.add(new IndexedFile(c.path(), c.size(), 0, c.partitionValues(), null, new Object[] {v, micros}, null));
        } else if (a instanceof AddFile f && f.dataChange()) {
          adds.put(f.path(), f);
        } else if (a instanceof RemoveFile r && r.dataChange()) {
          removes.put(r.path(), r);
        }
      }
      if (hasCdc) {
        continue;
      }
      for (AddFile f : adds.values()) {
        RemoveFile r = removes.get(f.path());
        String uri = uri(log, f.path());
        if (r == null) {
          String key = ScanPart.changeKey(uri, v, "insert");
          changes.add(entry(f.path(), f.size(), f.partitionValues(), f.stats(), "insert", v, micros, key));
          if (f.deletionVector() != null) {
            drop.put(key, f.deletionVector());
          }
        } else if (f.deletionVector() != null && !Objects.equals(f.deletionVector(), r.deletionVector())) {
          String key = ScanPart.changeKey(uri, v, "delete");
          changes.add(entry(f.path(), f.size(), f.partitionValues(), null, "delete", v, micros, key));
          if (r.deletionVector() != null) {
            drop.put(key, r.deletionVector());
          }
          keepOnly.put(key, f.deletionVector());
        }
      }
      for (RemoveFile r : removes.values()) {
        if (adds.containsKey(r.path())) {
          continue;
        }
        String key = ScanPart.changeKey(uri(log, r.path()), v, "delete");
        long size = r.size() != null ? r.size() : fileSize(log, r.path());
        changes.add(entry(r.path(), size, r.partitionValues(), null, "delete", v, micros, key));
        if (r.deletionVector() != null) {
          drop.put(key, r.deletionVector());
        }
      }
    }

    StructField typeField = new StructField(CHANGE_TYPE, DataTypes.StringType, true,
        org.apache.spark.sql.types.Metadata.empty());
    StructField versionField = new StructField(VERSION, DataTypes.LongType, true,
        org.apache.spark.sql.types.Metadata.empty());
    StructField tsField = new StructField(TIMESTAMP, DataTypes.TimestampType, true,
        org.apache.spark.sql.types.Metadata.empty());
    StructType schema = tableSchema.add(typeField).add(versionField).add(tsField);
    Map<String, String> columnOf = new HashMap<>(stored.columnOf());
    columnOf.put(CHANGE_TYPE, CHANGE_TYPE);
    columnOf.put(VERSION, VERSION);
    columnOf.put(TIMESTAMP, TIMESTAMP);
    List<String> physical = SnapshotRead.physicalNames(md, partitionColumns);
    String root = log.tablePath().toString();

    List<ScanPart> parts = new ArrayList<>();
    if (!changes.isEmpty() || cdcFiles.isEmpty()) {
      StructType ps = SnapshotRead.partitionSchema(tableSchema, partitionColumns,
          new StructField[] {typeField, versionField, tsField});
      DeltaFileIndex index = new DeltaFileIndex(log.tablePath(), log.fs(), ps, physical, changes,
          SnapshotRead.zone(session));
      parts.add(new ScanPart(fsRelation(session, index, ps, stored.dataSchema()), columnOf, root, log.conf(), drop,
          keepOnly, true));
    }
    if (!cdcFiles.isEmpty()) {
      StructType ps = SnapshotRead.partitionSchema(tableSchema, partitionColumns,
          new StructField[] {versionField, tsField});
      DeltaFileIndex index = new DeltaFileIndex(log.tablePath(), log.fs(), ps, physical, cdcFiles,
          SnapshotRead.zone(session));
      parts.add(new ScanPart(fsRelation(session, index, ps, stored.with(typeField)), columnOf, root, log.conf(),
          Map.of(), Map.of(), false));
    }
    return new TableRelation(session, schema, parts);
  }

  private static IndexedFile entry(String path, long size, Map<String, String> pv, String stats, String type,
      long version, long micros, String key) {
    return new IndexedFile(path, size, 0, pv, stats, new Object[] {UTF8String.fromString(type), version, micros}, key);
  }

  private static HadoopFsRelation fsRelation(SparkSession session, DeltaFileIndex index, StructType partitionSchema,
      StructType dataSchema) {
    return new HadoopFsRelation(index, partitionSchema, dataSchema, scala.Option.empty(), new ParquetFileFormat(),
        scala.collection.immutable.Map$.MODULE$.empty(), session);
  }

  private static String uri(DeltaLog log, String path) {
    return DeltaFileIndex.qualified(log.fs(), log.tablePath(), path).toUri().toString();
  }

  private static long fileSize(DeltaLog log, String path) {
    try {
      return log.fs().getFileStatus(log.absolutePath(path)).getLen();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the size of removed file " + path + " of " + log.tablePath(), e);
    }
  }

  static boolean cdfEnabled(Metadata md) {
    return TableConfig.ENABLE_CHANGE_DATA_FEED.fromMetadata(md);
  }

  private static RuntimeException missing(DeltaLog log, long version, long start, long end) {
    return ErrorClass.DELTA_MISSING_CHANGE_DATA.error("Error getting change data for range [" + start + ", " + end
        + "] of " + log.tablePath() + " as change data was not recorded for version [" + version
        + "]; enable the change data feed with delta.enableChangeDataFeed = true", Map.of("version",
        String.valueOf(version)));
  }
}
