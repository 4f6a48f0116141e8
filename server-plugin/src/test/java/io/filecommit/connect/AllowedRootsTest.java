package io.filecommit.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.errors.FileCommitException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** spark.filecommit.allowedRoots: normalization, symlinks, relative paths. */
class AllowedRootsTest {
  private final Configuration conf = new Configuration();

  @Test
  void parse() {
    assertEquals(List.of(), AllowedRoots.parse(null));
    assertEquals(List.of(), AllowedRoots.parse(" "));
    assertEquals(List.of("file:/a", "s3a://b/t"), AllowedRoots.parse(" file:/a, ,s3a://b/t "));
  }

  @Test
  void withoutRootsAbsolutePathsPassAndRelativeOnesAreRefused() {
    assertEquals("/x/y", AllowedRoots.resolve("/x/y", List.of(), conf));
    FileCommitException e = assertThrows(FileCommitException.class, () -> AllowedRoots.resolve("../../tmp/x", List.of(), conf));
    assertEquals("FILECOMMIT_RELATIVE_PATH", e.getCondition());
    assertEquals("../../tmp/x", e.getMessageParameters().get("path"));
  }

  @Test
  void insideRootsPassesOutsideIsRefused(@TempDir Path dir) throws Exception {
    Path root = Files.createDirectories(dir.resolve("root"));
    Path real = root.toRealPath();
    List<String> roots = List.of(root.toString());
    assertEquals("file:" + real + "/t", AllowedRoots.resolve(root + "/t", roots, conf));
    assertEquals("file:" + real + "/a/b", AllowedRoots.resolve("a/b", roots, conf), "relative: against the first root");
    assertEquals("file:" + real, AllowedRoots.resolve(root.toString(), roots, conf));
    for (String bad : List.of(root + "/../other", root + "-sibling/t", "/etc/x", "../x", root + "/a/../../x")) {
      FileCommitException e = assertThrows(FileCommitException.class, () -> AllowedRoots.resolve(bad, roots, conf), bad);
      assertEquals("FILECOMMIT_PATH_NOT_ALLOWED", e.getCondition(), bad);
      assertEquals("42501", e.getSqlState());
      assertTrue(e.getMessage().contains(bad), e.getMessage());
    }
  }

  @Test
  void symlinkOutOfARootIsRefused(@TempDir Path dir) throws Exception {
    Path root = Files.createDirectories(dir.resolve("root"));
    Path outside = Files.createDirectories(dir.resolve("outside"));
    Files.createSymbolicLink(root.resolve("escape"), outside);
    List<String> roots = List.of(root.toString());
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> AllowedRoots.resolve(root + "/escape/t", roots, conf));
    assertEquals("FILECOMMIT_PATH_NOT_ALLOWED", e.getCondition());
    // A symlinked root itself is resolved the same way, so paths below it pass.
    Path linkRoot = dir.resolve("linkroot");
    Files.createSymbolicLink(linkRoot, root);
    assertEquals("file:" + root.toRealPath() + "/t", AllowedRoots.resolve(linkRoot + "/t", List.of(linkRoot.toString()), conf));
  }
}
