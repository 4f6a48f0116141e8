package io.filecommit.security;

import java.util.Set;

/**
 * Where a server keeps its grants: a table in the server's PostgreSQL database ({@link
 * JdbcGrantStore}), a JSON file the operator owns ({@link FileGrantStore}), or memory ({@link
 * #inMemory}). The server reads them through {@link Grants}, which caches them.
 */
public interface GrantStore {
  /**
   * Reads every grant.
   *
   * @return the grants
   * @throws java.io.UncheckedIOException (or an {@code IllegalStateException}) when the store cannot
   *     be read
   */
  Set<Grant> load();

  /**
   * Stores a grant (nothing when it is already stored).
   *
   * @param grant the grant
   */
  void add(Grant grant);

  /**
   * Removes a grant.
   *
   * @param grant the grant
   * @return whether it was stored
   */
  boolean remove(Grant grant);

  /** {@return a description for messages and logs, e.g. the file or the database} */
  String describe();

  /**
   * A store in memory (a server with neither a PostgreSQL metastore nor a grants file: grants last
   * until it stops).
   *
   * @return an empty store
   */
  static GrantStore inMemory() {
    Set<Grant> grants = java.util.concurrent.ConcurrentHashMap.newKeySet();
    return new GrantStore() {
      @Override
      public Set<Grant> load() {
        return Set.copyOf(grants);
      }

      @Override
      public void add(Grant grant) {
        grants.add(grant);
      }

      @Override
      public boolean remove(Grant grant) {
        return grants.remove(grant);
      }

      @Override
      public String describe() {
        return "memory (not kept across restarts)";
      }
    };
  }
}
