package io.filecommit.catalog;

import io.filecommit.connect.AllowedRoots;
import io.filecommit.errors.ErrorClass;
import io.filecommit.security.Privilege;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.V1Table;

/**
 * Which table a name of {@link FileCommitCatalog} means, and its loading (Delta's {@code DeltaCatalog.loadTable}):
 * a path identifier {@code delta.`/path`} (Delta's {@code DeltaTableIdentifier}) is the table at that path, inside
 * the allowed roots; a name the session catalog registered with provider {@code delta} or {@code filecommit} is a
 * {@link FileCommitTable} at its location; any other name is the session catalog's own table. A name the session
 * catalog does not know that ends in {@code @v<version>} or {@code @<yyyyMMddHHmmssSSS>} is that table pinned to the
 * version or timestamp (Delta's {@code DeltaTableUtils.extractIfPathContainsTimeTravel}). Reading a table of ours
 * needs READ on its name or location.
 */
final class TableLookup {
  private static final Pattern VERSION_SUFFIX = Pattern.compile("^(.+)@v(\\d+)$");
  private static final Pattern TIMESTAMP_SUFFIX = Pattern.compile("^(.+)@(\\d{17})$");

  private TableLookup() {}

  /** The table root of a path identifier ({@code delta.`/path`}), or null for a catalog name. */
  static String pathOf(Identifier ident) {
    String[] ns = ident.namespace();
    if (ns.length == 1 && FileCommitCatalog.ours(ns[0])
        && (ident.name().startsWith("/") || ident.name().contains(":/"))) {
      return AllowedRoots.allowedPath(ident.name(), FileCommitCatalog.session());
    }
    return null;
  }

  /**
   * Loads the table a name means, with the plugin's errors as the client's exception types.
   *
   * @param catalog the catalog
   * @param ident the name
   * @param readOptions the reader's time-travel option ({@code versionAsOf} or {@code timestampAsOf}), or none
   * @return a {@link FileCommitTable} for a table of ours, else the session catalog's table
   * @throws NoSuchTableException when the session catalog has no such name
   */
  static Table load(FileCommitCatalog catalog, Identifier ident, Map<String, String> readOptions)
      throws NoSuchTableException {
    try {
      return resolve(catalog, ident, readOptions);
    } catch (io.filecommit.errors.FileCommitException e) {
      throw io.filecommit.errors.ClientExceptions.rethrow(e);
    }
  }

  /**
   * A timestamp as the reader's {@code timestampAsOf} text, in the session time zone.
   *
   * @param micros microseconds since the epoch
   * @return {@code yyyy-MM-dd HH:mm[:ss[.fraction]]}
   */
  static String timestampOption(long micros) {
    Instant at = Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L);
    return LocalDateTime.ofInstant(at,
        java.time.ZoneId.of(FileCommitCatalog.session().sessionState().conf().sessionLocalTimeZone()))
        .toString().replace('T', ' ');
  }

  private static Table resolve(FileCommitCatalog catalog, Identifier ident, Map<String, String> readOptions)
      throws NoSuchTableException {
    String path = pathOf(ident);
    if (path != null) {
      FileCommitTable.check(FileCommitCatalog.session(), null, path, Privilege.READ);
      FileCommitTable t = new FileCommitTable(FileCommitCatalog.session(), path, ident, readOptions);
      if (!t.exists()) {
        throw ErrorClass.DELTA_MISSING_DELTA_TABLE.error(path + " is not a Delta table (no _delta_log commits)",
            Map.of("tableName", path));
      }
      return t;
    }
    Table table;
    try {
      table = catalog.sessionTable(ident);
    } catch (NoSuchTableException e) {
      Matcher v = VERSION_SUFFIX.matcher(ident.name());
      if (readOptions.isEmpty() && v.matches()) {
        return resolve(catalog, Identifier.of(ident.namespace(), v.group(1)), Map.of("versionAsOf", v.group(2)));
      }
      Matcher ts = TIMESTAMP_SUFFIX.matcher(ident.name());
      if (readOptions.isEmpty() && ts.matches()) {
        String d = ts.group(2);
        String text = d.substring(0, 4) + "-" + d.substring(4, 6) + "-" + d.substring(6, 8) + " " + d.substring(8, 10)
            + ":" + d.substring(10, 12) + ":" + d.substring(12, 14) + "." + d.substring(14);
        return resolve(catalog, Identifier.of(ident.namespace(), ts.group(1)), Map.of("timestampAsOf", text));
      }
      throw e;
    }
    String location = locationOf(table);
    if (location == null) {
      if (!readOptions.isEmpty()) {
        return readOptions.containsKey("versionAsOf")
            ? catalog.sessionTable(ident, readOptions.get("versionAsOf")) : catalog.sessionTable(ident);
      }
      return table;
    }
    // The location a metastore holds (another server's, or one written by Spark's V1 commands such
    // as CREATE TABLE LIKE ... LOCATION) is checked as every path is: inside the allowed roots.
    String allowed = AllowedRoots.allowedPath(location, FileCommitCatalog.session());
    String qualified = qualified(catalog, ident);
    FileCommitTable.check(FileCommitCatalog.session(), qualified, allowed, Privilege.READ);
    return new FileCommitTable(FileCommitCatalog.session(), allowed, ident, qualified, readOptions);
  }

  /**
   * The name grants name a table of the catalog by: {@code spark_catalog.db.t}, lower case.
   *
   * @param catalog the catalog (its name is the first part)
   * @param ident the table's name; without a namespace, in the session's current one
   * @return the qualified name
   */
  static String qualified(FileCommitCatalog catalog, Identifier ident) {
    String ns = ident.namespace().length == 0 ? String.join(".", FileCommitCatalog.session().sessionState()
        .catalogManager().currentNamespace()) : String.join(".", ident.namespace());
    return (catalog.name() + "." + ns + "." + ident.name()).toLowerCase(Locale.ROOT);
  }

  /**
   * The location of a table of ours in the session catalog.
   *
   * @param table a table the session catalog or this catalog loaded
   * @return its location (a session catalog entry with provider {@code delta} / {@code filecommit} and a location,
   *     or a {@link FileCommitTable}), or null for any other table
   */
  static String locationOf(Table table) {
    if (table instanceof V1Table v1 && v1.v1Table().provider().isDefined()
        && FileCommitCatalog.ours(v1.v1Table().provider().get()) && v1.v1Table().storage().locationUri().isDefined()) {
      return new org.apache.hadoop.fs.Path(v1.v1Table().storage().locationUri().get()).toString();
    }
    if (table instanceof FileCommitTable t) {
      return t.path();
    }
    return null;
  }
}
