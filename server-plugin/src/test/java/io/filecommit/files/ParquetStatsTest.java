package io.filecommit.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The statistics of a file with several row groups (protocol "Per-file Statistics"). */
class ParquetStatsTest {
  private static final MessageType SCHEMA = MessageTypeParser.parseMessageType(
      "message t { required int64 id; optional double x; }");

  /** Writes rows id 0..n-1, x = id except NaN at {@code nanAt}, in row groups of about 1 KiB. */
  private static org.apache.hadoop.fs.Path write(Path dir, int n, int nanAt) throws Exception {
    org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(dir.resolve("f.parquet").toUri());
    SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
    try (ParquetWriter<org.apache.parquet.example.data.Group> w = ExampleParquetWriter.builder(file)
        .withType(SCHEMA).withConf(new Configuration()).withRowGroupSize(1024L).withPageSize(512)
        .withMinRowCountForPageSizeCheck(1).withMaxRowCountForPageSizeCheck(16).build()) {
      for (int i = 0; i < n; i++) {
        w.write(groups.newGroup().append("id", (long) i).append("x", i == nanAt ? Double.NaN : (double) i));
      }
    }
    return file;
  }

  private static JsonNode stats(org.apache.hadoop.fs.Path file) throws Exception {
    Configuration conf = new Configuration();
    FileSystem fs = file.getFileSystem(conf);
    return new ObjectMapper().readTree(ParquetStats.collect(conf, fs.getFileStatus(file), -1));
  }

  @Test
  void nanInALaterRowGroupLeavesTheColumnWithoutBounds(@TempDir Path dir) throws Exception {
    org.apache.hadoop.fs.Path file = write(dir, 2000, 1990);
    JsonNode s = stats(file);
    assertEquals(2000, s.get("numRecords").asLong());
    assertTrue(org.apache.parquet.hadoop.ParquetFileReader.open(org.apache.parquet.hadoop.util.HadoopInputFile
        .fromPath(file, new Configuration())).getFooter().getBlocks().size() > 1);
    assertFalse(s.get("minValues").has("x"), s.toString());
    assertFalse(s.get("maxValues").has("x"), s.toString());
    assertEquals(0, s.get("nullCount").get("x").asLong());
    assertEquals(1999, s.get("maxValues").get("id").asLong());
  }

  @Test
  void withoutNanEveryRowGroupBoundsTheColumn(@TempDir Path dir) throws Exception {
    JsonNode s = stats(write(dir, 2000, -1));
    assertTrue(s.get("minValues").get("x").asDouble() == 0.0, s.toString()); // -0.0 as written for 0.0
    assertEquals(1999.0, s.get("maxValues").get("x").asDouble());
  }
}
