package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.SetTransaction;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * V2 checkpoints with sidecars (protocol "V2 Spec", "Sidecar Files"): file actions in sidecars of
 * bounded size, non-file actions and one checkpointMetadata in the UUID-named checkpoint, and the
 * table read back by Delta Kernel from the checkpoint alone.
 */
class V2CheckpointsTest {
  private static final String SCHEMA = "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\","
      + "\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}";
  private static final Protocol V2 = new Protocol(3, 7, Set.of("v2Checkpoint"), Set.of("v2Checkpoint"));

  @TempDir
  Path tmp;

  private static AddFile add(String path) {
    return new AddFile(path, Map.of(), 10, 1, true, "{\"numRecords\":1}", Map.of());
  }

  /** Version 0: 7 files and a txn; version 1 removes two of them. */
  private DeltaLog table(Map<String, String> config) throws Exception {
    DeltaLog log = new DeltaLog(new org.apache.hadoop.fs.Path(tmp.toUri()), new Configuration());
    Metadata md = new Metadata("id-1", null, null, SCHEMA, List.of(), config, 0L);
    List<Action> v0 = new ArrayList<>(List.of(V2, md, new SetTransaction("app", 4, 1L)));
    for (int i = 0; i < 7; i++) {
      v0.add(add("f" + i + ".parquet"));
    }
    log.writeCommit(0, v0);
    log.writeCommit(1, List.<Action>of(add("f0.parquet").toRemove(System.currentTimeMillis()),
        add("f1.parquet").toRemove(System.currentTimeMillis())));
    return log;
  }

  private static List<JsonNode> lines(File f) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (String l : Files.readAllLines(f.toPath())) {
      out.add(Actions.MAPPER.readTree(l));
    }
    return out;
  }

  @Test
  void fileActionsGoToSidecarsOfBoundedSizeAndKernelReadsTheCheckpointAlone() throws Exception {
    DeltaLog log = table(Map.of("delta.checkpointPolicy", "v2"));
    io.delta.kernel.Snapshot ks = io.delta.kernel.Table.forPath(log.engine(), tmp.toString())
        .getSnapshotAsOfVersion(log.engine(), 1);
    V2Checkpoints.Written w = V2Checkpoints.write(log, ks, 1, 3);
    assertNotNull(w);
    assertEquals(7, w.fileActions(), "5 live adds and 2 tombstones");
    assertEquals(5, w.adds());
    assertEquals(3, w.sidecars().size(), "at most 3 actions per sidecar");
    long rows = 0;
    for (org.apache.hadoop.fs.Path s : w.sidecars()) {
      assertEquals("_sidecars", s.getParent().getName());
      try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(s, log.conf()))) {
        assertTrue(r.getRecordCount() <= 3);
        rows += r.getRecordCount();
        List<String> columns = r.getFooter().getFileMetaData().getSchema().getFields().stream()
            .map(org.apache.parquet.schema.Type::getName).toList();
        assertEquals(List.of("add", "remove"), columns, "sidecars hold file actions only");
      }
    }
    assertEquals(7, rows);
    String name = w.checkpoint().getName();
    assertTrue(name.matches("00000000000000000001\\.checkpoint\\.[0-9a-f-]{36}\\.json"), name);
    List<JsonNode> top = lines(new File(w.checkpoint().toUri()));
    assertEquals(1, top.get(0).path("checkpointMetadata").path("version").asLong());
    assertEquals(1, top.stream().filter(n -> n.has("checkpointMetadata")).count());
    assertEquals(1, top.stream().filter(n -> n.has("protocol")).count());
    assertEquals(1, top.stream().filter(n -> n.has("metaData")).count());
    assertEquals(1, top.stream().filter(n -> n.has("txn")).count());
    assertEquals(3, top.stream().filter(n -> n.has("sidecar")).count());
    assertFalse(top.stream().anyMatch(n -> n.has("add") || n.has("remove")), "no file action in the checkpoint");
    JsonNode last = lines(new File(tmp.toFile(), "_delta_log/_last_checkpoint")).get(0);
    assertEquals(1, last.path("version").asLong());
    assertEquals(top.size() + 7, last.path("size").asLong());
    assertEquals(5, last.path("numOfAddFiles").asLong());

    // Version 0's commit (the 7 adds) is gone: Kernel must rebuild version 1 from the checkpoint and
    // its sidecars (it keeps the commit file at the checkpoint's version, as metadata cleanup does).
    Files.delete(tmp.resolve("_delta_log/00000000000000000000.json"));
    log.invalidateCache();
    Snapshot s = log.snapshot();
    assertEquals(1, s.version());
    assertEquals(Set.of("f2.parquet", "f3.parquet", "f4.parquet", "f5.parquet", "f6.parquet"),
        s.activeFiles().keySet());
    assertEquals(4L, s.latestTransactionVersion("app").orElseThrow());
    assertNull(V2Checkpoints.write(log, ks, 1, 3), "a checkpoint of version 1 exists");
  }

  @Test
  void checkpointWritesV2OnlyUnderTheV2Policy() throws Exception {
    DeltaLog log = table(Map.of("delta.checkpointPolicy", "classic"));
    assertTrue(log.checkpoint(1));
    assertTrue(Files.exists(tmp.resolve("_delta_log/00000000000000000001.checkpoint.parquet")));
    assertFalse(Files.exists(tmp.resolve("_delta_log/_sidecars")));
    assertFalse(V2Checkpoints.applies(Protocol.DEFAULT, Map.of("delta.checkpointPolicy", "v2")),
        "no v2Checkpoint feature: classic");
    assertTrue(V2Checkpoints.applies(V2, Map.of("delta.checkpointPolicy", "v2")));
  }

  @Test
  void aV2PolicyTableGetsAUuidNamedCheckpointThroughDeltaLog() throws Exception {
    DeltaLog log = table(Map.of("delta.checkpointPolicy", "v2"));
    assertTrue(log.checkpoint(1));
    assertFalse(Files.exists(tmp.resolve("_delta_log/00000000000000000001.checkpoint.parquet")));
    File[] sidecars = tmp.resolve("_delta_log/_sidecars").toFile().listFiles((d, n) -> n.endsWith(".parquet"));
    assertEquals(1, sidecars.length, "7 file actions fit one sidecar of 50,000");
    assertFalse(log.checkpoint(1), "written once");
  }

  @Test
  void lastCheckpointChecksumFollowsTheProtocolsExample() throws Exception {
    // Protocol "JSON checksum": the example object and its checksum.
    JsonNode example = Actions.MAPPER.readTree("{\"k0\":\"'v 0'\", \"checksum\": \"adsaskfljadfkjadfkj\", "
        + "\"k1\":{\"k2\": 2, \"k3\": [\"v3\", [1, 2], {\"k4\": \"v4\", \"k5\": [\"v5\", \"v6\", \"v7\"]}]}}");
    assertEquals("6a92d155a59bf2eecbd4b4ec7fd1f875", LastCheckpointFile.checksum(example));
  }

  @Test
  void parquetCheckpointFileWithV2LastCheckpointAndKernelReadsItAlone() throws Exception {
    DeltaLog log = table(Map.of("delta.checkpointPolicy", "v2"));
    io.delta.kernel.Snapshot ks = io.delta.kernel.Table.forPath(log.engine(), tmp.toString())
        .getSnapshotAsOfVersion(log.engine(), 1);
    V2Checkpoints.Written w = V2Checkpoints.write(log, ks, 1, 3, true);
    assertNotNull(w);
    String name = w.checkpoint().getName();
    assertTrue(name.matches("00000000000000000001\\.checkpoint\\.[0-9a-f-]{36}\\.parquet"), name);
    try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(w.checkpoint(), log.conf()))) {
      List<String> columns = r.getFooter().getFileMetaData().getSchema().getFields().stream()
          .map(org.apache.parquet.schema.Type::getName).toList();
      assertTrue(columns.containsAll(List.of("txn", "metaData", "protocol", "checkpointMetadata", "sidecar")),
          columns.toString());
      assertEquals(1 + 3 + 3, r.getRecordCount(), "checkpointMetadata, protocol, metaData, txn and 3 sidecars");
    }
    JsonNode last = lines(new File(tmp.toFile(), "_delta_log/_last_checkpoint")).get(0);
    assertEquals(1, last.path("version").asLong());
    assertEquals(7 + 7, last.path("size").asLong());
    JsonNode v2 = last.path("v2Checkpoint");
    assertEquals(name, v2.path("path").asText());
    assertEquals(new File(w.checkpoint().toUri()).length(), v2.path("sizeInBytes").asLong());
    assertEquals(3, v2.path("sidecarFiles").size());
    assertEquals(4, v2.path("nonFileActions").size());
    long sidecarBytes = 0;
    for (org.apache.hadoop.fs.Path s : w.sidecars()) {
      sidecarBytes += new File(s.toUri()).length();
    }
    assertEquals(v2.path("sizeInBytes").asLong() + sidecarBytes, last.path("sizeInBytes").asLong());
    assertEquals(LastCheckpointFile.checksum(last), last.path("checksum").asText());

    Files.delete(tmp.resolve("_delta_log/00000000000000000000.json"));
    log.invalidateCache();
    Snapshot s = log.snapshot();
    assertEquals(Set.of("f2.parquet", "f3.parquet", "f4.parquet", "f5.parquet", "f6.parquet"),
        s.activeFiles().keySet());
    assertEquals(4L, s.latestTransactionVersion("app").orElseThrow());
  }

  @Test
  void cleanupDeletesOnlyOldUnreferencedSidecars() throws Exception {
    DeltaLog log = table(Map.of("delta.checkpointPolicy", "v2"));
    io.delta.kernel.Snapshot ks = io.delta.kernel.Table.forPath(log.engine(), tmp.toString())
        .getSnapshotAsOfVersion(log.engine(), 1);
    V2Checkpoints.Written kept = V2Checkpoints.write(log, ks, 1, 3, false);
    // A failed attempt: sidecars written, its checkpoint file never published.
    java.nio.file.Path sidecars = tmp.resolve("_delta_log/_sidecars");
    java.nio.file.Path orphanOld = sidecars.resolve("11111111-1111-1111-1111-111111111111.parquet");
    java.nio.file.Path orphanNew = sidecars.resolve("22222222-2222-2222-2222-222222222222.parquet");
    Files.copy(new File(kept.sidecars().get(0).toUri()).toPath(), orphanOld);
    Files.copy(new File(kept.sidecars().get(0).toUri()).toPath(), orphanNew);
    long old = System.currentTimeMillis() - 40L * 86_400_000L;
    for (org.apache.hadoop.fs.Path s : kept.sidecars()) {
      assertTrue(new File(s.toUri()).setLastModified(old));
    }
    assertTrue(orphanOld.toFile().setLastModified(old));
    long cutOff = SidecarCleanup.cutOff(System.currentTimeMillis(), 30L * 86_400_000L);
    assertEquals(1, SidecarCleanup.deleteUnreferenced(log, cutOff));
    assertFalse(Files.exists(orphanOld), "old and unreferenced");
    assertTrue(Files.exists(orphanNew), "unreferenced but within the retention: maybe in progress");
    for (org.apache.hadoop.fs.Path s : kept.sidecars()) {
      assertTrue(new File(s.toUri()).exists(), "old but referenced by a checkpoint");
    }
    // Once the checkpoint is gone, its old sidecars go too.
    Files.delete(new File(kept.checkpoint().toUri()).toPath());
    assertEquals(3, SidecarCleanup.deleteUnreferenced(log, cutOff));
    assertEquals(0, SidecarCleanup.cutOff(86_400_000L + 5, 5) % 86_400_000L, "midnight UTC");
  }
}
