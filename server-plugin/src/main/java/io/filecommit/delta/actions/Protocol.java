package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;

/**
 * Delta {@code protocol} action (protocol "Protocol Evolution", "Table Features"; Delta's
 * {@code Protocol}).
 *
 * @param minReaderVersion minimum reader version (1, 2, or 3 with reader features)
 * @param minWriterVersion minimum writer version (2..6 legacy, 7 with writer features)
 * @param readerFeatures reader features when {@code minReaderVersion == 3}, else null
 * @param writerFeatures writer features when {@code minWriterVersion == 7}, else null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures"})
public record Protocol(int minReaderVersion, int minWriterVersion, Set<String> readerFeatures,
    Set<String> writerFeatures) implements Action {
  /** The protocol of a new plain table: reader 1, writer 2. */
  public static final Protocol DEFAULT = new Protocol(1, 2, null, null);

  /** Reader version that lists reader features. */
  public static final int TABLE_FEATURES_READER = 3;
  /** Writer version that lists writer features. */
  public static final int TABLE_FEATURES_WRITER = 7;

  /**
   * Sorted unmodifiable copies of the feature sets (null stays null).
   *
   * @param minReaderVersion minimum reader version
   * @param minWriterVersion minimum writer version
   * @param readerFeatures reader features, or null
   * @param writerFeatures writer features, or null
   */
  public Protocol {
    readerFeatures = readerFeatures == null ? null : Collections.unmodifiableSet(new TreeSet<>(readerFeatures));
    writerFeatures = writerFeatures == null ? null : Collections.unmodifiableSet(new TreeSet<>(writerFeatures));
  }

  /**
   * A legacy protocol without feature lists.
   *
   * @param minReaderVersion minimum reader version (1 or 2)
   * @param minWriterVersion minimum writer version (2..6)
   * @return the protocol
   */
  public static Protocol legacy(int minReaderVersion, int minWriterVersion) {
    return new Protocol(minReaderVersion, minWriterVersion, null, null);
  }

  /** {@return whether the writer side lists features (writer version 7)} */
  public boolean hasWriterFeatures() {
    return minWriterVersion >= TABLE_FEATURES_WRITER;
  }

  /** {@return whether the reader side lists features (reader version 3)} */
  public boolean hasReaderFeatures() {
    return minReaderVersion >= TABLE_FEATURES_READER;
  }

  @Override
  public String actionName() {
    return "protocol";
  }
}
