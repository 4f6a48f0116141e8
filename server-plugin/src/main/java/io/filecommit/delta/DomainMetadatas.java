package io.filecommit.delta;

import io.delta.kernel.Table;
import io.delta.kernel.exceptions.TableNotFoundException;
import java.util.Optional;

/**
 * The domain metadata of a table version (protocol "Domain Metadata"; Delta's {@code
 * Snapshot.domainMetadata}), read by Delta Kernel's public {@code Snapshot.getDomainMetadata}.
 */
public final class DomainMetadatas {
  private DomainMetadatas() {}

  /**
   * The configuration string of one domain at a version.
   *
   * @param log the table's log
   * @param version a committed version (>= 0)
   * @param domain the domain name, e.g. {@code delta.rowTracking}
   * @return the configuration, empty when the domain is absent or removed at that version
   * @throws io.filecommit.errors.FileCommitException (through {@link DeltaLog#readFailure}) when
   *     the log cannot be read
   */
  public static Optional<String> configuration(DeltaLog log, long version, String domain) {
    try {
      return Table.forPath(log.engine(), log.tablePath().toString()).getSnapshotAsOfVersion(log.engine(), version)
          .getDomainMetadata(domain);
    } catch (TableNotFoundException e) {
      return Optional.empty();
    } catch (RuntimeException e) {
      throw log.readFailure(e);
    }
  }
}
