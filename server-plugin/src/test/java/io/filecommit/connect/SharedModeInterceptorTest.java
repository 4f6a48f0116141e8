package io.filecommit.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import io.filecommit.errors.FileCommitException;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.connect.proto.AnalyzePlanRequest;
import org.apache.spark.connect.proto.Command;
import org.apache.spark.connect.proto.CommonInlineUserDefinedFunction;
import org.apache.spark.connect.proto.ExecutePlanRequest;
import org.apache.spark.connect.proto.Expression;
import org.apache.spark.connect.proto.Plan;
import org.apache.spark.connect.proto.Project;
import org.apache.spark.connect.proto.PythonUDF;
import org.apache.spark.connect.proto.Range;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.connect.proto.SetCurrentCatalog;
import org.apache.spark.connect.proto.StreamingForeachFunction;
import org.apache.spark.connect.proto.WriteOperation;
import org.apache.spark.connect.proto.WriteStreamOperationStart;
import org.junit.jupiter.api.Test;

/**
 * Which proto plans {@link SharedModeInterceptor} refuses (wherever the refused message sits in the
 * plan, also packed by {@link StandardWriteInterceptor}) and which it lets through.
 */
class SharedModeInterceptorTest {
  private static final Relation RANGE = Relation.newBuilder().setRange(Range.newBuilder().setEnd(3)).build();

  private static ExecutePlanRequest query(Relation root) {
    return ExecutePlanRequest.newBuilder().setSessionId("s").setPlan(Plan.newBuilder().setRoot(root)).build();
  }

  private static ExecutePlanRequest command(Command c) {
    return ExecutePlanRequest.newBuilder().setSessionId("s").setPlan(Plan.newBuilder().setCommand(c)).build();
  }

  private static Relation withUdf(Relation input) {
    Expression udf = Expression.newBuilder().setCommonInlineUserDefinedFunction(
        CommonInlineUserDefinedFunction.newBuilder().setFunctionName("touch")
            .setPythonUdf(PythonUDF.newBuilder().setEvalType(100))).build();
    return Relation.newBuilder().setProject(Project.newBuilder().setInput(input).addExpressions(udf)).build();
  }

  private static String refusal(Object request) {
    FileCommitException e = assertThrows(FileCommitException.class, () -> SharedModeInterceptor.check(request));
    assertEquals("FILECOMMIT_SHARED_MODE_REFUSED", e.getCondition());
    return e.getMessageParameters().get("what");
  }

  @Test
  void clientCodeIsRefusedWhereverItSits() {
    assertEquals("USER_DEFINED_FUNCTION", refusal(query(withUdf(RANGE))));
    // nested below a filter, in an AnalyzePlan schema request
    Relation nested = Relation.newBuilder().setFilter(org.apache.spark.connect.proto.Filter.newBuilder()
        .setInput(withUdf(RANGE))).build();
    assertEquals("USER_DEFINED_FUNCTION", refusal(AnalyzePlanRequest.newBuilder().setSessionId("s")
        .setSchema(AnalyzePlanRequest.Schema.newBuilder().setPlan(Plan.newBuilder().setRoot(nested))).build()));
    assertEquals("STREAMING_FOREACH", refusal(command(Command.newBuilder().setWriteStreamOperationStart(
        WriteStreamOperationStart.newBuilder().setInput(RANGE).setFormat("delta")
            .setForeachBatch(StreamingForeachFunction.newBuilder())).build())));
    assertEquals("CATALOG_SWITCH", refusal(query(Relation.newBuilder().setCatalog(
        org.apache.spark.connect.proto.Catalog.newBuilder().setSetCurrentCatalog(
            SetCurrentCatalog.newBuilder().setCatalogName("other"))).build())));
    // a write whose input runs a UDF, packed for the plugin by StandardWriteInterceptor
    WriteOperation op = WriteOperation.newBuilder().setInput(withUdf(RANGE)).setSource("delta").setPath("/data/t")
        .setMode(WriteOperation.SaveMode.SAVE_MODE_APPEND).build();
    ExecutePlanRequest packed = StandardWriteInterceptor.rewrite(command(Command.newBuilder().setWriteOperation(op)
        .build()), true);
    assertTrue(packed.getPlan().getCommand().hasExtension());
    assertEquals("USER_DEFINED_FUNCTION", refusal(packed));
    assertEquals("USER_DEFINED_FUNCTION", refusal(command(Command.newBuilder().setExtension(Any.pack(op)).build())));
    // filecommit's own command: the condition of a DELETE
    Expression condition = withUdf(RANGE).getProject().getExpressions(0);
    assertEquals("USER_DEFINED_FUNCTION", refusal(command(Command.newBuilder().setExtension(Any.pack(
        io.filecommit.proto.v1.DeleteCommand.newBuilder().setPath("/data/t").setCondition(condition).build())).build())));
    SharedModeInterceptor.check(command(Command.newBuilder().setExtension(Any.pack(
        io.filecommit.proto.v1.DeleteCommand.newBuilder().setPath("/data/t").setCondition(Expression.newBuilder()
            .setUnresolvedFunction(Expression.UnresolvedFunction.newBuilder().setFunctionName("upper"))).build()))
        .build()));
  }

  @Test
  void deltaConnectMessagesAreWalkedLikeAnyPlan() {
    // delta-spark's DeltaTable.delete(condition): a DeltaRelation whose target is the scan (packed too)
    Relation scan = Relation.newBuilder().setExtension(Any.pack(io.filecommit.proto.delta.connect.DeltaRelation
        .newBuilder().setScan(io.filecommit.proto.delta.connect.Scan.newBuilder().setTable(
            io.filecommit.proto.delta.connect.DeltaTable.newBuilder().setTableOrViewName("t"))).build())).build();
    Expression udf = withUdf(RANGE).getProject().getExpressions(0);
    io.filecommit.proto.delta.connect.DeltaRelation delete = io.filecommit.proto.delta.connect.DeltaRelation.newBuilder()
        .setDeleteFromTable(io.filecommit.proto.delta.connect.DeleteFromTable.newBuilder().setTarget(scan)
            .setCondition(udf)).build();
    assertEquals("USER_DEFINED_FUNCTION", refusal(query(Relation.newBuilder().setExtension(Any.pack(delete)).build())));
    // a merge whose source runs a UDF
    io.filecommit.proto.delta.connect.DeltaRelation merge = io.filecommit.proto.delta.connect.DeltaRelation.newBuilder()
        .setMergeIntoTable(io.filecommit.proto.delta.connect.MergeIntoTable.newBuilder().setTarget(scan)
            .setSource(withUdf(RANGE))).build();
    assertEquals("USER_DEFINED_FUNCTION", refusal(query(Relation.newBuilder().setExtension(Any.pack(merge)).build())));
    SharedModeInterceptor.check(query(scan));
  }

  @Test
  void plansWithoutClientCodePass() {
    SharedModeInterceptor.check(query(RANGE));
    SharedModeInterceptor.check(query(Relation.newBuilder().setProject(Project.newBuilder().setInput(RANGE)
        .addExpressions(Expression.newBuilder().setUnresolvedFunction(Expression.UnresolvedFunction.newBuilder()
            .setFunctionName("upper")))).build()));
    SharedModeInterceptor.check("not a plan request");
  }

  @Test
  void theSettingIsTheServersAndOffByDefault() {
    assertFalse(SharedMode.enabled(new SparkConf(false)));
    assertTrue(SharedMode.enabled(new SparkConf(false).set(io.filecommit.conf.FileCommitConf.SERVER_SHARED.key(), " TRUE ")));
    assertFalse(SharedMode.enabled(new SparkConf(false).set(io.filecommit.conf.FileCommitConf.SERVER_SHARED.key(), "yes")));
  }

  @Test
  void hadoopOptionsAreRefusedValueOptionsPass() {
    SharedMode.checkOptions(Map.of("header", "true", "parquet.block.size", "1024", "spark.sql.parquet.mergeSchema",
        "true"));
    for (String key : new String[] {"fs.s3a.endpoint", "fs.file.impl", "spark.hadoop.fs.s3a.endpoint",
        "spark.sql.sources.commitProtocolClass"}) {
      FileCommitException e = assertThrows(FileCommitException.class, () -> SharedMode.checkOptions(Map.of(key, "x")));
      assertEquals("HADOOP_OPTION", e.getMessageParameters().get("what"));
      assertEquals(key, e.getMessageParameters().get("detail"));
    }
  }
}
