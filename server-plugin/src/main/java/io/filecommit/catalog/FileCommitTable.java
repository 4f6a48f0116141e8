package io.filecommit.catalog;

import io.filecommit.connect.AllowedRoots;
import io.filecommit.security.Access;
import io.filecommit.security.Principals;
import io.filecommit.security.Privilege;

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
  private final String qualified;
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
    this(session, path, ident, null, readOptions);
  }

  /**
   * Loads a table of the catalog by name.
   *
   * @param session the session
   * @param path the table root (already checked against the allowed roots)
   * @param ident the name Spark addressed it by, or null
   * @param qualified the qualified name grants name it by ({@code spark_catalog.db.t}), or null
   *     for a table addressed by path
   * @param readOptions as above
   */
  FileCommitTable(SparkSession session, String path, Identifier ident, String qualified,
      Map<String, String> readOptions) {
    this.session = session;
    this.path = path;
    this.qualified = qualified;
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
   * Checks that the session's principal holds a privilege on this table: on its qualified name or
   * a prefix of its location for a table of the catalog, on its path for {@code delta.`/path`}
   * ({@code security.Access}).
   *
   * @param needed the privilege the statement needs
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_PERMISSION_DENIED}
   */
  public void check(Privilege needed) {
    check(session, qualified, path, needed);
  }

  /**
   * {@link #check(Privilege)} for a table not loaded yet (nothing of it read), its errors of the
   * client's types ({@link Guard#errors}).
   *
   * @param session the session
   * @param qualified the qualified name, or null for a table addressed by path
   * @param path the table root (inside the allowed roots)
   * @param needed the privilege
   */
  static void check(SparkSession session, String qualified, String path, Privilege needed) {
    if (Principals.of(session).isEmpty()) {
      return;
    }
    Guard.errors(() -> {
      String location = AllowedRoots.grantForm(path, session);
      if (qualified == null) {
        Access.checkPath(session, needed, location);
      } else {
        Access.checkTable(session, needed, qualified, location);
      }
      return null;
    });
  }

  /** {@return the qualified name grants name this table by, or null for a table addressed by path} */
  public String qualifiedName() {
    return qualified;
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
    check(Privilege.WRITE);
    return TableWrites.builder(session, path, schema(), null, info);
  }

  @Override
  public String toString() {
    return "FileCommitTable(" + name + ")";
  }
}
