package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.actions.AddFile;
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
import org.junit.jupiter.api.AfterAll;
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
    spark = (SparkSession) org.apache.spark.sql.SparkSession.builder()
        .master("local[1]").config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
        .getOrCreate();
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
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
    TransactionalWrite txn = new TransactionalWrite(spark, log());
    txn.updateMetadata(metadata(List.of("part"), Map.of()));
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
    DeltaWriteException e = assertThrows(DeltaWriteException.class,
        () -> b.commit(List.of(add("b.parquet")), ActionJson.MAPPER.createObjectNode(), true));
    assertTrue(e.getMessage().contains("version 1"), e.getMessage());
    assertEquals(List.of(0L, 1L), log().listVersions(), "nothing committed by the loser");
  }

  @Test
  void overwriteConflictsWithConcurrentAppend() {
    createTable();
    TransactionalWrite overwrite = new TransactionalWrite(spark, log());
    TransactionalWrite append = new TransactionalWrite(spark, log());
    append.commit(List.of(add("a.parquet")), ActionJson.MAPPER.createObjectNode(), true);
    assertThrows(DeltaWriteException.class, () -> overwrite.commit(
        List.of(add("o.parquet"), add("x.parquet").toRemove(5)), ActionJson.MAPPER.createObjectNode(), false));
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
    assertThrows(IllegalArgumentException.class,
        () -> TransactionalWrite.validateSchemaAndPartitioning(SCHEMA, List.of("nope")));
    assertThrows(IllegalArgumentException.class,
        () -> TransactionalWrite.validateSchemaAndPartitioning(SCHEMA, List.of("id", "name", "part")));
    assertThrows(IllegalArgumentException.class,
        () -> TransactionalWrite.validateSchemaAndPartitioning(SCHEMA, List.of("part", "PART")));
    assertThrows(IllegalArgumentException.class, () -> TransactionalWrite.validateSchemaAndPartitioning(
        SCHEMA.add("ID", DataTypes.LongType), List.of()));
    assertThrows(IllegalArgumentException.class, () -> TransactionalWrite.validateSchemaAndPartitioning(
        new StructType().add("a b", DataTypes.LongType).add("c", DataTypes.LongType), List.of()));
    TransactionalWrite.validateSchemaAndPartitioning(SCHEMA, List.of("part", "name"));
  }

  @Test
  void changeDataFeedRaisesTheWriterVersion() {
    TransactionalWrite txn = new TransactionalWrite(spark, log());
    txn.updateMetadata(metadata(List.of(), Map.of(TableProperties.ENABLE_CDF, "true")));
    assertEquals(new Protocol(1, 4), txn.protocol());
    assertThrows(IllegalArgumentException.class,
        () -> txn.updateMetadata(metadata(List.of(), Map.of("delta.enableChangeDataFeed", "yes"))));
  }
}
