package io.filecommit.delta;

import com.fasterxml.jackson.annotation.JsonAlias;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.delta.actions.SetTransaction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The content of a version checksum file {@code _delta_log/<version>.crc} (protocol "Version
 * Checksum File"; Delta's {@code VersionChecksum}): the table's size in bytes and file count after
 * action reconciliation, the protocol and metadata, the live {@code txn} and domain metadata
 * actions, the in-commit timestamp (only on tables with in-commit timestamps), and the file size
 * histogram over Delta's default bins (Delta's {@code FileSizeHistogramUtils.DEFAULT_BINS}: a file
 * of size {@code s} counts in the last bin whose lower bound is {@code <= s}). Optional parts are
 * null when unknown and then left out of the JSON, as Delta leaves them out.
 *
 * @param txnId the id of the transaction that wrote the version, or null
 * @param tableSizeBytes sum of the live files' sizes, bytes
 * @param numFiles number of live files
 * @param numMetadata always 1
 * @param numProtocol always 1
 * @param inCommitTimestampOpt the version's in-commit timestamp, ms since the epoch, or null
 * @param setTransactions live {@code txn} actions, or null when not tracked
 * @param domainMetadata live domain metadata (no tombstones), or null when not tracked
 * @param metadata the table metadata
 * @param protocol the table protocol
 * @param fileSizeHistogram the file size histogram, or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"txnId", "tableSizeBytes", "numFiles", "numMetadata", "numProtocol", "inCommitTimestampOpt",
    "setTransactions", "domainMetadata", "metadata", "protocol", "fileSizeHistogram"})
public record VersionChecksum(String txnId, long tableSizeBytes, long numFiles, long numMetadata, long numProtocol,
    Long inCommitTimestampOpt, List<SetTransaction> setTransactions, List<DomainMetadata> domainMetadata,
    Metadata metadata, Protocol protocol, @JsonAlias("histogramOpt") Histogram fileSizeHistogram) {

  private static final long KB = 1024L;
  private static final long MB = 1024L * KB;
  private static final long GB = 1024L * MB;

  /** Delta's default file size histogram bin lower bounds, bytes (Delta's {@code DEFAULT_BINS}). */
  static final long[] DEFAULT_BINS = bins();

  private static long[] bins() {
    List<Long> b = new ArrayList<>(List.of(0L));
    for (long k = 8; k <= 512; k *= 2) {
      b.add(k * KB);
    }
    for (long m : new long[] {1, 2, 4, 8}) {
      b.add(m * MB);
    }
    addRange(b, 12, 40, 4);
    addRange(b, 48, 120, 8);
    addRange(b, 124, 144, 4);
    addRange(b, 160, 576, 16);
    addRange(b, 640, 1408, 64);
    addRange(b, 1536, 2048, 128);
    addRange(b, 2304, 3840, 256);
    for (long g : new long[] {4, 8, 16, 32, 64, 128, 256}) {
      b.add(g * GB);
    }
    return b.stream().mapToLong(Long::longValue).toArray();
  }

  private static void addRange(List<Long> b, long fromMb, long toMb, long stepMb) {
    for (long m = fromMb; m <= toMb; m += stepMb) {
      b.add(m * MB);
    }
  }

  /**
   * A file size histogram (protocol "File Size Histogram Schema").
   *
   * @param sortedBinBoundaries bin lower bounds, bytes, ascending, starting at 0
   * @param fileCounts files per bin
   * @param totalBytes bytes per bin
   */
  @JsonPropertyOrder({"sortedBinBoundaries", "fileCounts", "totalBytes"})
  public record Histogram(long[] sortedBinBoundaries, long[] fileCounts, long[] totalBytes) {
    /** {@return an empty histogram over Delta's default bins} */
    static Histogram empty() {
      return new Histogram(DEFAULT_BINS.clone(), new long[DEFAULT_BINS.length], new long[DEFAULT_BINS.length]);
    }

    /** Counts ({@code sign} 1) or uncounts (-1) a file of {@code size} bytes in place. */
    void add(long size, int sign) {
      int i = Arrays.binarySearch(sortedBinBoundaries, size);
      int bin = i >= 0 ? i : -i - 2;
      if (bin >= 0) {
        fileCounts[bin] += sign;
        totalBytes[bin] += sign * size;
      }
    }

    Histogram copy() {
      return new Histogram(sortedBinBoundaries.clone(), fileCounts.clone(), totalBytes.clone());
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Histogram h && Arrays.equals(sortedBinBoundaries, h.sortedBinBoundaries)
          && Arrays.equals(fileCounts, h.fileCounts) && Arrays.equals(totalBytes, h.totalBytes);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(totalBytes);
    }

    @Override
    public String toString() {
      return "Histogram" + Arrays.toString(fileCounts);
    }
  }

  /** Whether the required fields are there (a file of another writer may lack them). */
  boolean complete() {
    return metadata != null && protocol != null && numMetadata == 1 && numProtocol == 1;
  }

  /**
   * The checksum of a table state computed from its live files (protocol "Action Reconciliation").
   *
   * @param files the live AddFiles
   * @param protocol the protocol
   * @param metadata the metadata
   * @param txns the live {@code txn} actions, or null when not known
   * @param domains the live domain metadata, or null when not known
   * @param inCommitTimestamp the version's in-commit timestamp, or null
   * @return the checksum, with a histogram
   */
  static VersionChecksum of(Collection<AddFile> files, Protocol protocol, Metadata metadata,
      List<SetTransaction> txns, List<DomainMetadata> domains, Long inCommitTimestamp) {
    long size = 0;
    Histogram h = Histogram.empty();
    for (AddFile f : files) {
      size += f.size();
      h.add(f.size(), 1);
    }
    return new VersionChecksum(null, size, files.size(), 1, 1, inCommitTimestamp, txns, domains, metadata, protocol, h);
  }

  /**
   * The checksum after one more commit, from this one (Delta's incremental checksum): adds count,
   * removes uncount their {@code size}, protocol and metadata are replaced, {@code txn} actions
   * replace their application's, domain metadata replace their domain's (a tombstone removes it).
   * Set transactions are no longer tracked when the table sets {@code
   * delta.setTransactionRetentionDuration} (they expire by time, as in Delta).
   *
   * @param commit the actions of the next version
   * @return the next checksum, or null when it cannot be derived (a remove without a size)
   */
  VersionChecksum next(List<? extends Action> commit) {
    long size = tableSizeBytes;
    long count = numFiles;
    Protocol p = protocol;
    Metadata md = metadata;
    Long ict = null;
    Histogram h = fileSizeHistogram == null ? null : fileSizeHistogram.copy();
    Map<String, SetTransaction> txns = setTransactions == null ? null : byKey(setTransactions, SetTransaction::appId);
    Map<String, DomainMetadata> domains = domainMetadata == null ? null : byKey(domainMetadata, DomainMetadata::domain);
    for (Action a : commit) {
      if (a instanceof AddFile f) {
        size += f.size();
        count++;
        if (h != null) {
          h.add(f.size(), 1);
        }
      } else if (a instanceof RemoveFile r) {
        if (r.size() == null) {
          return null;
        }
        size -= r.size();
        count--;
        if (h != null) {
          h.add(r.size(), -1);
        }
      } else if (a instanceof Protocol np) {
        p = np;
      } else if (a instanceof Metadata nm) {
        md = nm;
      } else if (a instanceof CommitInfo ci) {
        ict = ci.inCommitTimestamp();
      } else if (a instanceof SetTransaction t && txns != null) {
        txns.put(t.appId(), t);
      } else if (a instanceof DomainMetadata d && domains != null) {
        if (d.removed()) {
          domains.remove(d.domain());
        } else {
          domains.put(d.domain(), d);
        }
      }
    }
    if (md != null && md.configuration().containsKey("delta.setTransactionRetentionDuration")) {
      txns = null;
    }
    return new VersionChecksum(null, size, count, 1, 1, ict, txns == null ? null : List.copyOf(txns.values()),
        domains == null ? null : List.copyOf(domains.values()), md, p, h);
  }

  private static <T> Map<String, T> byKey(List<T> items, java.util.function.Function<T, String> key) {
    Map<String, T> m = new LinkedHashMap<>();
    for (T t : items) {
      m.put(key.apply(t), t);
    }
    return m;
  }

  /**
   * The fields where this checksum disagrees with one computed from the table state, compared as
   * Delta's {@code ValidateChecksum} compares them: sizes and counts, protocol, metadata, and the
   * histogram, set transactions and domain metadata when both sides have them.
   *
   * @param computed the checksum computed from the log
   * @return the names of the fields that differ, empty when they agree
   */
  public List<String> mismatches(VersionChecksum computed) {
    List<String> out = new ArrayList<>();
    if (tableSizeBytes != computed.tableSizeBytes) {
      out.add("tableSizeBytes");
    }
    if (numFiles != computed.numFiles) {
      out.add("numFiles");
    }
    if (!Objects.equals(protocol, computed.protocol)) {
      out.add("protocol");
    }
    if (!Objects.equals(metadata, computed.metadata)) {
      out.add("metadata");
    }
    if (fileSizeHistogram != null && computed.fileSizeHistogram != null
        && !fileSizeHistogram.equals(computed.fileSizeHistogram)) {
      out.add("fileSizeHistogram");
    }
    if (setTransactions != null && computed.setTransactions != null
        && !new java.util.HashSet<>(setTransactions).equals(new java.util.HashSet<>(computed.setTransactions))) {
      out.add("setTransactions");
    }
    if (domainMetadata != null && computed.domainMetadata != null
        && !new java.util.HashSet<>(domainMetadata).equals(new java.util.HashSet<>(computed.domainMetadata))) {
      out.add("domainMetadata");
    }
    return out;
  }
}
