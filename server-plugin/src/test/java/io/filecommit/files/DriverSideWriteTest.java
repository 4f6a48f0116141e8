package io.filecommit.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.FileCommitException;
import io.filecommit.testing.SparkTestSession;
import io.filecommit.txn.OptimisticTransaction;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The driver-side write gives what the job gives: partitions, file names, statistics, rules, change data. */
class DriverSideWriteTest {
  private static final StructType TABLE = new StructType()
      .add("id", DataTypes.LongType, false).add("name", DataTypes.StringType).add("part", DataTypes.StringType);
  private static final StructType INPUT = new StructType()
      .add("id", DataTypes.LongType).add("name", DataTypes.StringType).add("part", DataTypes.StringType);
  private static SparkSession spark;

  @TempDir
  Path tmp;

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  private OptimisticTransaction txn(String name, Map<String, String> conf) {
    OptimisticTransaction txn = new OptimisticTransaction(spark,
        new DeltaLog(new org.apache.hadoop.fs.Path(tmp.resolve(name).toUri()), new Configuration()));
    txn.updateMetadata(new Metadata(UUID.randomUUID().toString(), null, null, TABLE.json(), List.of("part"), conf, 0L));
    return txn;
  }

  @SuppressWarnings("unchecked")
  private static Dataset<Row> rows(StructType schema, Row... rows) {
    return (Dataset<Row>) spark.createDataFrame(Arrays.asList(rows), schema);
  }

  /** partition values -> (numRecords, minValues, maxValues, nullCount) of each file's statistics. */
  private static Map<String, String> summary(List<AddFile> adds) throws Exception {
    Map<String, String> out = new TreeMap<>();
    for (AddFile a : adds) {
      assertTrue(a.path().matches(".*part-00000-[0-9a-f-]{36}\\.c000\\.snappy\\.parquet"), a.path());
      var stats = io.filecommit.delta.actions.Actions.MAPPER.readTree(a.stats());
      out.merge(String.valueOf(a.partitionValues()), stats.get("numRecords") + " " + stats.get("minValues") + " "
          + stats.get("maxValues") + " " + stats.get("nullCount"), (x, y) -> x + " | " + y);
    }
    return out;
  }

  @Test
  void aLocalInputIsWrittenWithoutAJobAsTheJobWritesIt() throws Exception {
    Row[] input = {RowFactory.create(1L, "a", "x"), RowFactory.create(2L, null, "x"), RowFactory.create(3L, "c", null),
        RowFactory.create(4L, "d", "y/z"), RowFactory.create(5L, "e", "x")};
    Dataset<Row> local = rows(INPUT, input);
    OptimisticTransaction fast = txn("fast", Map.of());
    TransactionalWrite fastWriter = new TransactionalWrite(fast);
    assertNotNull(DriverSideWrite.local(fastWriter.normalizeData(local, null, true)), "a local relation");
    assertNull(DriverSideWrite.unchanged(fastWriter.normalizeData(local, null, true).queryExecution().analyzed()),
        "the NOT NULL rule of id is evaluated (by the optimizer)");
    List<AddFile> fastAdds = fastWriter.writeFiles(local, Map.of(), false);

    Dataset<Row> notLocal = rows(INPUT, input).repartition(1);
    OptimisticTransaction job = txn("job", Map.of());
    TransactionalWrite jobWriter = new TransactionalWrite(job);
    assertNull(DriverSideWrite.local(jobWriter.normalizeData(notLocal, null, true)), "a repartition needs the job");
    List<AddFile> jobAdds = jobWriter.writeFiles(notLocal, Map.of(), false);

    assertEquals(summary(jobAdds), summary(fastAdds));
    assertEquals(3, fastAdds.size(), "one file per partition (x, y/z, null)");
    List<String> dirs = new ArrayList<>(fastAdds.stream().map(a -> a.path().substring(0, a.path().lastIndexOf('/'))).sorted().toList());
    assertEquals(List.of("part=__HIVE_DEFAULT_PARTITION__", "part=x", "part=y%252Fz"), dirs);
    Dataset<Row> back = (Dataset<Row>) spark.read().parquet(tmp.resolve("fast").toString());
    assertEquals(5, back.count());
  }

  @Test
  void anInputThatNormalizationLeavesUnchangedSkipsTheOptimizer() throws Exception {
    OptimisticTransaction txn = new OptimisticTransaction(spark,
        new DeltaLog(new org.apache.hadoop.fs.Path(tmp.resolve("plain").toUri()), new Configuration()));
    txn.updateMetadata(new Metadata(UUID.randomUUID().toString(), null, null, INPUT.json(), List.of(), Map.of(), 0L));
    TransactionalWrite writer = new TransactionalWrite(txn);
    Dataset<Row> local = rows(INPUT, RowFactory.create(1L, "a", "x"), RowFactory.create(2L, null, null));
    LocalRelation same = DriverSideWrite.unchanged(writer.normalizeData(local, null, true).queryExecution().analyzed());
    assertNotNull(same, "the table's own columns, in order: no optimizer run");
    assertEquals(2, same.data().size());
    assertNull(DriverSideWrite.unchanged(writer.normalizeData(local.select("name", "id", "part"), null, true)
        .queryExecution().analyzed()), "reordered columns go through the optimizer");
    assertNull(DriverSideWrite.unchanged(writer.normalizeData(local.selectExpr("cast(id AS int) AS id", "name", "part"),
        null, true).queryExecution().analyzed()), "a cast goes through the optimizer");
    assertNull(DriverSideWrite.unchanged(writer.normalizeData(local.select("id", "name"), null, true)
        .queryExecution().analyzed()), "a missing column is filled in by the optimizer");
    List<AddFile> adds = writer.writeFiles(local, Map.of(), false);
    assertEquals(1, adds.size());
    var stats = io.filecommit.delta.actions.Actions.MAPPER.readTree(adds.get(0).stats());
    assertEquals("2 {\"id\":1,\"name\":\"a\",\"part\":\"x\"} {\"id\":2,\"name\":\"a\",\"part\":\"x\"} "
        + "{\"id\":0,\"name\":1,\"part\":1}", stats.get("numRecords") + " " + stats.get("minValues") + " "
        + stats.get("maxValues") + " " + stats.get("nullCount"));
    @SuppressWarnings("unchecked")
    Dataset<Row> back = (Dataset<Row>) spark.read().parquet(tmp.resolve("plain").toString());
    assertEquals(List.of("[1,a,x]", "[2,null,null]"), back.orderBy("id").collectAsList().stream().map(Row::toString).toList());
  }

  @Test
  void aRowBreakingARuleFailsAsInTheJobAndLeavesNoFile() throws Exception {
    Dataset<Row> local = rows(INPUT, RowFactory.create(1L, "a", "x"), RowFactory.create(null, "b", "x"));
    OptimisticTransaction fast = txn("rules", Map.of("delta.constraints.short", "length(name) < 5"));
    FileCommitException nullId = assertThrows(FileCommitException.class,
        () -> new TransactionalWrite(fast).writeFiles(local, Map.of(), false));
    assertEquals("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", nullId.getCondition());
    OptimisticTransaction check = txn("rules2", Map.of("delta.constraints.short", "length(name) < 5"));
    FileCommitException tooLong = assertThrows(FileCommitException.class, () -> new TransactionalWrite(check)
        .writeFiles(rows(INPUT, RowFactory.create(1L, "abcdef", "x")), Map.of(), false));
    assertEquals("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", tooLong.getCondition());
    assertTrue(!java.nio.file.Files.exists(tmp.resolve("rules2").resolve("part=x"))
        || java.nio.file.Files.list(tmp.resolve("rules2").resolve("part=x")).findAny().isEmpty());
  }

  @Test
  void changeDataIsSplitAsInTheJob() {
    StructType withType = INPUT.add("_change_type", DataTypes.StringType);
    OptimisticTransaction txn = txn("cdc", Map.of("delta.enableChangeDataFeed", "true"));
    TransactionalWrite w = new TransactionalWrite(txn);
    List<AddFile> adds = w.writeFiles(rows(withType, RowFactory.create(1L, "a", "x", null),
        RowFactory.create(1L, "a", "x", "update_preimage"), RowFactory.create(1L, "A", "x", "update_postimage")),
        Map.of(), true);
    List<AddCDCFile> cdc = w.changeFiles();
    assertEquals(1, adds.size());
    assertTrue(adds.get(0).path().startsWith("part=x/part-00000-"), adds.get(0).path());
    assertEquals(1, cdc.size());
    assertTrue(cdc.get(0).path().startsWith("_change_data/part=x/"), cdc.get(0).path());
    assertEquals(Map.of("part", "x"), cdc.get(0).partitionValues());
    Dataset<Row> changes = (Dataset<Row>) spark.read().parquet(tmp.resolve("cdc").resolve(cdc.get(0).path()).toString());
    assertEquals(2, changes.count());
    assertTrue(Arrays.asList(changes.schema().fieldNames()).contains("_change_type"));
  }
}
