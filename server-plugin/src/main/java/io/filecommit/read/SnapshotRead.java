package io.filecommit.read;

import io.filecommit.delta.ColumnMapping;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.ErrorClass;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The rows of a table at one snapshot (protocol "Action Reconciliation": the active files; Delta's
 * {@code TahoeLogFileIndex} read through {@code DeltaParquetFileFormat}). Without column mapping
 * and deletion vectors the read is Spark's Parquet file source over a {@link DeltaFileIndex} as it
 * is; otherwise a {@link TableRelation} of one part.
 */
final class SnapshotRead {
  private SnapshotRead() {}

  /**
   * The relation of a snapshot.
   *
   * @param session the session
   * @param log the table's log
   * @param snapshot an existing snapshot
   * @return the relation; its schema is the table's (logical names, table order)
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_UNSUPPORTED_FEATURES_FOR_READ}
   *     naming reader features this reader does not honour
   */
  static BaseRelation relation(SparkSession session, DeltaLog log, Snapshot snapshot) {
    checkReadable(snapshot, log);
    Metadata md = snapshot.metadata();
    boolean mapped = ColumnMapping.enabled(md);
    StructType schema = plain(md.schema());
    List<String> partitionColumns = partitionColumns(md);
    String root = log.tablePath().toString();

    List<IndexedFile> files = new ArrayList<>();
    Map<String, DeletionVectorDescriptor> dvs = new HashMap<>();
    for (AddFile f : snapshot.allFiles()) {
      String uri = DeltaFileIndex.qualified(log.fs(), log.tablePath(), f.path()).toUri().toString();
      files.add(new IndexedFile(f.path(), f.size(), f.modificationTime(), f.partitionValues(), f.stats(),
          new Object[0], uri));
      if (f.deletionVector() != null) {
        dvs.put(uri, f.deletionVector());
      }
    }
    StructType partitionSchema = partitionSchema(schema, partitionColumns, new StructField[0]);
    DeltaFileIndex index = new DeltaFileIndex(log.tablePath(), log.fs(), partitionSchema,
        physicalNames(md, partitionColumns), files, zone(session));
    if (!mapped && dvs.isEmpty()) {
      return new HadoopFsRelation(index, partitionSchema, schema, scala.Option.empty(), new ParquetFileFormat(),
          scala.collection.immutable.Map$.MODULE$.empty(), session);
    }
    StoredColumns stored = StoredColumns.of(md, schema, partitionColumns);
    HadoopFsRelation fsRelation = new HadoopFsRelation(index, partitionSchema, stored.dataSchema(), scala.Option.empty(),
        new ParquetFileFormat(), scala.collection.immutable.Map$.MODULE$.empty(), session);
    ScanPart part = new ScanPart(fsRelation, stored.columnOf(), root, log.conf(), dvs, Map.of(), false);
    return new TableRelation(session, schema, List.of(part));
  }

  /** Refuses a table whose reader features this reader does not honour. */
  static void checkReadable(Snapshot snapshot, DeltaLog log) {
    Set<String> unsupported = new TreeSet<>();
    for (String f : TableFeatures.readerFeatures(snapshot.protocol())) {
      if (!TableFeatures.SUPPORTED_READER.contains(f)) {
        unsupported.add(f);
      }
    }
    if (!unsupported.isEmpty()) {
      throw ErrorClass.DELTA_UNSUPPORTED_FEATURES_FOR_READ.error("Cannot read the Delta table at " + log.tablePath()
          + ": it needs reader feature(s) " + unsupported + " that filecommit does not support; supported: "
          + new TreeSet<>(TableFeatures.SUPPORTED_READER), Map.of("unsupported", String.join(", ", unsupported)));
    }
  }

  /** The schema without column metadata (Delta's column mapping and generation keys stay in the log). */
  static StructType plain(StructType schema) {
    StructField[] out = new StructField[schema.fields().length];
    for (int i = 0; i < out.length; i++) {
      StructField f = schema.fields()[i];
      out[i] = new StructField(f.name(), f.dataType(), true, org.apache.spark.sql.types.Metadata.empty());
    }
    return new StructType(out);
  }

  /** The partition columns as the schema spells them. */
  static List<String> partitionColumns(Metadata md) {
    List<String> out = new ArrayList<>();
    for (String p : md.partitionColumns()) {
      for (StructField f : md.schema().fields()) {
        if (f.name().equalsIgnoreCase(p)) {
          out.add(f.name());
        }
      }
    }
    return out;
  }

  /** The keys of the partition columns in {@code partitionValues}. */
  static List<String> physicalNames(Metadata md, List<String> partitionColumns) {
    List<String> out = new ArrayList<>();
    for (String p : partitionColumns) {
      out.add(ColumnMapping.physicalName(md, p));
    }
    return out;
  }

  /** The partition columns (logical names, types), then {@code constants}. */
  static StructType partitionSchema(StructType schema, List<String> partitionColumns, StructField[] constants) {
    List<StructField> out = new ArrayList<>();
    for (String p : partitionColumns) {
      out.add(schema.apply(p));
    }
    out.addAll(List.of(constants));
    return new StructType(out.toArray(new StructField[0]));
  }

  static ZoneId zone(SparkSession session) {
    return ZoneId.of(session.sessionState().conf().sessionLocalTimeZone());
  }
}
