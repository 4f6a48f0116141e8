package io.filecommit.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.filecommit.security.Privilege;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link GrantStatement#parse}: GRANT, REVOKE and SHOW GRANTS in Databricks SQL's form; other text left to Spark (null). */
class GrantStatementTest {
  @Test
  void grantOnPathAndTable() {
    GrantStatement g = GrantStatement.parse("GRANT WRITE ON PATH 's3a://bucket/team_a' TO `alice@example.com`;");
    assertEquals(GrantStatement.Kind.GRANT, g.kind());
    assertEquals(Set.of(Privilege.WRITE), g.privileges());
    assertEquals("s3a://bucket/team_a", g.path());
    assertNull(g.table());
    assertEquals("alice@example.com", g.principal());
    GrantStatement t = GrantStatement.parse("grant read, maintain on table db.events to team_a");
    assertEquals(Set.of(Privilege.READ, Privilege.MAINTAIN), t.privileges());
    assertEquals(List.of("db", "events"), t.table());
    assertEquals("team_a", t.principal());
    assertEquals(List.of("delta", "/tmp/t"), GrantStatement.parse("GRANT OWNER ON TABLE delta.`/tmp/t` TO b").table());
  }

  @Test
  void unityCatalogNamesOfThePrivileges() {
    assertEquals(Set.of(Privilege.READ), GrantStatement.parse("GRANT SELECT ON TABLE t TO a").privileges());
    assertEquals(Set.of(Privilege.WRITE), GrantStatement.parse("GRANT MODIFY ON TABLE t TO a").privileges());
    assertEquals(Set.of(Privilege.OWNER), GrantStatement.parse("GRANT ALL PRIVILEGES ON TABLE t TO a").privileges());
    assertEquals(Set.of(Privilege.READ, Privilege.WRITE),
        GrantStatement.parse("GRANT READ FILES, WRITE FILES ON PATH '/d' TO a").privileges());
  }

  @Test
  void revoke() {
    GrantStatement r = GrantStatement.parse("REVOKE WRITE ON PATH '/data/a' FROM `bob`");
    assertEquals(GrantStatement.Kind.REVOKE, r.kind());
    assertEquals("bob", r.principal());
    assertNull(GrantStatement.parse("REVOKE WRITE ON PATH '/data/a' TO bob"), "REVOKE takes FROM");
    assertNull(GrantStatement.parse("GRANT WRITE ON PATH '/data/a' FROM bob"), "GRANT takes TO");
  }

  @Test
  void showGrants() {
    GrantStatement all = GrantStatement.parse("SHOW GRANTS");
    assertEquals(GrantStatement.Kind.SHOW, all.kind());
    assertNull(all.principal());
    assertNull(all.path());
    assertEquals("/d", GrantStatement.parse("SHOW GRANTS ON PATH '/d'").path());
    GrantStatement to = GrantStatement.parse("SHOW GRANTS ON TABLE db.t TO `a@b`");
    assertEquals(List.of("db", "t"), to.table());
    assertEquals("a@b", to.principal());
    assertEquals("a", GrantStatement.parse("SHOW GRANTS `a` ON TABLE t").principal(), "Databricks: principal first");
    assertEquals("a", GrantStatement.parse("show grants to a").principal());
  }

  @Test
  void otherTextIsLeftToSpark() {
    assertNull(GrantStatement.parse("SELECT 1"));
    assertNull(GrantStatement.parse("GRANT SUPERUSER ON PATH '/d' TO a"));
    assertNull(GrantStatement.parse("GRANT READ ON PATH /d TO a"), "a path is a string");
    assertNull(GrantStatement.parse("GRANT READ ON SCHEMA s TO a"));
    assertNull(GrantStatement.parse("GRANT READ ON PATH '/d' TO a b"));
    assertNull(GrantStatement.parse("SHOW TABLES"));
    assertNull(GrantStatement.parse("GRANT READ ON PATH '/d"));
  }
}
