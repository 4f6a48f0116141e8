package io.filecommit.delta;

import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.ErrorClass;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;

/**
 * The one table-feature gate: which protocols filecommit writes to, and which protocol a metadata
 * change needs (protocol sections "Protocol Evolution", "Table Features", and each feature's
 * "Writer Requirements"; Delta's {@code TableFeature}).
 *
 * <p>Legacy writer versions imply features: 2 {@code appendOnly invariants}; 3 {@code
 * +checkConstraints}; 4 {@code +changeDataFeed generatedColumns}; 5 {@code +columnMapping}; 6
 * {@code +identityColumns}. Reader 2 implies {@code columnMapping}. Versions 3 (reader) and 7
 * (writer) list their features. A write proceeds only when every writer feature of the table (and
 * every reader feature, since our commits must read back right) is one filecommit honours; else it
 * is refused with {@code DELTA_UNSUPPORTED_FEATURES_FOR_WRITE} naming the features.
 */
public final class TableFeatures {
  /** Writer features whose writer requirements filecommit meets. */
  public static final Set<String> SUPPORTED_WRITER = Set.of(
      "appendOnly", "invariants", "checkConstraints", "generatedColumns", "changeDataFeed",
      "deletionVectors", "timestampNtz", "domainMetadata", "inCommitTimestamp", "v2Checkpoint",
      "vacuumProtocolCheck", "checkpointProtection", "columnMapping", "typeWidening",
      "rowTracking", "clustering", "allowColumnDefaults", "identityColumns");
  /** Reader features of tables filecommit writes to. */
  public static final Set<String> SUPPORTED_READER = Set.of(
      "deletionVectors", "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck", "columnMapping", "typeWidening");

  /** Column metadata key of a generated column's expression. */
  public static final String GENERATION_EXPRESSION = "delta.generationExpression";
  /** Column metadata key of an identity column ({@link IdentityColumns#START}). */
  public static final String IDENTITY_START = IdentityColumns.START;

  private TableFeatures() {}

  /**
   * The writer features a protocol has, explicit (writer 7) or implied by its legacy version.
   *
   * @param p the protocol
   * @return feature names
   */
  public static Set<String> writerFeatures(Protocol p) {
    if (p.hasWriterFeatures()) {
      return p.writerFeatures() == null ? Set.of() : p.writerFeatures();
    }
    Set<String> f = new LinkedHashSet<>();
    int w = p.minWriterVersion();
    if (w >= 2) {
      f.add("appendOnly");
      f.add("invariants");
    }
    if (w >= 3) {
      f.add("checkConstraints");
    }
    if (w >= 4) {
      f.add("changeDataFeed");
      f.add("generatedColumns");
    }
    if (w >= 5) {
      f.add("columnMapping");
    }
    if (w >= 6) {
      f.add("identityColumns");
    }
    return f;
  }

  /**
   * The reader features a protocol has, explicit (reader 3) or implied (reader 2: columnMapping).
   *
   * @param p a protocol
   * @return the feature names, empty for reader version 1
   */
  public static Set<String> readerFeatures(Protocol p) {
    if (p.hasReaderFeatures()) {
      return p.readerFeatures() == null ? Set.of() : p.readerFeatures();
    }
    return p.minReaderVersion() >= 2 ? Set.of("columnMapping") : Set.of();
  }

  /**
   * Refuses a write to a table whose protocol or metadata needs what filecommit does not honour.
   * A legacy version's implied feature only counts when the metadata uses it (writer 6 without
   * identity columns is fine; writer 5 with {@code delta.columnMapping.mode=none} is fine), as in
   * Delta's own writer.
   *
   * @param p the table's protocol
   * @param md the table's metadata
   * @param table the table path, for the message
   * @throws io.filecommit.errors.FileCommitException DELTA_UNSUPPORTED_FEATURES_FOR_WRITE naming
   *     every unsupported feature
   */
  public static void checkWritable(Protocol p, Metadata md, String table) {
    Set<String> unsupported = new TreeSet<>();
    if (p.minReaderVersion() > Protocol.TABLE_FEATURES_READER) {
      unsupported.add("readerVersion" + p.minReaderVersion());
    }
    if (p.minWriterVersion() > Protocol.TABLE_FEATURES_WRITER) {
      unsupported.add("writerVersion" + p.minWriterVersion());
    }
    for (String f : writerFeatures(p)) {
      if (!SUPPORTED_WRITER.contains(f) && (p.hasWriterFeatures() || usedByMetadata(f, md))) {
        unsupported.add(f);
      }
    }
    for (String f : readerFeatures(p)) {
      if (!SUPPORTED_READER.contains(f) && (p.hasReaderFeatures() || usedByMetadata(f, md))) {
        unsupported.add(f);
      }
    }
    if (!unsupported.isEmpty()) {
      throw ErrorClass.DELTA_UNSUPPORTED_FEATURES_FOR_WRITE.error(
          "Cannot write to the Delta table at " + table + ": it requires table feature(s) " + unsupported
              + " that filecommit does not support (protocol reader " + p.minReaderVersion() + ", writer "
              + p.minWriterVersion() + "); supported writer features: " + new TreeSet<>(SUPPORTED_WRITER),
          Map.of("unsupported", String.join(", ", unsupported), "table", table));
    }
  }

  /** Whether the metadata uses a legacy-implied feature (so its rules are in force). */
  static boolean usedByMetadata(String feature, Metadata md) {
    if (md == null) {
      return false;
    }
    switch (feature) {
      case "columnMapping":
        return ColumnMapping.enabled(md);
      case "identityColumns":
        return anyField(md.schema(), IDENTITY_START);
      default:
        return true;
    }
  }

  private static boolean anyField(StructType schema, String metadataKey) {
    for (StructField f : schema.fields()) {
      if (f.metadata().contains(metadataKey)) {
        return true;
      }
      if (f.dataType() instanceof StructType s && anyField(s, metadataKey)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The protocol a table needs after a metadata change: {@code current} (null for a new table)
   * with the features the metadata uses added — change data feed, CHECK constraints, generated
   * columns, identity columns, in-commit timestamps, column mapping, deletion vectors, {@code TIMESTAMP_NTZ} columns,
   * type widening — written as
   * Delta 4 writes it: a legacy protocol when the resulting feature set is exactly one legacy
   * version's (protocol "Table Features": writer 2 = appendOnly, invariants; 3 adds
   * checkConstraints; 4 changeDataFeed, generatedColumns; 5 columnMapping; 6 identityColumns;
   * reader 2 = columnMapping), else writer 7 listing every feature (a legacy version's implied ones
   * too) and reader 1, 2 (only columnMapping) or 3 listing its reader features. A table on writer 7
   * stays there; nothing is ever removed.
   *
   * @param current the table's protocol, or null
   * @param md the new metadata
   * @return the protocol to commit (equal to {@code current} when nothing is needed)
   */
  public static Protocol required(Protocol current, Metadata md) {
    Protocol base = current == null ? Protocol.DEFAULT : current;
    Map<String, String> conf = md.configuration();
    Set<String> writers = new TreeSet<>(writerFeatures(base));
    Set<String> readers = new TreeSet<>(readerFeatures(base));
    writers.add("appendOnly");
    writers.add("invariants");
    if (conf.keySet().stream().anyMatch(k -> k.startsWith(TableConfig.CONSTRAINT_PREFIX))) {
      writers.add("checkConstraints");
    }
    if (TableConfig.ENABLE_CHANGE_DATA_FEED.fromConfiguration(conf)) {
      writers.add("changeDataFeed");
    }
    if (anyField(md.schema(), GENERATION_EXPRESSION)) {
      writers.add("generatedColumns");
    }
    if (anyField(md.schema(), IDENTITY_START)) {
      writers.add("identityColumns"); // protocol "Identity Columns": a writer feature
    }
    if (TableConfig.IN_COMMIT_TIMESTAMPS.fromConfiguration(conf)) {
      writers.add("inCommitTimestamp");
    }
    if (ColumnMapping.enabled(md)) {
      writers.add("columnMapping");
      readers.add("columnMapping");
    }
    if (TableConfig.ENABLE_DELETION_VECTORS.fromConfiguration(conf)) {
      writers.add("deletionVectors");
      readers.add("deletionVectors");
    }
    if (md.schema().existsRecursively(t -> t instanceof TimestampNTZType)) {
      // protocol "Timestamp without timezone (TimestampNtz)": a reader and writer feature
      writers.add("timestampNtz");
      readers.add("timestampNtz");
    }
    if (TableConfig.ENABLE_ROW_TRACKING.fromConfiguration(conf)) {
      // protocol "Row Tracking": a writer feature that needs domainMetadata
      writers.add("rowTracking");
      writers.add("domainMetadata");
    }
    if (TableConfig.ENABLE_TYPE_WIDENING.fromConfiguration(conf)) {
      writers.add("typeWidening");
      readers.add("typeWidening");
    }
    if (writers.equals(writerFeatures(base)) && readers.equals(readerFeatures(base))) {
      return base;
    }
    int reader = readers.isEmpty() ? 1 : readers.equals(Set.of("columnMapping")) ? 2 : Protocol.TABLE_FEATURES_READER;
    if (!base.hasWriterFeatures() && reader < Protocol.TABLE_FEATURES_READER) {
      for (int v = 2; v < Protocol.TABLE_FEATURES_WRITER; v++) {
        if (writers.equals(writerFeatures(Protocol.legacy(1, v)))) {
          return Protocol.legacy(Math.max(reader, base.minReaderVersion()), v);
        }
      }
    }
    int finalReader = Math.max(reader, base.minReaderVersion());
    return new Protocol(finalReader, Protocol.TABLE_FEATURES_WRITER,
        finalReader >= Protocol.TABLE_FEATURES_READER ? readers : null, writers);
  }

  /**
   * A protocol with writer features added (a feature the metadata does not show, e.g. {@code
   * clustering}): writer 7 listing the features the protocol had (a legacy version's implied ones
   * too) and the new ones; the reader version and reader features kept (protocol "Table Features").
   *
   * @param current the table's protocol, or null for a new table
   * @param features writer feature names
   * @return the protocol to commit (equal to {@code current} when it has them all)
   */
  public static Protocol withWriterFeatures(Protocol current, Set<String> features) {
    Protocol base = current == null ? Protocol.DEFAULT : current;
    Set<String> writers = new TreeSet<>(writerFeatures(base));
    if (writers.containsAll(features)) {
      return base;
    }
    writers.addAll(features);
    int reader = base.minReaderVersion();
    return new Protocol(reader, Protocol.TABLE_FEATURES_WRITER,
        reader >= Protocol.TABLE_FEATURES_READER ? new TreeSet<>(readerFeatures(base)) : null, writers);
  }

  /**
   * The names of the generated columns of a schema (top level).
   *
   * @param schema a table schema
   * @return the fields whose metadata has {@code delta.generationExpression}, in schema order
   */
  public static List<String> generatedColumns(StructType schema) {
    return java.util.Arrays.stream(schema.fields())
        .filter(f -> f.metadata().contains(GENERATION_EXPRESSION)).map(StructField::name).toList();
  }

  /**
   * Whether writers may add deletion vectors to the table: the protocol lists {@code
   * deletionVectors} and {@code delta.enableDeletionVectors=true} (protocol "Deletion Vectors":
   * writers write DVs only then).
   *
   * @param protocol the table's protocol
   * @param md the table's metadata
   * @return true when both hold
   */
  public static boolean deletionVectorsWritable(Protocol protocol, Metadata md) {
    return writerFeatures(protocol).contains("deletionVectors") && TableConfig.ENABLE_DELETION_VECTORS.fromMetadata(md);
  }
}
