package io.filecommit.txn;

import io.filecommit.conf.FileCommitConf;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.errors.ErrorClass;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group commit of blind appends to one table (the leader/follower group commit of database logs,
 * applied to protocol "Optimistic Concurrency Control"): blind appends that reach this server
 * while a commit of the same table is in flight queue up, and the next leader publishes up to
 * {@code maxSize} of them, in arrival order, as ONE table version. Each member keeps its own
 * files, its own {@code txn} action and its own answer (the version and only its own actions).
 *
 * <p>Rules:
 *
 * <ul>
 *   <li>Only blind appends are grouped (adds only, no metadata or protocol change, nothing read,
 *       not staged, the table exists): their conflict rules never make two of them conflict.
 *   <li>Two members carrying a {@code txn} of the same application id are never in one group: the
 *       later one waits for the next group (and then finds the first one's {@code txn}).
 *   <li>Every member is judged by {@link ConflictChecker} against every version it did not read
 *       (from its own read version up to the version the group takes, and every commit that wins a
 *       race). A member that fails is answered alone with its error and leaves the group; a member
 *       whose {@code txn} already landed is answered {@code committed=false}; the rest go on.
 *   <li>FIFO: the leader is always the oldest queued member and takes members from the head, so a
 *       writer is never starved.
 *   <li>Bounded wait: a leader lingers at most {@code maxWaitMs} for more members, and only while
 *       the table is busy (other members queued or the previous group had several); an idle
 *       table's single writer commits at once.
 *   <li>One publish per group: a group's first attempt goes after the version the table's previous
 *       group landed at ({@link #LANDED}), which its members, queued while it was in flight, did
 *       not read; that version is read back from the log first (not gone after when the log does
 *       not hold it) and judged like the others. On an object store the commit is one conditional
 *       PUT, and the snapshot cache cannot prove this server's own last commit without a request.
 *   <li>The outcome of an ambiguous publish is read from the log ({@link LogPublisher}, the
 *       group's {@code commitInfo.txnId}); when it cannot be read every member is told {@code
 *       FILECOMMIT_COMMIT_STATE_UNKNOWN} and keeps its files.
 * </ul>
 *
 * A group of one member commits exactly as an ungrouped transaction ({@link CommitLoop}). A group
 * of several writes one {@code commitInfo}: operation {@code WRITE}, mode {@code Append}, the
 * members' metrics summed, parameter {@value #GROUPED_PARAMETER} = JSON array of the members' own
 * transaction ids, {@code isBlindAppend=true}, {@code readVersion} = the lowest read version of the
 * members.
 */
final class GroupCommit {
  /** commitInfo parameter of a grouped commit: JSON array of the members' transaction ids. */
  static final String GROUPED_PARAMETER = "groupedWrites";

  private static final ConcurrentHashMap<String, GroupCommit> TABLES = new ConcurrentHashMap<>();
  /** Tables kept in {@link #LANDED}: the most recently committed ones. */
  private static final int LANDED_TABLES = 1024;
  /**
   * Table key -> the version its last group landed at, beyond the life of a committer (which ends
   * whenever its queue is empty): the next group's first attempt goes after it ({@link
   * CommitLoop#startAfter}, {@link GroupPublish}).
   */
  private static final Map<String, Long> LANDED = java.util.Collections.synchronizedMap(
      new java.util.LinkedHashMap<String, Long>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
          return size() > LANDED_TABLES;
        }
      });

  /**
   * One transaction waiting to be committed in a group, and its outcome.
   */
  static final class Member {
    final OptimisticTransaction txn;
    final List<? extends FileAction> actions;
    final Operation.Write operation;
    final ConflictChecker.ReadState state;
    final long readVersion;
    long checkedThrough;
    private boolean done;
    long version = -1;
    boolean committed;
    boolean outcomeUnknown;
    int attempts;
    RuntimeException error;

    Member(OptimisticTransaction txn, List<? extends FileAction> actions, Operation.Write operation,
        ConflictChecker.ReadState state) {
      this.txn = txn;
      this.actions = actions;
      this.operation = operation;
      this.state = state;
      this.readVersion = txn.snapshot().version();
      this.checkedThrough = readVersion;
    }

    void fail(RuntimeException e, boolean unknown) {
      error = e;
      outcomeUnknown = unknown;
    }
  }

  private final String table;
  private final long maxWaitMs;
  private final int maxSize;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final ArrayDeque<Member> queue = new ArrayDeque<>();
  private boolean busy;
  private int lastGroupSize;
  /** The version the last group of this table landed at, or -1 ({@link #LANDED}). */
  private long lastVersion;

  GroupCommit(String table, long maxWaitMs, int maxSize) {
    this.table = table;
    this.maxWaitMs = maxWaitMs;
    this.maxSize = Math.max(1, maxSize);
    this.lastVersion = LANDED.getOrDefault(table, -1L);
  }

  /** The group committer of a table in this server (one per table root, and principal when authenticated). */
  static GroupCommit forTable(String table, long maxWaitMs, int maxSize) {
    return TABLES.computeIfAbsent(table, t -> new GroupCommit(t, maxWaitMs, maxSize));
  }

  /**
   * Commits through the table's group when the commit may be grouped: a blind append ({@link
   * Operation.Write} in mode Append, adds only) on an existing table that changes no metadata and
   * read nothing, with group commit on ({@link FileCommitConf#GROUP_COMMIT_MAX_WAIT_MS} > 0).
   *
   * @return the version (as {@link OptimisticTransaction#commit} returns it), or null when the
   *     commit is not groupable and the caller commits alone
   * @throws RuntimeException the member's own error (conflict, publish failure)
   */
  static Long commitIfGroupable(OptimisticTransaction txn, List<? extends FileAction> actions, Operation operation,
      ConflictChecker.ReadState state) {
    if (!(operation instanceof Operation.Write w) || !w.isBlindAppend() || !txn.snapshot().exists()
        || txn.newMetadata() != null || txn.newProtocol() != null || !CommitActions.onlyAdds(actions)
        || state.readWholeTable() || !state.readPredicates().isEmpty() || !state.readFiles().isEmpty()
        || state.metadataChanged() || RowTracking.assigns(txn.protocol(), txn.metadata())) {
      return null; // a group's one commit would need row IDs assigned across members: committed alone
    }
    long maxWait = FileCommitConf.GROUP_COMMIT_MAX_WAIT_MS.longValue();
    if (maxWait <= 0) {
      return null;
    }
    Member m = new Member(txn, actions, w, state);
    // Members of one version share its commitInfo.userName: a group holds one principal's appends.
    String key = txn.table() + io.filecommit.security.Principals.of(txn.session()).map(p -> "\u0000" + p.name()).orElse("");
    forTable(key, maxWait, (int) FileCommitConf.GROUP_COMMIT_MAX_SIZE.longValue()).commit(m);
    txn.groupOutcome(m.committed, m.attempts, m.outcomeUnknown);
    if (m.error != null) {
      throw m.error;
    }
    return m.version;
  }

  /**
   * Commits a member, alone or with others; blocks until its outcome is known. The outcome is in
   * the member's fields ({@code version}, {@code committed}, {@code attempts}, {@code error},
   * {@code outcomeUnknown}).
   */
  void commit(Member m) {
    List<Member> group;
    boolean lingerInterrupted;
    long after;
    lock.lock();
    try {
      queue.addLast(m);
      changed.signalAll();
      while (!m.done && (busy || queue.peekFirst() != m)) {
        changed.awaitUninterruptibly();
      }
      if (m.done) {
        return;
      }
      busy = true;
      lingerInterrupted = linger();
      group = take();
      after = lastVersion;
    } finally {
      lock.unlock();
    }
    // A cancelled client's interrupt must not fail the other members' publish (interruptible I/O):
    // it is held while the group publishes and restored afterwards.
    boolean interrupted = Thread.interrupted() | lingerInterrupted;
    try {
      publish(group, after);
    } catch (Throwable e) {
      // Last resort (publish decides every outcome itself, from the log): a member without an
      // outcome keeps its files, and the leader's Error is its answer, not a lost outcome.
      for (Member g : group) {
        if (g.error == null && !g.committed && g.version < 0) {
          g.fail(asFailure(e, g.txn.table()), true);
        }
      }
    } finally {
      lock.lock();
      try {
        long landed = -1;
        for (Member g : group) {
          g.done = true;
          if (g.committed) {
            landed = Math.max(landed, g.version);
          }
        }
        busy = false;
        lastGroupSize = group.size();
        if (landed >= 0) {
          lastVersion = landed;
          LANDED.put(table, landed);
        }
        if (queue.isEmpty()) {
          TABLES.remove(table, this);
        }
        changed.signalAll();
      } finally {
        lock.unlock();
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Tests: holds the table as if a commit were in flight, so that members queue. */
  void hold() {
    lock.lock();
    try {
      busy = true;
    } finally {
      lock.unlock();
    }
  }

  /** Tests: ends {@link #hold}; the oldest queued member leads the next group. */
  void release() {
    lock.lock();
    try {
      busy = false;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Members queued now. */
  int queued() {
    lock.lock();
    try {
      return queue.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The leader waits (bounded) for more members while the table is busy. Holds the lock.
   *
   * @return whether the wait was interrupted
   */
  private boolean linger() {
    if (maxWaitMs <= 0 || (queue.size() <= 1 && lastGroupSize <= 1)) {
      return false;
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxWaitMs);
    long left;
    while (queue.size() < maxSize && (left = deadline - System.nanoTime()) > 0) {
      try {
        changed.awaitNanos(left);
      } catch (InterruptedException e) {
        return true;
      }
    }
    return false;
  }

  /** Takes the next group from the head of the queue. Holds the lock. */
  private List<Member> take() {
    return take(queue, maxSize);
  }

  /**
   * Takes the next group from the head of {@code queue}: in queue order, at most {@code maxSize}
   * members, no application id twice (a member whose app id is taken stays queued, in its place).
   */
  static List<Member> take(ArrayDeque<Member> queue, int maxSize) {
    List<Member> group = new ArrayList<>();
    Set<String> apps = new HashSet<>();
    for (Iterator<Member> it = queue.iterator(); it.hasNext() && group.size() < maxSize; ) {
      Member c = it.next();
      if (c.state.txns().keySet().stream().anyMatch(apps::contains)) {
        continue;
      }
      apps.addAll(c.state.txns().keySet());
      group.add(c);
      it.remove();
    }
    return group;
  }

  /** Publishes a group; every member's outcome is set when this returns. */
  static void publish(List<Member> group) {
    publish(group, -1);
  }

  /**
   * Publishes a group; every member's outcome is set when this returns.
   *
   * @param group the members, in queue order
   * @param after a version this server's previous group landed at (-1: none): the first attempt
   *     goes after it ({@link GroupPublish}, {@link CommitLoop#startAfter})
   */
  static void publish(List<Member> group, long after) {
    if (group.size() == 1) {
      Member m = group.get(0);
      try {
        m.version = new CommitLoop(m.txn, List.of(new ConflictChecker.Reader(m.readVersion, m.state)), Set.of())
            .startAfter(after).run(m.actions, m.operation);
        m.committed = m.txn.committed();
      } catch (Throwable e) {
        // the transaction's own publisher knows whether the outcome is unknown; Errors too
        m.fail(asFailure(e, m.txn.table()), false);
      }
      m.attempts = m.txn.attempts();
      return;
    }
    new GroupPublish(group, after).run();
  }

  /**
   * A member's answer for a Throwable that is not a {@link RuntimeException} (an Error raised
   * before anything of the group's was published: the publish itself decides from the log).
   */
  static RuntimeException asFailure(Throwable e, String table) {
    if (e instanceof RuntimeException r) {
      return r;
    }
    return ErrorClass.FILECOMMIT_LOG_WRITE_FAILED.error("The commit to " + table + " stopped on " + e
        + " before its version was published; nothing was committed", e, Map.of("table", table));
  }
}
