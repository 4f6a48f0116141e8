package io.filecommit.security;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.cert.CertificateFactory;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Verifies JSON Web Tokens (RFC 7519) as bearer tokens, as the Spark Connect Gateway's JWT
 * authenticator does, with Nimbus JOSE + JWT ({@code DefaultJWTProcessor}): the signature must
 * verify with a key of the server's key file, and the claims must hold
 *
 * <ul>
 *   <li>{@code iss} equal to the configured issuer and {@code aud} containing the configured
 *       audience (each checked when configured);
 *   <li>{@code exp} present and not past, {@code nbf} (when present) not in the future, with the
 *       configured clock skew;
 *   <li>the user claim (default {@code sub}) a non-blank string: the principal's name.
 * </ul>
 *
 * The groups claim (default {@code groups}: an array of strings, or one string) gives the
 * principal's groups. Only asymmetric signatures are accepted (RSA: {@code RS*}, {@code PS*}; EC:
 * {@code ES*}); {@code none} and HMAC tokens are refused, so the key file holds no secret. The key
 * file is either a JWKS (RFC 7517 JSON, {@code {"keys": [...]}}; a token's {@code kid} selects its
 * key) or PEM: public keys ({@code BEGIN PUBLIC KEY}) and certificates ({@code BEGIN
 * CERTIFICATE}), decoded with the JDK. It is read again when its modification time changes, so an
 * operator rotates keys without a restart.
 */
public final class JwtAuthenticator {
  private static final Set<JWSAlgorithm> ALGORITHMS;

  static {
    Set<JWSAlgorithm> algs = new LinkedHashSet<>(JWSAlgorithm.Family.RSA);
    algs.addAll(JWSAlgorithm.Family.EC);
    ALGORITHMS = Set.copyOf(algs);
  }

  private static final Pattern PEM = Pattern.compile(
      "-----BEGIN ([A-Z ]+)-----\\s*([A-Za-z0-9+/=\\s]+?)\\s*-----END \\1-----");

  private final Path keyFile;
  private final String issuer;
  private final String audience;
  private final String userClaim;
  private final String groupsClaim;
  private final int clockSkewSeconds;
  private final Set<String> admins;
  private volatile long loadedMtime = Long.MIN_VALUE;
  private volatile DefaultJWTProcessor<SecurityContext> processor;

  /**
   * A JWT authenticator.
   *
   * @param keyFile a JWKS or PEM file of the issuer's public keys
   * @param issuer the required {@code iss}, or null for any
   * @param audience the required {@code aud} member, or null for any
   * @param userClaim the claim naming the principal (e.g. {@code sub}, {@code preferred_username})
   * @param groupsClaim the claim listing the principal's groups
   * @param clockSkewSeconds tolerance of the {@code exp} / {@code nbf} checks, in seconds
   * @param admins principal or group names that administer the server ({@link Principal#admin()})
   */
  public JwtAuthenticator(Path keyFile, String issuer, String audience, String userClaim, String groupsClaim,
      int clockSkewSeconds, Set<String> admins) {
    this.keyFile = keyFile;
    this.issuer = blankToNull(issuer);
    this.audience = blankToNull(audience);
    this.userClaim = userClaim;
    this.groupsClaim = groupsClaim;
    this.clockSkewSeconds = clockSkewSeconds;
    this.admins = Set.copyOf(admins);
  }

  /**
   * Whether a bearer token is shaped as a signed JWT (three base64url parts separated by dots), so
   * that a server with both static tokens and JWTs knows which authenticator to ask.
   *
   * @param token the bearer token
   * @return true for a compact JWS
   */
  public static boolean looksLikeJwt(String token) {
    return token.chars().filter(c -> c == '.').count() == 2 && token.startsWith("eyJ");
  }

  /**
   * The principal a JWT authenticates.
   *
   * @param token the compact serialized JWT the request carried
   * @return the principal, empty when the token is malformed, its signature does not verify, or a
   *     claim check fails (the reason is in {@link #check})
   * @throws IllegalStateException when the key file cannot be read or parsed (the operator's error)
   */
  public Optional<Principal> authenticate(String token) {
    try {
      return Optional.of(check(token));
    } catch (SecurityException e) {
      return Optional.empty();
    }
  }

  /**
   * Verifies a JWT and returns its principal, or says why not.
   *
   * @param token the compact serialized JWT
   * @return the principal
   * @throws SecurityException naming the failed check (never echoing the token)
   * @throws IllegalStateException when the key file cannot be read or parsed
   */
  public Principal check(String token) {
    JWTClaimsSet claims;
    try {
      claims = processor().process(token, null);
    } catch (ParseException e) {
      throw new SecurityException("the bearer token is not a well-formed JWT: " + e.getMessage());
    } catch (BadJOSEException | JOSEException e) {
      throw new SecurityException("the JWT was refused: " + e.getMessage());
    }
    Object user = claims.getClaim(userClaim);
    if (!(user instanceof String name) || name.isBlank()) {
      throw new SecurityException("the JWT has no string claim '" + userClaim + "' naming its principal");
    }
    return TokenFile.principal(name, groups(claims.getClaim(groupsClaim)), admins);
  }

  private static Set<String> groups(Object claim) {
    Set<String> groups = new HashSet<>();
    if (claim instanceof String s && !s.isBlank()) {
      groups.add(s);
    } else if (claim instanceof List<?> list) {
      for (Object o : list) {
        if (o instanceof String s && !s.isBlank()) {
          groups.add(s);
        }
      }
    }
    return groups;
  }

  private DefaultJWTProcessor<SecurityContext> processor() {
    long mtime;
    try {
      mtime = Files.getLastModifiedTime(keyFile).toMillis();
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read the JWT key file " + keyFile + ": " + e, e);
    }
    DefaultJWTProcessor<SecurityContext> p = processor;
    if (p == null || mtime != loadedMtime) {
      synchronized (this) {
        if (processor == null || mtime != loadedMtime) {
          processor = build(loadKeys(keyFile));
          loadedMtime = mtime;
        }
        p = processor;
      }
    }
    return p;
  }

  private DefaultJWTProcessor<SecurityContext> build(JWKSet keys) {
    DefaultJWTProcessor<SecurityContext> p = new DefaultJWTProcessor<>();
    p.setJWSKeySelector(new JWSVerificationKeySelector<>(ALGORITHMS, new ImmutableJWKSet<>(keys)));
    JWTClaimsSet.Builder exact = new JWTClaimsSet.Builder();
    Set<String> required = new HashSet<>(Set.of("exp", userClaim));
    if (issuer != null) {
      exact.issuer(issuer);
      required.add("iss");
    }
    DefaultJWTClaimsVerifier<SecurityContext> verifier =
        new DefaultJWTClaimsVerifier<>(audience, exact.build(), required);
    verifier.setMaxClockSkew(clockSkewSeconds);
    p.setJWTClaimsSetVerifier(verifier);
    return p;
  }

  /**
   * The public keys of a JWKS or PEM file.
   *
   * @param file the key file
   * @return its keys (public parts only)
   * @throws IllegalStateException when it cannot be read, holds no key, or holds a private or
   *     symmetric key (the file must hold no secret)
   */
  static JWKSet loadKeys(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read the JWT key file " + file + ": " + e, e);
    }
    List<JWK> keys = new ArrayList<>();
    try {
      if (text.trim().startsWith("{")) {
        JWKSet set = JWKSet.parse(text);
        for (JWK k : set.getKeys()) {
          if (k.isPrivate() || !(k instanceof RSAKey || k instanceof ECKey)) {
            throw new IllegalStateException("The JWT key file " + file + " holds a private or symmetric key ("
                + k.getKeyType() + "); it must hold the issuer's public RSA or EC keys only");
          }
          keys.add(k);
        }
      } else {
        Matcher m = PEM.matcher(text);
        while (m.find()) {
          byte[] der = Base64.getMimeDecoder().decode(m.group(2));
          PublicKey key = switch (m.group(1)) {
            case "PUBLIC KEY" -> publicKey(der);
            case "CERTIFICATE" -> CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(der)).getPublicKey();
            default -> throw new IllegalStateException("The JWT key file " + file + " holds a PEM "
                + m.group(1) + "; it must hold public keys (BEGIN PUBLIC KEY) or certificates only");
          };
          keys.add(jwk(key));
        }
      }
    } catch (ParseException | java.security.GeneralSecurityException | IllegalArgumentException e) {
      throw new IllegalStateException("Cannot parse the JWT key file " + file + " (JWKS or PEM): " + e, e);
    }
    if (keys.isEmpty()) {
      throw new IllegalStateException("The JWT key file " + file + " holds no key (JWKS or PEM public keys)");
    }
    return new JWKSet(keys);
  }

  private static PublicKey publicKey(byte[] der) throws java.security.GeneralSecurityException {
    X509EncodedKeySpec spec = new X509EncodedKeySpec(der);
    try {
      return KeyFactory.getInstance("RSA").generatePublic(spec);
    } catch (java.security.spec.InvalidKeySpecException notRsa) {
      return KeyFactory.getInstance("EC").generatePublic(spec);
    }
  }

  private static JWK jwk(PublicKey key) {
    if (key instanceof RSAPublicKey rsa) {
      return new RSAKey.Builder(rsa).build();
    }
    if (key instanceof ECPublicKey ec) {
      return new ECKey.Builder(Curve.forECParameterSpec(ec.getParams()), ec).build();
    }
    throw new IllegalStateException("A JWT key must be RSA or EC, got " + key.getAlgorithm());
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s.trim();
  }
}
