package io.filecommit.delta.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.filecommit.errors.FileCommitException;
import java.nio.file.Files;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where a new table or sink may go: not inside, above or at another table, sink or allowed root. */
class TableLocationTest {
  @TempDir
  java.nio.file.Path tmp;

  private FileSystem fs;

  @BeforeEach
  void setUp() throws Exception {
    fs = FileSystem.getLocal(new Configuration());
  }

  private Path path(String rel) {
    return fs.makeQualified(new Path(tmp.resolve(rel).toString()));
  }

  private void mkdirs(String rel) throws Exception {
    Files.createDirectories(tmp.resolve(rel));
  }

  private String refused(String rel, boolean sink, List<String> roots) {
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> TableLocation.checkNew(fs, path(rel), sink, roots));
    assertEquals("FILECOMMIT_TABLE_LOCATION_OVERLAP", e.getCondition());
    return e.getMessageParameters().get("other");
  }

  @Test
  void aFreshDirectoryOrOneWithForeignFilesIsFine() throws Exception {
    mkdirs("a/p=1");
    Files.writeString(tmp.resolve("a/p=1/x.parquet"), "x");
    TableLocation.checkNew(fs, path("a"), false, List.of());
    TableLocation.checkNew(fs, path("missing/t"), true, List.of());
    mkdirs("a/_delta_log"); // the table's own log (e.g. staged commits of the new table)
    TableLocation.checkNew(fs, path("a"), false, List.of());
  }

  @Test
  void insideATableOrASinkIsRefused() throws Exception {
    mkdirs("t/_delta_log");
    mkdirs("s/_spark_metadata");
    for (boolean sink : new boolean[] {false, true}) {
      assertEquals(path("t").toString(), refused("t/x/y", sink, List.of()));
      assertEquals(path("t").toString(), refused("t/_delta_log/x", sink, List.of()));
      assertEquals(path("s").toString(), refused("s/p=1/x", sink, List.of()));
    }
  }

  @Test
  void aboveATableOrASinkIsRefused() throws Exception {
    mkdirs("a/b/c/_delta_log");
    mkdirs("d/e/_spark_metadata");
    assertEquals(path("a/b/c").toString(), refused("a", false, List.of()));
    assertEquals(path("a/b/c").toString(), refused("a", true, List.of()));
    assertEquals(path("d/e").toString(), refused("d", false, List.of()));
    refused("", true, List.of());
  }

  @Test
  void aTableAtASinkOrASinkAtATableIsRefused() throws Exception {
    mkdirs("t/_delta_log");
    mkdirs("s/_spark_metadata");
    assertEquals(path("t").toString(), refused("t", true, List.of()));
    assertEquals(path("s").toString(), refused("s", false, List.of()));
  }

  @Test
  void anAllowedRootItselfIsRefusedAndBelowItIsFine() throws Exception {
    mkdirs("root");
    String root = tmp.resolve("root").toUri().toString();
    assertEquals(root, refused("root", false, List.of("hdfs://nn/x", root)));
    assertEquals(root + "/", refused("root", true, List.of(root + "/")));
    // the same directory through a symbolic link
    Files.createSymbolicLink(tmp.resolve("link"), tmp.resolve("root"));
    refused("root", false, List.of(tmp.resolve("link").toString()));
    TableLocation.checkNew(fs, path("root/t"), false, List.of(root));
    TableLocation.checkNew(fs, path("root/t"), true, List.of(root));
  }
}
