package io.filecommit.delta.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The table-tree listing: every file once, skipped directories not entered, vanished ones
 * tolerated, other tables' and sinks' directories left alone.
 */
class FileTreeTest {
  @TempDir
  java.nio.file.Path tmp;

  private void touch(String rel) throws Exception {
    java.nio.file.Path p = tmp.resolve(rel);
    Files.createDirectories(p.getParent());
    Files.writeString(p, rel);
  }

  private TreeSet<String> walk(java.util.function.Predicate<FileStatus> descend) throws Exception {
    FileSystem fs = FileSystem.getLocal(new Configuration());
    Path root = fs.makeQualified(new Path(tmp.toUri()));
    TreeSet<String> seen = new TreeSet<>();
    List<Long> lengths = new ArrayList<>();
    FileTree.walk(fs, root, descend, st -> {
      seen.add(root.toUri().relativize(st.getPath().toUri()).getPath());
      lengths.add(st.getLen());
    });
    assertEquals(seen.size(), lengths.size(), "each file visited once");
    return seen;
  }

  @Test
  void visitsEveryFileOfEnteredDirectoriesOnce() throws Exception {
    for (String f : List.of("a.parquet", "p=1/b.parquet", "p=1/q=x/c.parquet", "_change_data/p=1/d.parquet",
        "_delta_log/00000000000000000000.json")) {
      touch(f);
    }
    assertEquals(new TreeSet<>(List.of("a.parquet", "p=1/b.parquet", "p=1/q=x/c.parquet", "_change_data/p=1/d.parquet")),
        walk(FileTree::notDeltaLog));
    assertEquals(new TreeSet<>(List.of("a.parquet", "_delta_log/00000000000000000000.json")),
        walk(d -> d.getPath().getName().equals("_delta_log")));
  }

  @Test
  void aDirectoryDeletedBeforeItIsListedIsSkipped() throws Exception {
    touch("a.parquet");
    touch("p=1/b.parquet");
    touch("p=2/c.parquet");
    // another writer deletes p=1 after the root was listed and before p=1 is: the rest is still visited
    TreeSet<String> seen = walk(d -> {
      if (d.getPath().getName().equals("p=1")) {
        try {
          Files.delete(tmp.resolve("p=1/b.parquet"));
          Files.delete(tmp.resolve("p=1"));
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
      return true;
    });
    assertEquals(new TreeSet<>(List.of("a.parquet", "p=2/c.parquet")), seen);
  }

  @Test
  void directoriesOfOtherTablesAndSinksAreNotEntered() throws Exception {
    for (String f : List.of("a.parquet", "_delta_log/00000000000000000000.json", "p=1/b.parquet",
        "nested/c.parquet", "nested/_delta_log/00000000000000000000.json", "nested/p=1/d.parquet",
        "p=2/deep/e.parquet", "p=2/deep/_spark_metadata/0", "p=2/deep/x=1/f.parquet", "p=2/g.parquet",
        "_spark_metadata/0")) {
      touch(f);
    }
    // the root's own _delta_log does not stop the walk; a table's or a sink's root below it does,
    // with everything in it; a directory named _spark_metadata is never entered
    assertEquals(new TreeSet<>(List.of("a.parquet", "p=1/b.parquet", "p=2/g.parquet")), walk(FileTree::notDeltaLog));
    assertEquals(new TreeSet<>(List.of("a.parquet", "_delta_log/00000000000000000000.json", "p=1/b.parquet",
        "p=2/g.parquet")), walk(d -> true));
  }

  @Test
  void anEmptyLogDirectoryMarksAnotherTable() throws Exception {
    touch("x/y/c.parquet");
    Files.createDirectories(tmp.resolve("x/y/_delta_log"));
    assertEquals(new TreeSet<>(), walk(FileTree::notDeltaLog));
  }

  @Test
  void firstOwnedBelowFindsNestedTablesAndSinksButNotTheRootsOwnLog() throws Exception {
    FileSystem fs = FileSystem.getLocal(new Configuration());
    Path root = fs.makeQualified(new Path(tmp.toUri()));
    touch("_delta_log/00000000000000000000.json");
    touch("p=1/a.parquet");
    assertNull(FileTree.firstOwnedBelow(fs, root));
    assertNull(FileTree.firstOwnedBelow(fs, new Path(root, "missing")));
    touch("p=1/q/r/_spark_metadata/0");
    assertEquals(new Path(root, "p=1/q/r"), FileTree.firstOwnedBelow(fs, root));
    Files.delete(tmp.resolve("p=1/q/r/_spark_metadata/0"));
    Files.delete(tmp.resolve("p=1/q/r/_spark_metadata"));
    Files.createDirectories(tmp.resolve("t/_delta_log"));
    assertEquals(new Path(root, "t"), FileTree.firstOwnedBelow(fs, root));
  }

  @Test
  void aMissingRootHasNoFiles() throws Exception {
    FileSystem fs = FileSystem.getLocal(new Configuration());
    List<FileStatus> seen = new ArrayList<>();
    FileTree.walk(fs, new Path(tmp.resolve("nothing-here").toUri()), d -> true, seen::add);
    assertEquals(List.of(), seen);
  }
}
