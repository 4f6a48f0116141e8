package io.filecommit.delta;

import io.filecommit.testing.SparkTestSession;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.actions.AddFile;
import io.filecommit.actions.RemoveFile;
import io.filecommit.errors.FileCommitException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Transaction rules of {@link TransactionalWrite} and the log of {@link DeltaLog} (seed TransactionalWrite.txt). */
class TransactionalWriteTest {
  private static SparkSession spark;

  @TempDir
  Path tmp;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  private static final StructType SCHEMA = new StructType()
      .add("id", DataTypes.LongType).add("name", DataTypes.StringType).add("part", DataTypes.StringType);

  private DeltaLog log() {
    return new DeltaLog(new org.apache.hadoop.fs.Path(tmp.toUri()), new Configuration());
  }

  private static Metadata metadata(List<String> partitionColumns, Map<String, String> conf) {
    return new Metadata(UUID.randomUUID().toString(), null, null, SCHEMA.json(), partitionColumns, conf, 0L);
  }

  private static AddFile add(String path) {
    return new AddFile(path, Map.of(), 1, 1, true, null, Map.of());
  }

  private long createTable() {
    return createTable(Map.of());
  }

  private long createTable(Map<String, String> properties) {
    TransactionalWrite txn = new TransactionalWrite(spark, log());
    txn.updateMetadata(metadata(List.of("part"), properties));
    return txn.commit(List.of(), ActionJson.MAPPER.createObjectNode(), true);
  }

  @Test
  void concurrentBlindAppendsBothLandInConsecutiveVersions() {
    assertEquals(0, createTable());
    TransactionalWrite a = new TransactionalWrite(spark, log());
    TransactionalWrite b = new TransactionalWrite(spark, log());
    assertEquals(1, a.commit(List.of(add("a.parquet")), ActionJson.MAPPER.createObjectNode(), true));
    assertEquals(2, b.commit(List.of(add("b.parquet")), ActionJson.MAPPER.createObjectNode(), true));
    assertEquals(2, b.attempts());
    Snapshot s = log().snapshot();
    assertEquals(2, s.version());
    assertEquals(java.util.Set.of("a.parquet", "b.parquet"), s.activeFiles().keySet());
  }

  @Test
  void blindAppendConflictsWithConcurrentMetadataChange() {
    createTable();
    TransactionalWrite a = new TransactionalWrite(spark, log());
    TransactionalWrite b = new TransactionalWrite(spark, log());
    a.updateMetadata(a.metadata().withConfiguration(Map.of("delta.appendOnly", "true")));
    a.commit(List.of(), ActionJson.MAPPER.createObjectNode(), false);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> b.commit(List.of(add("b.parquet")), ActionJson.MAPPER.createObjectNode(), true));
    assertEquals("DELTA_METADATA_CHANGED", e.getCondition());
    assertEquals("1", e.getMessageParameters().get("version"));
    assertEquals(List.of(0L, 1L), log().listVersions(), "nothing committed by the loser");
  }

  @Test
  void overwriteConflictsWithConcurrentAppendUnderSerializable() {
    createTable(Map.of("delta.isolationLevel", "Serializable"));
    TransactionalWrite overwrite = new TransactionalWrite(spark, log());
    overwrite.readWholeTable();
    TransactionalWrite append = new TransactionalWrite(spark, log());
    append.commit(List.of(add("a.parquet")), ActionJson.MAPPER.createObjectNode(), true);
    FileCommitException e = assertThrows(FileCommitException.class, () -> overwrite.commit(
        List.of(add("o.parquet"), add("x.parquet").toRemove(5)), ActionJson.MAPPER.createObjectNode(), false));
    assertEquals("DELTA_CONCURRENT_APPEND", e.getCondition());
    assertEquals("2D521", e.getSqlState());
    assertEquals(List.of(0L, 1L), log().listVersions(), "nothing committed by the loser");
  }

  @Test
  void overwriteIsSerializedAfterBlindAppendUnderWriteSerializable() {
    createTable();
    TransactionalWrite overwrite = new TransactionalWrite(spark, log());
    overwrite.readWholeTable();
    TransactionalWrite append = new TransactionalWrite(spark, log());
    append.commit(List.of(add("a.parquet")), ActionJson.MAPPER.createObjectNode(), true);
    assertEquals(2, overwrite.commit(List.of(add("o.parquet")), ActionJson.MAPPER.createObjectNode(), false));
    assertEquals(java.util.Set.of("a.parquet", "o.parquet"), log().snapshot().activeFiles().keySet());
  }

  @Test
  void overwriteConflictsWithRemovalOfAFileItRead() {
    createTable();
    new TransactionalWrite(spark, log()).commit(List.of(add("c.parquet")), ActionJson.MAPPER.createObjectNode(), true);
    TransactionalWrite overwrite = new TransactionalWrite(spark, log());
    overwrite.readWholeTable();
    // A compaction: rewrites c.parquet without changing data.
    AddFile compacted = new AddFile("d.parquet", Map.of(), 1, 1, false, null, Map.of());
    RemoveFile gone = new RemoveFile("c.parquet", 5, false, true, Map.of(), 1L);
    new TransactionalWrite(spark, log()).commit(List.of(compacted, gone), ActionJson.MAPPER.createObjectNode(), false);
    FileCommitException e = assertThrows(FileCommitException.class, () -> overwrite.commit(
        List.of(add("o.parquet"), add("c.parquet").toRemove(5)), ActionJson.MAPPER.createObjectNode(), false));
    assertEquals("DELTA_CONCURRENT_DELETE_READ", e.getCondition());
  }

  @Test
  void blindAppendLandsThroughCompaction() {
    createTable();
    new TransactionalWrite(spark, log()).commit(List.of(add("c.parquet")), ActionJson.MAPPER.createObjectNode(), true);
    TransactionalWrite append = new TransactionalWrite(spark, log());
    AddFile compacted = new AddFile("d.parquet", Map.of(), 1, 1, false, null, Map.of());
    RemoveFile gone = new RemoveFile("c.parquet", 5, false, true, Map.of(), 1L);
    new TransactionalWrite(spark, log()).commit(List.of(compacted, gone), ActionJson.MAPPER.createObjectNode(), false);
    assertEquals(3, append.commit(List.of(add("e.parquet")), ActionJson.MAPPER.createObjectNode(), true));
    assertEquals(java.util.Set.of("d.parquet", "e.parquet"), log().snapshot().activeFiles().keySet());
  }

  @Test
  void sameApplicationTransactionCommitsOnce() {
    createTable();
    TransactionalWrite first = new TransactionalWrite(spark, log());
    TransactionalWrite second = new TransactionalWrite(spark, log());
    assertFalse(first.setTransaction("app", 3));
    assertFalse(second.setTransaction("app", 3));
    assertEquals(1, first.commit(List.of(add("a.parquet")), ActionJson.MAPPER.createObjectNode(), true));
    assertTrue(first.committed());
    assertEquals(1, second.commit(List.of(add("b.parquet")), ActionJson.MAPPER.createObjectNode(), true));
    assertFalse(second.committed(), "a duplicate of version 3 of 'app' is not committed again");
    assertEquals(List.of(0L, 1L), log().listVersions());
    assertEquals(java.util.Optional.of(3L), log().snapshot().latestTransactionVersion("app"));
    assertTrue(new TransactionalWrite(spark, log()).setTransaction("app", 3), "already applied");
    TransactionalWrite older = new TransactionalWrite(spark, log());
    TransactionalWrite newer = new TransactionalWrite(spark, log());
    older.setTransaction("app", 4);
    newer.setTransaction("app", 5);
    older.commit(List.of(add("o.parquet")), ActionJson.MAPPER.createObjectNode(), true);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> newer.commit(List.of(add("n.parquet")), ActionJson.MAPPER.createObjectNode(), true));
    assertEquals("DELTA_CONCURRENT_TRANSACTION", e.getCondition());
  }

  @Test
  void commitFilesAreCreatedOnlyIfAbsent() throws Exception {
    DeltaLog log = log();
    assertTrue(log.writeCommitIfAbsent(0, List.of("{\"commitInfo\":{\"n\":1}}")));
    assertFalse(log.writeCommitIfAbsent(0, List.of("{\"commitInfo\":{\"n\":2}}")));
    List<JsonNode> actions = log.readCommit(0);
    assertEquals(1, actions.get(0).at("/commitInfo/n").asInt(), "the first writer's content stays");
    assertEquals("00000000000000000000.json", DeltaLog.commitFileName(0));
    try (var files = Files.list(tmp.resolve("_delta_log"))) {
      assertEquals(List.of("00000000000000000000.json"), files.map(p -> p.getFileName().toString()).toList(),
          "no temporary files left behind");
    }
  }

  @Test
  void metadataChangesAreRefusedAfterWriting() {
    TransactionalWrite txn = new TransactionalWrite(spark, log());
    txn.updateMetadata(metadata(List.of("part"), Map.of()));
    Dataset<Row> data = (Dataset<Row>) spark.createDataFrame(
        List.of(RowFactory.create("x", 1L, "a"), RowFactory.create("y", 2L, "b")),
        new StructType().add("PART", DataTypes.StringType).add("Id", DataTypes.LongType).add("name", DataTypes.StringType));
    List<AddFile> adds = txn.writeFiles(data, Map.of());
    assertTrue(txn.hasWritten());
    assertEquals(2, adds.size());
    for (AddFile a : adds) {
      assertTrue(a.path().startsWith("part=" + a.partitionValues().get("part") + "/part-"), a.path());
    }
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> txn.updateMetadata(metadata(List.of(), Map.of())));
    assertTrue(e.getMessage().contains("hasWritten"), e.getMessage());
    // Normalized: the file holds the table's data columns in table order and case.
    Dataset<Row> back = (Dataset<Row>) spark.read().parquet(tmp.resolve(adds.get(0).path()).toString());
    assertEquals(List.of("id", "name"), List.of(back.schema().fieldNames()));
  }

  @Test
  void schemaAndPartitioningRules() {
    assertEquals("DELTA_PARTITION_COLUMN_NOT_FOUND", assertThrows(FileCommitException.class,
        () -> TransactionalWrite.validateSchemaAndPartitioning(SCHEMA, List.of("nope"))).getCondition());
    assertThrows(FileCommitException.class,
        () -> TransactionalWrite.validateSchemaAndPartitioning(SCHEMA, List.of("id", "name", "part")));
    assertThrows(FileCommitException.class,
        () -> TransactionalWrite.validateSchemaAndPartitioning(SCHEMA, List.of("part", "PART")));
    assertThrows(FileCommitException.class, () -> TransactionalWrite.validateSchemaAndPartitioning(
        SCHEMA.add("ID", DataTypes.LongType), List.of()));
    assertThrows(FileCommitException.class, () -> TransactionalWrite.validateSchemaAndPartitioning(
        new StructType().add("a b", DataTypes.LongType).add("c", DataTypes.LongType), List.of()));
    TransactionalWrite.validateSchemaAndPartitioning(SCHEMA, List.of("part", "name"));
  }

  @Test
  void changeDataFeedRaisesTheWriterVersion() {
    TransactionalWrite txn = new TransactionalWrite(spark, log());
    txn.updateMetadata(metadata(List.of(), Map.of(TableProperties.ENABLE_CDF, "true")));
    assertEquals(new Protocol(1, 4), txn.protocol());
    assertEquals("DELTA_ILLEGAL_OPTION", assertThrows(FileCommitException.class,
        () -> txn.updateMetadata(metadata(List.of(), Map.of("delta.enableChangeDataFeed", "yes")))).getCondition());
  }
}
