package io.filecommit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layout rules of the server code, read from its sources: packages depend one way only,
 * {@code catalog} -> {@code connect} -> {@code commands} / {@code sink} -> {@code files} -> {@code txn} -> {@code
 * constraints} / {@code deletionvectors} / {@code schema} / {@code security} -> {@code delta} -> {@code conf} / {@code errors}, and no
 * main file is longer than {@value #MAX_LINES} lines.
 */
class ArchitectureTest {
  private static final Path MAIN = Paths.get("src/main/java/io/filecommit");
  private static final int MAX_LINES = 500;

  /** Layer of each top-level package: a package may use its own layer's packages or lower ones. */
  private static final Map<String, Integer> LAYERS = Map.ofEntries(
      Map.entry("errors", 0), Map.entry("conf", 0),
      Map.entry("delta", 1),
      Map.entry("security", 2), Map.entry("schema", 2), Map.entry("constraints", 2), Map.entry("deletionvectors", 2),
      Map.entry("txn", 3), Map.entry("read", 3),
      Map.entry("files", 4),
      Map.entry("commands", 5), Map.entry("sink", 5),
      Map.entry("connect", 6),
      Map.entry("catalog", 7));

  private static final Pattern PACKAGE = Pattern.compile("^package io\\.filecommit\\.([\\w.]+);", Pattern.MULTILINE);
  private static final Pattern REFERENCE = Pattern.compile("\\bio\\.filecommit\\.([a-z][\\w]*(?:\\.[a-z][\\w]*)*)");

  /** Package -> packages it references (imports and fully qualified names), from the sources. */
  private static Map<String, Set<String>> dependencies() throws IOException {
    Map<String, Set<String>> deps = new TreeMap<>();
    try (Stream<Path> files = Files.walk(MAIN)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        String text = Files.readString(f);
        Matcher pm = PACKAGE.matcher(text);
        assertTrue(pm.find(), "no package line in " + f);
        String pkg = pm.group(1);
        Set<String> out = deps.computeIfAbsent(pkg, k -> new TreeSet<>());
        Matcher m = REFERENCE.matcher(text.substring(pm.end()));
        while (m.find()) {
          String ref = m.group(1);
          if (!ref.equals(pkg)) {
            out.add(ref);
          }
        }
      }
    }
    return deps;
  }

  private static String top(String pkg) {
    return pkg.split("\\.")[0];
  }

  @Test
  void packagesDependOneWayOnly() throws IOException {
    Map<String, Set<String>> deps = dependencies();
    List<String> wrong = new ArrayList<>();
    deps.forEach((pkg, uses) -> {
      for (String used : uses) {
        if (top(used).equals("proto")) {
          if (!top(pkg).equals("connect")) {
            wrong.add(pkg + " -> " + used + " (only connect speaks the contract)");
          }
          continue;
        }
        Integer from = LAYERS.get(top(pkg));
        Integer to = LAYERS.get(top(used));
        assertTrue(from != null && to != null, "unknown package " + pkg + " or " + used);
        if (to > from) {
          wrong.add(pkg + " -> " + used);
        }
      }
    });
    assertEquals(List.of(), wrong, "imports against the layer order");
    assertEquals(List.of(), cycles(deps), "import cycles between packages");
  }

  /** Package cycles (depth-first search over the reference graph), as lists of packages. */
  private static List<List<String>> cycles(Map<String, Set<String>> deps) {
    List<List<String>> found = new ArrayList<>();
    Map<String, Integer> state = new TreeMap<>();
    for (String start : deps.keySet()) {
      visit(start, deps, state, new ArrayList<>(), found);
    }
    return found;
  }

  private static void visit(String pkg, Map<String, Set<String>> deps, Map<String, Integer> state, List<String> path,
      List<List<String>> found) {
    Integer s = state.get(pkg);
    if (s != null && s == 2) {
      return;
    }
    if (s != null && s == 1) {
      found.add(new ArrayList<>(path.subList(path.indexOf(pkg), path.size())));
      return;
    }
    state.put(pkg, 1);
    path.add(pkg);
    for (String next : deps.getOrDefault(pkg, Set.of())) {
      if (deps.containsKey(next)) {
        visit(next, deps, state, path, found);
      }
    }
    path.remove(path.size() - 1);
    state.put(pkg, 2);
  }

  /**
   * Hadoop S3A and the AWS SDK are compile-time only ({@code provided}): one class uses them, and
   * nothing names it but the S3 LogStore, so servers without the S3A jars never load them.
   */
  @Test
  void onlyTheConditionalPutTouchesS3aAndTheAwsSdk() throws IOException {
    Pattern s3a = Pattern.compile("\\b(org\\.apache\\.hadoop\\.fs\\.s3a|software\\.amazon)\\.");
    List<String> users = new ArrayList<>();
    List<String> namers = new ArrayList<>();
    try (Stream<Path> files = Files.walk(MAIN)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        String text = Files.readString(f);
        String name = MAIN.relativize(f).toString();
        if (s3a.matcher(text).find()) {
          users.add(name);
        }
        if (text.contains("S3ConditionalPut") && !name.contains("S3Conditional")) {
          namers.add(name);
        }
      }
    }
    assertEquals(List.of("delta/storage/S3ConditionalPut.java"), users, "files using S3A / the AWS SDK");
    assertEquals(List.of(), namers, "files naming S3ConditionalPut besides the S3 LogStore");
  }

  /**
   * The layout of {@code docs/architecture.md} names every package of the sources ({@code
   * name/} for a top-level package, {@code parent/child/} for a sub-package), so the page cannot
   * leave one out.
   */
  @Test
  void theArchitecturePageNamesEveryPackage() throws IOException {
    String page = Files.readString(Paths.get("../docs/architecture.md"));
    List<String> missing = new ArrayList<>();
    try (Stream<Path> dirs = Files.walk(MAIN)) {
      for (Path d : dirs.filter(Files::isDirectory).filter(d -> !d.equals(MAIN)).toList()) {
        String name = MAIN.relativize(d).toString().replace('\\', '/') + "/";
        if (!Pattern.compile("(?m)^\\s+" + Pattern.quote(name) + "\\s").matcher(page).find()) {
          missing.add(name);
        }
      }
    }
    assertEquals(List.of(), missing, "packages missing from the layout in docs/architecture.md");
  }

  @Test
  void noMainFileIsLongerThanTheLimit() throws IOException {
    List<String> tooLong = new ArrayList<>();
    try (Stream<Path> files = Files.walk(MAIN)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        long lines = Files.readAllLines(f).size();
        if (lines > MAX_LINES) {
          tooLong.add(MAIN.relativize(f) + " (" + lines + " lines)");
        }
      }
    }
    assertEquals(List.of(), tooLong, "main files over " + MAX_LINES + " lines");
  }
}
