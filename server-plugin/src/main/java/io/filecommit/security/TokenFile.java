package io.filecommit.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The static bearer tokens of a server (its {@code spark.filecommit.auth.tokensFile}), as the
 * Spark Connect Gateway's static-token authenticator keeps them, but with SHA-256 digests instead
 * of tokens, so that the file does not hold a usable secret:
 *
 * <pre>
 * {"tokens": [{"sha256": "9f86d081...", "principal": "alice", "groups": ["team-a"]}]}
 * </pre>
 *
 * A token is compared by its digest in constant time ({@link MessageDigest#isEqual}); the file is
 * read again when its modification time changes, so an operator adds or revokes a token without a
 * restart.
 */
public final class TokenFile {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One token: its digest and the principal it authenticates. */
  record Entry(byte[] sha256, String principal, Set<String> groups) {}

  private final Path path;
  private final Set<String> admins;
  private volatile long loadedMtime = Long.MIN_VALUE;
  private volatile List<Entry> entries = List.of();

  /**
   * A tokens file.
   *
   * @param path the file (JSON, above)
   * @param admins principal or group names that administer the server ({@link Principal#admin()})
   */
  public TokenFile(Path path, Set<String> admins) {
    this.path = path;
    this.admins = Set.copyOf(admins);
  }

  /**
   * The principal a bearer token authenticates.
   *
   * @param token the token the request carried
   * @return the principal, empty for an unknown token
   * @throws IllegalStateException when the file cannot be read or parsed (the operator's error; the
   *     request is refused)
   */
  public Optional<Principal> authenticate(String token) {
    byte[] digest = sha256(token);
    Entry found = null;
    for (Entry e : current()) {
      if (MessageDigest.isEqual(e.sha256(), digest)) { // constant time per entry
        found = e;
      }
    }
    if (found == null) {
      return Optional.empty();
    }
    return Optional.of(principal(found.principal(), found.groups(), admins));
  }

  /**
   * A principal with its admin flag: admin when its name or one of its groups is listed.
   *
   * @param name the principal's name
   * @param groups its groups
   * @param admins the admin names
   * @return the principal
   */
  static Principal principal(String name, Set<String> groups, Set<String> admins) {
    boolean admin = admins.contains(name) || groups.stream().anyMatch(admins::contains);
    return new Principal(name, groups, admin);
  }

  /**
   * The SHA-256 digest of a token, as the file stores it (lower-case hex: {@code printf %s
   * "$TOKEN" | sha256sum}).
   *
   * @param token the token
   * @return its digest in hex
   */
  public static String sha256Hex(String token) {
    return HexFormat.of().formatHex(sha256(token));
  }

  private static byte[] sha256(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private List<Entry> current() {
    try {
      long mtime = Files.getLastModifiedTime(path).toMillis();
      if (mtime != loadedMtime) {
        synchronized (this) {
          if (mtime != loadedMtime) {
            entries = parse(Files.readString(path));
            loadedMtime = mtime;
          }
        }
      }
      return entries;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the tokens file " + path, e);
    }
  }

  /**
   * Parses a tokens file's text.
   *
   * @param text the JSON
   * @return its entries
   * @throws IllegalStateException naming the problem for a malformed file
   */
  static List<Entry> parse(String text) {
    JsonNode root;
    try {
      root = JSON.readTree(text);
    } catch (IOException e) {
      throw new IllegalStateException("The tokens file is not JSON: " + e.getMessage(), e);
    }
    JsonNode tokens = root == null ? null : root.get("tokens");
    if (tokens == null || !tokens.isArray()) {
      throw new IllegalStateException("The tokens file has no \"tokens\" array");
    }
    List<Entry> out = new ArrayList<>();
    for (JsonNode t : tokens) {
      String hex = t.path("sha256").asText("").toLowerCase(Locale.ROOT);
      String principal = t.path("principal").asText("");
      if (!hex.matches("[0-9a-f]{64}") || principal.isBlank()) {
        throw new IllegalStateException("A tokens file entry needs \"sha256\" (64 hex digits) and \"principal\": " + t);
      }
      Set<String> groups = new LinkedHashSet<>();
      t.path("groups").forEach(g -> groups.add(g.asText()));
      out.add(new Entry(HexFormat.of().parseHex(hex), principal, groups));
    }
    return List.copyOf(out);
  }
}
