package io.filecommit.txn;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.TableConfig;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.SetTransaction;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.GroupCommit.Member;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The commit loop of a {@link GroupCommit} group of several members (protocol "Optimistic
 * Concurrency Control", one version for all): judges every live member against every version it
 * did not read, publishes one commit with the group's {@code commitInfo.txnId} through a {@link
 * LogPublisher}, and sets every member's outcome. Whatever is taken "from the group" (the in-commit
 * timestamp, the isolation level, the metadata for the post-commit hooks) is taken from the members
 * still live at that attempt. Any Throwable is decided from the log: a version of the group's
 * {@code txnId} means every live member committed; an unreadable one leaves every member's outcome
 * unknown (files kept).
 */
final class GroupPublish {

  private final List<Member> live;
  private final DeltaLog log;
  private final String table;
  private final String txnId = UUID.randomUUID().toString();
  private final LogPublisher publisher;
  private final Map<Long, WinningCommitSummary> seen = new HashMap<>();
  private long lastTimestamp = Long.MIN_VALUE;
  /** The version being published and not yet decided, or -1. */
  private long inFlight = -1;

  /** The version the previous group of this server landed at, or -1. */
  private final long after;

  /**
   * The publish of one group.
   *
   * @param group the members, in queue order (at least one)
   * @param after the version the previous group of the table's {@link GroupCommit} landed at, or
   *     -1: the first attempt goes after it when the log holds it
   */
  GroupPublish(List<Member> group, long after) {
    this.after = after;
    this.live = new ArrayList<>(group);
    OptimisticTransaction first = group.get(0).txn;
    this.log = first.deltaLog();
    this.table = first.table();
    this.publisher = new LogPublisher(log, txnId, table);
  }

  /** Runs the loop; a Throwable anywhere is decided from the log, never lost. */
  void run() {
    try {
      loop();
    } catch (Throwable e) {
      if (live.isEmpty()) {
        return;
      }
      RuntimeException failure = GroupCommit.asFailure(e, table);
      if (inFlight < 0) {
        failAll(failure, false); // every version tried so far was another writer's
        return;
      }
      List<Action> present;
      try {
        present = publisher.readOutcome(inFlight, e);
      } catch (RuntimeException unknown) {
        failAll(unknown, true);
        return;
      }
      if (present != null && txnId.equals(WinningCommitSummary.of(inFlight, present).txnId())) {
        landed(inFlight);
      } else {
        failAll(failure, false);
      }
    }
  }

  private void loop() {
    for (Member m : live) {
      if (TableConfig.IN_COMMIT_TIMESTAMPS.fromMetadata(m.txn.metadata())) {
        lastTimestamp = Math.max(lastTimestamp, m.txn.snapshot().timestamp());
      }
    }
    // The first attempt goes after the newest version this server knows (catchUp judges the
    // versions in between, read from the log), not after the members' older read versions: a lost
    // race saved. Members read their snapshot before the previous group landed, so that group's
    // version is the one to go after: on an object store the snapshot cache cannot prove a commit
    // of this server without a request (a PUT's answer has no time), and one conditional PUT per
    // group is the point. It is read back first (catchUp needs it anyway); a log that does not
    // hold it (the table was made anew) is not gone after, so no gap is ever left.
    long read = live.stream().mapToLong(m -> m.readVersion).max().orElseThrow();
    long version = -1;
    if (after > read) {
      List<Action> previous;
      try {
        previous = publisher.readOutcome(after, null);
      } catch (RuntimeException e) {
        failAll(e, publisher.outcomeUnknown());
        return;
      }
      if (previous != null) {
        seen.put(after, WinningCommitSummary.of(after, previous));
        version = after + 1;
      }
    }
    if (version < 0) {
      version = Math.max(read, log.latestKnownVersion(read)) + 1;
    }
    for (int attempt = 1; attempt <= CommitLoop.MAX_COMMIT_ATTEMPTS; attempt++) {
      for (Member m : live) {
        m.attempts = attempt;
      }
      try {
        catchUp(version - 1);
      } catch (RuntimeException e) {
        failAll(e, publisher.outcomeUnknown());
        return;
      }
      if (live.isEmpty()) {
        return;
      }
      List<Action> lines = lines(version);
      List<Action> winning;
      inFlight = version;
      try {
        winning = publisher.publish(version, lines);
      } catch (RuntimeException e) {
        inFlight = -1;
        failAll(e, publisher.outcomeUnknown());
        return;
      }
      if (winning == null) {
        landed(version);
        return;
      }
      inFlight = -1;
      seen.put(version, WinningCommitSummary.of(version, winning));
      version++;
      LogPublisher.backoff(attempt);
    }
    failAll(DeltaErrors.conflict(ErrorClass.DELTA_CONCURRENT_TRANSACTION, "gave up after "
        + CommitLoop.MAX_COMMIT_ATTEMPTS + " attempts without a conflict-free version", version, table,
        "RETRIES"), false);
  }

  /** Judges every live member against every version up to {@code through} it has not judged yet. */
  private void catchUp(long through) {
    for (Iterator<Member> it = live.iterator(); it.hasNext(); ) {
      Member m = it.next();
      while (m.checkedThrough < through) {
        long v = m.checkedThrough + 1;
        WinningCommitSummary w = seen.get(v);
        if (w == null) {
          List<Action> actions = publisher.readOutcome(v, null);
          if (actions == null) {
            throw ErrorClass.FILECOMMIT_LOG_READ_FAILED.error("Version " + v + " of " + table + " is not in the "
                + "log although a later one is; its conflicts cannot be checked; nothing was committed",
                Map.of("table", table));
          }
          w = WinningCommitSummary.of(v, actions);
          seen.put(v, w);
        }
        if (w.inCommitTimestamp() != null) {
          lastTimestamp = Math.max(lastTimestamp, w.inCommitTimestamp());
        }
        try {
          if (new ConflictChecker(m.txn.session(), m.txn.metadata(), m.state, w, table).check(false)) {
            m.version = v;
            m.committed = false;
            it.remove();
            break;
          }
        } catch (RuntimeException e) {
          m.fail(e, false);
          it.remove();
          break;
        }
        m.checkedThrough = v;
      }
    }
  }

  /** The group's commit holds {@code version}: every live member committed there. */
  private void landed(long version) {
    inFlight = -1;
    Map<String, Long> txns = new LinkedHashMap<>();
    for (Member m : live) {
      m.version = version;
      m.committed = true;
      txns.putAll(m.state.txns());
    }
    Metadata md = live.get(0).txn.metadata();
    live.clear();
    PostCommitHooks.run(log, version, null, null, md, txns);
  }

  private void failAll(RuntimeException e, boolean unknown) {
    for (Member m : live) {
      m.fail(e, unknown);
    }
    live.clear();
  }

  /** The commit's lines: one commitInfo, then each member's txn actions and file actions. */
  private List<Action> lines(long version) {
    long now = System.currentTimeMillis();
    Long inCommit = null;
    // Every live member passed the versions up to this one without a metadata change, so any
    // live member's metadata is the table's now (the first member may have left the group).
    if (TableConfig.IN_COMMIT_TIMESTAMPS.fromMetadata(live.get(0).txn.metadata())) {
      inCommit = Math.max(now, lastTimestamp + 1);
      now = inCommit;
    }
    Operation.GroupedWrite op = Operation.GroupedWrite.of(live.stream().map(m -> m.operation).toList(),
        live.stream().map(m -> m.txn.txnId).toList());
    Metadata md = live.get(0).txn.metadata();
    long readVersion = live.stream().mapToLong(m -> m.readVersion).min().orElseThrow();
    OptimisticTransaction first = live.get(0).txn;
    List<Action> lines = new ArrayList<>();
    // One principal per group (GroupCommit groups by table and principal): it is the commit's user.
    String user = io.filecommit.security.Principals.of(first.session()).map(io.filecommit.security.Principal::name)
        .orElse(null);
    lines.add(new CommitInfo(inCommit, now, user, user, op.name(), new LinkedHashMap<>(op.parameters()), readVersion,
        TableConfig.ISOLATION_LEVEL.fromMetadata(md), true, new LinkedHashMap<>(op.metrics()),
        CommitInfo.ENGINE + " Apache-Spark/" + first.session().version(), txnId, null));
    for (Member m : live) {
      for (Map.Entry<String, Long> t : m.state.txns().entrySet()) {
        lines.add(new SetTransaction(t.getKey(), t.getValue(), now));
      }
    }
    for (Member m : live) {
      lines.addAll(m.actions);
    }
    return lines;
  }
}
