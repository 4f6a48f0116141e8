package io.filecommit.catalog;

import io.filecommit.security.Privilege;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The grant statements, in Databricks SQL's form ({@code GRANT privilege_types ON securable_object
 * TO principal}, {@code REVOKE ... FROM principal}, {@code SHOW GRANTS [principal] ON
 * securable_object}), with this server's privileges and objects:
 *
 * <pre>
 * GRANT privilege [, ...] ON (PATH 'uri' | TABLE name) TO principal
 * REVOKE privilege [, ...] ON (PATH 'uri' | TABLE name) FROM principal
 * SHOW GRANTS [principal] [ON (PATH 'uri' | TABLE name)] [TO principal]
 * </pre>
 *
 * where {@code privilege} is {@code READ}, {@code WRITE}, {@code MAINTAIN} or {@code OWNER} ({@link
 * Privilege}), or Unity Catalog's names for the same: {@code SELECT} / {@code READ FILES} (READ),
 * {@code MODIFY} / {@code WRITE FILES} (WRITE), {@code ALL PRIVILEGES} (OWNER); {@code principal}
 * is a name, back-quoted when it holds other characters than letters, digits and {@code _} (e.g.
 * {@code `alice@example.com`}); {@code name} a possibly qualified table name. Keywords are
 * case-insensitive; one trailing {@code ;} is allowed. Any other text is not a grant statement
 * (Spark's parser then reports its syntax error).
 *
 * @param kind which statement
 * @param privileges GRANT's / REVOKE's privileges (empty for SHOW GRANTS)
 * @param path the object as a path string, or null
 * @param table the object as a table name's parts, or null
 * @param principal the grantee (GRANT / REVOKE), or SHOW GRANTS' principal, or null
 */
record GrantStatement(Kind kind, Set<Privilege> privileges, String path, List<String> table, String principal) {
  /** The statements. */
  enum Kind { GRANT, REVOKE, SHOW }

  /** The object for messages and plans: {@code PATH 'uri'}, {@code TABLE name}, or {@code *}. */
  String object() {
    return path != null ? "PATH '" + path + "'" : table != null ? "TABLE " + String.join(".", table) : "*";
  }

  /**
   * Parses one statement.
   *
   * @param sql the text
   * @return the statement, or null when the text is not a grant statement
   */
  static GrantStatement parse(String sql) {
    List<DeltaStatement.Token> tokens;
    try {
      tokens = DeltaStatement.Token.scan(sql);
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (!tokens.isEmpty() && tokens.get(tokens.size() - 1).is(";")) {
      tokens = tokens.subList(0, tokens.size() - 1);
    }
    DeltaStatement.Cursor c = new DeltaStatement.Cursor(sql, tokens);
    try {
      GrantStatement s = statement(c);
      return s != null && c.atEnd() ? s : null;
    } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
      return null;
    }
  }

  private static GrantStatement statement(DeltaStatement.Cursor c) {
    if (c.accept("GRANT") || c.peekIs("REVOKE")) {
      boolean revoke = c.accept("REVOKE");
      Set<Privilege> privileges = privileges(c);
      c.expect("ON");
      GrantStatement on = object(c);
      c.expect(revoke ? "FROM" : "TO");
      String principal = principal(c);
      return new GrantStatement(revoke ? Kind.REVOKE : Kind.GRANT, privileges, on.path, on.table, principal);
    }
    if (c.accept("SHOW") && c.accept("GRANTS")) {
      String principal = null;
      if (!c.atEnd() && !c.peekIs("ON") && !c.peekIs("TO")) {
        principal = principal(c);
      }
      String path = null;
      List<String> table = null;
      if (c.accept("ON")) {
        GrantStatement on = object(c);
        path = on.path;
        table = on.table;
      }
      if (principal == null && c.accept("TO")) {
        principal = principal(c);
      }
      return new GrantStatement(Kind.SHOW, Set.of(), path, table, principal);
    }
    return null;
  }

  private static Set<Privilege> privileges(DeltaStatement.Cursor c) {
    Set<Privilege> out = new LinkedHashSet<>();
    do {
      out.add(privilege(c));
    } while (c.accept(","));
    return Set.copyOf(out);
  }

  private static Privilege privilege(DeltaStatement.Cursor c) {
    if (c.accept("SELECT")) {
      return Privilege.READ;
    }
    if (c.accept("MODIFY")) {
      return Privilege.WRITE;
    }
    if (c.accept("ALL")) {
      c.expect("PRIVILEGES");
      return Privilege.OWNER;
    }
    for (Privilege p : Privilege.values()) {
      if (c.accept(p.name())) {
        if ((p == Privilege.READ || p == Privilege.WRITE) && c.peekIs("FILES")) {
          c.next(); // Unity Catalog's READ FILES / WRITE FILES on an external location
        }
        return p;
      }
    }
    throw new IllegalArgumentException("not a privilege: " + c.peek().text());
  }

  private static GrantStatement object(DeltaStatement.Cursor c) {
    if (c.accept("PATH")) {
      DeltaStatement.Token t = c.next();
      if (!t.string()) {
        throw new IllegalArgumentException("PATH needs a string");
      }
      return new GrantStatement(Kind.SHOW, Set.of(), t.value(), null, null);
    }
    c.expect("TABLE");
    return new GrantStatement(Kind.SHOW, Set.of(), null, List.copyOf(new ArrayList<>(DeltaStatement.name(c))), null);
  }

  private static String principal(DeltaStatement.Cursor c) {
    DeltaStatement.Token t = c.next();
    if (!t.identifier() || t.value().isBlank()) {
      throw new IllegalArgumentException("not a principal: " + t.text());
    }
    return t.value();
  }
}
