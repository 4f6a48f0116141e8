package io.filecommit.txn.staging;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.FileAction;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.ErrorClass;
import io.filecommit.txn.CommitStager;
import io.filecommit.txn.ConflictChecker;
import io.filecommit.txn.Operation;
import io.filecommit.txn.OptimisticTransaction;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import org.apache.spark.sql.functions;

/**
 * A transaction's commit held back: everything a later publish needs to commit it as if the
 * transaction had committed then, after Delta's conflict rules against every version since it read
 * the table (protocol "Optimistic Concurrency Control", Delta's {@code OptimisticTransaction}
 * state: read version, what it read, its actions). Delta itself has no such record; the staged
 * files lie under the table root like those of an uncommitted write until the commit is published.
 *
 * <p>Stored as JSON lines by {@link StagingStore}: the first line {@code {"stagedCommit":{...}}}
 * holds the header fields below, every further line is a Delta log action exactly as the commit
 * will write it ({@code protocol}, {@code metaData}, {@code add}, {@code remove}, {@code cdc}).
 *
 * @param id server-issued id (a random UUID)
 * @param tablePath the table root
 * @param readVersion the version the transaction read (-1 when it creates the table)
 * @param createdTime when it was staged, ms since the epoch
 * @param expirationTime when it expires, ms since the epoch
 * @param operation {@code commitInfo.operation}
 * @param operationParameters {@code commitInfo.operationParameters}
 * @param operationMetrics {@code commitInfo.operationMetrics}
 * @param blindAppend whether the operation is a blind append
 * @param isolationLevel the isolation level the conflict rules apply
 * @param readWholeTable whether the transaction read every file
 * @param readPredicates SQL partition predicates it read, each with the table's alias or null
 * @param readFiles log paths of the files it read
 * @param txns appId -> version of the {@code txn} actions it commits
 * @param writtenFiles paths of the files the server wrote for it (data, change data, deletion
 *     vectors), URI-encoded and relative to the table root as the log stores paths: what abort and
 *     expiry delete
 * @param protocol the protocol it commits, or null
 * @param metadata the metadata it commits, or null
 * @param actions its file actions
 * @param stagedBy the verified principal that staged it ({@code io.filecommit.security.Principal}),
 *     or null when the server authenticates no one (or for a record of an older server)
 */
public record StagedCommit(String id, String tablePath, long readVersion, long createdTime, long expirationTime,
    String operation, Map<String, String> operationParameters, Map<String, String> operationMetrics,
    boolean blindAppend, String isolationLevel, boolean readWholeTable, List<Predicate> readPredicates,
    Set<String> readFiles, Map<String, Long> txns, List<String> writtenFiles, Protocol protocol, Metadata metadata,
    List<FileAction> actions, String stagedBy) implements CommitStager.Staged {

  /**
   * A partition predicate the transaction read.
   *
   * @param sql its SQL text
   * @param alias the table's alias in it, or null
   */
  public record Predicate(String sql, String alias) {}

  /** Header line of the stored form: every field but the actions. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  record Header(String id, String tablePath, long readVersion, long createdTime, long expirationTime,
      String operation, Map<String, String> operationParameters, Map<String, String> operationMetrics,
      boolean blindAppend, String isolationLevel, boolean readWholeTable, List<Predicate> readPredicates,
      Set<String> readFiles, Map<String, Long> txns, List<String> writtenFiles, String stagedBy) {
    boolean expiredAt(long now) {
      return now >= expirationTime;
    }
  }

  /**
   * Whether a string is a staged commit id (a UUID in its canonical form).
   *
   * @param id a string from a client, or null
   * @return true for a canonical UUID
   */
  public static boolean isValidId(String id) {
    try {
      return id != null && UUID.fromString(id).toString().equals(id);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * Whether it expired at {@code now}.
   *
   * @param now the time, ms since the epoch
   * @return true when its expiry time is not after {@code now}
   */
  public boolean expiredAt(long now) {
    return now >= expirationTime;
  }

  /** {@return its added data files} */
  public List<AddFile> addFiles() {
    return actions.stream().filter(a -> a instanceof AddFile).map(a -> (AddFile) a).toList();
  }

  /** {@return its removed files} */
  public List<RemoveFile> removeFiles() {
    return actions.stream().filter(a -> a instanceof RemoveFile).map(a -> (RemoveFile) a).toList();
  }

  /** {@return its added change-data files} */
  public List<AddCDCFile> cdcFiles() {
    return actions.stream().filter(a -> a instanceof AddCDCFile).map(a -> (AddCDCFile) a).toList();
  }

  /** What the transaction read, for the conflict rules at publish time. */
  ConflictChecker.ReadState readState() {
    Set<String> removed = new LinkedHashSet<>();
    removeFiles().forEach(r -> removed.add(r.path()));
    List<ConflictChecker.ReadPredicate> predicates = new ArrayList<>();
    for (Predicate p : readPredicates) {
      predicates.add(new ConflictChecker.ReadPredicate(functions.expr(p.sql()), p.alias()));
    }
    return new ConflictChecker.ReadState(metadata != null || protocol != null, readWholeTable, predicates, readFiles,
        removed, txns, isolationLevel);
  }

  /**
   * The staged commit of a transaction that is about to commit.
   *
   * @param txn the transaction (its snapshot, metadata and protocol changes)
   * @param request how long it lives
   * @param state what it read and removes
   * @param op what it does
   * @param actions its file actions
   * @return the staged commit, with a new id
   */
  static StagedCommit of(OptimisticTransaction txn, StageRequest request, ConflictChecker.ReadState state,
      Operation op, List<? extends FileAction> actions) {
    Snapshot snapshot = txn.snapshot();
    boolean wholeTable = state.readWholeTable();
    List<Predicate> predicates = new ArrayList<>();
    for (ConflictChecker.ReadPredicate p : state.readPredicates()) {
      String sql = p.predicate().toString();
      try {
        txn.session().sessionState().sqlParser().parseExpression(sql);
        predicates.add(new Predicate(sql, p.alias()));
      } catch (Exception e) {
        // No SQL form that parses back: count the whole table as read (more conflicts, never fewer).
        wholeTable = true;
      }
    }
    Set<String> readFiles = new LinkedHashSet<>(state.readFiles());
    if (wholeTable && snapshot.exists()) {
      snapshot.allFiles().forEach(f -> readFiles.add(f.path()));
    }
    // An add of a file the table holds comes with the remove of that file in the same commit
    // (protocol "Add File and Remove File": a path is added again only after its removal, e.g. with
    // a new deletion vector): the commit's own removes tell which adds the server did not write,
    // without reading the table's active files.
    Map<String, RemoveFile> before = new HashMap<>();
    for (FileAction a : actions) {
      if (a instanceof RemoveFile r) {
        before.put(r.path(), r);
      }
    }
    List<String> written = new ArrayList<>();
    for (FileAction a : request.foreignFiles() ? List.<FileAction>of() : actions) {
      if (a instanceof AddCDCFile c) {
        written.add(c.path());
      } else if (a instanceof AddFile f) {
        RemoveFile old = before.get(f.path());
        if (old == null) {
          written.add(f.path());
        }
        DeletionVectorDescriptor dv = f.deletionVector();
        if (dv != null && !"i".equals(dv.storageType()) && (old == null || !Objects.equals(old.deletionVector(), dv))) {
          written.add(StagedFiles.logPath(txn.deltaLog(), StagedFiles.dvFile(txn.deltaLog(), dv)));
        }
      }
    }
    long now = System.currentTimeMillis();
    return new StagedCommit(UUID.randomUUID().toString(), txn.table(), snapshot.version(), now,
        now + request.expiresAfterMs(), op.name(), Map.copyOf(op.parameters()), Map.copyOf(op.metrics()),
        op.isBlindAppend(), state.isolationLevel(), wholeTable, predicates, readFiles, state.txns(),
        written.stream().distinct().toList(), txn.newProtocol(), txn.newMetadata(), List.copyOf(actions),
        io.filecommit.security.Principals.of(txn.session()).map(io.filecommit.security.Principal::name).orElse(null));
  }

  /**
   * The stored form: the header line, then one line per action; each action's line is made as the
   * store consumes it (a commit of many files is never held as JSON whole).
   */
  Iterable<String> toLines() {
    List<String> lines = new ArrayList<>();
    Header h = new Header(id, tablePath, readVersion, createdTime, expirationTime, operation, operationParameters,
        operationMetrics, blindAppend, isolationLevel, readWholeTable, readPredicates, readFiles, txns, writtenFiles,
        stagedBy);
    ObjectNode wrapper = Actions.MAPPER.createObjectNode();
    wrapper.set("stagedCommit", Actions.MAPPER.valueToTree(h));
    lines.add(wrapper.toString());
    if (protocol != null) {
      lines.add(Actions.toJson(protocol));
    }
    if (metadata != null) {
      lines.add(Actions.toJson(metadata));
    }
    return () -> java.util.stream.Stream.concat(lines.stream(), actions.stream().map(a -> Actions.toJson(a))).iterator();
  }

  /** Parses the header line of the stored form. */
  static Header parseHeader(String line) {
    try {
      JsonNode node = Actions.MAPPER.readTree(line).get("stagedCommit");
      if (node == null) {
        throw new IOException("no stagedCommit object");
      }
      return Actions.MAPPER.treeToValue(node, Header.class);
    } catch (IOException e) {
      throw ErrorClass.FILECOMMIT_STAGED_COMMIT_NOT_FOUND.error("Malformed staged commit record: " + e.getMessage(), e);
    }
  }

  /** Parses the stored form. */
  static StagedCommit parse(List<String> lines) {
    Header h = parseHeader(lines.get(0));
    Protocol protocol = null;
    Metadata metadata = null;
    List<FileAction> actions = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      Action a = Actions.parse(line);
      if (a instanceof Protocol p) {
        protocol = p;
      } else if (a instanceof Metadata m) {
        metadata = m;
      } else if (a instanceof FileAction f) {
        actions.add(f);
      }
    }
    return new StagedCommit(h.id(), h.tablePath(), h.readVersion(), h.createdTime(), h.expirationTime(), h.operation(),
        orEmpty(h.operationParameters()), orEmpty(h.operationMetrics()), h.blindAppend(), h.isolationLevel(),
        h.readWholeTable(), h.readPredicates() == null ? List.of() : h.readPredicates(),
        h.readFiles() == null ? Set.of() : h.readFiles(), h.txns() == null ? Map.of() : h.txns(),
        h.writtenFiles() == null ? List.of() : h.writtenFiles(), protocol, metadata, actions, h.stagedBy());
  }

  private static Map<String, String> orEmpty(Map<String, String> m) {
    return m == null ? Map.of() : new LinkedHashMap<>(m);
  }
}
