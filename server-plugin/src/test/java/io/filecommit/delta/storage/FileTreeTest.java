package io.filecommit.delta.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

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

/** The table-tree listing: every file once, skipped directories not entered, vanished ones tolerated. */
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
  void aMissingRootHasNoFiles() throws Exception {
    FileSystem fs = FileSystem.getLocal(new Configuration());
    List<FileStatus> seen = new ArrayList<>();
    FileTree.walk(fs, new Path(tmp.resolve("nothing-here").toUri()), d -> true, seen::add);
    assertEquals(List.of(), seen);
  }
}
