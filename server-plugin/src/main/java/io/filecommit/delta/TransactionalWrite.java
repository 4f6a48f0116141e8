package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.actions.AddCDCFile;
import io.filecommit.actions.AddFile;
import io.filecommit.actions.FileAction;
import io.filecommit.actions.RemoveFile;
import io.filecommit.errors.ErrorClass;
import io.filecommit.commit.DelayedCommitProtocol;
import io.filecommit.commit.ParquetJobWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * One optimistic transaction on a Delta table: reads a snapshot, may change metadata, writes data
 * files through Spark's own {@code FileFormatWriter} with the Parquet format and a {@link
 * DelayedCommitProtocol}, and commits the actions as the next version (seed TransactionalWrite.txt;
 * reference table-formats.md "Delta log").
 *
 * <p>Column mapping ({@link ColumnMapping}): the rows are normalized and checked under logical
 * names, then written under physical names with field ids.
 *
 * <p>Rules from the seed: the input is normalized to the table's schema (column case and order)
 * before writing; a partition column missing from the data, or a table whose every column is a
 * partition column, is refused; {@link #writeFiles} sets {@code hasWritten}, after which {@link
 * #updateMetadata} is refused.
 *
 * <p>Commit: version {@code readVersion + 1} is created only if absent; when another writer took
 * it, the winning commit is read and, if both it and this transaction are blind appends, the commit
 * is retried at the next version unless {@link ConflictChecker} finds a conflict (typed error). Not thread-safe: one
 * transaction per write.
 */
public final class TransactionalWrite {
  /** Upper bound of commit attempts before giving up. */
  static final int MAX_COMMIT_ATTEMPTS = 200;

  private static final String INVALID_NAME_CHARS = " ,;{}()\n\t=";

  private final SparkSession session;
  private final DeltaLog deltaLog;
  private final Snapshot snapshot;
  private Metadata newMetadata;
  private Protocol newProtocol;
  private boolean hasWritten;
  private DelayedCommitProtocol lastCommitter;
  private int attempts;
  private boolean committed;
  private boolean readWholeTable;
  private final List<ConflictChecker.ReadPredicate> readPredicates = new ArrayList<>();
  private final java.util.Set<String> readFiles = new java.util.HashSet<>();
  private final Map<String, Long> txns = new java.util.LinkedHashMap<>();

  /**
   * Starts a transaction at the table's latest snapshot.
   *
   * @param session the Spark session that runs the write
   * @param deltaLog the table's log
   */
  public TransactionalWrite(SparkSession session, DeltaLog deltaLog) {
    this.session = session;
    this.deltaLog = deltaLog;
    this.snapshot = deltaLog.snapshot();
  }

  /** The snapshot this transaction read (its version is the read version). */
  public Snapshot snapshot() {
    return snapshot;
  }

  /** The log of the table. */
  public DeltaLog deltaLog() {
    return deltaLog;
  }

  /** The metadata in force: the updated one, else the snapshot's (null for a new table). */
  public Metadata metadata() {
    return newMetadata != null ? newMetadata : snapshot.metadata();
  }

  /** The protocol in force: the updated one, else the snapshot's (null for a new table). */
  public Protocol protocol() {
    return newProtocol != null ? newProtocol : snapshot.protocol();
  }

  /** Whether {@link #writeFiles} has run. */
  public boolean hasWritten() {
    return hasWritten;
  }

  /**
   * Records that this transaction read every active file (an overwrite): any concurrent
   * data-changing add or remove conflicts with it ({@link ConflictChecker}).
   */
  public void readWholeTable() {
    readWholeTable = true;
    snapshot.allFiles().forEach(f -> readFiles.add(f.path()));
  }

  /**
   * Records that this transaction read the partitions matching {@code predicate} (replaceWhere),
   * which held {@code files}.
   *
   * @param predicate SQL predicate over partition columns
   * @param files log paths of the files it matched
   */
  public void readPartitions(String predicate, java.util.Collection<String> files) {
    readPartitions(functions.expr(predicate), null, files);
  }

  /**
   * Records that this transaction read the partitions matching {@code predicate} (the partition
   * part of a row-level change's condition), which held {@code files}.
   *
   * @param predicate predicate over partition columns ({@link PartitionPredicates#onPartitionsOnly})
   * @param alias the table's name in {@code predicate}, or null
   * @param files log paths of the files it matched
   */
  public void readPartitions(Column predicate, String alias, java.util.Collection<String> files) {
    readPredicates.add(new ConflictChecker.ReadPredicate(predicate, alias));
    readFiles.addAll(files);
  }

  /**
   * Makes this transaction idempotent for an application (protocol "Transaction Identifiers"; Delta's
   * {@code txnAppId}/{@code txnVersion}): the commit will carry {@code txn(appId, version)}.
   *
   * @param appId application id, non-empty
   * @param version the application's version, >= 0
   * @return true when the table's latest version for {@code appId} is already >= {@code version}:
   *     the caller must not write
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) for an empty appId or a negative version
   */
  public boolean setTransaction(String appId, long version) {
    if (appId == null || appId.isEmpty()) {
      throw ErrorClass.FILECOMMIT_INVALID_ARGUMENT.error("txn app id must be a non-empty string, got '" + appId + "'");
    }
    if (version < 0) {
      throw ErrorClass.FILECOMMIT_INVALID_ARGUMENT.error("txn version must be >= 0, got " + version);
    }
    txns.put(appId, version);
    return snapshot.latestTransactionVersion(appId).map(v -> v >= version).orElse(false);
  }

  /** Whether {@link #setTransaction} was called: the commit carries a {@code txn} action. */
  public boolean hasTransactionId() {
    return !txns.isEmpty();
  }

  /**
   * Whether the last {@link #commit} committed; false when a concurrent commit of the same
   * application's txn at an equal or higher version made this write a duplicate.
   */
  public boolean committed() {
    return committed;
  }

  /** Commit attempts of the last {@link #commit} (1 when it landed at once). */
  public int attempts() {
    return attempts;
  }

  /**
   * Sets new metadata (and the protocol it requires) to commit with this transaction.
   *
   * @param metadata the new metadata
   * @throws IllegalStateException when data has already been written in this transaction
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) when the schema, partition columns or properties are invalid
   */
  public void updateMetadata(Metadata metadata) {
    if (hasWritten) {
      throw new IllegalStateException(
          "Cannot change the metadata of " + deltaLog.tablePath() + " after this transaction has written data (hasWritten)");
    }
    validateSchemaAndPartitioning(metadata.schema(), metadata.partitionColumns());
    Map<String, String> before = snapshot.exists() ? snapshot.metadata().configuration() : Map.of();
    Map<String, String> changed = new java.util.LinkedHashMap<>();
    metadata.configuration().forEach((k, v) -> {
      if (!java.util.Objects.equals(before.get(k), v)) {
        changed.put(k, v);
      }
    });
    TableProperties.validate(changed);
    Constraints.validateConstraintProperties(session, metadata.schema(), changed);
    if (snapshot.exists() && changed.keySet().stream().anyMatch(k -> k.startsWith(TableFeatures.CONSTRAINT_PREFIX))
        && !snapshot.allFiles().isEmpty()) {
      throw ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION.error("Adding a CHECK constraint to the existing table "
          + deltaLog.tablePath() + " that holds data is not supported by filecommit (its rows would have to be "
          + "checked first); declare constraints when the table is created, or add them with Delta's ALTER TABLE");
    }
    if (snapshot.exists() && TableProperties.isTrue(changed, TableProperties.IN_COMMIT_TIMESTAMPS)) {
      throw ErrorClass.FILECOMMIT_UNSUPPORTED_OPERATION.error("Enabling " + TableProperties.IN_COMMIT_TIMESTAMPS + " on the existing table "
          + deltaLog.tablePath() + " is not supported by filecommit; set it when the table is created");
    }
    Protocol current = protocol();
    Protocol required = TableFeatures.required(current, metadata);
    if (!required.equals(current)) {
      newProtocol = required;
    }
    newMetadata = metadata;
  }

  /**
   * Checks a table schema with its partition columns.
   *
   * @param schema the table schema
   * @param partitionColumns partition column names (exact case of the schema)
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) for a column name with one of {@code " ,;{}()\n\t="}, duplicate
   *     names (case-insensitive), a partition column not in the schema or of a complex type, or
   *     when every column is a partition column
   */
  public static void validateSchemaAndPartitioning(StructType schema, List<String> partitionColumns) {
    List<String> seen = new ArrayList<>();
    for (StructField f : schema.fields()) {
      for (char c : INVALID_NAME_CHARS.toCharArray()) {
        if (f.name().indexOf(c) >= 0) {
          throw ErrorClass.DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES.error(
              "Column name '" + f.name() + "' contains an invalid character among ' ,;{}()\\n\\t='");
        }
      }
      String lower = f.name().toLowerCase(Locale.ROOT);
      if (seen.contains(lower)) {
        throw ErrorClass.DELTA_DUPLICATE_COLUMNS_FOUND.error("Duplicate column name (case-insensitive): '" + f.name() + "'");
      }
      seen.add(lower);
    }
    List<String> partLower = new ArrayList<>();
    for (String p : partitionColumns) {
      StructField field = findField(schema, p).orElseThrow(() -> ErrorClass.DELTA_PARTITION_COLUMN_NOT_FOUND.error(
          "Partition column '" + p + "' is not in the data; columns: " + List.of(schema.fieldNames())));
      DataType t = field.dataType();
      if (t instanceof StructType || t instanceof ArrayType || t instanceof MapType) {
        throw ErrorClass.DELTA_INVALID_PARTITION_COLUMN_TYPE.error(
            "Partition column '" + p + "' has complex type " + t.simpleString() + "; only atomic types can partition");
      }
      String lower = p.toLowerCase(Locale.ROOT);
      if (partLower.contains(lower)) {
        throw ErrorClass.DELTA_DUPLICATE_COLUMNS_FOUND.error("Partition column '" + p + "' is given twice");
      }
      partLower.add(lower);
    }
    if (!partitionColumns.isEmpty() && partitionColumns.size() >= schema.fields().length) {
      throw ErrorClass.DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION.error(
          "Cannot write a table where every column is a partition column: " + partitionColumns);
    }
  }

  /** Case-insensitive field lookup. */
  static Optional<StructField> findField(StructType schema, String name) {
    for (StructField f : schema.fields()) {
      if (f.name().equalsIgnoreCase(name)) {
        return Optional.of(f);
      }
    }
    return Optional.empty();
  }

  /**
   * The committer for a write under {@code outputPath} (seed "getCommitter"), with the random
   * prefix and statistics settings of the table's properties.
   *
   * @param outputPath the table's data directory
   * @return a new committer with job id {@code delta}
   */
  public DelayedCommitProtocol getCommitter(Path outputPath) {
    Metadata md = metadata();
    Map<String, String> conf = md.configuration();
    Integer prefix = TableProperties.randomPrefixLength(conf);
    if (prefix == null && ColumnMapping.enabled(md)) {
      prefix = TableProperties.randomPrefixLength(Map.of(TableProperties.RANDOMIZE_FILE_PREFIXES, "true",
          TableProperties.RANDOM_PREFIX_LENGTH, conf.getOrDefault(TableProperties.RANDOM_PREFIX_LENGTH, "2")));
    }
    return new DelayedCommitProtocol("delta", outputPath.toString(), prefix, TableProperties.numIndexedCols(conf));
  }

  /**
   * Projects the input onto the table schema: table column order and names (input matched
   * case-insensitively), absent non-partition columns filled with typed nulls.
   *
   * @param data the input
   * @param changeTypeColumn the input's change-type column, kept as the last column named {@code
   *     _change_type}; null for none
   * @return the normalized input
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) for a partition column missing from the data or a data column
   *     that is not in the table
   */
  Dataset<Row> normalizeData(Dataset<Row> data, String changeTypeColumn) {
    return normalizeData(data, changeTypeColumn, false);
  }

  /**
   * As {@link #normalizeData(Dataset, String)}; with {@code enforce}, also computes absent
   * generated columns and checks the table's rules on every row ({@link Constraints}).
   */
  Dataset<Row> normalizeData(Dataset<Row> data, String changeTypeColumn, boolean enforce) {
    Metadata md = metadata();
    StructType table = md.schema();
    StructType input = data.schema();
    for (StructField f : input.fields()) {
      if (f.name().equals(changeTypeColumn)) {
        continue;
      }
      if (findField(table, f.name()).isEmpty()) {
        throw ErrorClass.DELTA_METADATA_MISMATCH.error("Column '" + f.name() + "' of the data is not in the table schema of "
            + deltaLog.tablePath() + ": " + List.of(table.fieldNames()));
      }
    }
    List<String> generated = TableFeatures.generatedColumns(table);
    java.util.Set<String> supplied = new java.util.HashSet<>();
    List<Column> cols = new ArrayList<>();
    for (StructField f : table.fields()) {
      Optional<StructField> in = findField(input, f.name());
      if (in.isPresent()) {
        supplied.add(f.name());
        cols.add(functions.col(quote(in.get().name())).as(f.name()));
      } else if (md.partitionColumns().stream().anyMatch(p -> p.equalsIgnoreCase(f.name()))
          && !(enforce && generated.contains(f.name()))) {
        throw ErrorClass.DELTA_PARTITION_COLUMN_NOT_FOUND.error("Partition column '" + f.name()
            + "' is not in the data; columns: " + List.of(input.fieldNames()));
      } else {
        cols.add(functions.lit(null).cast(f.dataType()).as(f.name()));
      }
    }
    if (changeTypeColumn != null) {
      cols.add(functions.col(quote(changeTypeColumn)).as(CDC_TYPE_COLUMN));
    }
    Dataset<Row> normalized = data.select(cols.toArray(new Column[0]));
    return enforce ? Constraints.apply(normalized, table, md.configuration(), supplied) : normalized;
  }

  /** A column name quoted for Spark ({@code `a``b`}). */
  static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  /**
   * Writes the data as Parquet files into the table directory (partitioned by the table's partition
   * columns) and returns their AddFiles. Sets {@code hasWritten}.
   *
   * @param data the input rows
   * @param writeOptions Spark Parquet writer options (e.g. {@code compression}, {@code
   *     maxRecordsPerFile})
   * @return the AddFiles of the written files (not yet committed)
   * @throws IllegalStateException if the transaction has no metadata (no table and none set)
   */
  public List<AddFile> writeFiles(Dataset<Row> data, Map<String, String> writeOptions) {
    return writeFiles(data, writeOptions, false);
  }

  /**
   * Writes the data, splitting change data from table data when {@code changeData} is set (seed
   * DelayedCommitProtocol "Change Data Feed Partition Handling"): the virtual partition column
   * {@code __is_cdc = _change_type IS NOT NULL} goes in front of the table's partition columns;
   * rows with {@code __is_cdc=false} are table data written without {@code _change_type} (routed
   * by the committer to the partition directories), rows with {@code __is_cdc=true} are change
   * records with {@code _change_type} (routed to {@code _change_data/}, prefix {@code cdc-}).
   * Because a Parquet file has one schema and table files must not carry {@code _change_type},
   * the two kinds are written by two {@code FileFormatWriter} jobs through the same committer
   * (the input is cached for the duration); the committer's {@code commitJob} collects AddFiles
   * and AddCDCFiles of both. Sets {@code hasWritten}.
   *
   * @param data the input rows; with {@code changeData}, including {@code _change_type}
   * @param writeOptions Spark Parquet writer options
   * @param changeData whether the input carries change records
   * @return the AddFiles (change files: {@link #changeFiles()})
   * @throws IllegalStateException if the transaction has no metadata
   * @throws io.filecommit.errors.FileCommitException (see {@link io.filecommit.errors.ErrorClass}) if {@code changeData} and the table has no change data feed
   *     or the input no {@code _change_type}
   */
  public List<AddFile> writeFiles(Dataset<Row> data, Map<String, String> writeOptions, boolean changeData) {
    Metadata md = metadata();
    if (md == null) {
      throw new IllegalStateException("No metadata for " + deltaLog.tablePath() + ": set it before writing");
    }
    Path outputPath = deltaLog.tablePath();
    DelayedCommitProtocol committer = getCommitter(outputPath);
    hasWritten = true;
    lastCommitter = committer;
    if (!changeData) {
      runWrite(normalizeData(data, null, true), md.partitionColumns(), committer, writeOptions);
    } else {
      if (!TableProperties.isTrue(md.configuration(), TableProperties.ENABLE_CDF)) {
        throw ErrorClass.DELTA_CHANGE_TABLE_FEED_DISABLED.error("Change data needs " + TableProperties.ENABLE_CDF + "=true on " + outputPath);
      }
      String changeType = findField(data.schema(), CDC_TYPE_COLUMN).map(StructField::name).orElseThrow(() ->
          new IllegalArgumentException("Change data needs a " + CDC_TYPE_COLUMN + " column in the input; columns: "
              + List.of(data.schema().fieldNames())));
      List<String> cdcPartitions = new ArrayList<>();
      cdcPartitions.add(DelayedCommitProtocol.CDC_PARTITION_COL);
      cdcPartitions.addAll(md.partitionColumns());
      Column isCdc = functions.col(quote(changeType)).isNotNull();
      Dataset<Row> cached = data.persist();
      try {
        Dataset<Row> rows = normalizeData(cached.filter(functions.not(isCdc)).drop(changeType), null, true);
        runWrite(rows.withColumn(DelayedCommitProtocol.CDC_PARTITION_COL, functions.lit(false)),
            cdcPartitions, committer, writeOptions);
        Dataset<Row> changes = normalizeData(cached.filter(isCdc), changeType);
        runWrite(changes.withColumn(DelayedCommitProtocol.CDC_PARTITION_COL, functions.lit(true)),
            cdcPartitions, committer, writeOptions);
      } finally {
        cached.unpersist();
      }
    }
    lastCommitter = committer;
    return committer.addedStatuses();
  }

  /** Column of change records that holds the change type (protocol "Change Data Files"). */
  public static final String CDC_TYPE_COLUMN = "_change_type";

  private void runWrite(
      Dataset<Row> normalized, List<String> partitionColumns, DelayedCommitProtocol committer,
      Map<String, String> writeOptions) {
    String outputPath = deltaLog.tablePath().toString();
    Metadata md = metadata();
    if (ColumnMapping.enabled(md)) {
      normalized = ColumnMapping.toPhysical(md, normalized);
      partitionColumns = partitionColumns.stream().map(c -> ColumnMapping.physicalName(md, c)).toList();
    }
    try {
      ParquetJobWriter.write(session, normalized, outputPath, partitionColumns, committer, writeOptions,
          "filecommit write " + outputPath);
    } catch (RuntimeException e) {
      io.filecommit.errors.FileCommitException violation = Constraints.translate(e);
      throw violation != null ? violation : e;
    }
  }

  /**
   * Deletes the files {@link #writeFiles} wrote, for a write that fails (or turns out to be a
   * duplicate) before its commit landed; never call it after a successful {@link #commit}.
   * Best effort; does nothing before {@code writeFiles}.
   */
  public void deleteWrittenFiles() {
    if (lastCommitter != null && !committed) {
      lastCommitter.deleteWrittenFiles(deltaLog.conf());
      lastCommitter.sweepJobFiles(deltaLog.conf());
    }
  }

  /** Change-data files of the last {@link #writeFiles}, empty before it. */
  public List<AddCDCFile> changeFiles() {
    return lastCommitter == null ? List.of() : lastCommitter.changeFiles();
  }

  /**
   * Commits the actions (with any metadata and protocol change) as the next table version.
   *
   * @param actions file actions to commit
   * @param commitInfo the {@code commitInfo} body; {@code readVersion}, {@code isBlindAppend} and
   *     {@code txnId} are added here
   * @param isBlindAppend true when the write only adds files without reading the table (append)
   * @return the committed version
   * @throws io.filecommit.errors.FileCommitException with a conflict class when a concurrent commit conflicts
   */
  public long commit(List<? extends FileAction> actions, ObjectNode commitInfo, boolean isBlindAppend) {
    Metadata md = newMetadata;
    Protocol pr = newProtocol;
    Metadata effective = metadata();
    if (effective != null && TableProperties.isTrue(effective.configuration(), TableProperties.APPEND_ONLY)
        && actions.stream().anyMatch(a -> a instanceof RemoveFile r && r.dataChange())) {
      throw ErrorClass.DELTA_CANNOT_MODIFY_APPEND_ONLY.error("Table " + deltaLog.tablePath()
          + " is append-only (" + TableProperties.APPEND_ONLY + "=true): this write would remove files",
          Map.of("table_name", deltaLog.tablePath().toString(), "config", TableProperties.APPEND_ONLY + "=false"));
    }
    boolean ict = effective != null && TableProperties.isTrue(effective.configuration(), TableProperties.IN_COMMIT_TIMESTAMPS);
    long lastTimestamp = ict && snapshot.exists() ? snapshot.timestamp() : Long.MIN_VALUE;
    boolean blind = isBlindAppend && md == null && pr == null
        && actions.stream().allMatch(a -> a instanceof AddFile || a instanceof AddCDCFile);
    long version = snapshot.version() + 1;
    if (snapshot.exists()) {
      commitInfo.put("readVersion", snapshot.version());
    }
    String isolation = ConflictChecker.isolationLevel(effective == null ? Map.of() : effective.configuration());
    commitInfo.put("isolationLevel", isolation);
    commitInfo.put("txnId", UUID.randomUUID().toString());
    java.util.Set<String> removed = new java.util.HashSet<>();
    for (FileAction a : actions) {
      if (a instanceof RemoveFile r) {
        removed.add(r.path());
      }
    }
    committed = false;
    for (attempts = 1; attempts <= MAX_COMMIT_ATTEMPTS; attempts++) {
      long now = System.currentTimeMillis();
      if (ict) {
        // Protocol "In-Commit Timestamps": commitInfo first, strictly greater than the previous one.
        long inCommit = Math.max(now, lastTimestamp + 1);
        commitInfo.put("inCommitTimestamp", inCommit);
        now = inCommit;
      }
      commitInfo.put("timestamp", now);
      commitInfo.put("isBlindAppend", blind);
      List<String> lines = new ArrayList<>();
      lines.add(ActionJson.commitInfo(commitInfo));
      if (pr != null) {
        lines.add(ActionJson.protocol(pr));
      }
      if (md != null) {
        lines.add(ActionJson.metadata(md));
      }
      for (Map.Entry<String, Long> t : txns.entrySet()) {
        lines.add(ActionJson.txn(t.getKey(), t.getValue(), now));
      }
      for (FileAction a : actions) {
        lines.add(ActionJson.fileAction(a));
      }
      if (deltaLog.writeCommitIfAbsent(version, lines)) {
        committed = true;
        deltaLog.committed(version, pr, md, txns);
        afterCommit(version, md != null ? md : effective);
        return version;
      }
      List<JsonNode> winner = deltaLog.readCommit(version);
      for (JsonNode a : winner) {
        if (a.has("commitInfo") && a.get("commitInfo").has("inCommitTimestamp")) {
          lastTimestamp = Math.max(lastTimestamp, a.get("commitInfo").get("inCommitTimestamp").asLong());
        }
      }
      if (!snapshot.exists()) {
        if (isBlindAppend && version == 0 && sameTableCreated(winner, md, pr)) {
          // Two appends created the same table at once: ours becomes a blind append on theirs.
          md = null;
          pr = null;
          blind = actions.stream().allMatch(a -> a instanceof AddFile || a instanceof AddCDCFile);
          version++;
          continue;
        }
        if (version == 0) {
          throw ErrorClass.DELTA_PROTOCOL_CHANGED.error("Another writer created the Delta table at "
              + deltaLog.tablePath() + " (version 0) concurrently with this write; nothing was committed, retry the write",
              Map.of("version", "0", "table", deltaLog.tablePath().toString(), "conflict", "CREATE"));
        }
      }
      ConflictChecker.ReadState state = new ConflictChecker.ReadState(md != null || pr != null, readWholeTable,
          readPredicates, readFiles, removed, txns, isolation);
      ConflictChecker.Outcome outcome = ConflictChecker.check(session, effective, state, version, winner,
          deltaLog.tablePath().toString());
      if (outcome.alreadyCommitted() >= 0) {
        return outcome.alreadyCommitted();
      }
      version++;
      backoff(attempts);
    }
    throw ErrorClass.DELTA_CONCURRENT_TRANSACTION.error("Gave up committing to " + deltaLog.tablePath() + " after "
        + MAX_COMMIT_ATTEMPTS + " attempts without a conflict-free version; nothing was committed",
        Map.of("version", Long.toString(version), "table", deltaLog.tablePath().toString(), "conflict", "RETRIES"));
  }

  /** Short randomized pause after the 4th lost race in a row, at most ~50 ms, so hot tables settle. */
  private static void backoff(int lost) {
    if (lost < 4) {
      return;
    }
    long ms = Math.min(50, 1L << Math.min(lost - 3, 6));
    try {
      Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextLong(ms / 2, ms + 1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Post-commit hook: a checkpoint (and {@code _last_checkpoint}) when the version is a multiple of
   * {@code delta.checkpointInterval} (protocol "Checkpoints"). The commit has landed already, so a
   * failed checkpoint is logged and never fails the write (readers fall back to the JSON commits).
   */
  private void afterCommit(long version, Metadata md) {
    int interval = TableProperties.checkpointInterval(md == null ? Map.of() : md.configuration());
    if (version > 0 && version % interval == 0) {
      try {
        deltaLog.checkpoint(version);
      } catch (Exception | LinkageError e) {
        LOG.warn("filecommit: checkpoint of " + deltaLog.tablePath() + " at version " + version
            + " skipped: " + e, e);
      }
    }
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TransactionalWrite.class);

  private static boolean sameTableCreated(List<JsonNode> commit, Metadata ours, Protocol ourProtocol) {
    if (ours == null) {
      return false;
    }
    Metadata theirs = null;
    Protocol theirProtocol = null;
    for (JsonNode action : commit) {
      if (action.has("metaData")) {
        theirs = ActionJson.parseMetadata(action.get("metaData"));
      } else if (action.has("protocol")) {
        theirProtocol = ActionJson.parseProtocol(action.get("protocol"));
      } else if (action.has("remove")) {
        return false;
      }
    }
    return theirs != null && ourProtocol != null && ourProtocol.equals(theirProtocol)
        && theirs.schema().equals(ours.schema())
        && theirs.partitionColumns().equals(ours.partitionColumns())
        && theirs.configuration().equals(ours.configuration());
  }
}
