package io.filecommit.security;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.errors.FileCommitException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The grants store (file-backed), the privilege order, path prefixes, groups and the checks of {@link Access}. */
class GrantsTest {
  private static final Principal ALICE = new Principal("alice", Set.of("team_a"), false);
  private static final Principal BOB = new Principal("bob", Set.of(), false);
  private static final Principal ADMIN = new Principal("root", Set.of(), true);

  private static Grant path(String grantee, Privilege p, String object) {
    return new Grant(grantee, Grant.ObjectType.PATH, object, p);
  }

  private static String condition(Runnable r) {
    return assertThrows(FileCommitException.class, r::run).getCondition();
  }

  @Test
  void privilegesIncludeTheOnesBefore() {
    assertTrue(Privilege.OWNER.includes(Privilege.READ));
    assertTrue(Privilege.MAINTAIN.includes(Privilege.WRITE));
    assertTrue(Privilege.WRITE.includes(Privilege.WRITE));
    assertFalse(Privilege.WRITE.includes(Privilege.MAINTAIN));
    assertFalse(Privilege.READ.includes(Privilege.WRITE));
  }

  @Test
  void aPathGrantCoversItsPrefixOnWholeSegments() {
    Grant g = path("alice", Privilege.WRITE, "file:/data/a/");
    assertEquals("file:/data/a", g.object());
    assertTrue(g.covers("file:/data/a"));
    assertTrue(g.covers("file:/data/a/t1/x"));
    assertFalse(g.covers("file:/data/ab"), "a sibling sharing the prefix's characters is not below it");
    assertFalse(g.covers("file:/data"));
    assertFalse(g.covers("s3a://data/a"));
    assertTrue(path("x", Privilege.READ, "s3a://bucket/").covers("s3a://bucket/t"));
  }

  @Test
  void checksFollowGrantsGroupsAndAdmin(@TempDir Path dir) {
    Grants grants = new Grants(new FileGrantStore(dir.resolve("grants.json")), 0);
    grants.grant(path("alice", Privilege.WRITE, "file:/data/a"));
    grants.grant(path("team_a", Privilege.READ, "file:/data/shared"));
    grants.grant(new Grant("bob", Grant.ObjectType.TABLE, "Spark_Catalog.Default.T", Privilege.MAINTAIN));

    assertDoesNotThrow(() -> Access.checkPath(ALICE, grants, Privilege.WRITE, "file:/data/a/t"));
    assertDoesNotThrow(() -> Access.checkPath(ALICE, grants, Privilege.READ, "file:/data/a/t"));
    assertEquals("FILECOMMIT_PERMISSION_DENIED",
        condition(() -> Access.checkPath(ALICE, grants, Privilege.MAINTAIN, "file:/data/a/t")));
    assertDoesNotThrow(() -> Access.checkPath(ALICE, grants, Privilege.READ, "file:/data/shared/t"), "through the group");
    assertEquals("FILECOMMIT_PERMISSION_DENIED",
        condition(() -> Access.checkPath(ALICE, grants, Privilege.WRITE, "file:/data/shared/t")));
    assertEquals("FILECOMMIT_PERMISSION_DENIED",
        condition(() -> Access.checkPath(BOB, grants, Privilege.READ, "file:/data/a/t")));
    // A table: by name (any case), or by a prefix of its location.
    assertDoesNotThrow(() -> Access.checkTable(BOB, grants, Privilege.MAINTAIN, "spark_catalog.default.t", "file:/x/t"));
    assertEquals("FILECOMMIT_PERMISSION_DENIED",
        condition(() -> Access.checkTable(BOB, grants, Privilege.OWNER, "spark_catalog.default.t", "file:/x/t")));
    assertDoesNotThrow(() -> Access.checkTable(ALICE, grants, Privilege.WRITE, "spark_catalog.default.u", "file:/data/a/u"));
    assertEquals("FILECOMMIT_PERMISSION_DENIED",
        condition(() -> Access.checkTable(ALICE, grants, Privilege.READ, "spark_catalog.default.t", "file:/x/t")));
    // An admin holds everything.
    assertDoesNotThrow(() -> Access.checkPath(ADMIN, grants, Privilege.OWNER, "file:/anywhere"));
    assertDoesNotThrow(() -> Access.checkTable(ADMIN, grants, Privilege.OWNER, "c.d.t", "file:/anywhere"));
  }

  @Test
  void theRefusalNamesPrincipalPrivilegeAndObject(@TempDir Path dir) {
    Grants grants = new Grants(new FileGrantStore(dir.resolve("g.json")), 0);
    FileCommitException e = assertThrows(FileCommitException.class,
        () -> Access.checkPath(BOB, grants, Privilege.WRITE, "file:/data/a/t"));
    assertEquals("FILECOMMIT_PERMISSION_DENIED", e.getCondition());
    assertEquals("42501", e.getSqlState());
    assertEquals("bob", e.getMessageParameters().get("principal"));
    assertEquals("WRITE", e.getMessageParameters().get("privilege"));
    assertEquals("file:/data/a/t", e.getMessageParameters().get("object"));
  }

  @Test
  void revokeTakesEffectAndTheFileIsRewrittenWhole(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("grants.json");
    Grants grants = new Grants(new FileGrantStore(file), 60_000);
    Grant g = path("bob", Privilege.WRITE, "file:/data/b");
    grants.grant(g);
    grants.grant(g);
    assertEquals(List.of(g), grants.all(), "a second GRANT of the same grant stores nothing new");
    assertDoesNotThrow(() -> Access.checkPath(BOB, grants, Privilege.WRITE, "file:/data/b/t"));
    assertTrue(grants.revoke(g));
    assertFalse(grants.revoke(g));
    assertEquals("FILECOMMIT_PERMISSION_DENIED",
        condition(() -> Access.checkPath(BOB, grants, Privilege.WRITE, "file:/data/b/t")));
    assertTrue(Files.readString(file).contains("\"grants\""));
    try (var files = Files.list(dir)) {
      assertEquals(List.of(file), files.toList(), "no temporary file left");
    }
  }

  @Test
  void anotherWritersGrantIsSeenAfterTheRefreshInterval(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("grants.json");
    Grants reader = new Grants(new FileGrantStore(file), 200);
    Grants writer = new Grants(new FileGrantStore(file), 200);
    assertFalse(reader.holdsPath(BOB, Privilege.READ, "file:/data/b/t"));
    writer.grant(path("bob", Privilege.READ, "file:/data/b"));
    Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5000));
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (!reader.holdsPath(BOB, Privilege.READ, "file:/data/b/t") && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertTrue(reader.holdsPath(BOB, Privilege.READ, "file:/data/b/t"));
  }

  @Test
  void aBrokenFileIsRefusedNamingIt(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("grants.json");
    Files.writeString(file, "{\"grants\": [{\"grantee\": \"a\", \"privilege\": \"SUPERUSER\", \"objectType\": \"PATH\","
        + " \"object\": \"file:/x\"}]}");
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> new FileGrantStore(file).load());
    assertTrue(e.getMessage().contains(file.toString()));
  }

  @Test
  void aCheckCostsMicroseconds(@TempDir Path dir) {
    Grants grants = new Grants(new FileGrantStore(dir.resolve("g.json")), 2000);
    for (int i = 0; i < 1000; i++) {
      grants.grant(path("user" + i, Privilege.WRITE, "file:/data/u" + i));
    }
    grants.grant(path("team_a", Privilege.WRITE, "file:/data/a"));
    for (int i = 0; i < 20_000; i++) {
      Access.checkPath(ALICE, grants, Privilege.WRITE, "file:/data/a/t");
    }
    long start = System.nanoTime();
    for (int i = 0; i < 10_000; i++) {
      Access.checkPath(ALICE, grants, Privilege.WRITE, "file:/data/a/t");
    }
    long perCheckNs = (System.nanoTime() - start) / 10_000;
    assertTrue(perCheckNs < 50_000, "a check took " + perCheckNs + " ns");
  }
}
