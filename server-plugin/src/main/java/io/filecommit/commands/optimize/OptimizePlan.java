package io.filecommit.commands.optimize;

import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.RemoveFile;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which files OPTIMIZE rewrites and into which output files (Delta's {@code OptimizeExecutor}:
 * {@code filterCandidateFileList} and {@code groupFilesIntoBins}), and the metrics it records
 * (Delta's {@code OptimizeExecutor.createMetrics}). Pure functions over AddFiles, no I/O.
 */
final class OptimizePlan {
  private OptimizePlan() {}

  /**
   * The files of one partition that one job rewrites into one file (bin-packing) or into Z-ordered
   * files of about the target size (Z-order).
   *
   * @param partition the files' partition values
   * @param files the files, at least one
   */
  record Bin(Map<String, String> partition, List<AddFile> files) {
    /** Sum of the files' sizes, bytes. */
    long bytes() {
      return files.stream().mapToLong(AddFile::size).sum();
    }
  }

  /**
   * The candidate files worth rewriting (Delta's {@code filterCandidateFileList}): with Z-order,
   * all of them; else the files smaller than {@code minFileSize}, and the files with a deletion
   * vector that either have no row count or delete more than {@code maxDeletedRowsRatio} of their
   * rows.
   *
   * @param candidates the files the partition predicate selected
   * @param minFileSize files smaller than this (bytes) are compacted
   * @param maxDeletedRowsRatio deleted / physical rows above which a file is rewritten
   * @param multiDim whether the files are Z-ordered
   * @return the files to process, in the candidates' order
   */
  static List<AddFile> toProcess(Collection<AddFile> candidates, long minFileSize, double maxDeletedRowsRatio,
      boolean multiDim) {
    if (multiDim) {
      return List.copyOf(candidates);
    }
    List<AddFile> out = new ArrayList<>();
    for (AddFile f : candidates) {
      if (f.size() < minFileSize || tooManyDeletedRows(f, maxDeletedRowsRatio)) {
        out.add(f);
      }
    }
    return out;
  }

  private static boolean tooManyDeletedRows(AddFile f, double maxRatio) {
    DeletionVectorDescriptor dv = f.deletionVector();
    if (dv == null) {
      return false;
    }
    java.util.OptionalLong physical = f.numPhysicalRecords();
    if (physical.isEmpty()) {
      return true;
    }
    return physical.getAsLong() > 0 && (double) dv.cardinality() / physical.getAsLong() > maxRatio;
  }

  /**
   * Groups the files into bins per partition (Delta's {@code groupFilesIntoBins}): within a
   * partition, files sorted by size fill a bin until the next one would take it past {@code
   * maxBinSize}; bins of one file are dropped (nothing to compact) unless Z-ordering, which rewrites
   * every file of a partition in one bin.
   *
   * @param files the files to process
   * @param maxBinSize the target file size, bytes (bin-packing)
   * @param multiDim whether the files are Z-ordered (one bin per partition)
   * @return the bins
   */
  static List<Bin> bins(List<AddFile> files, long maxBinSize, boolean multiDim) {
    Map<Map<String, String>, List<AddFile>> byPartition = new LinkedHashMap<>();
    for (AddFile f : files) {
      byPartition.computeIfAbsent(f.partitionValues(), k -> new ArrayList<>()).add(f);
    }
    long limit = multiDim ? Long.MAX_VALUE : maxBinSize;
    List<Bin> out = new ArrayList<>();
    for (Map.Entry<Map<String, String>, List<AddFile>> e : byPartition.entrySet()) {
      List<AddFile> sorted = new ArrayList<>(e.getValue());
      sorted.sort(Comparator.comparingLong(AddFile::size));
      List<List<AddFile>> bins = new ArrayList<>();
      List<AddFile> current = new ArrayList<>();
      long currentSize = 0;
      for (AddFile f : sorted) {
        if (!current.isEmpty() && f.size() + currentSize > limit) {
          bins.add(current);
          current = new ArrayList<>();
          currentSize = 0;
        }
        current.add(f);
        currentSize += f.size();
      }
      if (!current.isEmpty()) {
        bins.add(current);
      }
      for (List<AddFile> b : bins) {
        if (b.size() > 1 || multiDim) {
          out.add(new Bin(e.getKey(), List.copyOf(b)));
        }
      }
    }
    return out;
  }

  /**
   * OPTIMIZE's {@code operationMetrics} with Delta's names: file counts and bytes added and removed,
   * the added files' size percentiles ({@code minFileSize}, {@code p25FileSize}, {@code
   * p50FileSize}, {@code p75FileSize}, {@code maxFileSize}: the sorted sizes at index {@code n/4},
   * {@code n/2}, {@code 3n/4}, as Delta's {@code FileSizeStatsWithHistogram}) and the deletion
   * vectors of the processed files.
   *
   * @param added the added files (at least one)
   * @param removed the removed files
   * @param processedDvs the deletion vectors of every file selected for processing
   * @return metric name -> value (decimal string)
   */
  static Map<String, String> metrics(List<AddFile> added, List<RemoveFile> removed,
      List<DeletionVectorDescriptor> processedDvs) {
    long[] sizes = added.stream().mapToLong(AddFile::size).sorted().toArray();
    int n = sizes.length;
    Map<String, String> m = new LinkedHashMap<>();
    m.put("numRemovedFiles", Integer.toString(removed.size()));
    m.put("numRemovedBytes", Long.toString(removed.stream().mapToLong(r -> r.size() == null ? 0 : r.size()).sum()));
    m.put("p25FileSize", Long.toString(sizes[n / 4]));
    m.put("numDeletionVectorsRemoved", Integer.toString(processedDvs.size()));
    m.put("minFileSize", Long.toString(sizes[0]));
    m.put("numAddedFiles", Integer.toString(n));
    m.put("maxFileSize", Long.toString(sizes[n - 1]));
    m.put("p75FileSize", Long.toString(sizes[n * 3 / 4]));
    m.put("p50FileSize", Long.toString(sizes[n / 2]));
    m.put("numAddedBytes", Long.toString(java.util.Arrays.stream(sizes).sum()));
    return m;
  }
}
