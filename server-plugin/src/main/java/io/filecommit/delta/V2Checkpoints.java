package io.filecommit.delta;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.filecommit.delta.actions.Actions;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * Writes UUID-named V2 checkpoints with sidecar files (protocol "V2 Spec", "UUID-named checkpoint",
 * "Sidecar Files", "Sidecar File Information", "Checkpoint Metadata"), as Delta's {@code
 * Checkpoints.writeCheckpoint} does for tables with {@code delta.checkpointPolicy = v2}: the file
 * actions ({@code add}, {@code remove}) go into Parquet sidecars of at most {@link
 * #ACTIONS_PER_SIDECAR} actions each in {@code _delta_log/_sidecars/<uuid>.parquet}, written by
 * Delta Kernel's Parquet writer from Kernel's checkpoint iterator ({@link
 * KernelInternals#checkpointActions}); then the checkpoint file {@code
 * <version>.checkpoint.<uuid>.json} holds one {@code checkpointMetadata}, the non-file actions
 * ({@code protocol}, {@code metaData}, {@code txn}, {@code domainMetadata}, serialized by Kernel)
 * and one {@code sidecar} action per sidecar; last, {@code _last_checkpoint} (protocol "Last
 * Checkpoint File Schema").
 *
 * <p>Kernel 4.4 writes classic checkpoints only ({@code Table.checkpoint}), hence this class. The
 * checkpoint file is published put-if-absent after every sidecar is complete, so a reader never
 * sees a checkpoint whose sidecars are missing; sidecars of a failed attempt stay unreferenced.
 * The checkpoint file is JSON (the protocol allows JSON or Parquet): it holds a few lines, and the
 * table's log store publishes it as it publishes commits. Memory: one Kernel batch at a time.
 */
final class V2Checkpoints {
  /** Most file actions in one sidecar file (Delta's default sidecar size). */
  static final int ACTIONS_PER_SIDECAR = 50_000;
  /** Table property choosing the checkpoint kind ({@code classic} or {@code v2}; Delta's name). */
  static final String CHECKPOINT_POLICY = "delta.checkpointPolicy";
  /** Delta's SQL conf choosing the checkpoint file's format ({@code json}, the default, or {@code parquet}). */
  static final String TOP_LEVEL_FORMAT = "spark.databricks.delta.checkpointV2.topLevelFileFormat";

  private V2Checkpoints() {}

  /**
   * Whether checkpoints of a table are V2 checkpoints: the {@code v2Checkpoint} feature is
   * supported and {@code delta.checkpointPolicy} is {@code v2} (as Delta decides).
   *
   * @param protocol the table's protocol
   * @param configuration the table's properties
   * @return true for a V2 checkpoint
   */
  static boolean applies(io.filecommit.delta.actions.Protocol protocol, Map<String, String> configuration) {
    return TableFeatures.writerFeatures(protocol).contains("v2Checkpoint")
        && "v2".equalsIgnoreCase(configuration.getOrDefault(CHECKPOINT_POLICY, "classic").trim());
  }

  /**
   * What a V2 checkpoint write produced.
   *
   * @param checkpoint the checkpoint file
   * @param sidecars the sidecar files, in the order the checkpoint lists them
   * @param fileActions add and remove actions written to sidecars
   * @param adds add actions among them
   * @param size all actions of the checkpoint: its own lines plus the sidecars' rows
   */
  record Written(Path checkpoint, List<Path> sidecars, long fileActions, long adds, long size) {}

  /**
   * Writes a V2 checkpoint of {@code snapshot} at {@code version}, then {@code _last_checkpoint},
   * its checkpoint file in the format {@link #parquetTopLevel} picks from the table's configuration.
   *
   * @param log the table's log
   * @param snapshot Kernel's snapshot at {@code version}
   * @param version the version
   * @param actionsPerSidecar most file actions per sidecar (> 0)
   * @return what was written, or null when a checkpoint of {@code version} already existed
   * @throws IOException when writing fails (nothing references the sidecars written so far)
   */
  static Written write(DeltaLog log, io.delta.kernel.Snapshot snapshot, long version, int actionsPerSidecar)
      throws IOException {
    return write(log, snapshot, version, actionsPerSidecar, parquetTopLevel(log.conf()));
  }

  /**
   * Whether the checkpoint file of a V2 checkpoint is Parquet: Delta's SQL conf {@link
   * #TOP_LEVEL_FORMAT} ({@code json} or {@code parquet}; unset or anything else: JSON, Delta 4.4's
   * default in {@code Checkpoints.getV2CheckpointFormatOpt}), read from the Hadoop configuration
   * the session's SQL conf is copied into.
   *
   * @param conf the log's configuration
   * @return true for Parquet
   */
  static boolean parquetTopLevel(org.apache.hadoop.conf.Configuration conf) {
    return "parquet".equalsIgnoreCase(conf.get(TOP_LEVEL_FORMAT, "json").trim());
  }

  /**
   * Writes a V2 checkpoint of {@code snapshot} at {@code version} with a JSON or Parquet checkpoint
   * file, then {@code _last_checkpoint}.
   *
   * @param log the table's log
   * @param snapshot Kernel's snapshot at {@code version}
   * @param version the version
   * @param actionsPerSidecar most file actions per sidecar (> 0)
   * @param parquet true for a {@code .parquet} checkpoint file (Kernel's Parquet writer), false for JSON
   * @return what was written, or null when a checkpoint of {@code version} already existed
   * @throws IOException when writing fails (nothing references the sidecars written so far)
   */
  static Written write(DeltaLog log, io.delta.kernel.Snapshot snapshot, long version, int actionsPerSidecar,
      boolean parquet) throws IOException {
    if (exists(log, version)) {
      return null;
    }
    String name = String.format("%020d.checkpoint.%s.%s", version, UUID.randomUUID(), parquet ? "parquet" : "json");
    return writeAs(log, snapshot, version, actionsPerSidecar, new Path(log.logPath(), name), true);
  }

  /**
   * Writes a classic-named V2 checkpoint {@code <version>.checkpoint.parquet} beside a UUID-named
   * one (protocol "Handling Backward compatibility while moving to UUID-named v2 Checkpoints"; Delta's
   * {@code MetadataCleanup.createSinglePartCheckpointForBackwardCompat}): the same actions, its own
   * sidecars, so clients that do not know UUID-named checkpoints find the protocol and fail
   * gracefully. {@code _last_checkpoint} is left as it is.
   *
   * @param log the table's log
   * @param snapshot Kernel's snapshot at {@code version}
   * @param version the version of the UUID-named checkpoint
   * @return what was written, or null when a classic-named checkpoint of {@code version} existed
   * @throws IOException when writing fails
   */
  static Written writeCompatibility(DeltaLog log, io.delta.kernel.Snapshot snapshot, long version) throws IOException {
    Path classic = new Path(log.logPath(), String.format("%020d.checkpoint.parquet", version));
    if (log.fs().exists(classic)) {
      return null;
    }
    return writeAs(log, snapshot, version, ACTIONS_PER_SIDECAR, classic, false);
  }

  private static Written writeAs(DeltaLog log, io.delta.kernel.Snapshot snapshot, long version, int actionsPerSidecar,
      Path checkpoint, boolean lastCheckpoint) throws IOException {
    boolean parquet = checkpoint.getName().endsWith(".parquet");
    Engine engine = log.engine();
    Path sidecarDir = new Path(log.logPath(), "_sidecars");
    List<Path> sidecars = new ArrayList<>();
    List<String> sidecarLines = new ArrayList<>();
    List<String> nonFile;
    long fileActions;
    long adds;
    long sidecarBytes = 0;
    StructType sourceSchema;
    try (SidecarSplitter split = new SidecarSplitter(KernelInternals.checkpointActions(engine, snapshot))) {
      while (split.hasFileActions()) {
        Path sidecar = new Path(sidecarDir, UUID.randomUUID() + ".parquet");
        try (CloseableIterator<io.delta.kernel.data.FilteredColumnarBatch> chunk = split.nextChunk(actionsPerSidecar)) {
          engine.getParquetHandler().writeParquetFileAtomically(sidecar.toString(), chunk);
        }
        FileStatus st = log.fs().getFileStatus(sidecar);
        sidecars.add(sidecar);
        sidecarBytes += st.getLen();
        ObjectNode s = Actions.MAPPER.createObjectNode();
        s.putObject("sidecar").put("path", sidecar.getName()).put("sizeInBytes", st.getLen())
            .put("modificationTime", st.getModificationTime());
        sidecarLines.add(Actions.MAPPER.writeValueAsString(s));
      }
      split.drain();
      nonFile = split.nonFileActions();
      fileActions = split.fileActions();
      adds = split.adds();
      sourceSchema = split.schema();
    }
    ObjectNode meta = Actions.MAPPER.createObjectNode();
    ObjectNode cm = meta.putObject("checkpointMetadata").put("version", version);
    ObjectNode tags = cm.putObject("tags");
    tags.put("sidecarNumActions", Long.toString(fileActions));
    tags.put("sidecarSizeInBytes", Long.toString(sidecarBytes));
    tags.put("numOfAddFiles", Long.toString(adds));
    if (sourceSchema != null && sourceSchema.indexOf("add") >= 0 && sourceSchema.indexOf("remove") >= 0) {
      tags.put("sidecarFileSchema", new StructType().add(sourceSchema.get("add")).add(sourceSchema.get("remove")).toJson());
    }
    List<String> lines = new ArrayList<>();
    lines.add(Actions.MAPPER.writeValueAsString(meta));
    lines.addAll(nonFile);
    lines.addAll(sidecarLines);
    try {
      if (parquet) {
        V2TopLevelParquet.write(engine, checkpoint, sourceSchema, lines);
      } else {
        log.logStore().write(checkpoint, lines.iterator(), false, log.conf());
      }
    } catch (FileAlreadyExistsException | org.apache.hadoop.fs.FileAlreadyExistsException e) {
      return null;
    }
    long size = lines.size() + fileActions;
    FileStatus top = log.fs().getFileStatus(checkpoint);
    if (lastCheckpoint) {
      List<String> nonFileWithMeta = new ArrayList<>(lines.subList(0, lines.size() - sidecarLines.size()));
      LastCheckpointFile.writeV2(log, version, size, top.getLen() + sidecarBytes, adds, top, nonFileWithMeta,
          sidecarLines);
    }
    return new Written(checkpoint, sidecars, fileActions, adds, size);
  }

  /**
   * The version of the newest UUID-named checkpoint in the log that has no classic-named checkpoint
   * beside it, when some commit before it was last modified before {@code cutOffMs} (metadata
   * cleanup is about to delete files: Delta writes its compatibility checkpoint then).
   *
   * @param log the table's log
   * @param cutOffMs files modified before it expire, ms since epoch
   * @return the version, or -1
   * @throws IOException when listing fails
   */
  static long compatibilityNeeded(DeltaLog log, long cutOffMs) throws IOException {
    long newest = -1;
    boolean classicAtNewest = false;
    long oldestExpiredCommit = Long.MAX_VALUE;
    for (FileStatus f : log.fs().listStatus(log.logPath())) {
      String n = f.getPath().getName();
      if (n.length() < 21 || !n.substring(0, 20).chars().allMatch(Character::isDigit)) {
        continue;
      }
      long v = Long.parseLong(n.substring(0, 20));
      if (n.matches("\\d{20}\\.checkpoint\\.[0-9a-fA-F-]{36}\\.(json|parquet)") && v > newest) {
        newest = v;
        classicAtNewest = log.fs().exists(new Path(log.logPath(), String.format("%020d.checkpoint.parquet", v)));
      } else if (n.endsWith(".json") && n.length() == 25 && f.getModificationTime() < cutOffMs) {
        oldestExpiredCommit = Math.min(oldestExpiredCommit, v);
      }
    }
    return newest >= 0 && !classicAtNewest && oldestExpiredCommit < newest ? newest : -1;
  }

  /** Whether any checkpoint of {@code version} (classic, multi-part or UUID-named) exists. */
  private static boolean exists(DeltaLog log, long version) throws IOException {
    FileStatus[] found = log.fs().globStatus(new Path(log.logPath(), String.format("%020d.checkpoint*", version)));
    return found != null && found.length > 0;
  }
}
