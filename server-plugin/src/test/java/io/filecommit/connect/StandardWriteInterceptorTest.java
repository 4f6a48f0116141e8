package io.filecommit.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import org.apache.spark.SparkConf;
import org.apache.spark.connect.proto.Command;
import org.apache.spark.connect.proto.ExecutePlanRequest;
import org.apache.spark.connect.proto.LocalRelation;
import org.apache.spark.connect.proto.Plan;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.connect.proto.WriteOperation;
import org.junit.jupiter.api.Test;

/** Which standard-API writes {@link StandardWriteInterceptor} hands to the plugin, and how. */
class StandardWriteInterceptorTest {
  private static WriteOperation.Builder save(String source) {
    return WriteOperation.newBuilder().setInput(Relation.newBuilder().setLocalRelation(LocalRelation.newBuilder()))
        .setSource(source).setPath("/data/t").setMode(WriteOperation.SaveMode.SAVE_MODE_APPEND);
  }

  private static ExecutePlanRequest request(WriteOperation op) {
    return ExecutePlanRequest.newBuilder().setSessionId("s").setOperationId("op")
        .setPlan(Plan.newBuilder().setCommand(Command.newBuilder().setWriteOperation(op))).build();
  }

  @Test
  void savesToThisSourceByPathArePackedForThePlugin() throws Exception {
    for (String source : new String[] {"delta", "DELTA", "filecommit", "FileCommit"}) {
      WriteOperation op = save(source).putOptions("mergeSchema", "true").addPartitioningColumns("p").build();
      ExecutePlanRequest out = StandardWriteInterceptor.rewrite(request(op), true);
      Any packed = Any.parseFrom(out.getPlan().getCommand().getExtension().toByteString());
      assertEquals(StandardSave.TYPE_URL, packed.getTypeUrl());
      assertEquals(op, WriteOperation.parseFrom(packed.getValue()));
      assertEquals("s", out.getSessionId());
      assertEquals("op", out.getOperationId());
    }
  }

  @Test
  void everythingElseKeepsSparksPath() {
    WriteOperation[] others = {
        save("parquet").build(),
        save("delta").clearPath().build(),
        save("delta").clearPath().setTable(WriteOperation.SaveTable.newBuilder().setTableName("t")).build(),
        save("delta").addSortColumnNames("id").build(),
        save("delta").setBucketBy(WriteOperation.BucketBy.newBuilder().addBucketColumnNames("id").setNumBuckets(2))
            .build(),
        save("delta").addClusteringColumns("id").build(),
        save("delta").putOptions("PATH", "/other").build(),
        save("delta").setModeValue(99).build(),
        save("delta").clearSource().build(),
    };
    for (WriteOperation op : others) {
      ExecutePlanRequest in = request(op);
      assertSame(in, StandardWriteInterceptor.rewrite(in, true), op.toString());
    }
    ExecutePlanRequest query = ExecutePlanRequest.newBuilder().setPlan(Plan.newBuilder().setRoot(Relation.newBuilder()
        .setLocalRelation(LocalRelation.newBuilder()))).build();
    assertSame(query, StandardWriteInterceptor.rewrite(query, true));
  }

  @Test
  void deltaStaysWithDeltaSparkWhenItIsNotOurs() {
    ExecutePlanRequest in = request(save("delta").build());
    assertSame(in, StandardWriteInterceptor.rewrite(in, false));
    assertTrue(StandardWriteInterceptor.direct(save("filecommit").build(), false));
    assertTrue(StandardWriteInterceptor.deltaIsOurs(new SparkConf(false)));
    assertFalse(StandardWriteInterceptor.deltaIsOurs(new SparkConf(false).set(io.filecommit.conf.FileCommitConf.READ_DELTA_FORMAT.key(), "false")));
  }

  @Test
  void modesAsSparkConnectConvertsThem() {
    assertEquals(org.apache.spark.sql.SaveMode.ErrorIfExists,
        StandardSave.mode(WriteOperation.SaveMode.SAVE_MODE_UNSPECIFIED));
    assertEquals(org.apache.spark.sql.SaveMode.ErrorIfExists,
        StandardSave.mode(WriteOperation.SaveMode.SAVE_MODE_ERROR_IF_EXISTS));
    assertEquals(org.apache.spark.sql.SaveMode.Append, StandardSave.mode(WriteOperation.SaveMode.SAVE_MODE_APPEND));
    assertEquals(org.apache.spark.sql.SaveMode.Overwrite, StandardSave.mode(WriteOperation.SaveMode.SAVE_MODE_OVERWRITE));
    assertEquals(org.apache.spark.sql.SaveMode.Ignore, StandardSave.mode(WriteOperation.SaveMode.SAVE_MODE_IGNORE));
  }
}
