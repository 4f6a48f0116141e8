package io.filecommit.txn.staging;

import io.filecommit.delta.IdentityColumns;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import io.filecommit.txn.CommitLoop;
import io.filecommit.txn.ConflictChecker;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import io.filecommit.txn.TransactionId;
import io.filecommit.txn.WinningCommitSummary;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Publishes one or several staged commits of a table as one table version: one transaction whose
 * actions are theirs, judged by Delta's conflict rules ({@link ConflictChecker}) against every
 * version after each staged commit's read version, as if each had committed itself (protocol
 * "Optimistic Concurrency Control"). Idempotent: the commit names the staged commits in {@code
 * commitInfo.operationParameters.stagedCommits}, and a publish that finds them there commits
 * nothing again.
 *
 * <p>Requests to an object store of a publish of one staged commit of one data file, on the server
 * that staged it (measured on MinIO by {@code bench/profile_s3_publish.py}; 17 before the claim):
 * <ol>
 *   <li>{@code PUT} (conditional, {@code If-None-Match: *}) of the staged commit's claim {@code
 *       _delta_log/_staged/<id>.claim}: the one write that orders the publish against any abort
 *       ({@link StagingClaims}); without it an abort could delete files a version then references;
 *   <li>{@code HEAD} of the data file: a commit must never reference a missing file ({@code
 *       DELTA_FILE_NOT_FOUND}; one per added data, deletion-vector and change-data file);
 *   <li>{@code PUT} (conditional) of {@code _delta_log/<version>.json}: the commit itself;
 *   <li>{@code PUT} of {@code _delta_log/<version>.crc}: the version's checksum (protocol "Version
 *       Checksum File"), written by the post-commit hooks.
 * </ol>
 * Nothing else: the record comes from this server's memory (a record never changes once
 * written; another server reads it, a {@code HEAD} and a {@code GET}); the transaction starts on
 * the cached snapshot without a listing ({@link OptimisticTransaction#onCachedSnapshot}: the
 * commit is put-if-absent, and a lost race lists the log once and judges every version it missed);
 * no {@code published} marker is written (the claim stays, and the log holds the version) and no
 * marker is deleted; the staging folder is swept only when one of its records is due ({@link
 * StagingSweeper}).
 */
public final class StagedPublish {
  private StagedPublish() {}

  /**
   * What a publish did.
   *
   * @param version the version that holds the staged commits, or the table's version when nothing
   *     was committed
   * @param committed whether this call committed them (false: already published, or an application
   *     transaction of theirs was already applied)
   * @param attempts commit attempts
   */
  public record Outcome(long version, boolean committed, int attempts) {}

  /**
   * Publishes {@code staged} in {@code txn} (a transaction on the table's latest snapshot, with the
   * publish's own {@code txn} already set, if any).
   *
   * @param txn the transaction
   * @param staged the staged commits, distinct, of the transaction's table
   * @param now the time, ms since the epoch
   * @return what happened
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_STAGED_COMMIT_EXPIRED},
   *     {@code FILECOMMIT_STAGED_COMMIT_PUBLISHED} (some, not all, already published), {@code
   *     FILECOMMIT_STAGED_COMMIT_ABORTED}, {@code FILECOMMIT_STAGED_COMMITS_INCOMPATIBLE}, {@code
   *     DELTA_FILE_NOT_FOUND} (a file it adds is gone), the conflict classes, the commit's
   *     failure classes; any other failure is rethrown after its outcome was read from the log
   */
  public static Outcome publish(OptimisticTransaction txn, List<StagedCommit> staged, long now) {
    List<String> ids = staged.stream().map(StagedCommit::id).toList();
    for (StagedCommit c : staged) {
      if (c.expiredAt(now)) {
        Optional<Long> done = publishedAlready(txn, staged);
        if (done.isPresent()) {
          return new Outcome(done.get(), false, 0);
        }
        throw ErrorClass.FILECOMMIT_STAGED_COMMIT_EXPIRED.error("Staged commit " + c.id() + " of " + txn.table()
            + " expired at " + java.time.Instant.ofEpochMilli(c.expirationTime()) + "; it cannot be published",
            Map.of("stagedId", c.id(), "expirationTime", Long.toString(c.expirationTime())));
      }
    }
    checkCompatible(txn.table(), staged);
    StagedCommit withMetadata = staged.stream().filter(c -> c.metadata() != null || c.protocol() != null)
        .findFirst().orElse(null);
    if (withMetadata != null) {
      txn.setStagedMetadata(withMetadata.metadata(), withMetadata.protocol());
    }
    for (StagedCommit c : staged) {
      for (Map.Entry<String, Long> t : c.txns().entrySet()) {
        if (txn.setTransaction(new TransactionId(t.getKey(), t.getValue()))) {
          return new Outcome(txn.snapshot().version(), false, 0);
        }
      }
    }
    Map<String, Long> allTxns = txn.transactions();
    List<ConflictChecker.Reader> readers = new ArrayList<>();
    List<FileAction> actions = new ArrayList<>();
    for (StagedCommit c : staged) {
      ConflictChecker.ReadState s = c.readState();
      readers.add(new ConflictChecker.Reader(c.readVersion(), new ConflictChecker.ReadState(s.metadataChanged(),
          s.readWholeTable(), s.readPredicates(), s.readFiles(), s.removedFiles(), allTxns, s.isolationLevel())));
      actions.addAll(c.actions());
    }
    StagingClaims.Hold hold = StagingClaims.beginPublish(txn.deltaLog(), staged);
    if (hold.publishedIn() >= 0) {
      return new Outcome(hold.publishedIn(), false, 0);
    }
    CommitLoop loop = new CommitLoop(txn, readers, new LinkedHashSet<>(ids));
    long version;
    try {
      // Under the claim no abort deletes them, and VACUUM keeps the files of staged records.
      StagedFiles.checkExist(txn.deltaLog(), staged);
      version = loop.run(actions, operation(staged));
    } catch (FileCommitException e) {
      if (!ErrorClass.FILECOMMIT_COMMIT_STATE_UNKNOWN.name().equals(e.getCondition())) {
        StagingClaims.endPublish(txn.deltaLog(), hold, -1);
      }
      throw e;
    } catch (Throwable t) {
      decideFromLog(txn, staged, hold, t);
      throw t;
    }
    boolean holdsThem = txn.committed() || loop.duplicateOfStaged();
    StagingClaims.endPublish(txn.deltaLog(), hold, holdsThem ? version : -1);
    return new Outcome(version, txn.committed(), txn.attempts());
  }

  /**
   * Ends a publish that failed with an exception that is not filecommit's (a bug, an {@code
   * Error}): whether it landed is read from the log, and the publish's claims are released with
   * that answer, so that the staged commits are either published or can be aborted. When the log
   * cannot be read the claims stay (an unknown outcome keeps the files); that failure is added to
   * {@code failure} as suppressed.
   */
  private static void decideFromLog(OptimisticTransaction txn, List<StagedCommit> staged, StagingClaims.Hold hold,
      Throwable failure) {
    try {
      Set<Long> versions = new HashSet<>();
      for (StagedCommit c : staged) {
        StagingStore.findInLog(txn.deltaLog(), c).ifPresent(versions::add);
      }
      if (versions.isEmpty()) {
        StagingClaims.endPublish(txn.deltaLog(), hold, -1);
      } else if (versions.size() == 1) {
        StagingClaims.endPublish(txn.deltaLog(), hold, versions.iterator().next());
      }
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * The version that published all of {@code staged}, read from the log (for staged commits that
   * expired: published ones answer as published until the sweep drops their records); an error
   * if only some were.
   */
  private static Optional<Long> publishedAlready(OptimisticTransaction txn, List<StagedCommit> staged) {
    Set<Long> versions = new HashSet<>();
    int published = 0;
    for (StagedCommit c : staged) {
      Optional<Long> v = StagingStore.findInLog(txn.deltaLog(), c);
      if (v.isPresent()) {
        versions.add(v.get());
        published++;
      }
    }
    if (published == 0) {
      return Optional.empty();
    }
    if (published == staged.size() && versions.size() == 1) {
      return Optional.of(versions.iterator().next());
    }
    throw ErrorClass.FILECOMMIT_STAGED_COMMIT_PUBLISHED.error("Some of the staged commits "
        + staged.stream().map(StagedCommit::id).toList() + " of " + txn.table() + " were already published (in "
        + "versions " + versions + "); nothing was committed", Map.of("versions", versions.toString()));
  }

  /**
   * Refuses staged commits that cannot be one transaction: a file removed by two of them, different
   * metadata or protocol changes, two metadata changes of a table with identity columns (each
   * generated values from the same high-water mark), a metadata change next to another's file
   * actions (written for the old metadata), or one application transaction twice.
   */
  private static void checkCompatible(String table, List<StagedCommit> staged) {
    if (staged.size() < 2) {
      return;
    }
    Map<String, String> removedBy = new HashMap<>();
    Map<String, String> appBy = new HashMap<>();
    StagedCommit first = null;
    for (StagedCommit c : staged) {
      for (RemoveFile r : c.removeFiles()) {
        String other = removedBy.putIfAbsent(r.path(), c.id());
        if (other != null) {
          throw incompatible(table, other, c.id(), "both remove the file " + r.path());
        }
      }
      for (String app : c.txns().keySet()) {
        String other = appBy.putIfAbsent(app, c.id());
        if (other != null) {
          throw incompatible(table, other, c.id(), "both carry a txn of application '" + app + "'");
        }
      }
      if (c.metadata() != null || c.protocol() != null) {
        if (first == null) {
          first = c;
        } else if (!sameTable(first.metadata(), c.metadata()) || !Objects.equals(first.protocol(), c.protocol())) {
          throw incompatible(table, first.id(), c.id(), "they change the metadata or protocol differently");
        } else if (c.metadata() != null && !IdentityColumns.of(c.metadata().schema()).isEmpty()) {
          // protocol "Identity Columns": both generated values from the same high-water mark
          throw incompatible(table, first.id(), c.id(), "both generated identity values from the same high-water mark");
        }
      }
    }
    if (first != null) {
      for (StagedCommit c : staged) {
        if (c.metadata() == null && c.protocol() == null && !c.actions().isEmpty()) {
          throw incompatible(table, first.id(), c.id(), "the first changes the metadata or protocol and the second "
              + "wrote files for the table as it was");
        }
      }
    }
  }

  /** Same schema, partitioning and configuration (a table's id and creation time may differ). */
  private static boolean sameTable(Metadata a, Metadata b) {
    return a == null ? b == null : b != null && a.schemaString().equals(b.schemaString())
        && a.partitionColumns().equals(b.partitionColumns()) && a.configuration().equals(b.configuration());
  }

  private static FileCommitException incompatible(String table, String a, String b, String why) {
    return ErrorClass.FILECOMMIT_STAGED_COMMITS_INCOMPATIBLE.error("Staged commits " + a + " and " + b + " of " + table
        + " cannot be published as one commit: " + why + "; nothing was committed",
        Map.of("stagedIds", a + "," + b));
  }

  /**
   * The operation of publishing {@code staged} as one commit: the operation the staged commits
   * recorded, with the parameter {@value WinningCommitSummary#STAGED_COMMITS_PARAMETER} naming
   * them. Several staged commits of one operation keep its name and parameters (of the first) and
   * sum their numeric metrics; of several operations the name joins theirs with {@code " + "}.
   */
  private static Operation.Published operation(List<StagedCommit> staged) {
    List<String> names = staged.stream().map(StagedCommit::operation).distinct().toList();
    Map<String, String> params =
        new LinkedHashMap<>(names.size() == 1 ? staged.get(0).operationParameters() : Map.of());
    params.put(WinningCommitSummary.STAGED_COMMITS_PARAMETER,
        Actions.MAPPER.valueToTree(staged.stream().map(StagedCommit::id).toList()).toString());
    Map<String, String> metrics = new LinkedHashMap<>();
    for (StagedCommit c : staged) {
      c.operationMetrics().forEach((k, v) -> metrics.merge(k, v, (a, b) -> {
        try {
          return Long.toString(Long.parseLong(a) + Long.parseLong(b));
        } catch (NumberFormatException e) {
          return a;
        }
      }));
    }
    return new Operation.Published(String.join(" + ", names), params, metrics,
        staged.stream().allMatch(StagedCommit::blindAppend));
  }
}
