package io.filecommit.delta;

import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The state of a Delta table at one version (protocol "Action Reconciliation"; Delta's
 * {@code Snapshot}): protocol, metadata, and, read only when asked, the active files, the latest
 * {@code txn} version of an application and the commit timestamp. Built by {@link
 * DeltaLog#snapshot()} from Delta Kernel. Appends never ask for the active files, so their cost
 * does not grow with the table.
 */
public final class Snapshot {
  private final long version;
  private final Protocol protocol;
  private final Metadata metadata;
  private final Supplier<List<AddFile>> files;
  private final Function<String, Optional<Long>> txnVersions;
  private final Supplier<Long> timestamp;
  private Map<String, AddFile> active;

  /**
   * @param version the table version, or -1 when the table does not exist yet
   * @param protocol the protocol, null when the table does not exist
   * @param metadata the metadata, null when the table does not exist
   * @param files reads the active AddFiles (called at most once)
   * @param txnVersions latest {@code txn} version of an appId, empty when none
   * @param timestamp the commit timestamp of {@code version}, ms since the epoch (the in-commit
   *     timestamp when the table has them)
   */
  public Snapshot(long version, Protocol protocol, Metadata metadata, Supplier<List<AddFile>> files,
      Function<String, Optional<Long>> txnVersions, Supplier<Long> timestamp) {
    this.version = version;
    this.protocol = protocol;
    this.metadata = metadata;
    this.files = files;
    this.txnVersions = txnVersions;
    this.timestamp = timestamp;
  }

  /** {@return the snapshot of a path without a table: version -1} */
  public static Snapshot empty() {
    return new Snapshot(-1, null, null, List::of, app -> Optional.empty(), () -> 0L);
  }

  /** {@return the table version, -1 when there is no table} */
  public long version() {
    return version;
  }

  /** {@return the protocol (null when there is no table)} */
  public Protocol protocol() {
    return protocol;
  }

  /** {@return the metadata (null when there is no table)} */
  public Metadata metadata() {
    return metadata;
  }

  /** {@return whether a table exists at this snapshot (version 0 or later)} */
  public boolean exists() {
    return version >= 0;
  }

  /** {@return the active AddFiles by log path (read on first call, then cached)} */
  public synchronized Map<String, AddFile> activeFiles() {
    if (active == null) {
      Map<String, AddFile> m = new LinkedHashMap<>();
      for (AddFile f : files.get()) {
        m.put(f.path(), f);
      }
      active = Collections.unmodifiableMap(m);
    }
    return active;
  }

  /** {@return the active AddFiles} */
  public Collection<AddFile> allFiles() {
    return activeFiles().values();
  }

  /**
   * The latest {@code txn} version recorded for an application (protocol "Transaction
   * Identifiers").
   *
   * @param appId the application id
   * @return the version, empty when the application never committed
   */
  public Optional<Long> latestTransactionVersion(String appId) {
    return txnVersions.apply(appId);
  }

  /** {@return the timestamp of this version's commit, ms since the epoch (in-commit timestamp if enabled)} */
  public long timestamp() {
    return timestamp.get();
  }
}
