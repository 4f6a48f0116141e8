package io.filecommit.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The static tokens of a server ({@link TokenFile}): digests, groups, admins, reloading, bad files. */
class TokenFileTest {
  @TempDir
  Path tmp;

  private Path file(String json) throws Exception {
    Path f = tmp.resolve("tokens.json");
    Files.writeString(f, json);
    return f;
  }

  private static String entry(String token, String principal, String groups) {
    return "{\"sha256\": \"" + TokenFile.sha256Hex(token) + "\", \"principal\": \"" + principal + "\", \"groups\": ["
        + groups + "]}";
  }

  @Test
  void aTokenAuthenticatesItsPrincipalWithGroupsAndAdminFlag() throws Exception {
    TokenFile tokens = new TokenFile(file("{\"tokens\": [" + entry("tok-a", "alice", "\"team-a\"") + ", "
        + entry("tok-o", "ops", "") + "]}"), Set.of("ops", "team-x"));
    Principal alice = tokens.authenticate("tok-a").orElseThrow();
    assertEquals("alice", alice.name());
    assertEquals(Set.of("team-a"), alice.groups());
    assertFalse(alice.admin());
    assertTrue(tokens.authenticate("tok-o").orElseThrow().admin());
    assertTrue(tokens.authenticate("tok-b").isEmpty(), "an unknown token");
    assertTrue(tokens.authenticate("").isEmpty());
    // An admin group makes its members admins.
    assertTrue(new TokenFile(file("{\"tokens\": [" + entry("t", "carol", "\"team-x\"") + "]}"), Set.of("team-x"))
        .authenticate("t").orElseThrow().admin());
  }

  @Test
  void theFileIsReadAgainWhenItChanges() throws Exception {
    Path f = file("{\"tokens\": [" + entry("old", "alice", "") + "]}");
    TokenFile tokens = new TokenFile(f, Set.of());
    assertTrue(tokens.authenticate("old").isPresent());
    Files.writeString(f, "{\"tokens\": [" + entry("new", "alice", "") + "]}");
    Files.setLastModifiedTime(f, FileTime.fromMillis(Files.getLastModifiedTime(f).toMillis() + 5_000));
    assertTrue(tokens.authenticate("old").isEmpty(), "a revoked token");
    assertTrue(tokens.authenticate("new").isPresent());
  }

  @Test
  void malformedFilesAreRefusedNamingTheProblem() throws Exception {
    for (String bad : new String[] {"not json", "{}", "{\"tokens\": [{\"sha256\": \"xyz\", \"principal\": \"a\"}]}",
        "{\"tokens\": [{\"sha256\": \"" + TokenFile.sha256Hex("t") + "\"}]}"}) {
      TokenFile tokens = new TokenFile(file(bad), Set.of());
      assertThrows(IllegalStateException.class, () -> tokens.authenticate("t"), bad);
    }
  }

  @Test
  void digestsAreLowerCaseHexOfSha256() {
    // printf %s test | sha256sum
    assertEquals("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", TokenFile.sha256Hex("test"));
  }
}
