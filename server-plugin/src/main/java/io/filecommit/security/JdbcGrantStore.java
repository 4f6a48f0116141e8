package io.filecommit.security;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;

/**
 * Grants in a table of the server's PostgreSQL database (the Hive metastore's, {@code
 * javax.jdo.option.ConnectionURL}), shared by every server on that database: {@value #TABLE}
 * ({@code grantee}, {@code object_type}, {@code object_name}, {@code privilege}, all text), created
 * if missing. Uses the PostgreSQL JDBC driver the metastore already needs on the server's class
 * path (JDBC's {@code DriverManager}); one short connection per call (calls are rare: GRANT,
 * REVOKE, and {@link Grants}' periodic refresh).
 */
public final class JdbcGrantStore implements GrantStore {
  /** The table's name. */
  public static final String TABLE = "filecommit_grants";
  private final String url;
  private final Properties credentials;
  private volatile boolean created;

  /**
   * A store in a database.
   *
   * @param url the JDBC URL ({@code jdbc:postgresql://host:port/db?user=...})
   * @param user the user when not in the URL, or null
   * @param password the password when not in the URL, or null
   */
  public JdbcGrantStore(String url, String user, String password) {
    this.url = url;
    this.credentials = new Properties();
    if (user != null) {
      credentials.setProperty("user", user);
    }
    if (password != null) {
      credentials.setProperty("password", password);
    }
    try {
      Class.forName("org.postgresql.Driver", true, Thread.currentThread().getContextClassLoader());
    } catch (ClassNotFoundException e) {
      // DriverManager may still find it (service loader of the system class path)
    }
  }

  private Connection connect() throws SQLException {
    Connection c = DriverManager.getConnection(url, credentials);
    if (!created) {
      try (Statement s = c.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " (grantee TEXT NOT NULL, object_type TEXT NOT NULL, "
            + "object_name TEXT NOT NULL, privilege TEXT NOT NULL)");
      } catch (SQLException e) {
        // Two servers creating it at once: one wins; anything else shows in the query below.
      }
      created = true;
    }
    return c;
  }

  /**
   * Reads the table.
   *
   * @return the grants (rows with an unknown privilege or object type are skipped)
   * @throws IllegalStateException naming the database when it cannot be read
   */
  @Override
  public Set<Grant> load() {
    Set<Grant> out = new LinkedHashSet<>();
    try (Connection c = connect(); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT grantee, object_type, object_name, privilege FROM " + TABLE)) {
      while (r.next()) {
        try {
          out.add(new Grant(r.getString(1), Grant.ObjectType.valueOf(r.getString(2).toUpperCase(Locale.ROOT)),
              r.getString(3), Privilege.valueOf(r.getString(4).toUpperCase(Locale.ROOT))));
        } catch (IllegalArgumentException e) {
          // a row another version wrote, or a bad hand edit: not a grant this server knows
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot read the grants from " + describe() + ": " + e.getMessage(), e);
    }
    return out;
  }

  @Override
  public void add(Grant g) {
    try (Connection c = connect(); PreparedStatement s = c.prepareStatement("INSERT INTO " + TABLE
        + " (grantee, object_type, object_name, privilege) SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM " + TABLE
        + " WHERE grantee = ? AND object_type = ? AND object_name = ? AND privilege = ?)")) {
      bind(s, g, 0);
      bind(s, g, 4);
      s.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot store the grant in " + describe() + ": " + e.getMessage(), e);
    }
  }

  @Override
  public boolean remove(Grant g) {
    try (Connection c = connect(); PreparedStatement s = c.prepareStatement("DELETE FROM " + TABLE
        + " WHERE grantee = ? AND object_type = ? AND object_name = ? AND privilege = ?")) {
      bind(s, g, 0);
      return s.executeUpdate() > 0;
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot remove the grant from " + describe() + ": " + e.getMessage(), e);
    }
  }

  private static void bind(PreparedStatement s, Grant g, int from) throws SQLException {
    s.setString(from + 1, g.grantee());
    s.setString(from + 2, g.type().name());
    s.setString(from + 3, g.object());
    s.setString(from + 4, g.privilege().name());
  }

  @Override
  public String describe() {
    int q = url.indexOf('?');
    return "table " + TABLE + " of " + (q < 0 ? url : url.substring(0, q)); // no credentials in messages
  }
}
