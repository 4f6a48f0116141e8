package io.filecommit.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import io.filecommit.proto.delta.connect.DeltaCommand;
import io.filecommit.proto.delta.connect.DeltaRelation;
import io.filecommit.proto.delta.connect.DeltaTable;
import io.filecommit.proto.delta.connect.Scan;
import io.filecommit.proto.delta.connect.Generate;
import io.filecommit.proto.v1.WriteCommand;
import org.apache.spark.SparkThrowable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Delta Connect plugins answer only Delta Connect's messages, and none when delta-spark's own
 * plugins are on the server (Spark Connect then asks Delta's). The answers themselves are tested
 * end to end (tests/test_deltatable_api.py).
 */
class DeltaConnectPluginsTest {
  private static final byte[] SCAN = Any.pack(DeltaRelation.newBuilder().setScan(Scan.newBuilder()
      .setTable(DeltaTable.newBuilder().setTableOrViewName("t"))).build()).toByteArray();
  /** A kind this server does not serve ({@code DeltaTable.generate}). */
  private static final byte[] GENERATE = Any.pack(DeltaCommand.newBuilder().setGenerate(Generate.newBuilder()
      .setTable(DeltaTable.newBuilder().setTableOrViewName("t")).setMode("symlink_format_manifest")).build())
      .toByteArray();

  @AfterEach
  void forget() {
    DeltaConnectTables.deltaPlugins = null;
  }

  @Test
  void theTypeUrlsAreDeltas() {
    assertEquals("type.googleapis.com/delta.connect.DeltaRelation", Any.pack(DeltaRelation.getDefaultInstance()).getTypeUrl());
    assertEquals("type.googleapis.com/delta.connect.DeltaCommand", Any.pack(DeltaCommand.getDefaultInstance()).getTypeUrl());
  }

  @Test
  void otherMessagesAreLeftToOtherPlugins() {
    byte[] ours = Any.pack(WriteCommand.getDefaultInstance()).toByteArray();
    byte[] garbage = {(byte) 0xff, 0x01};
    assertTrue(new DeltaConnectRelations().transform(ours, null).isEmpty());
    assertTrue(new DeltaConnectRelations().transform(garbage, null).isEmpty());
    assertFalse(new DeltaConnectCommands().process(ours, null));
    assertFalse(new DeltaConnectCommands().process(garbage, null));
  }

  @Test
  void deltaSparkIsNotOnThisClassPath() {
    assertFalse(DeltaConnectTables.deltaSparkPlugins());
  }

  @Test
  void withDeltaSparksPluginsPresentNothingIsAnswered() {
    DeltaConnectTables.deltaPlugins = true;
    assertTrue(new DeltaConnectRelations().transform(SCAN, null).isEmpty());
    assertFalse(new DeltaConnectCommands().process(GENERATE, null));
  }

  @Test
  void withoutThemACommandIsRefusedByName() {
    DeltaConnectTables.deltaPlugins = false;
    RuntimeException e = assertThrows(RuntimeException.class, () -> new DeltaConnectCommands().process(GENERATE, null));
    assertEquals("FILECOMMIT_DELTA_CONNECT_UNSUPPORTED", ((SparkThrowable) e).getCondition());
    assertEquals("GENERATE", ((SparkThrowable) e).getMessageParameters().get("operation"));
    assertTrue(e instanceof UnsupportedOperationException, e.getClass().getName());
  }
}
