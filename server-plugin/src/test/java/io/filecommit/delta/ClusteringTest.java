package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.FileCommitException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** The {@code delta.clustering} domain of clustering columns (protocol "Clustered Table"). */
class ClusteringTest {
  private static final StructType SCHEMA = new StructType().add("a", DataTypes.LongType)
      .add("s", new StructType().add("x", DataTypes.IntegerType).add("y", DataTypes.IntegerType))
      .add("b", DataTypes.StringType).add("flag", DataTypes.BooleanType);

  private static Metadata md(StructType schema, List<String> partitions, Map<String, String> conf) {
    return new Metadata("id", null, null, schema.json(), partitions, conf, 0L);
  }

  @Test
  void domainHoldsPhysicalNamesInTheGivenOrderAndReadsBack() {
    StructType mapped = new StructType()
        .add("a", DataTypes.LongType, true, new MetadataBuilder().putString(ColumnMapping.PHYSICAL_NAME, "col-1")
            .putLong("delta.columnMapping.id", 1).build())
        .add("b", DataTypes.StringType, true, new MetadataBuilder().putString(ColumnMapping.PHYSICAL_NAME, "col-2")
            .putLong("delta.columnMapping.id", 2).build());
    Metadata m = md(mapped, List.of(), Map.of("delta.columnMapping.mode", "name"));
    DomainMetadata d = Clustering.domain(m, List.of("B", "a"));
    assertEquals(Clustering.DOMAIN, d.domain());
    assertEquals("{\"clusteringColumns\":[[\"col-2\"],[\"col-1\"]],\"domainName\":\"delta.clustering\"}", d.configuration());
    assertEquals(List.of("b", "a"), Clustering.logical(m, d.configuration()));
    assertEquals("{\"clusteringColumns\":[],\"domainName\":\"delta.clustering\"}", Clustering.domain(m, List.of()).configuration());
  }

  @Test
  void noneIsTheDomainOfNoClusteringColumns() {
    DomainMetadata none = Clustering.none();
    assertEquals(Clustering.domain(md(SCHEMA, List.of(), Map.of()), List.of()), none);
    assertEquals(List.of(), Clustering.logical(md(SCHEMA, List.of(), Map.of()), none.configuration()));
  }

  @Test
  void invalidClusteringColumnsAreRefusedWithDeltasClasses() {
    Map<List<String>, String> cases = Map.of(
        List.of("nope"), "DELTA_COLUMN_NOT_FOUND_IN_SCHEMA",
        List.of("flag"), "DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED",
        List.of("s"), "DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED",
        List.of("a", "A"), "DELTA_DUPLICATE_COLUMNS_FOUND",
        List.of("a", "b", "a", "b", "a"), "DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS");
    Metadata m = md(SCHEMA, List.of(), Map.of());
    cases.forEach((cols, cls) -> assertEquals(cls, assertThrows(FileCommitException.class,
        () -> Clustering.domain(m, cols), cols.toString()).getCondition(), cols.toString()));
    // b is the 4th leaf column (a, s.x, s.y, b): without statistics when only 3 are indexed.
    Metadata three = md(SCHEMA, List.of(), Map.of("delta.dataSkippingNumIndexedCols", "3"));
    assertEquals("DELTA_CLUSTERING_COLUMN_MISSING_STATS",
        assertThrows(FileCommitException.class, () -> Clustering.domain(three, List.of("b"))).getCondition());
    Clustering.domain(three, List.of("a"));
    Metadata parted = md(SCHEMA, List.of("b"), Map.of());
    assertEquals("DELTA_CLUSTER_BY_WITH_PARTITIONED_BY",
        assertThrows(FileCommitException.class, () -> Clustering.domain(parted, List.of("a"))).getCondition());
  }

  @Test
  void clusteredProtocolListsTheFeaturesOnWriterSeven() {
    Protocol p = TableFeatures.withWriterFeatures(null, Set.of("clustering", "domainMetadata"));
    assertEquals(new Protocol(1, 7, null, Set.of("appendOnly", "invariants", "clustering", "domainMetadata")), p);
    assertEquals(p, TableFeatures.withWriterFeatures(p, Set.of("clustering")));
    Protocol mapped = TableFeatures.withWriterFeatures(Protocol.legacy(2, 5), Set.of("clustering", "domainMetadata"));
    assertEquals(2, mapped.minReaderVersion());
    assertEquals(Set.of("appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
        "columnMapping", "clustering", "domainMetadata"), mapped.writerFeatures());
  }

  @Test
  void clusteringPropertyRoundTrips() {
    assertEquals(List.of("a", "b,c"), Clustering.fromProperty(Clustering.toProperty(List.of("a", "b,c"))));
    assertEquals("DELTA_ILLEGAL_OPTION",
        assertThrows(FileCommitException.class, () -> Clustering.fromProperty("a,b")).getCondition());
  }
}
