package io.filecommit.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.FileCommitException;
import io.filecommit.files.TransactionalWrite;
import io.filecommit.schema.SchemaUtils;
import io.filecommit.testing.SparkTestSession;
import io.filecommit.txn.staging.StageRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
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

/** Transaction rules of {@link OptimisticTransaction} and the log of {@link DeltaLog} (Delta's OptimisticTransaction). */
class OptimisticTransactionTest {
  private static final Operation APPEND = new Operation.Write("Append", List.of(), null, 0, 0, 0, 0, 0);
  private static final Operation OVERWRITE = new Operation.Write("Overwrite", List.of(), null, 0, 0, 0, 0, 0);

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
    OptimisticTransaction txn = new OptimisticTransaction(spark, log());
    txn.updateMetadata(metadata(List.of("part"), properties));
    return txn.commit(List.of(), APPEND);
  }

  /** A hook that records the versions it saw and then fails, as a broken hook might. */
  private static final class RecordingHook implements PostCommitHook {
    final List<Long> versions = new java.util.ArrayList<>();

    @Override
    public String name() {
      return "recording";
    }

    @Override
    public void run(PostCommitHook.Committed c) {
      versions.add(c.version());
      assertEquals(1, c.actions().size());
      throw new IllegalStateException("a failing hook");
    }
  }

  @Test
  void registeredHooksRunOnceAfterTheirCommitLandedAndNeverFailIt() {
    createTable();
    RecordingHook hook = new RecordingHook();
    OptimisticTransaction txn = new OptimisticTransaction(spark, log());
    txn.registerPostCommitHook(hook);
    txn.registerPostCommitHook(hook);
    assertEquals(1, txn.commit(List.of(add("a.parquet")), APPEND)); // the hook's failure is logged, not raised
    assertEquals(List.of(1L), hook.versions);
    // A staged commit lands nothing: its hooks do not run.
    RecordingHook staged = new RecordingHook();
    OptimisticTransaction stage = new OptimisticTransaction(spark, log());
    stage.registerPostCommitHook(staged);
    stage.stageInstead(new StageRequest(3_600_000L));
    stage.commit(List.of(add("b.parquet")), APPEND);
    assertEquals(List.of(), staged.versions);
  }

  @Test
  void concurrentBlindAppendsBothLandInConsecutiveVersions() throws Exception {
    assertEquals(0, createTable());
    OptimisticTransaction b = new OptimisticTransaction(spark, log());
    // Version 1 by another server (no cache or committer of this one knows it): b loses the race for it.
    long ts = System.currentTimeMillis();
    log().writeCommit(1, List.of(new CommitInfo(ts, ts, "WRITE", Map.of(), 0L, "WriteSerializable", true, null, "test",
        UUID.randomUUID().toString()), add("a.parquet")));
    assertEquals(2, b.commit(List.of(add("b.parquet")), APPEND));
    assertEquals(2, b.attempts());
    Snapshot s = log().snapshot();
    assertEquals(2, s.version());
    assertEquals(java.util.Set.of("a.parquet", "b.parquet"), s.activeFiles().keySet());
  }

  @Test
  void aCommitThisServerKnowsIsJudgedBeforeTheFirstAttempt() {
    assertEquals(0, createTable());
    OptimisticTransaction a = new OptimisticTransaction(spark, log());
    OptimisticTransaction b = new OptimisticTransaction(spark, log());
    OptimisticTransaction c = new OptimisticTransaction(spark, log());
    assertEquals(1, a.commit(List.of(add("a.parquet")), APPEND));
    assertEquals(1, log().latestKnownVersion(-1));
    assertEquals(2, b.commit(List.of(add("b.parquet")), APPEND));
    assertEquals(1, b.attempts(), "version 1 was judged, not raced for");
    // A known commit that conflicts fails the transaction exactly as a lost race would.
    OptimisticTransaction d = new OptimisticTransaction(spark, log());
    d.updateMetadata(d.metadata().withConfiguration(Map.of("delta.appendOnly", "true")));
    assertEquals(3, d.commit(List.of(), OVERWRITE));
    assertEquals(3, log().latestKnownVersion(-1));
    FileCommitException e = assertThrows(FileCommitException.class, () -> c.commit(List.of(add("c.parquet")), APPEND));
    assertEquals("DELTA_METADATA_CHANGED", e.getCondition());
    assertEquals("3", e.getMessageParameters().get("version"));
    assertEquals(3, log().snapshot().version(), "nothing committed by c");
  }

  @Test
  void blindAppendConflictsWithConcurrentMetadataChange() {
    createTable();
    OptimisticTransaction a = new OptimisticTransaction(spark, log());
    OptimisticTransaction b = new OptimisticTransaction(spark, log());
    a.updateMetadata(a.metadata().withConfiguration(Map.of("delta.appendOnly", "true")));
    a.commit(List.of(), OVERWRITE);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> b.commit(List.of(add("b.parquet")), APPEND));
    assertEquals("DELTA_METADATA_CHANGED", e.getCondition());
    assertEquals("1", e.getMessageParameters().get("version"));
    assertEquals(List.of(0L, 1L), log().listVersions(), "nothing committed by the loser");
  }

  @Test
  void concurrentClusteringChangesConflictAndAnAppendDoesNot() {
    OptimisticTransaction create = new OptimisticTransaction(spark, log());
    create.updateMetadata(metadata(List.of(), Map.of()));
    Set<String> features = Set.of("clustering");
    create.updateDomainMetadata(new DomainMetadata("delta.clustering", "{\"clusteringColumns\":[[\"id\"]]}", false),
        features);
    assertEquals(0, create.commit(List.of(), APPEND));
    assertTrue(log().snapshot().protocol().writerFeatures().containsAll(Set.of("clustering", "domainMetadata")));
    OptimisticTransaction a = new OptimisticTransaction(spark, log());
    OptimisticTransaction b = new OptimisticTransaction(spark, log());
    OptimisticTransaction append = new OptimisticTransaction(spark, log());
    a.updateDomainMetadata(new DomainMetadata("delta.clustering", "{\"clusteringColumns\":[[\"name\"]]}", false),
        features);
    b.updateDomainMetadata(new DomainMetadata("delta.clustering", "{\"clusteringColumns\":[]}", false), features);
    assertEquals(1, a.commit(List.of(), new Operation.ClusterBy(List.of("id"), List.of("name"))));
    assertEquals(2, append.commit(List.of(add("c.parquet")), APPEND), "an append does not touch the domain");
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> b.commit(List.of(), new Operation.ClusterBy(List.of("id"), List.of())));
    assertEquals("DELTA_CONCURRENT_TRANSACTION", e.getCondition());
    assertEquals(List.of(0L, 1L, 2L), log().listVersions(), "nothing committed by the loser");
  }

  @Test
  void overwriteConflictsWithConcurrentAppendUnderSerializable() {
    createTable(Map.of("delta.isolationLevel", "Serializable"));
    OptimisticTransaction overwrite = new OptimisticTransaction(spark, log());
    overwrite.readWholeTable();
    OptimisticTransaction append = new OptimisticTransaction(spark, log());
    append.commit(List.of(add("a.parquet")), APPEND);
    FileCommitException e = assertThrows(FileCommitException.class, () -> overwrite.commit(
        List.of(add("o.parquet"), add("x.parquet").toRemove(5)), OVERWRITE));
    assertEquals("DELTA_CONCURRENT_APPEND", e.getCondition());
    assertEquals("2D521", e.getSqlState());
    assertEquals(List.of(0L, 1L), log().listVersions(), "nothing committed by the loser");
  }

  @Test
  void overwriteIsSerializedAfterBlindAppendUnderWriteSerializable() {
    createTable();
    OptimisticTransaction overwrite = new OptimisticTransaction(spark, log());
    overwrite.readWholeTable();
    OptimisticTransaction append = new OptimisticTransaction(spark, log());
    append.commit(List.of(add("a.parquet")), APPEND);
    assertEquals(2, overwrite.commit(List.of(add("o.parquet")), OVERWRITE));
    assertEquals(java.util.Set.of("a.parquet", "o.parquet"), log().snapshot().activeFiles().keySet());
  }

  @Test
  void overwriteConflictsWithRemovalOfAFileItRead() {
    createTable();
    new OptimisticTransaction(spark, log()).commit(List.of(add("c.parquet")), APPEND);
    OptimisticTransaction overwrite = new OptimisticTransaction(spark, log());
    overwrite.readWholeTable();
    // A compaction: rewrites c.parquet without changing data.
    AddFile compacted = new AddFile("d.parquet", Map.of(), 1, 1, false, null, Map.of());
    RemoveFile gone = new RemoveFile("c.parquet", 5, false, true, Map.of(), 1L);
    new OptimisticTransaction(spark, log()).commit(List.of(compacted, gone), OVERWRITE);
    FileCommitException e = assertThrows(FileCommitException.class, () -> overwrite.commit(
        List.of(add("o.parquet"), add("c.parquet").toRemove(5)), OVERWRITE));
    assertEquals("DELTA_CONCURRENT_DELETE_READ", e.getCondition());
  }

  @Test
  void blindAppendLandsThroughCompaction() {
    createTable();
    new OptimisticTransaction(spark, log()).commit(List.of(add("c.parquet")), APPEND);
    OptimisticTransaction append = new OptimisticTransaction(spark, log());
    AddFile compacted = new AddFile("d.parquet", Map.of(), 1, 1, false, null, Map.of());
    RemoveFile gone = new RemoveFile("c.parquet", 5, false, true, Map.of(), 1L);
    new OptimisticTransaction(spark, log()).commit(List.of(compacted, gone), OVERWRITE);
    assertEquals(3, append.commit(List.of(add("e.parquet")), APPEND));
    assertEquals(java.util.Set.of("d.parquet", "e.parquet"), log().snapshot().activeFiles().keySet());
  }

  @Test
  void sameApplicationTransactionCommitsOnce() {
    createTable();
    OptimisticTransaction first = new OptimisticTransaction(spark, log());
    OptimisticTransaction second = new OptimisticTransaction(spark, log());
    assertFalse(first.setTransaction(new TransactionId("app", 3)));
    assertFalse(second.setTransaction(new TransactionId("app", 3)));
    assertEquals(1, first.commit(List.of(add("a.parquet")), APPEND));
    assertTrue(first.committed());
    assertEquals(1, second.commit(List.of(add("b.parquet")), APPEND));
    assertFalse(second.committed(), "a duplicate of version 3 of 'app' is not committed again");
    assertEquals(List.of(0L, 1L), log().listVersions());
    assertEquals(java.util.Optional.of(3L), log().snapshot().latestTransactionVersion("app"));
    assertTrue(new OptimisticTransaction(spark, log()).setTransaction(new TransactionId("app", 3)), "already applied");
    OptimisticTransaction older = new OptimisticTransaction(spark, log());
    OptimisticTransaction newer = new OptimisticTransaction(spark, log());
    older.setTransaction(new TransactionId("app", 4));
    newer.setTransaction(new TransactionId("app", 5));
    older.commit(List.of(add("o.parquet")), APPEND);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> newer.commit(List.of(add("n.parquet")), APPEND));
    assertEquals("DELTA_CONCURRENT_TRANSACTION", e.getCondition());
  }

  private static CommitInfo info(String operation) {
    return new CommitInfo(null, 1L, operation, null, null, null, null, null, null, null);
  }

  @Test
  void commitFilesAreCreatedOnlyIfAbsent() throws Exception {
    DeltaLog log = log();
    org.junit.jupiter.api.Assertions.assertDoesNotThrow(() -> log.writeCommit(0, List.of(info("n1"))));
    assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> log.writeCommit(0, List.of(info("n2"))));
    List<Action> actions = log.readCommit(0);
    assertEquals("n1", ((CommitInfo) actions.get(0)).operation(), "the first writer's content stays");
    assertEquals("00000000000000000000.json", DeltaLog.commitFileName(0));
    try (var files = Files.list(tmp.resolve("_delta_log"))) {
      assertEquals(List.of("00000000000000000000.json"), files.map(p -> p.getFileName().toString()).toList(),
          "no temporary files left behind");
    }
  }

  @Test
  void metadataChangesAreRefusedAfterWriting() {
    OptimisticTransaction txn = new OptimisticTransaction(spark, log());
    txn.updateMetadata(metadata(List.of("part"), Map.of()));
    Dataset<Row> data = (Dataset<Row>) spark.createDataFrame(
        List.of(RowFactory.create("x", 1L, "a"), RowFactory.create("y", 2L, "b")),
        new StructType().add("PART", DataTypes.StringType).add("Id", DataTypes.LongType).add("name", DataTypes.StringType));
    List<AddFile> adds = new TransactionalWrite(txn).writeFiles(data, Map.of(), false);
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
        () -> SchemaUtils.validateSchemaAndPartitioning(SCHEMA, List.of("nope"))).getCondition());
    assertThrows(FileCommitException.class,
        () -> SchemaUtils.validateSchemaAndPartitioning(SCHEMA, List.of("id", "name", "part")));
    assertThrows(FileCommitException.class,
        () -> SchemaUtils.validateSchemaAndPartitioning(SCHEMA, List.of("part", "PART")));
    assertThrows(FileCommitException.class, () -> SchemaUtils.validateSchemaAndPartitioning(
        SCHEMA.add("ID", DataTypes.LongType), List.of()));
    assertThrows(FileCommitException.class, () -> SchemaUtils.validateSchemaAndPartitioning(
        new StructType().add("a b", DataTypes.LongType).add("c", DataTypes.LongType), List.of()));
    SchemaUtils.validateSchemaAndPartitioning(SCHEMA, List.of("part", "name"));
    FileCommitException variant = assertThrows(FileCommitException.class, () -> SchemaUtils.validateSchemaAndPartitioning(
        SCHEMA.add("v", DataTypes.createArrayType(new StructType().add("x", DataTypes.VariantType))), List.of()));
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", variant.getCondition());
    assertTrue(variant.getMessage().contains("variantType"), variant.getMessage());
  }

  @Test
  void changeDataFeedRaisesTheWriterVersion() {
    OptimisticTransaction txn = new OptimisticTransaction(spark, log());
    txn.updateMetadata(metadata(List.of(), Map.of(TableConfig.ENABLE_CHANGE_DATA_FEED.key(), "true")));
    assertEquals(new Protocol(1, 7, null, java.util.Set.of("appendOnly", "invariants", "changeDataFeed")),
        txn.protocol());
    assertEquals("DELTA_ILLEGAL_OPTION", assertThrows(FileCommitException.class,
        () -> txn.updateMetadata(metadata(List.of(), Map.of("delta.enableChangeDataFeed", "yes")))).getCondition());
  }

  @Test
  void anAppendLandingBetweenAddConstraintsCheckAndItsCommitIsAConflict() {
    createTable();
    OptimisticTransaction constraint = new OptimisticTransaction(spark, log());
    Map<String, String> conf = new java.util.HashMap<>(constraint.snapshot().metadata().configuration());
    conf.put("delta.constraints.positive", "id > 0");
    constraint.updateMetadata(constraint.snapshot().metadata().withConfiguration(conf)); // checks: empty
    OptimisticTransaction append = new OptimisticTransaction(spark, log()); // rows the check never saw
    assertEquals(1, append.commit(List.of(new AddFile("bad.parquet", Map.of("part", "a"), 1, 1, true, null, Map.of())),
        APPEND));
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> constraint.commit(List.of(), new Operation.SetTableProperties(Map.of("delta.constraints.positive", "id > 0"))));
    assertEquals("DELTA_CONCURRENT_APPEND", e.getCondition());
    assertEquals(List.of(0L, 1L), log().listVersions(), "the constraint did not commit over unchecked rows");
    assertFalse(log().snapshot().metadata().configuration().containsKey("delta.constraints.positive"));
  }

  @Test
  void aConstraintOnATableWithFilesNeedsItsRowsCheckedAndARacingAppendConflicts() {
    createTable();
    OptimisticTransaction first = new OptimisticTransaction(spark, log());
    assertEquals(1, first.commit(List.of(add("a.parquet")), APPEND));
    Map<String, String> conf = new java.util.HashMap<>(log().snapshot().metadata().configuration());
    conf.put("delta.constraints.positive", "id > 0");
    OptimisticTransaction unchecked = new OptimisticTransaction(spark, log());
    assertEquals("DELTA_ADD_CONSTRAINTS", assertThrows(FileCommitException.class,
        () -> unchecked.updateMetadata(unchecked.snapshot().metadata().withConfiguration(conf))).getCondition());
    OptimisticTransaction constraint = new OptimisticTransaction(spark, log());
    constraint.readAllRowsForConstraints(); // what CheckConstraintCommand does once the rows passed
    constraint.updateMetadata(constraint.snapshot().metadata().withConfiguration(conf));
    OptimisticTransaction append = new OptimisticTransaction(spark, log()); // rows the check never saw
    assertEquals(2, append.commit(List.of(add("b.parquet")), APPEND));
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> constraint.commit(List.of(), new Operation.Constraint(true, "positive", "id > 0")));
    assertEquals("DELTA_CONCURRENT_APPEND", e.getCondition());
    assertEquals(List.of(0L, 1L, 2L), log().listVersions(), "the constraint did not commit over unchecked rows");
    assertFalse(log().snapshot().metadata().configuration().containsKey("delta.constraints.positive"));
  }

  @Test
  void addConstraintStillCommitsThroughACompactionOfNoRows() {
    createTable();
    OptimisticTransaction constraint = new OptimisticTransaction(spark, log());
    Map<String, String> conf = new java.util.HashMap<>(constraint.snapshot().metadata().configuration());
    conf.put("delta.constraints.positive", "id > 0");
    constraint.updateMetadata(constraint.snapshot().metadata().withConfiguration(conf));
    OptimisticTransaction other = new OptimisticTransaction(spark, log());
    assertEquals(1, other.commit(List.of(), APPEND)); // a commit that adds no rows
    assertEquals(2, constraint.commit(List.of(), new Operation.SetTableProperties(Map.of())));
    assertEquals("id > 0", log().snapshot().metadata().configuration().get("delta.constraints.positive"));
  }
}
