package io.filecommit.deletionvectors;

import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.filecommit.delta.KernelInternals;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import java.io.Serializable;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongPredicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.util.SerializableConfiguration;

/**
 * A row filter by deletion vector, evaluated inside the scan on the executors (Delta's {@code
 * RowIndexFilter}: {@code DropMarkedRowsFilter} / {@code KeepMarkedRowsFilter}; protocol "Deletion
 * Vectors": a row whose index is in its file's DV is not part of the table).
 *
 * <p>The closure holds only the small map file -> descriptor, broadcast once; each task loads a
 * file's bitmap (Delta Kernel's DV reader on an engine built from the serialized Hadoop
 * configuration) when the first row of that file arrives and keeps it while the rows of that file
 * follow, so memory per task is one file's bitmap and never a list of row indexes on the driver.
 */
public final class RowIndexFilter implements UDF2<String, Long, Boolean> {
  private static final long serialVersionUID = 1L;

  /** What the filter keeps. */
  public enum Mode {
    /** Rows not marked by their file's DV (reading a table). */
    DROP_MARKED,
    /** Rows marked by their file's DV (reading back the rows a command just marked). */
    KEEP_MARKED
  }

  /** The broadcast state: the DVs by file key, files whose every row counts as marked, where to read. */
  private record Files(String tablePath, SerializableConfiguration conf, HashMap<String, DeletionVectorDescriptor> dvs,
      HashSet<String> everyRow) implements Serializable {}

  /** The broadcast DVs by file key. */
  private final Broadcast<Files> files;
  /** Which rows the filter keeps. */
  private final Mode mode;
  private transient String currentKey;
  private transient LongPredicate current;
  private transient Engine engine;

  private RowIndexFilter(Broadcast<Files> files, Mode mode) {
    this.files = files;
    this.mode = mode;
  }

  /**
   * A boolean column that is true for the rows to keep.
   *
   * @param session the session whose SparkContext broadcasts the descriptors
   * @param tablePath the table root (resolves {@code u} descriptors)
   * @param conf Hadoop configuration for reading DV files (sent to the executors)
   * @param dvs file key (the value of {@code key} for that file's rows) -> its deletion vector; files
   *     absent have no marked row
   * @param everyRow file keys whose every row counts as marked (files a command removes whole)
   * @param mode what to keep
   * @param key the column naming each row's file (string)
   * @param rowIndex the column with each row's 0-based index in its file (long)
   * @return the filter column; never null for non-null inputs
   */
  public static Column keep(SparkSession session, String tablePath, Configuration conf,
      Map<String, DeletionVectorDescriptor> dvs, Set<String> everyRow, Mode mode, Column key, Column rowIndex) {
    Broadcast<Files> b = JavaSparkContext.fromSparkContext(session.sparkContext()).broadcast(
        new Files(tablePath, new SerializableConfiguration(conf), new HashMap<>(dvs), new HashSet<>(everyRow)));
    return functions.udf(new RowIndexFilter(b, mode), DataTypes.BooleanType).apply(key, rowIndex);
  }

  /**
   * Whether to keep a row.
   *
   * @param key the row's file key
   * @param rowIndex the row's index in its file
   * @return true to keep it
   */
  @Override
  public Boolean call(String key, Long rowIndex) {
    if (!key.equals(currentKey)) {
      current = load(key);
      currentKey = key;
    }
    boolean marked = current.test(rowIndex);
    return mode == Mode.DROP_MARKED ? !marked : marked;
  }

  private LongPredicate load(String key) {
    Files f = files.value();
    if (f.everyRow().contains(key)) {
      return row -> true;
    }
    DeletionVectorDescriptor dv = f.dvs().get(key);
    if (dv == null) {
      return row -> false;
    }
    if (engine == null) {
      engine = DefaultEngine.create(f.conf().value());
    }
    return KernelInternals.deletedRows(engine, f.tablePath(), dv);
  }
}
