package io.filecommit.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * JWT bearer tokens ({@link JwtAuthenticator}): signatures with PEM and JWKS keys, the claim
 * checks (issuer, audience, expiry, not-before, user claim), groups, refused algorithms, key rotation.
 */
class JwtAuthenticatorTest {
  private static final String ISS = "https://idp.example.com";
  private static final String AUD = "filecommit";

  @TempDir
  Path tmp;

  private static KeyPair rsa() throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(2048);
    return g.generateKeyPair();
  }

  private Path pem(KeyPair... keys) throws Exception {
    StringBuilder b = new StringBuilder();
    for (KeyPair k : keys) {
      b.append("-----BEGIN PUBLIC KEY-----\n")
          .append(Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(k.getPublic().getEncoded()))
          .append("\n-----END PUBLIC KEY-----\n");
    }
    Path f = tmp.resolve("keys.pem");
    Files.writeString(f, b.toString());
    return f;
  }

  private static JWTClaimsSet.Builder claims(String sub) {
    return new JWTClaimsSet.Builder().subject(sub).issuer(ISS).audience(AUD)
        .expirationTime(new Date(System.currentTimeMillis() + 600_000));
  }

  private static String sign(KeyPair k, JWTClaimsSet c) throws Exception {
    return sign(new RSASSASigner(k.getPrivate()), JWSAlgorithm.RS256, null, c);
  }

  private static String sign(JWSSigner signer, JWSAlgorithm alg, String kid, JWTClaimsSet c) throws Exception {
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(kid).build(), c);
    jwt.sign(signer);
    return jwt.serialize();
  }

  private JwtAuthenticator auth(Path keys) {
    return new JwtAuthenticator(keys, ISS, AUD, "sub", "groups", 60, Set.of("ops"));
  }

  @Test
  void aSignedTokenAuthenticatesItsSubjectWithGroups() throws Exception {
    KeyPair k = rsa();
    JwtAuthenticator a = auth(pem(k));
    String token = sign(k, claims("alice").claim("groups", List.of("team-a", "team-b")).build());
    assertTrue(JwtAuthenticator.looksLikeJwt(token));
    Principal alice = a.check(token);
    assertEquals("alice", alice.name());
    assertEquals(Set.of("team-a", "team-b"), alice.groups());
    assertFalse(alice.admin());
    assertTrue(a.check(sign(k, claims("ops").build())).admin());
    // One string as the groups claim; another user claim.
    JwtAuthenticator byName = new JwtAuthenticator(pem(k), ISS, AUD, "preferred_username", "roles", 60, Set.of("dba"));
    Principal bob = byName.check(sign(k, claims("id-123").claim("preferred_username", "bob").claim("roles", "dba").build()));
    assertEquals("bob", bob.name());
    assertTrue(bob.admin(), "an admin group");
  }

  @Test
  void everyFailedCheckIsRefusedNamingIt() throws Exception {
    KeyPair k = rsa();
    JwtAuthenticator a = auth(pem(k));
    long now = System.currentTimeMillis();
    String[][] cases = {
        {sign(k, claims("alice").issuer("https://other").build()), "iss"},
        {sign(k, claims("alice").audience("someone-else").build()), "aud"},
        {sign(k, claims("alice").expirationTime(new Date(now - 120_000)).build()), "expired"},
        {sign(k, claims("alice").notBeforeTime(new Date(now + 600_000)).build()), "before"},
        {sign(k, new JWTClaimsSet.Builder().subject("alice").issuer(ISS).audience(AUD).build()), "exp"},
        {sign(k, claims(null).build()), "sub"},
        {sign(rsa(), claims("alice").build()), "signature"},
        {"eyJhbGciOiJSUzI1NiJ9.not.valid", "JWT"},
    };
    for (String[] c : cases) {
      SecurityException e = assertThrows(SecurityException.class, () -> a.check(c[0]), c[1]);
      assertTrue(e.getMessage().toLowerCase().contains(c[1].toLowerCase()), c[1] + ": " + e.getMessage());
      assertTrue(a.authenticate(c[0]).isEmpty());
      assertFalse(e.getMessage().contains(c[0]), "the token is never echoed");
    }
  }

  @Test
  void unsignedAndHmacTokensAreRefused() throws Exception {
    KeyPair k = rsa();
    JwtAuthenticator a = auth(pem(k));
    String plain = new PlainJWT(claims("alice").build()).serialize();
    assertThrows(SecurityException.class, () -> a.check(plain));
    byte[] secret = new byte[32];
    String hmac = sign(new MACSigner(secret), JWSAlgorithm.HS256, null, claims("alice").build());
    assertThrows(SecurityException.class, () -> a.check(hmac));
  }

  @Test
  void aJwksFileSelectsTheKeyByKidAndEcKeysWork() throws Exception {
    KeyPair k1 = rsa();
    KeyPair k2 = rsa();
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair ec = g.generateKeyPair();
    JWKSet set = new JWKSet(List.of(
        new RSAKey.Builder((java.security.interfaces.RSAPublicKey) k1.getPublic()).keyID("one").build(),
        new RSAKey.Builder((java.security.interfaces.RSAPublicKey) k2.getPublic()).keyID("two").build(),
        new com.nimbusds.jose.jwk.ECKey.Builder(com.nimbusds.jose.jwk.Curve.P_256,
            (java.security.interfaces.ECPublicKey) ec.getPublic()).keyID("ec").build()));
    Path jwks = tmp.resolve("jwks.json");
    Files.writeString(jwks, set.toString(true));
    JwtAuthenticator a = auth(jwks);
    assertEquals("alice", a.check(sign(new RSASSASigner(k2.getPrivate()), JWSAlgorithm.RS256, "two",
        claims("alice").build())).name());
    assertEquals("carol", a.check(sign(new ECDSASigner((ECPrivateKey) ec.getPrivate()), JWSAlgorithm.ES256, "ec",
        claims("carol").build())).name());
    // Signed by key one but naming key two: refused.
    assertThrows(SecurityException.class, () -> a.check(sign(new RSASSASigner(k1.getPrivate()), JWSAlgorithm.RS256,
        "two", claims("alice").build())));
  }

  @Test
  void keysAreReadAgainWhenTheFileChanges() throws Exception {
    KeyPair old = rsa();
    KeyPair rotated = rsa();
    Path f = pem(old);
    JwtAuthenticator a = auth(f);
    assertTrue(a.authenticate(sign(old, claims("alice").build())).isPresent());
    pem(rotated);
    Files.setLastModifiedTime(f, FileTime.fromMillis(Files.getLastModifiedTime(f).toMillis() + 5_000));
    assertTrue(a.authenticate(sign(old, claims("alice").build())).isEmpty(), "a retired key");
    assertTrue(a.authenticate(sign(rotated, claims("alice").build())).isPresent());
  }

  @Test
  void keyFilesWithSecretsOrNoKeysAreRefused() throws Exception {
    KeyPair k = rsa();
    Path priv = tmp.resolve("private.json");
    Files.writeString(priv, new JWKSet(new RSAKey.Builder((java.security.interfaces.RSAPublicKey) k.getPublic())
        .privateKey(k.getPrivate()).build()).toString(false));
    assertThrows(IllegalStateException.class, () -> JwtAuthenticator.loadKeys(priv));
    Path privPem = tmp.resolve("private.pem");
    Files.writeString(privPem, "-----BEGIN PRIVATE KEY-----\n"
        + Base64.getMimeEncoder().encodeToString(k.getPrivate().getEncoded()) + "\n-----END PRIVATE KEY-----\n");
    assertThrows(IllegalStateException.class, () -> JwtAuthenticator.loadKeys(privPem));
    Path empty = tmp.resolve("empty.pem");
    Files.writeString(empty, "nothing here");
    assertThrows(IllegalStateException.class, () -> JwtAuthenticator.loadKeys(empty));
    assertThrows(IllegalStateException.class, () -> auth(tmp.resolve("missing.pem")).authenticate("eyJ.a.b"));
  }
}
