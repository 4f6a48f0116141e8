package io.filecommit.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.ClientSettings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The settings registry is complete: every {@code spark.filecommit.*} key the product names is declared in {@link FileCommitConf}. */
class FileCommitConfTest {
  private static final Pattern KEY = Pattern.compile("spark\\.filecommit\\.[A-Za-z][A-Za-z0-9.]*[A-Za-z0-9]");
  /** The product: server sources, the Python client, the docs and the README (tests name made-up keys on purpose). */
  private static final List<String> ROOTS = List.of("src/main/java", "../client", "../docs", "../README.md");

  private static Set<String> keysNamed() throws IOException {
    Set<String> keys = new TreeSet<>();
    for (String root : ROOTS) {
      try (Stream<Path> files = Files.walk(Paths.get(root))) {
        for (Path f : files.filter(p -> p.toString().matches(".*\\.(java|py|md)$")).toList()) {
          Matcher m = KEY.matcher(Files.readString(f));
          while (m.find()) {
            keys.add(m.group());
          }
        }
      }
    }
    return keys;
  }

  @Test
  void everyKeyTheProductNamesIsDeclared() throws IOException {
    Set<String> declared = FileCommitConf.all().stream().map(FileCommitConf.Entry::key).collect(Collectors.toSet());
    List<String> undeclared = keysNamed().stream()
        .filter(k -> !declared.contains(k))
        // a prefix in prose ("spark.filecommit.autoCompact.*"), or the test jar's fault injection
        .filter(k -> declared.stream().noneMatch(d -> d.startsWith(k + ".")))
        .filter(k -> !k.startsWith("spark.filecommit.test."))
        .toList();
    assertEquals(List.of(), undeclared, "spark.filecommit.* keys named outside FileCommitConf");
  }

  @Test
  void keysAreUniqueAndOnlySessionSettingsAreClientSettable() {
    List<FileCommitConf.Entry> all = FileCommitConf.all();
    assertTrue(all.size() >= 18, "entries: " + all.size());
    assertEquals(all.size(), all.stream().map(FileCommitConf.Entry::key).distinct().count(), "duplicate keys");
    for (FileCommitConf.Entry e : all) {
      assertTrue(e.key().startsWith("spark.filecommit."), e.key());
      assertEquals(e.scope() == FileCommitConf.Scope.SESSION, ClientSettings.mayChange(e.key()), e.key());
    }
  }
}
