package io.filecommit.security;

import io.filecommit.conf.FileCommitConf;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.service.SessionHolder;
import org.apache.spark.sql.connect.service.SessionKey;
import org.apache.spark.sql.connect.service.SparkConnectService$;

/**
 * The verified principal of a Spark Connect session: the one the server's authenticating gRPC
 * interceptor ({@code connect.AuthenticationInterceptor}) pinned to the session's {@code
 * UserContext.user_id} (a request claiming another user id is refused before it reaches Spark).
 * Spark Connect keeps one session per {@code (user id, session id)} ({@code SessionHolder}), so
 * the holder of a session names its principal.
 *
 * <p>Empty when the server authenticates no one ({@link FileCommitConf#AUTH_MODE} {@code none}):
 * then every door behaves as before (allowed roots only), and no {@code userId} / {@code userName}
 * is written. A lookup costs one weak-map read once a session is known.
 */
public final class Principals {
  /** Principal name -> its principal, as last authenticated. */
  private static final Map<String, Principal> BY_NAME = new ConcurrentHashMap<>();
  /**
   * Principal name -> the client session ids it was authenticated for and not yet resolved (ms of
   * the last request); a principal's ids beyond {@value #MAX_PENDING} that are older than an hour
   * are dropped (sessions that never ran a command).
   */
  private static final Map<String, Map<String, Long>> SESSIONS = new ConcurrentHashMap<>();
  private static final int MAX_PENDING = 1000;
  /** Sessions already resolved (weak: a closed session goes). */
  private static final Map<SparkSession, Principal> RESOLVED = java.util.Collections.synchronizedMap(new WeakHashMap<>());
  private static volatile Boolean enabled;

  private Principals() {}

  /**
   * Records that a request of a client session was authenticated as a principal (called by the
   * authenticating interceptor before the request reaches Spark).
   *
   * @param principal the verified principal (its name is the request's user id)
   * @param sessionId the request's client session id
   */
  public static void authenticated(Principal principal, String sessionId) {
    BY_NAME.put(principal.name(), principal);
    if (sessionId != null && !sessionId.isEmpty()) {
      Map<String, Long> pending = SESSIONS.computeIfAbsent(principal.name(), k -> new ConcurrentHashMap<>());
      long now = System.currentTimeMillis();
      pending.put(sessionId, now);
      if (pending.size() > MAX_PENDING) {
        pending.values().removeIf(t -> t < now - 3_600_000L);
      }
    }
  }

  /** {@return whether this server authenticates its clients ({@link FileCommitConf#AUTH_MODE} not none)} */
  public static boolean authenticating() {
    Boolean e = enabled;
    if (e == null) {
      String mode = FileCommitConf.AUTH_MODE.serverValue();
      e = mode != null && !mode.trim().equalsIgnoreCase("none");
      enabled = e;
    }
    return e;
  }

  /**
   * The session's verified principal.
   *
   * @param session a Spark Connect session of this server (classic, server side)
   * @return the principal, empty when authentication is off (or for a session no client made)
   */
  public static Optional<Principal> of(SparkSession session) {
    if (!authenticating() || session == null) {
      return Optional.empty();
    }
    Principal known = RESOLVED.get(session);
    if (known != null) {
      return Optional.of(BY_NAME.getOrDefault(known.name(), known));
    }
    for (Map.Entry<String, Map<String, Long>> e : SESSIONS.entrySet()) {
      for (String sessionId : e.getValue().keySet()) {
        scala.Option<SessionHolder> holder = SparkConnectService$.MODULE$.sessionManager()
            .getIsolatedSessionIfPresent(SessionKey.apply(e.getKey(), sessionId));
        if (holder.isDefined() && holder.get().session() == session) {
          Principal p = BY_NAME.get(e.getKey());
          RESOLVED.put(session, p);
          e.getValue().remove(sessionId);
          return Optional.of(p);
        }
      }
    }
    return Optional.empty();
  }
}
