package io.filecommit.deletionvectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.filecommit.delta.KernelInternals;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.testing.SparkTestSession;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.LongStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Deletion vectors as written by {@link DeletionVectorWriter} and {@link
 * DeletionVectorBitmapGenerator}, read back by Delta Kernel's DV reader (protocol "Deletion Vector
 * Format", "Deletion Vector File Storage Format") and by RoaringBitmap's {@code
 * Roaring64NavigableMap.deserializePortable}.
 */
class DeletionVectorsTest {
  @TempDir
  java.nio.file.Path tmp;

  private final Configuration conf = new Configuration();

  private Path root() {
    return new Path(tmp.toUri());
  }

  private FileSystem fs() throws Exception {
    return root().getFileSystem(conf);
  }

  private Engine engine() {
    return DefaultEngine.create(conf);
  }

  private static Roaring64NavigableMap bitmap(long... rows) {
    Roaring64NavigableMap b = new Roaring64NavigableMap();
    for (long r : rows) {
      b.addLong(r);
    }
    return b;
  }

  private static final long[] SPARSE = {0, 3, 4, 5, 70_000, (1L << 32) + 7, (3L << 32) + 1};
  private static final long[] DENSE = LongStream.range(10, 200_000).filter(r -> r % 3 != 0).toArray();

  @Test
  void serializedBitmapIsTheMagicNumberThenThePortable64BitFormat() throws Exception {
    byte[] bytes = DeletionVectorStore.serialize(bitmap(SPARSE));
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(1681511377, b.getInt());
    assertEquals(3, b.getLong(), "three 32-bit buckets: high bits 0, 1 and 3");
    assertEquals(0, b.getInt(), "first bucket key");
    Roaring64NavigableMap back = new Roaring64NavigableMap();
    back.deserializePortable(new DataInputStream(new ByteArrayInputStream(bytes, 4, bytes.length - 4)));
    assertArrayEquals(SPARSE, back.toArray());
    assertThrows(IllegalArgumentException.class, () -> DeletionVectorStore.serialize(bitmap(1, -5)));
  }

  @Test
  void oneFileOfSeveralDeletionVectorsReadsBackThroughKernel() throws Exception {
    String token = DeletionVectorStore.newToken();
    List<DeletionVectorDescriptor> dvs = new ArrayList<>();
    Path file;
    try (DeletionVectorWriter w = new DeletionVectorWriter(fs(), root(), token)) {
      dvs.add(w.write(bitmap(SPARSE)));
      dvs.add(w.write(bitmap(DENSE)));
      dvs.add(w.write(bitmap(42)));
      file = w.currentFile();
      assertEquals(List.of(file), w.files());
    }
    assertTrue(file.getName().matches("deletion_vector_" + token + "-[0-9a-f]{4}-[0-9a-f]{12}\\.bin"), file.getName());
    long[][] expected = {SPARSE, DENSE, {42}};
    int offset = 1;
    for (int i = 0; i < dvs.size(); i++) {
      DeletionVectorDescriptor dv = dvs.get(i);
      assertEquals("u", dv.storageType());
      assertEquals(offset, dv.offset(), "offset of the dataSize field");
      assertEquals(expected[i].length, dv.cardinality());
      assertArrayEquals(expected[i], KernelInternals.deletedRowIndexes(engine(), root().toString(), dv));
      assertTrue(KernelInternals.deletedRows(engine(), root().toString(), dv).test(expected[i][0]));
      offset += 4 + dv.sizeInBytes() + 4;
    }
    byte[] content = Files.readAllBytes(new File(file.toUri()).toPath());
    assertEquals(offset, content.length, "version byte, then size, bitmap and CRC per DV");
    assertEquals(1, content[0]);
  }

  @Test
  void sweepDeletesOnlyTheCommandsUnkeptFiles() throws Exception {
    String token = DeletionVectorStore.newToken();
    String other = DeletionVectorStore.newToken();
    List<Path> ours = new ArrayList<>();
    for (String t : List.of(token, token, other)) {
      try (DeletionVectorWriter w = new DeletionVectorWriter(fs(), root(), t)) {
        w.write(bitmap(1));
        ours.add(w.currentFile());
      }
    }
    List<Path> deleted = DeletionVectorStore.sweep(fs(), root(), token, Set.of(ours.get(1).getName()));
    assertEquals(List.of(ours.get(0).getName()), deleted.stream().map(Path::getName).toList());
    assertTrue(fs().exists(ours.get(1)) && fs().exists(ours.get(2)));
  }

  @Test
  void generatorBuildsBitmapsPerFileOnExecutorsAndUnionsTheCurrentDeletionVector() throws Exception {
    SparkSession spark = SparkTestSession.get();
    // An existing DV on file b (rows 1 and 7), as another writer left it.
    DeletionVectorDescriptor old;
    try (DeletionVectorWriter w = new DeletionVectorWriter(fs(), root(), DeletionVectorStore.newToken())) {
      old = w.write(bitmap(1, 7));
    }
    List<AddFile> candidates = List.of(file("a", 10, null), file("b", 1_000_000, old), file("c", 3, null),
        file("d", 5, null));
    List<Row> marks = new ArrayList<>();
    LongStream.of(2, 9, 0).forEach(r -> marks.add(RowFactory.create("a", r)));
    LongStream.range(100, 600_000).filter(r -> r % 2 == 0).forEach(r -> marks.add(RowFactory.create("b", r)));
    LongStream.range(0, 3).forEach(r -> marks.add(RowFactory.create("c", r))); // every row of c
    StructType schema = new StructType().add("f", DataTypes.StringType).add("r", DataTypes.LongType);
    Dataset<Row> df = spark.createDataFrame(marks, schema).repartition(3);
    String token = DeletionVectorStore.newToken();

    Map<String, DeletionVectorBitmapGenerator.Outcome> out = new java.util.HashMap<>();
    for (DeletionVectorBitmapGenerator.Outcome o : DeletionVectorBitmapGenerator.generate(spark, df, candidates, root(),
        conf, token)) {
      out.put(o.path(), o);
    }
    assertEquals(Set.of("a", "b", "c"), out.keySet(), "d has no marked row");
    assertArrayEquals(new long[] {0, 2, 9}, read(out.get("a").deletionVector()));
    assertEquals(3, out.get("a").newlyMarked());
    long[] b = read(out.get("b").deletionVector());
    assertEquals(299_950 + 2, b.length);
    assertEquals(299_950 + 2, out.get("b").deletionVector().cardinality());
    assertEquals(299_950, out.get("b").newlyMarked());
    assertTrue(Arrays.binarySearch(b, 1) >= 0 && Arrays.binarySearch(b, 7) >= 0 && Arrays.binarySearch(b, 100) >= 0);
    assertNull(out.get("c").deletionVector(), "every row of c is marked: no DV, the file is only removed");
    assertEquals(3, out.get("c").newlyMarked());
    Set<String> dvFiles = new HashSet<>();
    out.values().forEach(o -> {
      if (o.dvFile() != null) {
        dvFiles.add(o.dvFile());
      }
    });
    assertTrue(dvFiles.stream().allMatch(n -> n.startsWith("deletion_vector_" + token)));
    assertTrue(dvFiles.size() <= 2, "one DV file per task, files a and b may share one: " + dvFiles);
  }

  @Test
  void rowIndexFilterDropsOrKeepsMarkedRows() throws Exception {
    SparkSession spark = SparkTestSession.get();
    DeletionVectorDescriptor dv;
    try (DeletionVectorWriter w = new DeletionVectorWriter(fs(), root(), DeletionVectorStore.newToken())) {
      dv = w.write(bitmap(1, 3));
    }
    List<Row> rows = new ArrayList<>();
    for (String f : List.of("x", "y", "z")) {
      LongStream.range(0, 5).forEach(r -> rows.add(RowFactory.create(f, r)));
    }
    Dataset<Row> df = spark.createDataFrame(rows, new StructType().add("f", DataTypes.StringType)
        .add("r", DataTypes.LongType));
    for (RowIndexFilter.Mode mode : RowIndexFilter.Mode.values()) {
      List<String> kept = df.filter(RowIndexFilter.keep(spark, root().toString(), conf, Map.of("x", dv), Set.of("z"), mode,
          functions.col("f"), functions.col("r"))).collectAsList().stream().map(r -> r.getString(0) + r.getLong(1))
          .sorted().toList();
      List<String> expected = mode == RowIndexFilter.Mode.DROP_MARKED
          ? List.of("x0", "x2", "x4", "y0", "y1", "y2", "y3", "y4")
          : List.of("x1", "x3", "z0", "z1", "z2", "z3", "z4");
      assertEquals(expected, kept, mode.toString());
    }
  }

  private long[] read(DeletionVectorDescriptor dv) {
    return KernelInternals.deletedRowIndexes(engine(), root().toString(), dv);
  }

  private static AddFile file(String path, long numRecords, DeletionVectorDescriptor dv) {
    return new AddFile(path, Map.of(), 100, 0, true, "{\"numRecords\":" + numRecords + "}", Map.of(), dv);
  }
}
