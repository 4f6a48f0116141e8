package io.filecommit.txn;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.LogFiles;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The commit loop of one {@link OptimisticTransaction} (protocol "Optimistic Concurrency Control";
 * Delta's {@code OptimisticTransactionImpl.doCommitRetryIteratively} with {@code
 * checkForConflicts}), for one or several readers: commits the actions at the first free version,
 * after judging every version some reader did not see: those before the snapshot (a staged commit
 * read older), those after it this server knows ({@link DeltaLog#latestKnownVersion}: a lost race
 * saved) and those that win a race. {@link OptimisticTransaction#commit} runs it with one reader,
 * the transaction itself; a publish of staged commits with one reader per staged commit, in a
 * transaction on the table's latest snapshot. The commit carries the transaction's metadata,
 * protocol, domain metadata and {@code txn} actions; the transaction's {@link
 * OptimisticTransaction#committed} and {@link OptimisticTransaction#attempts} follow the loop.
 * One loop per commit; not thread-safe.
 */
public final class CommitLoop {
  /** Upper bound of commit attempts before giving up. */
  static final int MAX_COMMIT_ATTEMPTS = 200;

  private final OptimisticTransaction txn;
  private final List<ConflictChecker.Reader> readers;
  private final Set<String> stagedIds;
  /** In-commit timestamp of the newest commit seen. */
  private long lastTimestamp;
  private boolean duplicateOfStaged;
  private RowTracking rowTracking;
  /** A version this server's previous commit of the table landed at, or -1 ({@link #startAfter}). */
  private long after = -1;

  /**
   * A loop for one commit of {@code txn}.
   *
   * @param txn the transaction whose metadata, protocol, domain metadata and {@code txn} actions
   *     the commit carries (for a publish: {@link OptimisticTransaction#setStagedMetadata} and
   *     {@link OptimisticTransaction#setTransaction} set them)
   * @param readers what each transaction that takes part read, with its read version
   * @param stagedIds ids of the staged commits published, empty for a plain commit
   */
  public CommitLoop(OptimisticTransaction txn, List<ConflictChecker.Reader> readers, Set<String> stagedIds) {
    this.txn = txn;
    this.readers = readers;
    this.stagedIds = stagedIds;
  }

  /**
   * Makes the first attempt go after {@code version}, when it is newer than the snapshot: a version
   * this server's previous commit of the table landed at ({@link GroupCommit}), which the snapshot
   * cache of an object store cannot prove without a request. It is read from the log first and,
   * like every version a reader did not see, judged before anything is published; when the log
   * does not hold it (the table was made anew) it is not used, so no gap is ever left.
   *
   * @param version the version, or -1
   * @return this loop
   */
  CommitLoop startAfter(long version) {
    this.after = version;
    return this;
  }

  /**
   * Runs the loop. Runs the table's post-commit hooks (snapshot cache, checkpoints, log clean-up)
   * when the commit lands, not the hooks registered with {@link
   * OptimisticTransaction#registerPostCommitHook}.
   *
   * @param actions the file actions to commit
   * @param operation what the commit does
   * @return the committed version; when a concurrent commit already applied it (the same {@code
   *     txn}, or the same staged commits: {@link #duplicateOfStaged}), that commit's version ({@link
   *     OptimisticTransaction#committed} is false)
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_EXPIRED} when
   *     a version a staged commit did not see was cleaned from the log ({@code
   *     FILECOMMIT_LOG_READ_FAILED} for a plain commit); {@code
   *     FILECOMMIT_STAGED_COMMIT_PUBLISHED} when a concurrent commit published some of the staged
   *     commits; a conflict class; {@code DELTA_CONCURRENT_TRANSACTION} after 200 attempts; the
   *     failure classes of the commit's publish ({@code LogPublisher})
   */
  public long run(List<? extends FileAction> actions, Operation operation) {
    Snapshot snapshot = txn.snapshot();
    DeltaLog deltaLog = txn.deltaLog();
    String table = txn.table();
    Metadata md = txn.newMetadata();
    Protocol pr = txn.newProtocol();
    Metadata effective = txn.metadata();
    boolean ict = TableConfig.IN_COMMIT_TIMESTAMPS.fromMetadata(effective);
    lastTimestamp = ict && snapshot.exists() ? snapshot.timestamp() : Long.MIN_VALUE;
    boolean blind = operation.isBlindAppend() && md == null && pr == null && CommitActions.onlyAdds(actions);
    String isolation = TableConfig.ISOLATION_LEVEL.fromMetadata(effective);
    txn.loopOutcome(false, 0);
    rowTracking = RowTracking.start(deltaLog, snapshot, pr != null ? pr : txn.protocol(), effective);
    long firstRead = readers.stream().mapToLong(ConflictChecker.Reader::readVersion).min().orElse(snapshot.version());
    List<Action> previous = snapshot.exists() && after > snapshot.version() ? txn.publisher.readOutcome(after, null)
        : null;
    long known = previous != null ? after
        : Math.max(snapshot.version(), snapshot.exists() ? deltaLog.latestKnownVersion(snapshot.version()) : -1);
    for (long v = firstRead + 1; v <= known; v++) {
      List<Action> seen = previous != null && v == after ? previous : txn.publisher.readOutcome(v, null);
      if (seen == null && stagedIds.isEmpty()) {
        throw ErrorClass.FILECOMMIT_LOG_READ_FAILED.error("Version " + v + " of " + table + " is not in the log "
            + "although a later one is; its conflicts cannot be checked; nothing was committed", Map.of("table", table));
      }
      if (seen == null) {
        throw ErrorClass.FILECOMMIT_STAGED_COMMIT_EXPIRED.error("Version " + v + " of " + table + ", read by a "
            + "staged commit of version " + firstRead + ", is no longer in the log (cleaned up): its conflicts "
            + "cannot be checked; nothing was committed", Map.of("version", Long.toString(v), "table", table));
      }
      if (judge(WinningCommitSummary.of(v, seen), seen, effective, false)) {
        return v;
      }
    }
    long version = known + 1;
    boolean caughtUp = false;
    for (int attempts = 1; attempts <= MAX_COMMIT_ATTEMPTS; attempts++) {
      txn.loopOutcome(false, attempts);
      long now = System.currentTimeMillis();
      Long inCommit = null;
      if (ict) {
        // Protocol "In-Commit Timestamps": commitInfo first, strictly greater than the previous one.
        inCommit = Math.max(now, lastTimestamp + 1);
        now = inCommit;
      }
      CommitInfo commitInfo = CommitActions.commitInfo(txn, operation, inCommit, now, isolation, blind);
      List<Action> lines = CommitActions.lines(commitInfo, pr, md, List.copyOf(txn.domains), txn.txns, now,
          rowTracking.assign(actions, version));
      List<Action> winning = txn.publisher.publish(version, lines);
      if (winning == null) {
        txn.loopOutcome(true, attempts);
        PostCommitHooks.run(deltaLog, version, pr, md, md != null ? md : effective, txn.txns);
        return version;
      }
      WinningCommitSummary winner = WinningCommitSummary.of(version, winning);
      boolean createdOurTable = false;
      if (!snapshot.exists() && version == 0) {
        // Two writers created the table at once. The same table (an append of ours would have
        // made the same one): ours continues as a blind append on theirs, after the conflict
        // check (its txn may be ours). Another table: ours cannot go on.
        createdOurTable = operation.isBlindAppend() && winner.createdSameTable(md, pr);
        if (!createdOurTable) {
          throw DeltaErrors.conflict(ErrorClass.DELTA_PROTOCOL_CHANGED, "another writer created the Delta table",
              0, table, "CREATE");
        }
      }
      if (judge(winner, winning, effective, createdOurTable)) {
        return version;
      }
      if (createdOurTable) {
        md = null;
        pr = null;
        blind = CommitActions.onlyAdds(actions);
      }
      if (!caughtUp && txn.snapshotUnchecked()) {
        // Started on an unchecked cached snapshot: one listing of the log, every later version judged.
        caughtUp = true;
        for (LogFiles.Commit c : LogFiles.listCommits(deltaLog)) {
          if (c.version() > version) {
            List<Action> seen = LogFiles.read(deltaLog, c);
            if (judge(WinningCommitSummary.of(c.version(), seen), seen, effective, false)) {
              return c.version();
            }
            version = c.version();
          }
        }
      }
      version++;
      LogPublisher.backoff(attempts);
    }
    throw DeltaErrors.conflict(ErrorClass.DELTA_CONCURRENT_TRANSACTION, "gave up after " + MAX_COMMIT_ATTEMPTS
        + " attempts without a conflict-free version", version, table, "RETRIES");
  }

  /**
   * {@return whether {@link #run} found the staged commits already published by a concurrent
   * commit (then the transaction did not commit, and that commit's version was returned)}
   */
  public boolean duplicateOfStaged() {
    return duplicateOfStaged;
  }

  /**
   * Judges one commit that holds a version the readers did not see.
   *
   * @return true when that commit already applied this commit (its {@code txn}, or the same
   *     staged commits): nothing more must be committed
   * @throws io.filecommit.errors.FileCommitException with a conflict's class; {@code
   *     FILECOMMIT_STAGED_COMMIT_PUBLISHED} when it published some of the staged commits
   */
  private boolean judge(WinningCommitSummary winner, List<Action> actions, Metadata effective,
      boolean createdOurTable) {
    rowTracking.saw(actions);
    ConflictChecker.checkDomains(txn.domains, actions, winner.version(), txn.table());
    if (winner.inCommitTimestamp() != null) {
      lastTimestamp = Math.max(lastTimestamp, winner.inCommitTimestamp());
    }
    if (ConflictChecker.publishedBy(winner, stagedIds, txn.table())) {
      duplicateOfStaged = true;
      return true;
    }
    boolean duplicate = false;
    for (ConflictChecker.Reader r : readers) {
      if (r.readVersion() < winner.version()
          && new ConflictChecker(txn.session(), effective, r.state(), winner, txn.table()).check(createdOurTable)) {
        duplicate = true;
      }
    }
    return duplicate;
  }
}
