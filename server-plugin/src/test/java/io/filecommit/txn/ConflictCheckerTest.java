package io.filecommit.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.errors.FileCommitException;
import io.filecommit.testing.SparkTestSession;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The conflict check of a change that read some partitions (protocol "Conflict detection"). */
class ConflictCheckerTest {
  private static SparkSession spark;

  private static final StructType SCHEMA = new StructType()
      .add("id", DataTypes.LongType).add("v", DataTypes.LongType).add("part", DataTypes.StringType);
  private static final Metadata MD = new Metadata(UUID.randomUUID().toString(), null, null, SCHEMA.json(),
      List.of("part"), Map.of(), 0L);

  @BeforeAll
  static void startSpark() {
    spark = SparkTestSession.get();
  }

  private static WinningCommitSummary commit(String... actions) {
    List<Action> out = new ArrayList<>();
    out.add(Actions.parse("{\"commitInfo\":{\"operation\":\"WRITE\",\"isBlindAppend\":false}}"));
    for (String a : actions) {
      out.add(Actions.parse(a));
    }
    return WinningCommitSummary.of(5, out);
  }

  private static String add(String path, String part) {
    return "{\"add\":{\"path\":\"" + path + "\",\"partitionValues\":{\"part\":\"" + part
        + "\"},\"size\":1,\"modificationTime\":1,\"dataChange\":true}}";
  }

  private static boolean check(ConflictChecker.ReadState read, WinningCommitSummary winner) {
    return new ConflictChecker(spark, MD, read, winner, "/t").check(false);
  }

  @Test
  void aChangeThatReadSomePartitionsConflictsOnlyWithAddsThere() {
    ConflictChecker.ReadState read = new ConflictChecker.ReadState(false, false,
        List.of(new ConflictChecker.ReadPredicate(functions.expr("t.part = 'a'"), "t")), Set.of("a1"), Set.of("a1"),
        Map.of(), TableConfig.IsolationLevel.WRITE_SERIALIZABLE);
    assertFalse(check(read, commit(add("b2", "b"))));
    FileCommitException e = assertThrows(FileCommitException.class, () -> check(read, commit(add("a2", "a"))));
    assertEquals("DELTA_CONCURRENT_APPEND", e.getCondition());
    FileCommitException removed = assertThrows(FileCommitException.class, () -> check(read,
        commit("{\"remove\":{\"path\":\"a1\",\"deletionTimestamp\":1,\"dataChange\":true}}")));
    assertEquals("DELTA_CONCURRENT_DELETE_READ", removed.getCondition());
  }
}
