package io.filecommit.delta;

import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.ErrorClass;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Protocol changes asked for by name or version, as Delta computes them (protocol sections
 * "Protocol Evolution" and "Table Features"; Delta's {@code Protocol.merge}, {@code
 * Protocol.denormalized} / {@code normalized} and {@code TableFeature.featureNameToFeature}): a
 * protocol is seen as the set of features it supports, explicit (reader 3 / writer 7) or implied by
 * its legacy versions; features are added to (or removed from) that set, and the result is written
 * in its weakest form: the legacy versions whose implied features are exactly the set, else writer
 * 7 (reader 3 when a non-legacy reader-writer feature is in the set, reader 2 for {@code
 * columnMapping} alone) listing every feature.
 *
 * <p>Feature names and kinds are Delta 4's ({@code TableFeature.allSupportedFeaturesMap}). A name
 * Delta does not know is refused with {@code DELTA_UNSUPPORTED_FEATURES_IN_CONFIG}; one Delta knows
 * but filecommit does not honour ({@link TableFeatures#SUPPORTED_WRITER}, {@link
 * TableFeatures#SUPPORTED_READER}) with {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE}, before
 * anything is committed.
 */
public final class ProtocolChanges {
  /** Legacy writer-only features and the writer version that implies each (protocol "Table Features"). */
  private static final Map<String, Integer> LEGACY_WRITER = Map.of("appendOnly", 2, "invariants", 2,
      "checkConstraints", 3, "changeDataFeed", 4, "generatedColumns", 4, "identityColumns", 6);
  /** Reader-writer features of Delta 4 (both lists of the protocol); {@code columnMapping} is legacy (2, 5). */
  public static final Set<String> READER_WRITER = Set.of("columnMapping", "deletionVectors", "timestampNtz",
      "v2Checkpoint", "vacuumProtocolCheck", "typeWidening", "typeWidening-preview", "variantType",
      "variantType-preview", "variantShredding-preview", "catalogManaged", "catalogOwned-preview");
  /** Writer-only features of Delta 4 without a legacy version. */
  private static final Set<String> WRITER_ONLY = Set.of("domainMetadata", "rowTracking", "clustering",
      "inCommitTimestamp", "icebergCompatV1", "icebergCompatV2", "icebergCompatV3", "icebergWriterCompatV1",
      "icebergWriterCompatV3", "allowColumnDefaults", "checkpointProtection", "collations-preview",
      "coordinatedCommits-preview", "materializePartitionColumns");
  /** Features another feature needs (Delta's {@code requiredFeatures}). */
  private static final Map<String, Set<String>> REQUIRES = Map.of("rowTracking", Set.of("domainMetadata"),
      "clustering", Set.of("domainMetadata"));

  private ProtocolChanges() {}

  /**
   * Whether Delta 4 knows a feature name.
   *
   * @param name a feature name, case-sensitive as in the log
   * @return true for a legacy, reader-writer or writer-only feature of Delta 4
   */
  public static boolean known(String name) {
    return LEGACY_WRITER.containsKey(name) || READER_WRITER.contains(name) || WRITER_ONLY.contains(name);
  }

  /**
   * Whether a feature is a legacy one (implied by a protocol version below reader 3 / writer 7).
   *
   * @param name a feature name
   * @return true for {@code appendOnly}, {@code invariants}, {@code checkConstraints}, {@code
   *     changeDataFeed}, {@code generatedColumns}, {@code columnMapping}, {@code identityColumns}
   */
  public static boolean legacy(String name) {
    return LEGACY_WRITER.containsKey(name) || name.equals("columnMapping");
  }

  /**
   * Every feature a protocol supports, explicit or implied by its legacy versions (Delta's {@code
   * implicitlyAndExplicitlySupportedFeatures}; reader 2 implies {@code columnMapping} only with
   * writer 5 or more).
   *
   * @param p the protocol
   * @return the feature names, sorted
   */
  public static Set<String> features(Protocol p) {
    Set<String> out = new TreeSet<>();
    if (p.hasWriterFeatures() && p.writerFeatures() != null) {
      out.addAll(p.writerFeatures());
    }
    if (p.hasReaderFeatures() && p.readerFeatures() != null) {
      out.addAll(p.readerFeatures());
    }
    if (!p.hasWriterFeatures()) {
      LEGACY_WRITER.forEach((f, v) -> {
        if (p.minWriterVersion() >= v) {
          out.add(f);
        }
      });
      if (p.minWriterVersion() >= 5 && p.minReaderVersion() >= 2) {
        out.add("columnMapping");
      }
    }
    return out;
  }

  /**
   * The weakest protocol supporting exactly a set of features (Delta's {@code normalized}).
   *
   * @param features feature names Delta knows
   * @return a legacy protocol when one implies exactly these features, else writer 7 listing them
   */
  public static Protocol normalized(Set<String> features) {
    int reader = 1;
    int writer = 1;
    for (String f : features) {
      if (READER_WRITER.contains(f)) {
        reader = Math.max(reader, f.equals("columnMapping") ? 2 : Protocol.TABLE_FEATURES_READER);
        writer = Math.max(writer, f.equals("columnMapping") ? 5 : Protocol.TABLE_FEATURES_WRITER);
      } else {
        writer = Math.max(writer, LEGACY_WRITER.getOrDefault(f, Protocol.TABLE_FEATURES_WRITER));
      }
    }
    if (writer < Protocol.TABLE_FEATURES_WRITER && features(Protocol.legacy(reader, writer)).equals(features)) {
      return Protocol.legacy(reader, writer);
    }
    Set<String> readers = new TreeSet<>();
    for (String f : features) {
      if (READER_WRITER.contains(f)) {
        readers.add(f);
      }
    }
    return new Protocol(reader, Protocol.TABLE_FEATURES_WRITER,
        reader >= Protocol.TABLE_FEATURES_READER ? readers : null, new TreeSet<>(features));
  }

  /**
   * The protocol after {@code DeltaTable.upgradeTableProtocol(reader, writer)} (Delta's {@code
   * ALTER TABLE SET TBLPROPERTIES} of {@code delta.minReaderVersion} / {@code
   * delta.minWriterVersion}: the current protocol merged with the asked versions' implied features;
   * never lower than the current one).
   *
   * @param current the table's protocol
   * @param reader the asked reader version, 1 to 3
   * @param writer the asked writer version, 1 to 7
   * @return the protocol to commit (equal to {@code current} when nothing is added)
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_INVALID_PROTOCOL_VERSION} for a
   *     version outside those ranges
   */
  public static Protocol upgraded(Protocol current, int reader, int writer) {
    if (reader < 1 || reader > Protocol.TABLE_FEATURES_READER || writer < 1 || writer > Protocol.TABLE_FEATURES_WRITER) {
      throw ErrorClass.DELTA_INVALID_PROTOCOL_VERSION.error("Unsupported protocol version (reader " + reader
          + ", writer " + writer + "): readers are 1 to 3, writers 1 to 7",
          Map.of("tableNameOrPath", "", "readerRequired", String.valueOf(reader),
              "writerRequired", String.valueOf(writer),
              "supportedReaders", "1, 2, 3", "supportedWriters", "1, 2, 3, 4, 5, 6, 7"));
    }
    Set<String> all = new TreeSet<>(features(current));
    if (writer < Protocol.TABLE_FEATURES_WRITER) {
      all.addAll(features(Protocol.legacy(Math.min(reader, 2), writer)));
    }
    return same(current, normalized(all));
  }

  /**
   * The protocol after {@code DeltaTable.addFeatureSupport(name)} (Delta's {@code ALTER TABLE SET
   * TBLPROPERTIES ('delta.feature.<name>' = 'supported')}): the feature and those it needs added.
   *
   * @param current the table's protocol
   * @param name the feature's name
   * @return the protocol to commit (equal to {@code current} when it has the feature)
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_UNSUPPORTED_FEATURES_IN_CONFIG}
   *     for a name Delta does not know, {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE} for one
   *     filecommit does not honour
   */
  public static Protocol withFeature(Protocol current, String name) {
    if (!known(name)) {
      throw ErrorClass.DELTA_UNSUPPORTED_FEATURES_IN_CONFIG.error("Unknown table feature '" + name
          + "' in delta.feature." + name, Map.of("config", "delta.feature." + name));
    }
    Set<String> all = new TreeSet<>(features(current));
    all.add(name);
    all.addAll(REQUIRES.getOrDefault(name, Set.of()));
    for (String f : all) {
      if (!TableFeatures.SUPPORTED_WRITER.contains(f)
          || (READER_WRITER.contains(f) && !TableFeatures.SUPPORTED_READER.contains(f))) {
        throw ErrorClass.DELTA_UNSUPPORTED_FEATURES_FOR_WRITE.error("Table feature " + f + " is one filecommit "
            + "does not honour for writes; not added (supported writer features: "
            + new TreeSet<>(TableFeatures.SUPPORTED_WRITER) + ")", Map.of("unsupported", f));
      }
    }
    return same(current, normalized(all));
  }

  /**
   * The protocol without a feature (the last commit of Delta's {@code ALTER TABLE DROP FEATURE}).
   *
   * @param current the table's protocol
   * @param name a feature it supports
   * @return the protocol to commit
   */
  public static Protocol without(Protocol current, String name) {
    Set<String> all = new TreeSet<>(features(current));
    all.remove(name);
    return normalized(all);
  }

  private static Protocol same(Protocol current, Protocol next) {
    return features(next).equals(features(current)) ? current : next;
  }
}
