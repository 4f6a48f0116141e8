package io.filecommit.security;

import java.util.Set;

/**
 * A verified caller: the name the server authenticated (a static token's principal, or a JWT's
 * user claim) and the groups it belongs to. Delta's {@code commitInfo.userId} / {@code userName}
 * carry {@link #name()}.
 *
 * @param name the principal's name, never blank; equal to the Spark Connect session's {@code
 *     UserContext.user_id} (the authenticator refuses a request claiming another)
 * @param groups the groups the principal belongs to (grants to a group apply to its members)
 * @param admin whether this principal administers the server (may GRANT / REVOKE and holds every
 *     privilege inside the allowed roots)
 */
public record Principal(String name, Set<String> groups, boolean admin) {
  /**
   * Checks the name and copies the groups.
   *
   * @param name the principal's name
   * @param groups its groups
   * @param admin whether it administers the server
   */
  public Principal {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("A principal needs a name");
    }
    groups = Set.copyOf(groups);
  }

  /**
   * Whether a grant to {@code grantee} applies to this principal.
   *
   * @param grantee a principal or group name
   * @return true when it is this principal's name or one of its groups
   */
  public boolean isOrIn(String grantee) {
    return name.equals(grantee) || groups.contains(grantee);
  }
}
