package io.filecommit.catalog;

import io.filecommit.delta.DeltaLog;
import io.filecommit.delta.Snapshot;
import io.filecommit.delta.actions.Metadata;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;

/**
 * A Delta table as the catalog hands it to Spark (Delta's {@code DeltaTableV2}): its root path,
 * its name (a catalog identifier, or {@code delta.`/path`}), and, for a time-travel read, the
 * version or timestamp it is pinned to. Schema, partitioning and properties come from the table's
 * latest snapshot (or the pinned one), read once when the table is loaded.
 *
 * <p>Reads are not served through this interface: the session extension's analysis rule ({@link
 * TableResolution}) replaces every scan of it with the filecommit reader's relation (partition
 * pruning, data skipping, deletion vectors), as Delta's {@code DeltaAnalysis} falls back to its V1
 * relation. Writes (INSERT, {@code writeTo}, {@code saveAsTable} in append mode) are Spark's V1
 * fallback writes ({@link TableWrites}), which run the plugin's {@code WriteIntoDelta}.
 */
public final class FileCommitTable implements Table, SupportsWrite {
  private final SparkSession session;
  private final String path;
  private final String name;
  private final Map<String, String> readOptions;
  private final Snapshot snapshot;

  /**
   * Loads a table.
   *
   * @param session the session
   * @param path the table root (already checked against the allowed roots)
   * @param ident the name Spark addressed it by, or null
   * @param readOptions {@code versionAsOf} or {@code timestampAsOf} for a time-travel read, else
   *     empty
   */
  FileCommitTable(SparkSession session, String path, Identifier ident, Map<String, String> readOptions) {
    this.session = session;
    this.path = path;
    this.name = ident == null ? "delta.`" + path + "`" : ident.toString();
    this.readOptions = Map.copyOf(readOptions);
    this.snapshot = DeltaLog.forTable(session, path).snapshot();
  }

  /**
   * The table root.
   *
   * @return the path the table's log is under
   */
  public String path() {
    return path;
  }

  /**
   * Read options of a pinned (time-travel) read.
   *
   * @return {@code versionAsOf} or {@code timestampAsOf}, or empty for the latest snapshot
   */
  public Map<String, String> readOptions() {
    return readOptions;
  }

  /**
   * Whether a Delta table exists at the path.
   *
   * @return true when the log has at least one commit
   */
  boolean exists() {
    return snapshot.exists();
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public StructType schema() {
    return snapshot.exists() ? snapshot.metadata().schema() : new StructType();
  }

  @Override
  public Transform[] partitioning() {
    if (!snapshot.exists()) {
      return new Transform[0];
    }
    List<String> cols = snapshot.metadata().partitionColumns();
    return cols.stream().map(Expressions::identity).toArray(Transform[]::new);
  }

  @Override
  public Map<String, String> properties() {
    Map<String, String> out = new LinkedHashMap<>();
    if (snapshot.exists()) {
      Metadata md = snapshot.metadata();
      out.putAll(md.configuration());
      if (md.description() != null) {
        out.put(TableCatalog.PROP_COMMENT, md.description());
      }
    }
    out.put(TableCatalog.PROP_PROVIDER, "delta");
    out.put(TableCatalog.PROP_LOCATION, path);
    return out;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.V1_BATCH_WRITE, TableCapability.TRUNCATE, TableCapability.OVERWRITE_BY_FILTER,
        TableCapability.OVERWRITE_DYNAMIC, TableCapability.BATCH_READ);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return TableWrites.builder(session, path, null, info);
  }

  @Override
  public String toString() {
    return "FileCommitTable(" + name + ")";
  }
}
