package io.filecommit.txn;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.DomainMetadatas;
import io.filecommit.delta.MaterializedRowTracking;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.ErrorClass;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Row tracking of one transaction's commit (protocol "Row Tracking", writer requirements; Delta's
 * {@code RowId.assignFreshRowIds}, {@code DefaultRowCommitVersion.assignIfMissing} and {@code
 * ConflictChecker.reassignOverlappingRowIds / reassignRowCommitVersions}).
 *
 * <p>On a table whose protocol lists {@code rowTracking} (and {@code delta.rowTrackingSuspended} is
 * not {@code true}), every {@code add} committed gets a {@code baseRowId} above the row ID
 * high-water mark and a {@code defaultRowCommitVersion} equal to the version it lands in; a file
 * recommitted with the fields of an earlier {@code add} (a deletion vector added, RESTORE,
 * OPTIMIZE's removes) keeps them. The new high-water mark is committed in the {@code
 * delta.rowTracking} domain ({@code {"rowIdHighWaterMark":N}}). Each commit attempt assigns anew
 * from the highest mark of the read version and of every concurrent commit judged, so a
 * transaction that lost a race to a commit that assigned row IDs rebases its IDs above the
 * winner's: IDs are never duplicated.
 */
final class RowTracking {
  /** The domain of the row ID high-water mark. */
  static final String DOMAIN = "delta.rowTracking";
  /** Delta's high-water mark of a table without one. */
  static final long MISSING_HIGH_WATER_MARK = -1L;

  private final boolean assigns;
  private final long readHighWaterMark;
  private long highWaterMark;

  private RowTracking(boolean assigns, long readHighWaterMark) {
    this.assigns = assigns;
    this.readHighWaterMark = readHighWaterMark;
    this.highWaterMark = readHighWaterMark;
  }

  /**
   * Whether writers must assign row IDs: the protocol lists {@code rowTracking} and the metadata
   * does not suspend it.
   *
   * @param protocol the protocol in force, or null (no table)
   * @param metadata the metadata in force, or null
   * @return true when row IDs are assigned
   */
  static boolean assigns(Protocol protocol, Metadata metadata) {
    return protocol != null && TableFeatures.writerFeatures(protocol).contains("rowTracking")
        && (metadata == null || !TableConfig.ROW_TRACKING_SUSPENDED.fromMetadata(metadata));
  }

  /**
   * The row tracking of a commit (one that changes nothing when the table assigns no row IDs).
   *
   * @param log the table's log
   * @param snapshot the snapshot the transaction read
   * @param protocol the protocol the commit is under
   * @param metadata the metadata the commit is under
   * @return the state, with the read version's high-water mark
   * @throws io.filecommit.errors.FileCommitException when the read version's domain metadata
   *     cannot be read
   */
  static RowTracking start(DeltaLog log, Snapshot snapshot, Protocol protocol, Metadata metadata) {
    if (!assigns(protocol, metadata)) {
      return new RowTracking(false, MISSING_HIGH_WATER_MARK);
    }
    long mark = MISSING_HIGH_WATER_MARK;
    if (snapshot.exists() && assigns(snapshot.protocol(), null)) {
      mark = DomainMetadatas.configuration(log, snapshot.version(), DOMAIN).map(RowTracking::parse)
          .orElse(MISSING_HIGH_WATER_MARK);
    }
    return new RowTracking(true, mark);
  }

  /**
   * Takes in a concurrent commit this transaction did not read: its high-water mark, if any,
   * becomes the floor of the IDs assigned next.
   *
   * @param actions the commit's actions
   */
  void saw(List<Action> actions) {
    for (Action a : actions) {
      if (a instanceof DomainMetadata d && DOMAIN.equals(d.domain()) && !d.removed()) {
        highWaterMark = Math.max(highWaterMark, parse(d.configuration()));
      }
    }
  }

  /**
   * The actions of one commit attempt at {@code version}: each {@code add} that has no {@code
   * baseRowId}, or one this transaction assigned (above the read high-water mark), gets the next
   * free IDs ({@code numRecords} of its statistics each); each without {@code
   * defaultRowCommitVersion} gets {@code version}; the new high-water mark's domain metadata comes
   * first when IDs were assigned.
   *
   * @param actions the file actions to commit
   * @param version the version this attempt writes
   * @return the actions to write
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS}
   *     when an {@code add} that needs IDs has no row count
   */
  List<Action> assign(List<? extends FileAction> actions, long version) {
    if (!assigns) {
      return List.copyOf(actions);
    }
    long next = highWaterMark;
    List<Action> out = new ArrayList<>(actions.size() + 1);
    out.add(null);
    for (FileAction a : actions) {
      if (a instanceof AddFile f) {
        Long base = f.baseRowId();
        if (base == null || base > readHighWaterMark) {
          base = next + 1;
          next += f.numPhysicalRecords().orElseThrow(() -> ErrorClass.DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS.error(
              "Cannot assign row IDs to " + f.path() + ": it has no numRecords statistic", Map.of("path", f.path())));
        }
        Long commitVersion = f.defaultRowCommitVersion() == null ? version : f.defaultRowCommitVersion();
        out.add(f.withRowTracking(base, commitVersion));
      } else {
        out.add(a);
      }
    }
    if (next != highWaterMark) {
      out.set(0, new DomainMetadata(DOMAIN, "{\"rowIdHighWaterMark\":" + next + "}", false));
    } else {
      out.remove(0);
    }
    return out;
  }

  /**
   * The metadata of a table that switches row tracking on: a new table with {@code
   * delta.enableRowTracking=true} gets the materialized column names ({@code _row-id-col-<uuid>},
   * {@code _row-commit-version-col-<uuid>}) as Delta names them; an existing table keeps its names.
   *
   * @param current the table's metadata, or null for a new table
   * @param metadata the new metadata
   * @param table the table path, for messages
   * @return the metadata to commit
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_FEATURE_ONLY_ON_NEW_TABLE}
   *     when an existing table would switch row tracking on (its files would need row IDs first); {@code
   *     DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED} when the schema has a column named as a
   *     materialized column (its values would forge row IDs), as Delta checks
   */
  static Metadata prepare(Metadata current, Metadata metadata, String table) {
    boolean on = TableConfig.ENABLE_ROW_TRACKING.fromMetadata(metadata);
    if (!on) {
      return metadata;
    }
    if (current != null && !TableConfig.ENABLE_ROW_TRACKING.fromMetadata(current)) {
      throw ErrorClass.FILECOMMIT_FEATURE_ONLY_ON_NEW_TABLE.error("Enabling " + TableConfig.ENABLE_ROW_TRACKING.key()
          + " on the existing table " + table + " is not supported by filecommit (its files would need row IDs "
          + "first); set it when the table is created, or enable it with Delta's ALTER TABLE",
          Map.of("property", TableConfig.ENABLE_ROW_TRACKING.key(), "table", table));
    }
    Map<String, String> conf = new LinkedHashMap<>(metadata.configuration());
    Map<String, String> old = current == null ? Map.of() : current.configuration();
    name(conf, old, MaterializedRowTracking.ROW_ID_KEY, "_row-id-col-");
    name(conf, old, MaterializedRowTracking.ROW_COMMIT_VERSION_KEY, "_row-commit-version-col-");
    Metadata out = conf.equals(metadata.configuration()) ? metadata : metadata.withConfiguration(conf);
    for (org.apache.spark.sql.types.StructField f : out.schema().fields()) {
      for (String key : List.of(MaterializedRowTracking.ROW_ID_KEY, MaterializedRowTracking.ROW_COMMIT_VERSION_KEY)) {
        String hidden = conf.get(key);
        if (hidden.equals(f.name()) || hidden.equals(io.filecommit.delta.ColumnMapping.physicalName(out, f.name()))) {
          throw ErrorClass.DELTA_ADDING_COLUMN_WITH_INTERNAL_NAME_FAILED.error("Cannot add column '" + f.name()
              + "' to " + table + ": the name is used internally by the table (" + key + ")",
              Map.of("colName", f.name()));
        }
      }
    }
    return out;
  }

  private static void name(Map<String, String> conf, Map<String, String> old, String key, String prefix) {
    conf.put(key, old.getOrDefault(key, conf.getOrDefault(key, prefix + UUID.randomUUID())));
  }

  private static long parse(String configuration) {
    try {
      JsonNode n = Actions.MAPPER.readTree(configuration).get("rowIdHighWaterMark");
      if (n == null || !n.canConvertToLong()) {
        throw new IOException("no rowIdHighWaterMark");
      }
      return n.asLong();
    } catch (IOException e) {
      throw ErrorClass.FILECOMMIT_LOG_READ_FAILED.error("Unreadable " + DOMAIN + " domain metadata '"
          + configuration + "': " + e.getMessage());
    }
  }
}
