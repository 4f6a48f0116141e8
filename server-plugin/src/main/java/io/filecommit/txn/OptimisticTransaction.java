package io.filecommit.txn;

import io.filecommit.delta.ColumnMapping;
import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.TableFeatures;
import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.schema.SchemaUtils;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;

/**
 * One optimistic transaction on a Delta table (protocol "Optimistic Concurrency Control"; Delta's
 * {@code OptimisticTransaction}): reads a snapshot, may change metadata, records what it read, and
 * commits actions as the next version ({@link CommitLoop}). Version {@code readVersion + 1} is
 * created only if absent; when another writer took it, the winning commit is read and judged by the
 * {@link ConflictChecker}: no conflict -> retry at the next version; a conflict -> a typed error.
 * A transaction given a {@link CommitStager} hands it the commit instead ({@link #stageInstead}).
 *
 * <p>A commit's outcome is read from the log, never guessed from an exception ({@link
 * LogPublisher}); the commit carries this transaction's {@code commitInfo.txnId}.
 *
 * <p>Files the command wrote are registered with {@link #onAbort}; {@link #abort} deletes them only
 * while the transaction has not committed. Not thread-safe: one transaction per command.
 *
 * <p>Over 400 lines: the surface of Delta's {@code OptimisticTransaction} a command uses (what it
 * read, metadata, protocol and domain changes, commit, abort); the commit loop, the publishing and
 * the conflict rules are already in {@link CommitLoop}, {@link LogPublisher} and {@link ConflictChecker}.
 */
public final class OptimisticTransaction {
  private final SparkSession session;
  private final DeltaLog deltaLog;
  private final Snapshot snapshot;
  /** This transaction's {@code commitInfo.txnId}. */
  final String txnId = UUID.randomUUID().toString();
  private Metadata newMetadata;
  private Protocol newProtocol;
  private boolean hasWritten;
  private int attempts;
  private boolean committed;
  private boolean groupOutcomeUnknown;
  /** Publishes this transaction's commits and reads their outcome ({@link CommitLoop}). */
  final LogPublisher publisher;
  private CommitStager stager;
  private CommitStager.Staged staged;
  private final ReadSet reads = new ReadSet();
  /** appId -> version of the {@code txn} actions it commits, in the order set ({@link CommitLoop}). */
  final Map<String, Long> txns = new LinkedHashMap<>();
  private final List<Runnable> cleanups = new ArrayList<>();
  private final boolean snapshotUnchecked;
  private IdentityValues identityValues;
  /** The domain metadata it commits ({@link CommitLoop}). */
  final List<DomainMetadata> domains = new ArrayList<>();
  private final Set<PostCommitHook> hooks = new java.util.LinkedHashSet<>();

  /**
   * Starts a transaction at the table's latest snapshot.
   *
   * @param session the Spark session that runs the command
   * @param deltaLog the table's log
   */
  public OptimisticTransaction(SparkSession session, DeltaLog deltaLog) {
    this(session, deltaLog, false);
  }

  /**
   * Starts a transaction at the table's latest snapshot, or, for a blind append, at the state of
   * this server's own last commit when {@link DeltaLog#ownLatestCommit} has it (no request on an
   * object store; {@link #snapshotUnchecked} then tells).
   *
   * @param session the Spark session that runs the command
   * @param deltaLog the table's log
   * @param blindAppend whether the transaction only appends files without reading the table
   */
  public OptimisticTransaction(SparkSession session, DeltaLog deltaLog, boolean blindAppend) {
    this.session = session;
    this.deltaLog = deltaLog;
    java.util.Optional<Snapshot> own = blindAppend ? deltaLog.ownLatestCommit() : java.util.Optional.empty();
    this.snapshotUnchecked = own.isPresent();
    this.snapshot = own.isPresent() ? own.get() : deltaLog.snapshot();
    this.publisher = new LogPublisher(deltaLog, txnId, table());
  }

  /**
   * {@return whether the snapshot is this server's own last commit, not checked against the log
   * ({@link DeltaLog#ownLatestCommit}): a protocol or metadata conflict may then be with a commit
   * that landed before this transaction started}
   */
  public boolean snapshotUnchecked() {
    return snapshotUnchecked;
  }

  /**
   * Makes {@link #commit} hand the commit to {@code stager} instead of publishing it: the files
   * stay where they were written, nothing reaches {@code _delta_log} until the staged commit is
   * published.
   *
   * @param stager where the commit goes (a staging request of the staging sub-package)
   */
  public void stageInstead(CommitStager stager) {
    this.stager = Objects.requireNonNull(stager, "stager");
  }

  /** {@return the staged commit {@link #commit} stored, or null when it was not staged} */
  public CommitStager.Staged staged() {
    return staged;
  }

  /** {@return the metadata this transaction commits, or null (Delta's {@code newMetadata})} */
  public Metadata newMetadata() {
    return newMetadata;
  }

  /** {@return the protocol this transaction commits, or null (Delta's {@code newProtocol})} */
  public Protocol newProtocol() {
    return newProtocol;
  }

  /**
   * Sets the metadata and protocol that staged commits being published commit, without the checks
   * of {@link #updateMetadata} (they ran when the commits were staged); Delta has no such step.
   *
   * @param metadata the metadata a staged commit commits, or null
   * @param protocol the protocol it commits, or null
   */
  public void setStagedMetadata(Metadata metadata, Protocol protocol) {
    newMetadata = metadata;
    newProtocol = protocol;
  }

  /** {@return the snapshot this transaction read (its version is the read version)} */
  public Snapshot snapshot() {
    return snapshot;
  }

  /** {@return the log of the table} */
  public DeltaLog deltaLog() {
    return deltaLog;
  }

  /** {@return the Spark session of the command} */
  public SparkSession session() {
    return session;
  }

  /** {@return the table root, for messages} */
  public String table() {
    return deltaLog.tablePath().toString();
  }

  /** {@return the metadata in force: the updated one, else the snapshot's (null for a new table)} */
  public Metadata metadata() {
    return newMetadata != null ? newMetadata : snapshot.metadata();
  }

  /** {@return the protocol in force: the updated one, else the snapshot's (null for a new table)} */
  public Protocol protocol() {
    return newProtocol != null ? newProtocol : snapshot.protocol();
  }

  /** {@return the identity values this transaction generates (made at the first call, under its metadata)} */
  public IdentityValues identityValues() {
    if (identityValues == null) {
      identityValues = new IdentityValues(session, metadata());
    }
    return identityValues;
  }

  /** {@return whether data files have been written in this transaction} */
  public boolean hasWritten() {
    return hasWritten;
  }

  /** Records that data files are being written (Delta's {@code hasWritten}): the metadata cannot change. */
  public void markWritten() {
    hasWritten = true;
  }

  /**
   * Registers how to delete files this transaction's command wrote, should it not commit.
   *
   * @param cleanup deletes the files; best effort, must not throw
   */
  public void onAbort(Runnable cleanup) {
    cleanups.add(cleanup);
  }

  /**
   * Deletes the files registered with {@link #onAbort}, for a command that fails (or turns out to
   * be a duplicate) before its commit landed. Does nothing once this transaction has committed (the
   * committed version references those files) or when the outcome of a commit attempt could not be
   * read from the log (it may have landed): files are deleted only when the log proves that no
   * version references them. Best effort; calling twice is harmless.
   */
  public void abort() {
    if (committed || publisher.outcomeUnknown() || groupOutcomeUnknown) {
      return;
    }
    List<Runnable> todo = new ArrayList<>(cleanups);
    cleanups.clear();
    for (Runnable r : todo) {
      try {
        r.run();
      } catch (RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(OptimisticTransaction.class).warn(
            "filecommit: cleanup of an aborted write to " + table() + " failed: " + e);
      }
    }
  }

  /**
   * Records that this transaction read every active file (an overwrite): any concurrent
   * data-changing add or remove conflicts with it ({@link ConflictChecker}).
   */
  public void readWholeTable() {
    reads.readWholeTable(snapshot);
  }

  /**
   * Records that this transaction read the partitions matching {@code predicate} (replaceWhere),
   * which held {@code files}.
   *
   * @param predicate SQL predicate over partition columns
   * @param files log paths of the files it matched
   */
  public void readPartitions(String predicate, Collection<String> files) {
    readPartitions(functions.expr(predicate), null, files);
  }

  /**
   * Records that this transaction read the partitions matching {@code predicate} (the partition
   * part of a row-level change's condition), which held {@code files}.
   *
   * @param predicate predicate over partition columns
   * @param alias the table's name in {@code predicate}, or null
   * @param files log paths of the files it matched
   */
  public void readPartitions(Column predicate, String alias, Collection<String> files) {
    reads.readPartitions(predicate, alias, files);
  }

  /**
   * Makes this transaction idempotent for an application (protocol "Transaction Identifiers");
   * the commit will carry {@code txn(appId, version)}.
   *
   * @param id the application transaction
   * @return true when the table's latest version for the app id is already >= the version: the
   *     caller must not write
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_ILLEGAL_OPTION} for an empty app
   *     id or a negative version
   */
  public boolean setTransaction(TransactionId id) {
    id.check();
    txns.put(id.appId(), id.version());
    return snapshot.latestTransactionVersion(id.appId()).map(v -> v >= id.version()).orElse(false);
  }

  /** {@return whether {@link #setTransaction} was called: the commit carries a {@code txn} action} */
  public boolean hasTransactionId() {
    return !txns.isEmpty();
  }

  /**
   * {@return whether the last {@link #commit} committed; false when a concurrent commit of the same
   * application's txn at an equal or higher version made this write a duplicate}
   */
  public boolean committed() {
    return committed;
  }

  /** {@return the commit attempts of the last {@link #commit} (1 when it landed at once)} */
  public int attempts() {
    return attempts;
  }

  /**
   * Sets new metadata (and the protocol it requires) to commit with this transaction.
   *
   * @param metadata the new metadata
   * @throws IllegalStateException when data has already been written in this transaction
   * @throws io.filecommit.errors.FileCommitException when the schema, partition columns or
   *     properties are invalid, {@code FILECOMMIT_TABLE_LOCATION_OVERLAP} for a nested new table
   */
  public void updateMetadata(Metadata metadata) {
    if (hasWritten) {
      throw new IllegalStateException(
          "Cannot change the metadata of " + table() + " after this transaction has written data (hasWritten)");
    }
    SchemaUtils.validateSchemaAndPartitioning(metadata.schema(), metadata.partitionColumns());
    MetadataChecks.checkProperties(session, snapshot, metadata, table(), () -> {
      readWholeTable(); // Delta's ADD CONSTRAINT reads every file: an append landing first conflicts
      return reads.rowsChecked() || snapshot.allFiles().isEmpty();
    });
    metadata = RowTracking.prepare(snapshot.metadata(), ColumnMapping.assign(snapshot.metadata(), metadata), table());
    Protocol current = protocol();
    Protocol required = TableFeatures.required(current, metadata);
    if (!required.equals(current)) {
      newProtocol = required;
    }
    if (!snapshot.exists() && newMetadata == null) { // a new table's directory, once its metadata is valid
      onAbort(io.filecommit.delta.storage.TableLocation.claimNewTable(session, deltaLog.fs(), deltaLog.tablePath()));
    }
    newMetadata = metadata;
  }

  /**
   * Sets the protocol to commit with this transaction, as asked by name or version (protocol
   * "Protocol Evolution"; Delta's {@code OptimisticTransaction.updateProtocol}); a concurrent
   * protocol change conflicts ({@code DELTA_PROTOCOL_CHANGED}).
   *
   * @param protocol the protocol; nothing changes when it equals the snapshot's (or the pending one)
   */
  public void updateProtocol(Protocol protocol) {
    if (!protocol.equals(protocol())) {
      newProtocol = protocol;
    }
  }

  /**
   * Commits a domain's metadata with this transaction (protocol "Domain Metadata"; Delta's {@code
   * OptimisticTransaction.commit} of {@code DomainMetadata} actions), replacing an earlier one of
   * the same domain, and raises the protocol to list {@code writerFeatures} (with {@code
   * domainMetadata}). A concurrent commit of the same domain conflicts ({@link CommitActions}).
   *
   * @param domain the domain metadata action
   * @param writerFeatures writer features the domain needs, e.g. {@code clustering}
   */
  public void updateDomainMetadata(DomainMetadata domain, Set<String> writerFeatures) {
    Set<String> needed = new HashSet<>(writerFeatures);
    needed.add("domainMetadata");
    Protocol current = protocol();
    Protocol required = TableFeatures.withWriterFeatures(current, needed);
    if (!required.equals(current)) {
      newProtocol = required;
    }
    domains.removeIf(d -> d.domain().equals(domain.domain()));
    domains.add(domain);
  }

  /**
   * Commits the actions (with any metadata and protocol change) as the next table version, or, for
   * a transaction made with {@link #stageInstead}, stores them as a staged commit ({@link
   * #staged()}) and publishes nothing. When identity values were generated ({@link
   * #identityValues}), the metadata committed carries the columns' moved high-water marks.
   *
   * @param actions file actions to commit
   * @param operation what the commit does (commitInfo operation, parameters, metrics)
   * @return the committed version; when the write turned out to be a duplicate of a concurrent
   *     commit of the same {@code txn}, that commit's version ({@link #committed()} is false); when
   *     staged, the read version
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_CANNOT_MODIFY_APPEND_ONLY} when a
   *     data-changing remove meets an append-only table; a conflict class when a concurrent commit
   *     conflicts
   */
  public long commit(List<? extends FileAction> actions, Operation operation) {
    if (TableConfig.APPEND_ONLY.fromMetadata(metadata())
        && actions.stream().anyMatch(a -> a instanceof RemoveFile r && r.dataChange())) {
      throw DeltaErrors.appendOnly(table(), TableConfig.APPEND_ONLY.key(), "this write would remove files");
    }
    Metadata marks = identityValues == null ? null : identityValues.highWaterMarks(metadata(), actions);
    if (marks != null) {
      newMetadata = marks; // the identity high-water marks (IdentityValues): a metaData action, a conflict for others
    }
    ConflictChecker.ReadState state = reads.state(newMetadata != null || newProtocol != null || !domains.isEmpty(),
        actions, txns, TableConfig.ISOLATION_LEVEL.fromMetadata(metadata()));
    if (stager != null && !domains.isEmpty()) {
      throw ErrorClass.FILECOMMIT_CANNOT_STAGE.error("A commit that writes domain metadata ("
          + domains.get(0).domain() + ") cannot be staged; commit it directly", Map.of("operation", "stage"));
    }
    if (stager != null) {
      staged = stager.stage(this, state, operation, actions);
      committed = true;
      return snapshot.version();
    }
    Long grouped = GroupCommit.commitIfGroupable(this, actions, operation, state);
    long version = grouped != null ? grouped : new CommitLoop(this,
        List.of(new ConflictChecker.Reader(snapshot.version(), state)), Set.of()).run(actions, operation);
    if (committed) {
      PostCommitHooks.runAll(hooks, new PostCommitHook.Committed(session, deltaLog, version, metadata(), actions));
    }
    return version;
  }

  /**
   * Registers work to run once this transaction's actions have landed in a version (Delta's
   * {@code OptimisticTransactionImpl.registerPostCommitHook}): after the hooks of that version
   * ({@link PostCommitHooks}), in the committing thread, before {@link #commit} returns; never for
   * a staged commit, a duplicate or a failed commit. A hook is registered once however often this is
   * called with it.
   *
   * @param hook the work; failures are logged and never fail the commit
   */
  public void registerPostCommitHook(PostCommitHook hook) {
    hooks.add(hook);
  }

  /** Records the outcome of a grouped commit ({@link GroupCommit}). */
  void groupOutcome(boolean committed, int attempts, boolean outcomeUnknown) {
    this.committed = committed;
    this.attempts = attempts;
    this.groupOutcomeUnknown = outcomeUnknown;
  }

  /** Records the state of a {@link CommitLoop} of this transaction: whether it landed, after how many attempts. */
  void loopOutcome(boolean committed, int attempts) {
    this.committed = committed;
    this.attempts = attempts;
  }

  /** {@return a copy of appId -> version of the {@code txn} actions it commits ({@link #setTransaction})} */
  public Map<String, Long> transactions() {
    return Map.copyOf(txns);
  }

  /** Records every active file as read and checked against the constraints added (Delta's ADD CONSTRAINT scan). */
  public void readAllRowsForConstraints() {
    readWholeTable();
    reads.markRowsChecked();
  }
}
