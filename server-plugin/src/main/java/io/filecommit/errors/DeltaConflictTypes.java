package io.filecommit.errors;

import java.lang.reflect.Constructor;
import java.util.LinkedHashMap;
import java.util.Map;
import org.codehaus.commons.compiler.CompileException;
import org.codehaus.janino.SimpleCompiler;

/**
 * Commit conflicts as the JVM classes Delta raises them as, {@code io.delta.exceptions.*} (Delta's
 * {@code DeltaErrors.concurrentAppendException} and siblings), so that a Spark Connect client that
 * knows Delta's names gets Delta's type: Spark Connect sends the server exception's class
 * hierarchy, most derived first (Spark's {@code ErrorUtils}, error info metadata {@code classes}),
 * and delta-spark's Python client maps {@code io.delta.exceptions.ConcurrentAppendException} and
 * the others to its {@code delta.exceptions} types ({@code delta.connect.exceptions}, registered in
 * pyspark's {@code EXCEPTION_CLASS_MAPPING}).
 *
 * <p>delta-spark's JVM classes are not on a filecommit server (when they are, Delta's own classes
 * keep their names and this class answers nothing). So the types are compiled once, at the first
 * conflict, by Janino (Spark's own code generator, on every Spark class path) into a class loader
 * of their own whose parent is filecommit's: {@code io.delta.exceptions.DeltaConcurrentModificationException}
 * extends {@link ClientExceptions.ConcurrentModification} (a {@code
 * java.util.ConcurrentModificationException} carrying the error class, SQLSTATE and parameters),
 * and each of {@code ConcurrentAppendException}, {@code ConcurrentDeleteReadException}, {@code
 * ConcurrentDeleteDeleteException}, {@code MetadataChangedException}, {@code
 * ProtocolChangedException} and {@code ConcurrentTransactionException} extends it, as in Delta. A
 * client that knows none of these names still finds {@code
 * io.filecommit.errors.ClientExceptions$ConcurrentModification} and {@code
 * java.util.ConcurrentModificationException} further down the hierarchy.
 */
final class DeltaConflictTypes {
  /** Delta's package of public conflict exceptions. */
  static final String PACKAGE = "io.delta.exceptions";
  /** The base of Delta's conflict exceptions. */
  static final String BASE = "DeltaConcurrentModificationException";

  /** Error class -> the simple name of Delta's exception class for it. */
  static final Map<String, String> BY_CONDITION = Map.of(
      ErrorClass.DELTA_CONCURRENT_APPEND.name(), "ConcurrentAppendException",
      ErrorClass.DELTA_CONCURRENT_DELETE_READ.name(), "ConcurrentDeleteReadException",
      ErrorClass.DELTA_CONCURRENT_DELETE_DELETE.name(), "ConcurrentDeleteDeleteException",
      ErrorClass.DELTA_METADATA_CHANGED.name(), "MetadataChangedException",
      ErrorClass.DELTA_PROTOCOL_CHANGED.name(), "ProtocolChangedException",
      ErrorClass.DELTA_CONCURRENT_TRANSACTION.name(), "ConcurrentTransactionException");

  private DeltaConflictTypes() {}

  /** The compiled constructors, simple name -> (FileCommitException, String); empty when not made. */
  private static final class Holder {
    static final Map<String, Constructor<? extends ClientExceptions.ConcurrentModification>> CONSTRUCTORS = make();
  }

  /**
   * The conflict exception of Delta's class for {@code e}'s error class.
   *
   * @param e a commit conflict (an error class of SQLSTATE class {@code 2D})
   * @param message the client's message
   * @return an {@code io.delta.exceptions} exception (a {@link ClientExceptions.ConcurrentModification}),
   *     or null when the types cannot be made here (delta-spark's own classes on the class path, or
   *     no Janino), so the caller falls back to {@link ClientExceptions.ConcurrentModification}
   */
  static ClientExceptions.ConcurrentModification of(FileCommitException e, String message) {
    Constructor<? extends ClientExceptions.ConcurrentModification> c =
        Holder.CONSTRUCTORS.get(BY_CONDITION.getOrDefault(e.getCondition(), BASE));
    if (c == null) {
      return null;
    }
    try {
      return c.newInstance(e, message);
    } catch (ReflectiveOperationException failed) {
      return null;
    }
  }

  private static Map<String, Constructor<? extends ClientExceptions.ConcurrentModification>> make() {
    Map<String, Constructor<? extends ClientExceptions.ConcurrentModification>> out = new LinkedHashMap<>();
    ClassLoader ours = DeltaConflictTypes.class.getClassLoader();
    try {
      Class.forName(PACKAGE + "." + BASE, false, ours);
      return out; // delta-spark's own classes are here: theirs keep the names
    } catch (ClassNotFoundException expected) {
      // the usual case: compile them below
    }
    try {
      ClassLoader base = compile(ours, BASE, ClientExceptions.ConcurrentModification.class.getName().replace('$', '.'));
      out.put(BASE, constructor(base, BASE));
      for (String name : BY_CONDITION.values()) {
        out.put(name, constructor(compile(base, name, PACKAGE + "." + BASE), name));
      }
    } catch (CompileException | ReflectiveOperationException | LinkageError failed) {
      out.clear(); // the plain ConcurrentModification then
    }
    return Map.copyOf(out);
  }

  private static ClassLoader compile(ClassLoader parent, String name, String superclass) throws CompileException {
    SimpleCompiler compiler = new SimpleCompiler();
    compiler.setParentClassLoader(parent);
    String fc = FileCommitException.class.getName();
    compiler.cook("package " + PACKAGE + ";\n"
        + "public class " + name + " extends " + superclass + " {\n"
        + "  private static final long serialVersionUID = 1L;\n"
        + "  public " + name + "(" + fc + " error, String message) { super(error, message); }\n"
        + "}\n");
    return compiler.getClassLoader();
  }

  private static Constructor<? extends ClientExceptions.ConcurrentModification> constructor(ClassLoader loader,
      String name) throws ReflectiveOperationException {
    return Class.forName(PACKAGE + "." + name, true, loader).asSubclass(ClientExceptions.ConcurrentModification.class)
        .getConstructor(FileCommitException.class, String.class);
  }
}
