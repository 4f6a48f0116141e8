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

  /** A stand-in for S3A: qualifies s3a:// paths (nothing is read or written). */
  public static final class FakeObjectStore extends org.apache.hadoop.fs.RawLocalFileSystem {
    private java.net.URI uri;

    @Override
    public void initialize(java.net.URI name, Configuration c) throws java.io.IOException {
      super.initialize(name, c);
      uri = java.net.URI.create(name.getScheme() + "://" + name.getAuthority());
    }

    @Override
    public java.net.URI getUri() {
      return uri == null ? super.getUri() : uri;
    }
  }

  @Test
  void objectStoreRootsRefuseOtherBucketsPrefixesSchemesDotsAndEncodedSeparators() {
    Configuration s3 = new Configuration();
    s3.set("fs.s3a.impl", FakeObjectStore.class.getName());
    s3.setBoolean("fs.s3a.impl.disable.cache", true);
    List<String> roots = List.of("s3a://bucket/prefix");
    assertEquals("s3a://bucket/prefix/t", AllowedRoots.resolve("s3a://bucket/prefix/t", roots, s3));
    assertEquals("s3a://bucket/prefix/t", AllowedRoots.resolve("s3a://bucket/prefix/x/../t", roots, s3));
    assertEquals("s3a://bucket/prefix/a/b", AllowedRoots.resolve("a/b", roots, s3), "relative: against the root");
    for (String bad : List.of("s3a://other/prefix/t", "s3a://bucket/prefix2/t", "s3a://bucket/t",
        "s3a://bucket/prefix/../prefix2/t", "s3a://bucket/prefix/../../other/t", "s3a://bucketx/prefix/t",
        "s3a://bucket/prefix/a%2F..%2F..%2Fprefix2/t", "s3a://bucket/prefix%2F..%2Fprefix2/t",
        "s3a://bucket/prefix/a%5c..%5c..%5cprefix2", "s3://bucket/prefix/t", "s3n://bucket/prefix/t",
        "gs://bucket/prefix/t", "/tmp/prefix/t", "file:/bucket/prefix/t")) {
      FileCommitException e = assertThrows(FileCommitException.class, () -> AllowedRoots.resolve(bad, roots, s3), bad);
      assertEquals("FILECOMMIT_PATH_NOT_ALLOWED", e.getCondition(), bad);
      assertEquals(bad, e.getMessageParameters().get("path"));
    }
    // The same bucket under another scheme passes once that scheme's root is listed too.
    s3.set("fs.s3.impl", FakeObjectStore.class.getName());
    s3.setBoolean("fs.s3.impl.disable.cache", true);
    assertEquals("s3://bucket/prefix/t",
        AllowedRoots.resolve("s3://bucket/prefix/t", List.of("s3a://bucket/prefix", "s3://bucket/prefix"), s3));
  }
}
