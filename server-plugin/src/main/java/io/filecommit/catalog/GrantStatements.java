package io.filecommit.catalog;

import io.filecommit.connect.AllowedRoots;
import io.filecommit.security.Access;
import io.filecommit.security.Grant;
import io.filecommit.security.Grants;
import io.filecommit.security.Principal;
import io.filecommit.security.Principals;
import io.filecommit.security.Privilege;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Runs the grant statements ({@link GrantStatement}) against the server's grants ({@link Grants}),
 * as Unity Catalog's GRANT / REVOKE / SHOW GRANTS do for its securables:
 *
 * <ul>
 *   <li>GRANT / REVOKE: only an admin ({@link Principal#admin()}; on a server without
 *       authentication, any client, which every check trusts anyway) may run them, else {@code
 *       FILECOMMIT_PERMISSION_DENIED} (privilege {@code ADMIN}). A {@code PATH} is resolved as every
 *       command path ({@code AllowedRoots.resolve}) and must lie inside the allowed roots ({@code
 *       FILECOMMIT_PATH_NOT_ALLOWED}); a {@code TABLE} must exist and is named by its qualified
 *       name ({@code spark_catalog.db.t}); {@code delta.`/path`} is the path. They return no rows;
 *       REVOKE of a grant that does not exist does nothing.
 *   <li>SHOW GRANTS: one row per grant, columns {@link #SHOW} ({@code grantee}, {@code privilege},
 *       {@code object_type} {@code PATH} or {@code TABLE}, {@code object}), ordered by object then
 *       grantee; with {@code ON PATH} the grants on that path or a path above it, with {@code ON
 *       TABLE} those on the table's name or a path above its location; with a principal only that
 *       grantee's. A non-admin sees only its own grants and its groups' (asking for another
 *       principal's is {@code FILECOMMIT_PERMISSION_DENIED}).
 * </ul>
 */
final class GrantStatements {
  /** SHOW GRANTS' columns. */
  static final StructType SHOW = new StructType()
      .add("grantee", DataTypes.StringType, false)
      .add("privilege", DataTypes.StringType, false)
      .add("object_type", DataTypes.StringType, false)
      .add("object", DataTypes.StringType, false);

  private GrantStatements() {}

  /**
   * The command of a statement; it runs when Spark executes the plan.
   *
   * @param session the session
   * @param s the statement
   * @return the command node
   */
  static LogicalPlan plan(SparkSession session, GrantStatement s) {
    StructType schema = s.kind() == GrantStatement.Kind.SHOW ? SHOW : new StructType();
    @SuppressWarnings("unchecked")
    scala.collection.immutable.Seq<org.apache.spark.sql.catalyst.expressions.Attribute> out =
        (scala.collection.immutable.Seq<org.apache.spark.sql.catalyst.expressions.Attribute>) (Object)
            DataTypeUtils.toAttributes(schema);
    String text = (s.kind() == GrantStatement.Kind.SHOW ? "SHOW GRANTS" : s.kind().name()) + " ON " + s.object();
    return new CommandNode(text, out, () -> Guard.errors(() -> run(session, s)));
  }

  /** The object of a statement as grants name it. */
  private record Target(Grant.ObjectType type, String object, String location) {}

  private static Target target(SparkSession session, GrantStatement s, Privilege needed) {
    if (s.path() != null) {
      String resolved = AllowedRoots.allowedPath(s.path(), session);
      return new Target(Grant.ObjectType.PATH, AllowedRoots.grantForm(resolved, session), null);
    }
    MaintenanceStatements.Located t = MaintenanceStatements.locate(session, s.table(), needed);
    String location = AllowedRoots.grantForm(t.path(), session);
    return t.name() == null ? new Target(Grant.ObjectType.PATH, location, null)
        : new Target(Grant.ObjectType.TABLE, t.name(), location);
  }

  private static List<Row> run(SparkSession session, GrantStatement s) {
    Grants grants = Grants.of(session);
    if (s.kind() == GrantStatement.Kind.SHOW) {
      return show(session, grants, s);
    }
    Access.checkAdmin(session, s.kind().name(), s.object());
    Target t = target(session, s, Privilege.READ);
    for (Privilege p : s.privileges()) {
      Grant g = new Grant(s.principal(), t.type(), t.object(), p);
      if (s.kind() == GrantStatement.Kind.GRANT) {
        grants.grant(g);
      } else {
        grants.revoke(g);
      }
    }
    return List.of();
  }

  private static List<Row> show(SparkSession session, Grants grants, GrantStatement s) {
    Optional<Principal> caller = Principals.of(session).filter(p -> !p.admin());
    if (caller.isPresent() && s.principal() != null && !caller.get().isOrIn(s.principal())) {
      throw io.filecommit.errors.ErrorClass.FILECOMMIT_PERMISSION_DENIED.error("Principal '" + caller.get().name()
          + "' may see its own grants and its groups' only, not those of '" + s.principal() + "'",
          Map.of("principal", caller.get().name(), "privilege", "ADMIN", "object", "grants of " + s.principal()));
    }
    Target t = s.path() == null && s.table() == null ? null : target(session, s, Privilege.READ);
    List<Grant> out = new ArrayList<>();
    for (Grant g : grants.all()) {
      if (s.principal() != null && !g.grantee().equals(s.principal())) {
        continue;
      }
      if (caller.isPresent() && !caller.get().isOrIn(g.grantee())) {
        continue;
      }
      if (t != null && !(t.type() == Grant.ObjectType.TABLE && g.names(t.object())
          || g.covers(t.type() == Grant.ObjectType.TABLE ? t.location() : t.object()))) {
        continue;
      }
      out.add(g);
    }
    out.sort(Comparator.comparing(Grant::object).thenComparing(Grant::grantee).thenComparing(Grant::privilege));
    List<Row> rows = new ArrayList<>();
    for (Grant g : out) {
      rows.add(RowFactory.create(g.grantee(), g.privilege().name(), g.type().name(), g.object()));
    }
    return rows;
  }
}
