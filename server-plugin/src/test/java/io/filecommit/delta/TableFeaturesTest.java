package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.FileCommitException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** The feature gate (protocol "Table Features") and the protocol a metadata change needs. */
class TableFeaturesTest {
  private static final StructType SCHEMA = new StructType().add("id", DataTypes.LongType).add("v", DataTypes.StringType);

  private static Metadata md(StructType schema, Map<String, String> conf) {
    return new Metadata("id", null, null, schema.json(), List.of(), conf, 0L);
  }

  @Test
  void unsupportedWriterFeatureIsRefusedByName() {
    Protocol p = new Protocol(1, 7, null, Set.of("appendOnly", "identityColumns", "icebergCompatV2", "domainMetadata"));
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> TableFeatures.checkWritable(p, md(SCHEMA, Map.of()), "/t"));
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", e.getCondition());
    assertEquals("56038", e.getSqlState());
    assertTrue(e.getMessage().contains("icebergCompatV2"), e.getMessage());
    assertEquals("icebergCompatV2", e.getMessageParameters().get("unsupported"));
  }

  @Test
  void unsupportedReaderFeatureAndTooNewVersionsAreRefused() {
    Protocol p = new Protocol(3, 7, Set.of("deletionVectors", "variantType"), Set.of("deletionVectors", "variantType"));
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> TableFeatures.checkWritable(p, md(SCHEMA, Map.of()), "/t"));
    assertEquals("variantType", e.getMessageParameters().get("unsupported"));
    assertThrows(FileCommitException.class, () -> TableFeatures.checkWritable(Protocol.legacy(1, 8), md(SCHEMA, Map.of()), "/t"));
    assertThrows(FileCommitException.class, () -> TableFeatures.checkWritable(new Protocol(4, 7, Set.of(), Set.of()), md(SCHEMA, Map.of()), "/t"));
  }

  @Test
  void supportedFeaturesAndLegacyVersionsPass() {
    assertDoesNotThrow(() -> TableFeatures.checkWritable(Protocol.legacy(1, 2), md(SCHEMA, Map.of()), "/t"));
    assertDoesNotThrow(() -> TableFeatures.checkWritable(Protocol.legacy(1, 4), md(SCHEMA, Map.of()), "/t"));
    assertDoesNotThrow(() -> TableFeatures.checkWritable(new Protocol(3, 7,
        Set.of("deletionVectors", "timestampNtz", "v2Checkpoint"),
        Set.of("deletionVectors", "timestampNtz", "v2Checkpoint", "appendOnly", "invariants", "checkConstraints",
            "changeDataFeed", "generatedColumns", "domainMetadata", "inCommitTimestamp")), md(SCHEMA, Map.of()), "/t"));
    // Writer 6 implies identityColumns, which is honoured with or without identity columns.
    assertDoesNotThrow(() -> TableFeatures.checkWritable(Protocol.legacy(1, 6), md(SCHEMA, Map.of()), "/t"));
    StructType identity = new StructType(new StructField[] {new StructField("id", DataTypes.LongType, false,
        new MetadataBuilder().putLong("delta.identity.start", 1).putLong("delta.identity.step", 1)
            .putBoolean("delta.identity.allowExplicitInsert", false).build())});
    assertDoesNotThrow(() -> TableFeatures.checkWritable(Protocol.legacy(1, 6), md(identity, Map.of()), "/t"));
    assertTrue(TableFeatures.writerFeatures(TableFeatures.required(null, md(identity, Map.of())))
        .contains("identityColumns"), "a new table with an identity column needs the feature");
  }

  @Test
  void requiredProtocolRaisesLegacyVersionsOrAddsFeatures() {
    assertEquals(Protocol.legacy(1, 2), TableFeatures.required(null, md(SCHEMA, Map.of())));
    assertEquals(Protocol.legacy(1, 3), TableFeatures.required(null, md(SCHEMA, Map.of("delta.constraints.pos", "id > 0"))));
    // As Delta 4: writer 4 would imply generatedColumns too, so the table moves to table features.
    assertEquals(new Protocol(1, 7, null, Set.of("appendOnly", "invariants", "checkConstraints", "changeDataFeed")),
        TableFeatures.required(Protocol.legacy(1, 3), md(SCHEMA, Map.of("delta.enableChangeDataFeed", "true"))));
    assertEquals(new Protocol(1, 7, null, Set.of("appendOnly", "invariants", "changeDataFeed")),
        TableFeatures.required(null, md(SCHEMA, Map.of("delta.enableChangeDataFeed", "true"))));
    Protocol same = Protocol.legacy(1, 4);
    assertEquals(same, TableFeatures.required(same, md(SCHEMA, Map.of("delta.constraints.pos", "id > 0"))));
    Protocol v7 = new Protocol(3, 7, Set.of("deletionVectors"), Set.of("deletionVectors", "appendOnly", "invariants"));
    Protocol up = TableFeatures.required(v7, md(SCHEMA, Map.of("delta.enableChangeDataFeed", "true")));
    assertEquals(Set.of("deletionVectors", "appendOnly", "invariants", "changeDataFeed"), up.writerFeatures());
    assertEquals(Set.of("deletionVectors"), up.readerFeatures());
    Protocol ict = TableFeatures.required(null, md(SCHEMA, Map.of("delta.enableInCommitTimestamps", "true")));
    assertEquals(7, ict.minWriterVersion());
    assertEquals(1, ict.minReaderVersion());
    assertNull(ict.readerFeatures());
    assertEquals(Set.of("appendOnly", "invariants", "inCommitTimestamp"), ict.writerFeatures());
  }

  @Test
  void columnMappingAndTypeWideningRaiseTheProtocolAsDeltaDoes() {
    Protocol legacy = TableFeatures.required(Protocol.legacy(1, 2), md(SCHEMA, Map.of("delta.columnMapping.mode", "name")));
    assertEquals(2, legacy.minReaderVersion());
    assertEquals(7, legacy.minWriterVersion());
    assertTrue(legacy.writerFeatures().containsAll(Set.of("appendOnly", "invariants", "columnMapping")));
    Protocol mappedLegacy = Protocol.legacy(2, 5);
    assertSame(mappedLegacy, TableFeatures.required(mappedLegacy, md(SCHEMA, Map.of("delta.columnMapping.mode", "name"))));
    Protocol widened = TableFeatures.required(Protocol.legacy(1, 2), md(SCHEMA, Map.of("delta.enableTypeWidening", "true")));
    assertEquals(3, widened.minReaderVersion());
    assertEquals(7, widened.minWriterVersion());
    assertTrue(widened.readerFeatures().contains("typeWidening") && widened.writerFeatures().contains("typeWidening"));
    Protocol both = TableFeatures.required(widened, md(SCHEMA, Map.of("delta.enableTypeWidening", "true",
        "delta.columnMapping.mode", "name")));
    assertTrue(both.readerFeatures().contains("columnMapping") && both.writerFeatures().contains("columnMapping"));
  }

  @Test
  void timestampNtzColumnsNeedTheReaderWriterFeature() {
    Protocol top = TableFeatures.required(null, md(SCHEMA.add("at", DataTypes.TimestampNTZType), Map.of()));
    assertEquals(3, top.minReaderVersion());
    assertEquals(7, top.minWriterVersion());
    assertEquals(Set.of("timestampNtz"), top.readerFeatures());
    assertEquals(Set.of("appendOnly", "invariants", "timestampNtz"), top.writerFeatures());
    StructType nested = SCHEMA.add("events", DataTypes.createArrayType(
        new StructType().add("at", DataTypes.createMapType(DataTypes.StringType, DataTypes.TimestampNTZType))));
    assertTrue(TableFeatures.required(Protocol.legacy(1, 2), md(nested, Map.of())).readerFeatures().contains("timestampNtz"));
    assertEquals(Protocol.legacy(1, 2), TableFeatures.required(null, md(SCHEMA.add("at", DataTypes.TimestampType), Map.of())));
  }

  @Test
  void columnMappingGivesIdsAndPhysicalNames() {
    Metadata before = md(SCHEMA, Map.of());
    Metadata upgraded = ColumnMapping.assign(before, md(SCHEMA, Map.of("delta.columnMapping.mode", "name")));
    assertEquals("id", upgraded.schema().apply("id").metadata().getString(ColumnMapping.PHYSICAL_NAME));
    assertEquals("2", upgraded.configuration().get(ColumnMapping.MAX_COLUMN_ID));
    Metadata fresh = ColumnMapping.assign(null, md(SCHEMA, Map.of("delta.columnMapping.mode", "id")));
    assertTrue(fresh.schema().apply("v").metadata().getString(ColumnMapping.PHYSICAL_NAME).startsWith("col-"));
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> ColumnMapping.assign(upgraded, md(upgraded.schema(), Map.of("delta.columnMapping.mode", "id"))));
    assertEquals("DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE", e.getCondition());
    assertSame(before, ColumnMapping.assign(before, before));
  }
}
