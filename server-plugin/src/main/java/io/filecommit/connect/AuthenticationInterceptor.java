package io.filecommit.connect;

import com.google.protobuf.Descriptors;
import com.google.protobuf.Message;
import io.filecommit.conf.FileCommitConf;
import io.filecommit.security.JwtAuthenticator;
import io.filecommit.security.Principal;
import io.filecommit.security.Principals;
import io.filecommit.security.TokenFile;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.SparkEnv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sparkproject.connect.grpc.ForwardingServerCallListener;
import org.sparkproject.connect.grpc.Metadata;
import org.sparkproject.connect.grpc.ServerCall;
import org.sparkproject.connect.grpc.ServerCallHandler;
import org.sparkproject.connect.grpc.ServerInterceptor;
import org.sparkproject.connect.grpc.Status;

/**
 * Authenticates every request of the Spark Connect service (a gRPC {@code ServerInterceptor} of
 * Spark's shaded gRPC, registered first in the server's {@code spark.connect.grpc.interceptor.classes},
 * as Spark's own {@code PreSharedKeyAuthenticationInterceptor} is): the {@code authorization:
 * Bearer <token>} header must name a principal of the server's tokens file ({@link TokenFile},
 * {@link FileCommitConf#AUTH_TOKENS_FILE}) or be a JWT that the server's keys verify ({@link
 * JwtAuthenticator}, {@link FileCommitConf#AUTH_JWT_KEY_FILE}), and every request message's {@code
 * user_context.user_id} must be that principal's name: the verified principal is pinned to the
 * session, as the Spark Connect Gateway stamps the verified identity into the forwarded user id.
 * Anything else is refused with gRPC status {@code UNAUTHENTICATED} and a description of why (no
 * token, an unknown token, a JWT's failed check, a user id that claims another principal), which never echoes the
 * token; the refusal is logged at WARN with the claimed user id.
 *
 * <p>With {@link FileCommitConf#AUTH_MODE} {@code none} (the default) it passes every request on
 * untouched. The verified principal reaches the commands through {@link Principals}.
 */
public final class AuthenticationInterceptor implements ServerInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger(AuthenticationInterceptor.class);
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final String BEARER = "Bearer ";
  /** The principal of a request without a token, when the server allows it. */
  public static final String ANONYMOUS = "anonymous";

  private volatile Settings settings;

  /** Public no-arg constructor (Spark instantiates interceptors by class name). */
  public AuthenticationInterceptor() {}

  /** The server's authentication settings, read once; {@code tokens} / {@code jwt} null when that mode is off. */
  record Settings(boolean on, TokenFile tokens, JwtAuthenticator jwt, boolean anonymous, Set<String> admins) {}

  private Settings settings() {
    Settings s = settings;
    if (s == null) {
      SparkEnv env = SparkEnv.get();
      s = settings(env == null ? null : env.conf());
      settings = s;
    }
    return s;
  }

  /**
   * Reads the authentication settings ({@link FileCommitConf#AUTH_MODE} and the settings of its modes).
   *
   * @param conf the server's Spark conf (null: defaults)
   * @return the settings
   * @throws IllegalStateException for an unknown mode or a mode without its file
   */
  static Settings settings(org.apache.spark.SparkConf conf) {
    Set<String> modes = Arrays.stream(FileCommitConf.AUTH_MODE.raw(conf).toLowerCase(java.util.Locale.ROOT).split(","))
        .map(String::trim).filter(m -> !m.isEmpty()).collect(Collectors.toSet());
    Set<String> admins = Arrays.stream(String.valueOf(FileCommitConf.AUTH_ADMINS.raw(conf)).split(","))
        .map(String::trim).filter(a -> !a.isEmpty() && !a.equals("null")).collect(Collectors.toSet());
    if (modes.isEmpty() || modes.equals(Set.of("none"))) {
      return new Settings(false, null, null, false, admins);
    }
    if (!Set.of("tokens", "jwt").containsAll(modes)) {
      throw new IllegalStateException(FileCommitConf.AUTH_MODE.key() + " must be none, tokens, jwt or tokens,jwt, got '"
          + FileCommitConf.AUTH_MODE.raw(conf) + "'");
    }
    TokenFile tokens = null;
    if (modes.contains("tokens")) {
      tokens = new TokenFile(Paths.get(required(conf, FileCommitConf.AUTH_TOKENS_FILE, "tokens")), admins);
    }
    JwtAuthenticator jwt = null;
    if (modes.contains("jwt")) {
      jwt = new JwtAuthenticator(Paths.get(required(conf, FileCommitConf.AUTH_JWT_KEY_FILE, "jwt")),
          FileCommitConf.AUTH_JWT_ISSUER.raw(conf), FileCommitConf.AUTH_JWT_AUDIENCE.raw(conf),
          FileCommitConf.AUTH_JWT_USER_CLAIM.raw(conf).trim(), FileCommitConf.AUTH_JWT_GROUPS_CLAIM.raw(conf).trim(),
          Integer.parseInt(FileCommitConf.AUTH_JWT_CLOCK_SKEW_SECONDS.raw(conf).trim()), admins);
    }
    boolean anonymous = "true".equalsIgnoreCase(String.valueOf(FileCommitConf.AUTH_ALLOW_ANONYMOUS.raw(conf)).trim());
    return new Settings(true, tokens, jwt, anonymous, admins);
  }

  private static String required(org.apache.spark.SparkConf conf, FileCommitConf.Entry entry, String mode) {
    String v = entry.raw(conf);
    if (v == null || v.isBlank()) {
      throw new IllegalStateException(FileCommitConf.AUTH_MODE.key() + "=" + mode + " needs " + entry.key());
    }
    return v;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    Settings s;
    Principal principal;
    try {
      s = settings();
      if (!s.on()) {
        return next.startCall(call, headers);
      }
      principal = authenticate(s, headers.get(AUTHORIZATION)).orElse(null);
    } catch (RuntimeException e) {
      LOG.warn("filecommit: request refused, authentication failed: " + e.getMessage());
      return refuse(call, "authentication failed on the server: " + e.getMessage());
    }
    if (principal == null) {
      String header = headers.get(AUTHORIZATION);
      String why = header == null ? "no bearer token in the request" : whyRefused(s, header);
      LOG.warn("filecommit: request to " + call.getMethodDescriptor().getFullMethodName() + " refused: " + why);
      return refuse(call, why);
    }
    Principal verified = principal;
    ServerCall.Listener<Q> listener = next.startCall(call, headers);
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<Q>(listener) {
      private boolean refused;

      @Override
      public void onMessage(Q message) {
        if (refused) {
          return;
        }
        String claimed = field(message, "user_context", "user_id");
        if (claimed == null || !claimed.equals(verified.name())) {
          refused = true;
          LOG.warn("filecommit: request of principal " + verified.name() + " refused: it claims user id '" + claimed + "'");
          call.close(Status.UNAUTHENTICATED.withDescription("the request's user id '" + claimed
              + "' is not the principal its token authenticates; set user_id to the principal's name"), new Metadata());
          return;
        }
        Principals.authenticated(verified, field(message, "session_id", null));
        super.onMessage(message);
      }

      @Override
      public void onHalfClose() {
        if (!refused) {
          super.onHalfClose();
        }
      }
    };
  }

  /**
   * The principal of an {@code authorization} header's bearer token, or the anonymous one: a token
   * shaped as a JWT goes to the JWT authenticator (when on), any other to the tokens file.
   */
  static Optional<Principal> authenticate(Settings s, String header) {
    if (header == null || !header.startsWith(BEARER)) {
      return s.anonymous() ? Optional.of(new Principal(ANONYMOUS, Set.of(), false)) : Optional.empty();
    }
    String token = header.substring(BEARER.length()).trim();
    if (s.jwt() != null && (s.tokens() == null || JwtAuthenticator.looksLikeJwt(token))) {
      return s.jwt().authenticate(token);
    }
    return s.tokens() == null ? Optional.empty() : s.tokens().authenticate(token);
  }

  /** Why a bearer token was refused: a JWT's failed check, or an unknown static token. */
  private static String whyRefused(Settings s, String header) {
    String token = header.startsWith(BEARER) ? header.substring(BEARER.length()).trim() : "";
    if (s.jwt() != null && (s.tokens() == null || JwtAuthenticator.looksLikeJwt(token))) {
      try {
        s.jwt().check(token);
      } catch (SecurityException e) {
        return e.getMessage();
      }
    }
    return "the bearer token is not one of this server's";
  }

  private static <Q> ServerCall.Listener<Q> refuse(ServerCall<Q, ?> call, String why) {
    call.close(Status.UNAUTHENTICATED.withDescription(why), new Metadata());
    return new ServerCall.Listener<Q>() {};
  }

  /**
   * A string field of a request message, by protobuf field name: {@code user_context.user_id} or
   * {@code session_id} of every Spark Connect request type.
   *
   * @param message the request
   * @param name a field of the message
   * @param sub a string field of that (message-typed) field, or null for the field itself
   * @return the value, or null when the message has no such field
   */
  static String field(Object message, String name, String sub) {
    if (!(message instanceof Message m)) {
      return null;
    }
    Descriptors.FieldDescriptor f = m.getDescriptorForType().findFieldByName(name);
    if (f == null) {
      return null;
    }
    Object v = m.getField(f);
    if (sub == null) {
      return v instanceof String str ? str : null;
    }
    if (!(v instanceof Message inner)) {
      return null;
    }
    Descriptors.FieldDescriptor g = inner.getDescriptorForType().findFieldByName(sub);
    return g == null ? null : (String) inner.getField(g);
  }
}
