package io.filecommit.read;

import io.filecommit.delta.actions.Protocol;
import java.util.List;
import java.util.TreeSet;

/**
 * The table features a protocol supports, by name, sorted (DESCRIBE DETAIL's {@code tableFeatures},
 * as Delta's {@code Protocol.implicitlyAndExplicitlySupportedFeatures} lists them): the features
 * named in {@code readerFeatures} / {@code writerFeatures}, plus the features a legacy protocol
 * version implies (PROTOCOL.md "Table Features", legacy versions: writer 2 {@code appendOnly},
 * {@code invariants}; 3 {@code checkConstraints}; 4 {@code changeDataFeed}, {@code
 * generatedColumns}; 5 {@code columnMapping}; 6 {@code identityColumns}; reader 2 {@code
 * columnMapping}).
 */
public final class TableFeatureNames {
  private TableFeatureNames() {}

  /**
   * The features.
   *
   * @param p a protocol
   * @return feature names, sorted
   */
  public static List<String> supported(Protocol p) {
    TreeSet<String> out = new TreeSet<>();
    if (p.readerFeatures() != null) {
      out.addAll(p.readerFeatures());
    }
    if (p.writerFeatures() != null) {
      out.addAll(p.writerFeatures());
    }
    int w = p.minWriterVersion();
    if (w < 7) {
      if (w >= 2) {
        out.add("appendOnly");
        out.add("invariants");
      }
      if (w >= 3) {
        out.add("checkConstraints");
      }
      if (w >= 4) {
        out.add("changeDataFeed");
        out.add("generatedColumns");
      }
      if (w >= 5) {
        out.add("columnMapping");
      }
      if (w >= 6) {
        out.add("identityColumns");
      }
    }
    if (p.minReaderVersion() == 2) {
      out.add("columnMapping");
    }
    return List.copyOf(out);
  }
}
