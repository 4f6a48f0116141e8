package io.filecommit.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Grants in a JSON file the operator owns ({@code spark.filecommit.auth.grantsFile}): {@code
 * {"grants": [{"grantee": "alice", "privilege": "WRITE", "objectType": "PATH", "object":
 * "file:/data/alice"}, ...]}}. A missing file is no grants. GRANT / REVOKE rewrite it whole,
 * atomically: a temporary file in the same directory, then a rename over the old one (readers see
 * the old or the new file, never a part), under one lock per store, so two GRANTs of one server do
 * not lose each other's grant. Edits by the operator are read when the file's modification time
 * changes ({@link Grants} looks at it at each refresh).
 */
public final class FileGrantStore implements GrantStore {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private final Path file;

  /**
   * A store in a file.
   *
   * @param file the JSON file (need not exist yet; its directory must)
   */
  public FileGrantStore(Path file) {
    this.file = file.toAbsolutePath();
  }

  /** {@return the file's modification time in ms, 0 when it does not exist} */
  long modified() {
    try {
      return Files.exists(file) ? Files.getLastModifiedTime(file).toMillis() : 0L;
    } catch (IOException e) {
      return -1L;
    }
  }

  /**
   * Reads the file.
   *
   * @return the grants, empty when the file does not exist
   * @throws UncheckedIOException when it cannot be read
   * @throws IllegalStateException naming the file when it is not a grants document (an unknown
   *     privilege or object type, a missing field)
   */
  @Override
  public synchronized Set<Grant> load() {
    if (!Files.exists(file)) {
      return Set.of();
    }
    JsonNode root;
    try {
      root = MAPPER.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the grants file " + file, e);
    }
    Set<Grant> out = new LinkedHashSet<>();
    JsonNode grants = root == null ? null : root.get("grants");
    if (grants == null || !grants.isArray()) {
      throw new IllegalStateException("The grants file " + file + " has no \"grants\" array");
    }
    for (JsonNode g : grants) {
      try {
        out.add(new Grant(g.path("grantee").asText(null),
            Grant.ObjectType.valueOf(g.path("objectType").asText("").toUpperCase(Locale.ROOT)),
            g.path("object").asText(null),
            Privilege.valueOf(g.path("privilege").asText("").toUpperCase(Locale.ROOT))));
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException("The grants file " + file + " has an invalid grant " + g + ": "
            + e.getMessage(), e);
      }
    }
    return out;
  }

  @Override
  public synchronized void add(Grant grant) {
    Set<Grant> all = new LinkedHashSet<>(load());
    if (all.add(grant)) {
      write(all);
    }
  }

  @Override
  public synchronized boolean remove(Grant grant) {
    Set<Grant> all = new LinkedHashSet<>(load());
    boolean removed = all.remove(grant);
    if (removed) {
      write(all);
    }
    return removed;
  }

  @Override
  public String describe() {
    return "file " + file;
  }

  private void write(Set<Grant> grants) {
    ObjectNode root = MAPPER.createObjectNode();
    ArrayNode list = root.putArray("grants");
    for (Grant g : grants) {
      list.addObject().put("grantee", g.grantee()).put("privilege", g.privilege().name())
          .put("objectType", g.type().name()).put("object", g.object());
    }
    Path tmp = null;
    try {
      tmp = Files.createTempFile(file.getParent(), "." + file.getFileName(), ".tmp");
      MAPPER.writerWithDefaultPrettyPrinter().writeValue(tmp.toFile(), root);
      try {
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
      }
      tmp = null;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the grants file " + file, e);
    } finally {
      if (tmp != null) {
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException ignored) {
          // the failure above is the one to report
        }
      }
    }
  }
}
