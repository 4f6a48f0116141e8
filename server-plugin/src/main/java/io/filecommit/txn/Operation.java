package io.filecommit.txn;

import io.filecommit.delta.actions.Actions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a commit does, as {@code commitInfo} records it (protocol "Commit Provenance Information";
 * Delta's {@code DeltaOperations}): the operation name, its parameters and its metrics, with
 * Delta's names. One record per command; {@link OptimisticTransaction#commit} puts them in the one
 * {@code commitInfo} it builds.
 *
 * <p>Over 400 lines: one short record per Delta operation, as Delta's DeltaOperations lists them.
 */
public sealed interface Operation {
  /** {@return {@code commitInfo.operation}, e.g. {@code WRITE}} */
  String name();

  /** {@return {@code commitInfo.operationParameters}} */
  Map<String, String> parameters();

  /** {@return {@code commitInfo.operationMetrics} (empty: none written)} */
  Map<String, String> metrics();

  /** {@return {@code commitInfo.userMetadata}, or null (Delta's writer option {@code userMetadata})} */
  default String userMetadata() {
    return null;
  }

  /** {@return whether the operation only adds files without reading the table (a blind append)} */
  default boolean isBlindAppend() {
    return false;
  }

  /**
   * An operation whose commit carries {@code commitInfo.userMetadata} (Delta's writer option
   * {@code userMetadata}). Not a {@link Write}, so never grouped with other writes ({@link
   * GroupCommit}): a group's one {@code commitInfo} cannot carry each member's text.
   *
   * @param operation the operation
   * @param userMetadata the text, written as given
   */
  record WithUserMetadata(Operation operation, String userMetadata) implements Operation {
    @Override
    public String name() {
      return operation.name();
    }

    @Override
    public Map<String, String> parameters() {
      return operation.parameters();
    }

    @Override
    public Map<String, String> metrics() {
      return operation.metrics();
    }

    @Override
    public boolean isBlindAppend() {
      return operation.isBlindAppend();
    }
  }

  /**
   * A DataFrame write (Delta's {@code WRITE}).
   *
   * @param mode Spark's save mode name ({@code Append}, {@code Overwrite}, ...)
   * @param partitionBy the table's partition columns
   * @param predicate the replaceWhere predicate, or null
   * @param numFiles data files added
   * @param numOutputRows rows in them
   * @param numOutputBytes their bytes
   * @param numRemovedFiles files removed (overwrite)
   * @param numAddedChangeFiles change-data files added
   */
  record Write(String mode, List<String> partitionBy, String predicate, int numFiles, long numOutputRows,
      long numOutputBytes, int numRemovedFiles, int numAddedChangeFiles) implements Operation {
    @Override
    public String name() {
      return "WRITE";
    }

    @Override
    public Map<String, String> parameters() {
      Map<String, String> p = new LinkedHashMap<>();
      p.put("mode", mode);
      if (predicate != null) {
        p.put("predicate", predicate);
      }
      p.put("partitionBy", Actions.MAPPER.valueToTree(partitionBy).toString());
      return p;
    }

    @Override
    public Map<String, String> metrics() {
      Map<String, String> m = new LinkedHashMap<>();
      m.put("numFiles", Integer.toString(numFiles));
      m.put("numOutputRows", Long.toString(numOutputRows));
      m.put("numOutputBytes", Long.toString(numOutputBytes));
      if (numRemovedFiles > 0) {
        m.put("numRemovedFiles", Integer.toString(numRemovedFiles));
      }
      if (numAddedChangeFiles > 0) {
        m.put("numAddedChangeFiles", Integer.toString(numAddedChangeFiles));
      }
      return m;
    }

    @Override
    public boolean isBlindAppend() {
      return mode.equals("Append");
    }
  }

  /**
   * Several blind appends published as one version by {@link GroupCommit}: Delta's {@code WRITE}
   * with mode {@code Append}, the members' metrics summed, and the parameter {@value
   * GroupCommit#GROUPED_PARAMETER} (JSON array of the members' transaction ids, in commit order).
   *
   * @param sum the members' writes as one ({@code numFiles}, rows, bytes, change files summed)
   * @param members the members' transaction ids
   */
  record GroupedWrite(Write sum, List<String> members) implements Operation {
    /** The operation of committing {@code writes} (of transactions {@code txnIds}) as one version. */
    static GroupedWrite of(List<Write> writes, List<String> txnIds) {
      int files = 0;
      long rows = 0;
      long bytes = 0;
      int cdc = 0;
      for (Write w : writes) {
        files += w.numFiles();
        rows += w.numOutputRows();
        bytes += w.numOutputBytes();
        cdc += w.numAddedChangeFiles();
      }
      Write first = writes.get(0);
      return new GroupedWrite(new Write(first.mode(), first.partitionBy(), null, files, rows, bytes, 0, cdc),
          List.copyOf(txnIds));
    }

    @Override
    public String name() {
      return sum.name();
    }

    @Override
    public Map<String, String> parameters() {
      Map<String, String> p = new LinkedHashMap<>(sum.parameters());
      p.put(GroupCommit.GROUPED_PARAMETER, Actions.MAPPER.valueToTree(members).toString());
      return p;
    }

    @Override
    public Map<String, String> metrics() {
      return sum.metrics();
    }

    @Override
    public boolean isBlindAppend() {
      return true;
    }
  }

  /**
   * A metadata-only commit that sets table properties (Delta's {@code SET TBLPROPERTIES}).
   *
   * @param properties the properties set
   */
  record SetTableProperties(Map<String, String> properties) implements Operation {
    @Override
    public String name() {
      return "SET TBLPROPERTIES";
    }

    @Override
    public Map<String, String> parameters() {
      return Map.of("properties", Actions.MAPPER.valueToTree(properties).toString());
    }

    @Override
    public Map<String, String> metrics() {
      return Map.of();
    }
  }

  /**
   * ALTER TABLE ADD / DROP CONSTRAINT, a metadata-only commit (Delta's {@code DeltaOperations.AddConstraint}
   * and {@code DropConstraint}): parameters {@code name} and {@code expr} (for a drop: the dropped
   * expression, absent when there was none, and {@code existed}).
   *
   * @param add true for ADD CONSTRAINT, false for DROP CONSTRAINT
   * @param constraint the name as given
   * @param expr the CHECK expression added or dropped, or null (a drop of a missing constraint)
   */
  record Constraint(boolean add, String constraint, String expr) implements Operation {
    @Override
    public String name() {
      return add ? "ADD CONSTRAINT" : "DROP CONSTRAINT";
    }

    @Override
    public Map<String, String> parameters() {
      Map<String, String> p = new LinkedHashMap<>();
      p.put("name", constraint);
      if (expr != null) {
        p.put("expr", expr);
      }
      if (!add) {
        p.put("existed", Boolean.toString(expr != null));
      }
      return p;
    }

    @Override
    public Map<String, String> metrics() {
      return Map.of();
    }
  }

  /**
   * A commit that changes only the clustering columns (Delta's {@code CLUSTER BY} operation of
   * {@code ALTER TABLE ... CLUSTER BY}).
   *
   * @param oldColumns the clustering columns before, logical names
   * @param newColumns the clustering columns after (empty: {@code CLUSTER BY NONE})
   */
  record ClusterBy(List<String> oldColumns, List<String> newColumns) implements Operation {
    @Override
    public String name() {
      return "CLUSTER BY";
    }

    @Override
    public Map<String, String> parameters() {
      return Map.of("oldClusteringColumns", String.join(",", oldColumns),
          "newClusteringColumns", String.join(",", newColumns));
    }

    @Override
    public Map<String, String> metrics() {
      return Map.of();
    }
  }

  /**
   * What a row-level change wrote.
   *
   * @param rows the row metrics
   * @param removedFiles files removed (with deletion vectors: only files that leave the table whole)
   * @param addedFiles files added (with deletion vectors: only the files written)
   * @param addedChangeFiles change-data files added
   * @param outputRows rows in the written data files
   * @param outputBytes their bytes
   * @param executionTimeMs the command's time so far, ms
   * @param deletionVectors per touched file, new DVs where there was none, DVs of files that left
   *     the table whole, DVs replaced by new ones: {added, removed, updated} (zeros without DVs)
   */
  record RowLevelStats(RowMetrics rows, int removedFiles, int addedFiles, int addedChangeFiles, long outputRows,
      long outputBytes, long executionTimeMs, long[] deletionVectors) {}

  /** The metrics every row-level change writes, with the file-metric names of DELETE / UPDATE or MERGE. */
  private static Map<String, String> rowLevelMetrics(Map<String, String> rowMetrics, RowLevelStats s, boolean merge) {
    Map<String, String> m = new LinkedHashMap<>(rowMetrics);
    m.put(merge ? "numTargetFilesRemoved" : "numRemovedFiles", Integer.toString(s.removedFiles()));
    m.put(merge ? "numTargetFilesAdded" : "numAddedFiles", Integer.toString(s.addedFiles()));
    m.put(merge ? "numTargetChangeFilesAdded" : "numAddedChangeFiles", Integer.toString(s.addedChangeFiles()));
    m.put("numOutputRows", Long.toString(s.outputRows()));
    m.put("numOutputBytes", Long.toString(s.outputBytes()));
    m.put("executionTimeMs", Long.toString(s.executionTimeMs()));
    // Delta's DeltaOperationMetrics.DELETION_VECTORS: an updated DV counts as one added and one removed.
    String prefix = merge ? "numTarget" : "num";
    long[] dv = s.deletionVectors() == null ? new long[3] : s.deletionVectors();
    m.put(prefix + "DeletionVectorsAdded", Long.toString(dv[0] + dv[2]));
    m.put(prefix + "DeletionVectorsRemoved", Long.toString(dv[1] + dv[2]));
    m.put(prefix + "DeletionVectorsUpdated", Long.toString(dv[2]));
    return m;
  }

  /** DELETE's or UPDATE's metrics: the rows it changed (under {@code name}), the rows it copied, the files. */
  private static Map<String, String> deleteOrUpdateMetrics(String name, long changed, RowLevelStats s) {
    Map<String, String> rows = new LinkedHashMap<>();
    rows.put(name, Long.toString(changed));
    rows.put("numCopiedRows", Long.toString(s.rows().copied()));
    return rowLevelMetrics(rows, s, false);
  }

  /** The {@code predicate} parameter of a row-level change: a JSON array of the condition's SQL, as Delta writes. */
  private static String predicateJson(String sql) {
    return Actions.MAPPER.createArrayNode().add(sql).toString();
  }

  /**
   * {@code DELETE FROM ... WHERE predicate} (Delta's {@code DELETE}).
   *
   * @param predicate the condition's SQL ({@code true} for none)
   * @param stats what was written
   */
  record Delete(String predicate, RowLevelStats stats) implements Operation {
    @Override
    public String name() {
      return "DELETE";
    }

    @Override
    public Map<String, String> parameters() {
      return Map.of("predicate", predicateJson(predicate));
    }

    @Override
    public Map<String, String> metrics() {
      return deleteOrUpdateMetrics("numDeletedRows", stats.rows().deleted(), stats);
    }
  }

  /**
   * {@code UPDATE ... SET ... WHERE predicate} (Delta's {@code UPDATE}).
   *
   * @param predicate the condition's SQL ({@code true} for none)
   * @param stats what was written
   */
  record Update(String predicate, RowLevelStats stats) implements Operation {
    @Override
    public String name() {
      return "UPDATE";
    }

    @Override
    public Map<String, String> parameters() {
      return Map.of("predicate", predicateJson(predicate));
    }

    @Override
    public Map<String, String> metrics() {
      return deleteOrUpdateMetrics("numUpdatedRows", stats.rows().updated(), stats);
    }
  }

  /**
   * {@code MERGE INTO ... USING ... ON predicate WHEN ...} (Delta's {@code MERGE}).
   *
   * @param predicate the ON condition's SQL
   * @param matchedPredicates JSON array of the MATCHED clauses ({@code predicate}, {@code actionType})
   * @param notMatchedPredicates JSON array of the NOT MATCHED clauses
   * @param notMatchedBySourcePredicates JSON array of the NOT MATCHED BY SOURCE clauses
   * @param stats what was written
   */
  record Merge(String predicate, String matchedPredicates, String notMatchedPredicates,
      String notMatchedBySourcePredicates, RowLevelStats stats) implements Operation {
    @Override
    public String name() {
      return "MERGE";
    }

    @Override
    public Map<String, String> parameters() {
      Map<String, String> p = new LinkedHashMap<>();
      p.put("predicate", predicateJson(predicate));
      p.put("matchedPredicates", matchedPredicates);
      p.put("notMatchedPredicates", notMatchedPredicates);
      p.put("notMatchedBySourcePredicates", notMatchedBySourcePredicates);
      return p;
    }

    @Override
    public Map<String, String> metrics() {
      Map<String, String> rows = new LinkedHashMap<>();
      rows.put("numTargetRowsDeleted", Long.toString(stats.rows().deleted()));
      rows.put("numTargetRowsUpdated", Long.toString(stats.rows().updated()));
      rows.put("numTargetRowsInserted", Long.toString(stats.rows().inserted()));
      rows.put("numTargetRowsCopied", Long.toString(stats.rows().copied()));
      return rowLevelMetrics(rows, stats, true);
    }
  }

  /**
   * OPTIMIZE (Delta's {@code DeltaOperations.Optimize}): files compacted, or Z-ordered, with {@code
   * dataChange=false}. Parameters as Delta writes them: {@code predicate} (JSON array of the
   * partition predicates' SQL), {@code zOrderBy} (JSON array), {@code clusterBy} ({@code []}) and
   * {@code auto} (whether auto compaction ran it).
   *
   * @param predicates the partition predicates' SQL (empty: the whole table)
   * @param zOrderBy the Z-order columns (empty: bin-packing)
   * @param auto whether auto compaction ran it
   * @param metrics Delta's OPTIMIZE metrics ({@code numAddedFiles}, {@code p25FileSize}, ...)
   */
  record Optimize(List<String> predicates, List<String> zOrderBy, boolean auto, Map<String, String> metrics)
      implements Operation {
    @Override
    public String name() {
      return "OPTIMIZE";
    }

    @Override
    public Map<String, String> parameters() {
      Map<String, String> p = new LinkedHashMap<>();
      p.put("predicate", Actions.MAPPER.valueToTree(predicates).toString());
      p.put("zOrderBy", Actions.MAPPER.valueToTree(zOrderBy).toString());
      p.put("clusterBy", "[]");
      p.put("auto", Boolean.toString(auto));
      return p;
    }
  }

  /**
   * RESTORE (Delta's {@code DeltaOperations.Restore}): the table brought back to an earlier version.
   *
   * @param version the version asked for, or null
   * @param timestamp the timestamp asked for (as given), or null
   * @param metrics Delta's RESTORE metrics ({@code numRestoredFiles}, {@code tableSizeAfterRestore}, ...)
   */
  record Restore(Long version, String timestamp, Map<String, String> metrics) implements Operation {
    @Override
    public String name() {
      return "RESTORE";
    }

    @Override
    public Map<String, String> parameters() {
      Map<String, String> p = new LinkedHashMap<>();
      p.put("version", version == null ? null : Long.toString(version));
      p.put("timestamp", timestamp);
      return p;
    }
  }

  /**
   * ALTER TABLE DROP FEATURE, a protocol-only commit (Delta's {@code DeltaOperations.DropTableFeature}):
   * parameters {@code featureName} and {@code truncateHistory}.
   *
   * @param featureName the feature dropped
   * @param truncateHistory whether the call asked for history truncation
   */
  record DropFeature(String featureName, boolean truncateHistory) implements Operation {
    @Override
    public String name() {
      return "DROP FEATURE";
    }

    @Override
    public Map<String, String> parameters() {
      return Map.of("featureName", featureName, "truncateHistory", Boolean.toString(truncateHistory));
    }

    @Override
    public Map<String, String> metrics() {
      return Map.of();
    }
  }

  /**
   * CONVERT TO DELTA, the first version of a table made from the Parquet files in its directory
   * (Delta's {@code DeltaOperations.Convert}): parameters {@code numFiles}, {@code partitionedBy}
   * (JSON array), {@code collectStats} and {@code sourceFormat}; metric {@code numConvertedFiles}.
   *
   * @param numFiles the files made the table's
   * @param partitionBy the partition columns given
   * @param collectStats whether statistics were collected for them
   * @param sourceFormat the files' format, {@code parquet}
   */
  record Convert(long numFiles, List<String> partitionBy, boolean collectStats, String sourceFormat)
      implements Operation {
    @Override
    public String name() {
      return "CONVERT";
    }

    @Override
    public Map<String, String> parameters() {
      Map<String, String> p = new LinkedHashMap<>();
      p.put("numFiles", Long.toString(numFiles));
      p.put("partitionedBy", Actions.MAPPER.valueToTree(partitionBy).toString());
      p.put("collectStats", Boolean.toString(collectStats));
      p.put("sourceFormat", sourceFormat);
      return p;
    }

    @Override
    public Map<String, String> metrics() {
      return Map.of("numConvertedFiles", Long.toString(numFiles));
    }
  }

  /**
   * A publish of staged commits as one commit: the operation the staged commits recorded, with the
   * parameter {@value WinningCommitSummary#STAGED_COMMITS_PARAMETER} naming them (built by the
   * staging sub-package's publish, which merges the operations of several staged commits).
   *
   * @param name {@code commitInfo.operation}
   * @param parameters {@code commitInfo.operationParameters}
   * @param metrics {@code commitInfo.operationMetrics}
   * @param isBlindAppend whether every staged commit was a blind append
   */
  record Published(String name, Map<String, String> parameters, Map<String, String> metrics, boolean isBlindAppend)
      implements Operation {}
}
