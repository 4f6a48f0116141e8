package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import io.filecommit.actions.AddFile;
import io.filecommit.errors.ErrorClass;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The one conflict checker: decides whether a transaction that lost a version race to another
 * commit may retry at the next version (protocol "Conflict detection"; Delta's ConflictChecker
 * rules). Checked in this order against each winning commit:
 *
 * <ol>
 *   <li>a {@code protocol} action -> {@code DELTA_PROTOCOL_CHANGED};
 *   <li>a {@code metaData} action -> {@code DELTA_METADATA_CHANGED};
 *   <li>data-changing {@code add}s that this transaction should have read (it read the whole table,
 *       or a partition predicate they satisfy) -> {@code DELTA_CONCURRENT_APPEND}. Which adds count
 *       depends on the isolation level ({@code delta.isolationLevel}): {@code WriteSerializable}
 *       (the default) ignores the adds of blind appends unless this transaction changes metadata,
 *       {@code Serializable} counts them all;
 *   <li>a {@code remove} of a file this transaction read -> {@code DELTA_CONCURRENT_DELETE_READ};
 *   <li>a {@code remove} of a file this transaction removes -> {@code DELTA_CONCURRENT_DELETE_DELETE};
 *   <li>a {@code txn} of an application this transaction depends on: a version at least ours means
 *       the same write already landed ({@link Outcome#alreadyCommitted}); a lower one ->
 *       {@code DELTA_CONCURRENT_TRANSACTION}.
 * </ol>
 *
 * A blind append reads nothing, so it passes everything but 1, 2 and 6: it lands through
 * concurrent appends and compactions ({@code remove} + {@code add} with {@code dataChange=false}).
 */
public final class ConflictChecker {
  /** Delta's isolation levels (table property {@code delta.isolationLevel}). */
  public static final String SERIALIZABLE = "Serializable";
  /** The default isolation level. */
  public static final String WRITE_SERIALIZABLE = "WriteSerializable";

  /**
   * What the transaction read and writes.
   *
   * @param metadataChanged whether it commits protocol or metadata
   * @param readWholeTable whether it read every file (overwrite)
   * @param readPredicates partition predicates it read (replaceWhere, the partition part of a
   *     row-level change's condition)
   * @param readFiles log paths of the files it read
   * @param removedFiles log paths of the files it removes
   * @param txns appId -> txn version of the {@code txn} actions it commits
   * @param isolationLevel {@link #SERIALIZABLE} or {@link #WRITE_SERIALIZABLE}
   */
  public record ReadState(boolean metadataChanged, boolean readWholeTable, List<ReadPredicate> readPredicates,
      Set<String> readFiles, Set<String> removedFiles, Map<String, Long> txns, String isolationLevel) {}

  /**
   * A predicate over partition columns that a transaction read.
   *
   * @param predicate the predicate
   * @param alias the table's name in it ({@code t.col}), or null
   */
  public record ReadPredicate(org.apache.spark.sql.Column predicate, String alias) {}

  /**
   * The verdict when there is no conflict.
   *
   * @param alreadyCommitted the winning commit's version when it carries this transaction's txn at
   *     an equal or higher version (the write must not be committed again), else -1 (retry)
   */
  public record Outcome(long alreadyCommitted) {
    static final Outcome RETRY = new Outcome(-1);
  }

  private ConflictChecker() {}

  /** The isolation level a table's configuration asks for. */
  public static String isolationLevel(Map<String, String> conf) {
    String v = conf.get(TableProperties.ISOLATION_LEVEL);
    return v != null && v.trim().equalsIgnoreCase(SERIALIZABLE) ? SERIALIZABLE : WRITE_SERIALIZABLE;
  }

  /**
   * Checks one winning commit.
   *
   * @param session Spark session (partition predicates are evaluated by Spark)
   * @param md the table metadata the transaction read
   * @param ours what the transaction read and writes
   * @param winnerVersion the version the other writer took
   * @param winner the actions of that commit
   * @param table table path, for messages
   * @return {@link Outcome#RETRY} or an already-committed outcome
   * @throws io.filecommit.errors.FileCommitException with the Delta error class of the conflict
   */
  public static Outcome check(SparkSession session, Metadata md, ReadState ours, long winnerVersion,
      List<JsonNode> winner, String table) {
    boolean winnerBlind = false;
    List<AddFile> dataAdds = new ArrayList<>();
    List<String> removes = new ArrayList<>();
    Map<String, Long> txns = new LinkedHashMap<>();
    String operation = "?";
    for (JsonNode a : winner) {
      if (a.has("protocol")) {
        throw conflict(ErrorClass.DELTA_PROTOCOL_CHANGED, "the protocol was changed", winnerVersion, table, "PROTOCOL");
      }
      if (a.has("metaData")) {
        throw conflict(ErrorClass.DELTA_METADATA_CHANGED, "the metadata was changed", winnerVersion, table, "METADATA");
      }
      if (a.has("commitInfo")) {
        winnerBlind = a.get("commitInfo").path("isBlindAppend").asBoolean(false);
        operation = a.get("commitInfo").path("operation").asText("?");
      } else if (a.has("add")) {
        AddFile f = ActionJson.parseAdd(a.get("add"));
        if (f.dataChange()) {
          dataAdds.add(f);
        }
      } else if (a.has("remove")) {
        removes.add(a.get("remove").path("path").asText());
      } else if (a.has("txn")) {
        txns.put(a.get("txn").path("appId").asText(), a.get("txn").path("version").asLong());
      }
    }
    boolean countBlind = !WRITE_SERIALIZABLE.equals(ours.isolationLevel()) || ours.metadataChanged();
    List<AddFile> relevant = winnerBlind && !countBlind ? List.of() : dataAdds;
    if (!relevant.isEmpty()) {
      if (ours.readWholeTable()) {
        throw conflict(ErrorClass.DELTA_CONCURRENT_APPEND, "files were added to the table by " + operation
            + ", which this write read", winnerVersion, table, relevant.get(0).path());
      }
      for (ReadPredicate predicate : ours.readPredicates()) {
        Set<String> hit = PartitionPredicates.matching(session, md, relevant, predicate.predicate(), predicate.alias());
        if (!hit.isEmpty()) {
          throw conflict(ErrorClass.DELTA_CONCURRENT_APPEND, "files were added by " + operation
              + " to partitions this write read (" + predicate.predicate() + ")", winnerVersion, table, hit.iterator().next());
        }
      }
    }
    for (String r : removes) {
      if (ours.readFiles().contains(r)) {
        throw conflict(ErrorClass.DELTA_CONCURRENT_DELETE_READ, "a file this write read was removed by " + operation,
            winnerVersion, table, r);
      }
    }
    for (String r : removes) {
      if (ours.removedFiles().contains(r)) {
        throw conflict(ErrorClass.DELTA_CONCURRENT_DELETE_DELETE, "a file this write removes was removed by "
            + operation, winnerVersion, table, r);
      }
    }
    for (Map.Entry<String, Long> t : ours.txns().entrySet()) {
      Long theirs = txns.get(t.getKey());
      if (theirs != null) {
        if (theirs >= t.getValue()) {
          return new Outcome(winnerVersion);
        }
        throw conflict(ErrorClass.DELTA_CONCURRENT_TRANSACTION, "application '" + t.getKey()
            + "' committed txn version " + theirs, winnerVersion, table, t.getKey());
      }
    }
    return Outcome.RETRY;
  }

  private static RuntimeException conflict(ErrorClass cls, String what, long version, String table, String detail) {
    return cls.error("Concurrent commit at version " + version + " of " + table + " conflicts with this write: "
        + what + " (" + detail + "); nothing was committed, retry the write",
        Map.of("version", Long.toString(version), "table", table, "conflict", detail == null ? "" : detail));
  }
}
