package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.actions.AddFile;
import io.filecommit.errors.FileCommitException;
import io.filecommit.testing.SparkTestSession;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The pieces of row-level changes that decide what is read and rewritten: condition splitting,
 * partition-only predicates (with a table alias), the conflict check of a change that read some
 * partitions, and MERGE's clause rules (Delta's).
 */
class RowLevelChangeTest {
  private static SparkSession spark;

  private static final StructType SCHEMA = new StructType()
      .add("id", DataTypes.LongType).add("v", DataTypes.LongType).add("part", DataTypes.StringType);
  private static final Metadata MD = new Metadata(UUID.randomUUID().toString(), null, null, SCHEMA.json(),
      List.of("part"), Map.of(), 0L);

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  private static AddFile file(String path, String part) {
    return new AddFile(path, java.util.Collections.singletonMap("part", part), 1, 1, true, null, Map.of());
  }

  @Test
  void conditionsSplitIntoTheirConjuncts() {
    List<Column> parts = RowLevelChange.conjuncts(spark, functions.expr("t.part = 'a' AND (t.id > 1 OR t.v = 2) AND s.id = t.id"));
    assertEquals(3, parts.size());
    assertEquals(1, RowLevelChange.conjuncts(spark, functions.expr("id > 1 OR part = 'a'")).size());
  }

  @Test
  void onlyPredicatesOnPartitionColumnsPrune() {
    assertTrue(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("t.part IN ('a', 'b')"), "t"));
    assertTrue(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("part = 'a'"), null));
    assertFalse(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("t.id = 1"), "t"));
    assertFalse(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("t.part = s.part"), "t"));
    assertFalse(PartitionPredicates.onPartitionsOnly(spark, MD, functions.expr("part = 'a' AND rand() < 0.5"), null));
    List<AddFile> files = List.of(file("a1", "a"), file("b1", "b"), file("n1", null));
    assertEquals(Set.of("a1"), PartitionPredicates.matching(spark, MD, files, functions.expr("t.part = 'a'"), "t"));
    assertEquals(Set.of("n1"), PartitionPredicates.matching(spark, MD, files, functions.expr("part IS NULL"), null));
  }

  private static List<JsonNode> commit(String... actions) throws Exception {
    List<JsonNode> out = new java.util.ArrayList<>();
    out.add(ActionJson.MAPPER.readTree("{\"commitInfo\":{\"operation\":\"WRITE\",\"isBlindAppend\":false}}"));
    for (String a : actions) {
      out.add(ActionJson.MAPPER.readTree(a));
    }
    return out;
  }

  private static String add(String path, String part) {
    return "{\"add\":{\"path\":\"" + path + "\",\"partitionValues\":{\"part\":\"" + part
        + "\"},\"size\":1,\"modificationTime\":1,\"dataChange\":true}}";
  }

  @Test
  void aChangeThatReadSomePartitionsConflictsOnlyWithAddsThere() throws Exception {
    ConflictChecker.ReadState read = new ConflictChecker.ReadState(false, false,
        List.of(new ConflictChecker.ReadPredicate(functions.expr("t.part = 'a'"), "t")), Set.of("a1"), Set.of("a1"),
        Map.of(), ConflictChecker.WRITE_SERIALIZABLE);
    assertEquals(-1, ConflictChecker.check(spark, MD, read, 5, commit(add("b2", "b")), "/t").alreadyCommitted());
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> ConflictChecker.check(spark, MD, read, 5, commit(add("a2", "a")), "/t"));
    assertEquals("DELTA_CONCURRENT_APPEND", e.getCondition());
    FileCommitException removed = assertThrows(FileCommitException.class, () -> ConflictChecker.check(spark, MD, read, 5,
        commit("{\"remove\":{\"path\":\"a1\",\"deletionTimestamp\":1,\"dataChange\":true}}"), "/t"));
    assertEquals("DELTA_CONCURRENT_DELETE_READ", removed.getCondition());
  }

  private static MergeIntoCommand.Clause clause(MergeIntoCommand.ClauseKind kind, String condition) {
    boolean delete = kind == MergeIntoCommand.ClauseKind.MATCHED_DELETE
        || kind == MergeIntoCommand.ClauseKind.NOT_MATCHED_BY_SOURCE_DELETE;
    return new MergeIntoCommand.Clause(kind, condition == null ? null : functions.expr(condition), Map.of(), !delete);
  }

  @Test
  void mergeClauseRulesAreDeltas() {
    assertEquals("DELTA_MERGE_MISSING_WHEN",
        assertThrows(FileCommitException.class, () -> MergeIntoCommand.checkClauses(List.of())).getCondition());
    assertEquals("DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION", assertThrows(FileCommitException.class, () ->
        MergeIntoCommand.checkClauses(List.of(clause(MergeIntoCommand.ClauseKind.MATCHED_DELETE, null),
            clause(MergeIntoCommand.ClauseKind.MATCHED_UPDATE, "s.v > 1")))).getCondition());
    assertEquals("DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION", assertThrows(FileCommitException.class, () ->
        MergeIntoCommand.checkClauses(List.of(clause(MergeIntoCommand.ClauseKind.NOT_MATCHED_INSERT, null),
            clause(MergeIntoCommand.ClauseKind.NOT_MATCHED_INSERT, null)))).getCondition());
    assertEquals("DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION", assertThrows(FileCommitException.class,
        () -> MergeIntoCommand.checkClauses(List.of(clause(MergeIntoCommand.ClauseKind.NOT_MATCHED_BY_SOURCE_DELETE, null),
            clause(MergeIntoCommand.ClauseKind.NOT_MATCHED_BY_SOURCE_UPDATE, null)))).getCondition());
    // The last clause of each kind may omit its condition; kinds do not constrain each other.
    MergeIntoCommand.checkClauses(List.of(clause(MergeIntoCommand.ClauseKind.MATCHED_DELETE, "s.v < 0"),
        clause(MergeIntoCommand.ClauseKind.MATCHED_UPDATE, null), clause(MergeIntoCommand.ClauseKind.NOT_MATCHED_INSERT, null),
        clause(MergeIntoCommand.ClauseKind.NOT_MATCHED_BY_SOURCE_DELETE, null)));
  }
}
