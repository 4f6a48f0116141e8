"""Who is calling: a server that authenticates its clients with bearer tokens
(``spark.filecommit.auth.mode=tokens``, ``tests/tenants.py``) refuses a request without a token,
with a token it does not know, or whose user id claims another principal, before the request
reaches Spark, and so does a server that takes the JWTs of an identity provider
(``spark.filecommit.auth.mode=tokens,jwt``) with a JWT that is expired, for another audience or
issuer, or signed by another key; a verified principal's commits carry its name in ``commitInfo.userId`` /
``userName``, as delta-rs and Spark + Delta read them. The official Python client and the Go
contract test reach the server with their tokens through a TLS-terminating nginx proxy
(``tests/tls_proxy.py``), as docs/sharing.md sets it up."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from deltalake import DeltaTable
from helpers import error_class
from pyspark.errors.exceptions.connect import SparkConnectGrpcException
from tenants import Tenant, TenantServer

import filecommit

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bool(os.environ.get("FILECOMMIT_REMOTE")), reason="starts a server of its own")]


ISSUER, AUDIENCE = "https://idp.example.com", "filecommit"


@pytest.fixture(scope="module")
def idp_key(tmp_path_factory):
    """The identity provider's RSA key; its public half in a PEM file, the server's JWT key file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = tmp_path_factory.mktemp("idp") / "idp.pem"
    pem.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    return key, str(pem)


def _jwt(key, sub: str, groups=(), ttl: int = 600, aud: str = AUDIENCE, iss: str = ISSUER) -> str:
    import time

    import jwt

    now = int(time.time())
    return jwt.encode({"sub": sub, "groups": list(groups), "iss": iss, "aud": aud, "iat": now, "exp": now + ttl},
                      key, algorithm="RS256")


@pytest.fixture(scope="module")
def server(tmp_path_factory, idp_key):
    """Static tokens for alice, bob and ops, and JWTs of the identity provider (``tokens,jwt``)."""
    srv = TenantServer(str(tmp_path_factory.mktemp("auth")),
                       {"alice": Tenant(groups=["team-a"]), "bob": Tenant(), "ops": Tenant(admin=True)},
                       conf={"spark.filecommit.auth.mode": "tokens,jwt",
                             "spark.filecommit.auth.jwt.keyFile": idp_key[1],
                             "spark.filecommit.auth.jwt.issuer": ISSUER,
                             "spark.filecommit.auth.jwt.audience": AUDIENCE})
    srv.start()
    yield srv
    srv.stop()


def _status(e: BaseException) -> str:
    """The gRPC status code name of a refused request (pyspark keeps it on the exception)."""
    code = getattr(e, "_grpc_status_code", None) or getattr(getattr(e, "_errorClass", None), "name", None)
    return str(code if code is not None else e)


@pytest.mark.parametrize("who", ["no token", "wrong token", "another principal's user id"])
def test_requests_that_are_not_a_known_principal_are_refused(server, who):
    session = {"no token": lambda: server.session(None),
               "wrong token": lambda: server.session("alice", token="not-a-token"),
               "another principal's user id": lambda: server.session("alice", user_id="ops")}[who]()
    with pytest.raises(SparkConnectGrpcException) as e:
        session.range(1).collect()
    assert "UNAUTHENTICATED" in _status(e.value).upper(), e.value


def test_a_principal_commits_under_its_name(server, delta_spark, tmp_path):
    alice, bob, ops = server.session("alice"), server.session("bob"), server.session("ops")
    path = str(tmp_path / "a" / "orders")
    os.makedirs(os.path.dirname(path))
    ops.sql(f"GRANT OWNER ON PATH '{os.path.dirname(path)}' TO `team-a`").collect()
    r = filecommit.write(alice.createDataFrame([(1, "x")], "id long, s string"), path)
    assert r.version == 0
    filecommit.write(alice.createDataFrame([(2, "y")], "id long, s string"), path)
    # Read back by independent readers: delta-rs's history, Spark + Delta's DESCRIBE HISTORY.
    users = {h["version"]: (h.get("userId"), h.get("userName")) for h in DeltaTable(path).history()}
    assert users == {0: ("alice", "alice"), 1: ("alice", "alice")}
    assert [(c.version, c.user_name) for c in filecommit.history(alice, path)] == [(1, "alice"), (0, "alice")]
    assert {r.userName for r in alice.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()} == {"alice"}
    hist = delta_spark.read_one({"path": path, "kind": "history"})
    assert hist["ok"], hist
    assert sorted((h["version"], h["userName"]) for h in hist["rows"]) == [(0, "alice"), (1, "alice")]
    # bob holds no grant on alice's directory: refused, nothing committed.
    with pytest.raises(SparkConnectGrpcException) as e:
        filecommit.write(bob.createDataFrame([(3, "z")], "id long, s string"), path)
    assert error_class(e) == "FILECOMMIT_PERMISSION_DENIED"
    assert DeltaTable(path).version() == 1


def test_a_jwt_of_the_identity_provider_authenticates_its_subject_with_its_groups(server, idp_key, tmp_path):
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = idp_key[0]
    ops = server.session("ops")
    path = str(tmp_path / "jwt" / "t")
    os.makedirs(os.path.dirname(path))
    ops.sql(f"GRANT OWNER ON PATH '{os.path.dirname(path)}' TO `team-jwt`").collect()
    carol = server.session(None, token=_jwt(key, "carol", groups=["team-jwt"]), user_id="carol")
    assert filecommit.write(carol.createDataFrame([(1, "x")], "id long, s string"), path).version == 0
    assert [(h["version"], h.get("userName")) for h in DeltaTable(path).history()] == [(0, "carol")]
    # dave's JWT is valid, but dave holds no grant: refused by class, nothing committed.
    dave = server.session(None, token=_jwt(key, "dave"), user_id="dave")
    with pytest.raises(SparkConnectGrpcException) as e:
        filecommit.write(dave.createDataFrame([(2, "y")], "id long, s string"), path)
    assert error_class(e) == "FILECOMMIT_PERMISSION_DENIED"
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    refused = {
        "expired": _jwt(key, "carol", ["team-jwt"], ttl=-300),
        "another audience": _jwt(key, "carol", ["team-jwt"], aud="someone-else"),
        "another issuer": _jwt(key, "carol", ["team-jwt"], iss="https://evil.example.com"),
        "another key": _jwt(other, "carol", ["team-jwt"]),
    }
    for why, token in refused.items():
        with pytest.raises(SparkConnectGrpcException) as e:
            server.session(None, token=token, user_id="carol").range(1).collect()
        assert "UNAUTHENTICATED" in _status(e.value).upper(), (why, e.value)
    # A valid JWT of carol claiming ops's user id: refused.
    with pytest.raises(SparkConnectGrpcException) as e:
        server.session(None, token=_jwt(key, "carol"), user_id="ops").range(1).collect()
    assert "UNAUTHENTICATED" in _status(e.value).upper(), e.value
    assert DeltaTable(path).version() == 0


@pytest.fixture(scope="module")
def proxy(server, tmp_path_factory):
    """nginx terminating TLS in front of the server (``tests/tls_proxy.py``), as docs/sharing.md sets it up."""
    from tls_proxy import TlsProxy

    p = TlsProxy(str(tmp_path_factory.mktemp("tls-proxy")), server.server.port)
    p.start()
    yield p
    p.stop()


CLIENT = """
import sys
import filecommit
from pyspark.sql.connect.session import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).create()
r = filecommit.write(spark.createDataFrame([(1, "x")], "id long, s string"), sys.argv[2])
print("version", r.version)
"""


def _tls_client(proxy, token: str, user: str, path: str) -> subprocess.CompletedProcess:
    """The official Python client in a process of its own that trusts the proxy's certificate
    (``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``), writing one row to ``path`` over ``use_ssl=true``."""
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONNECT_AUTHENTICATE_TOKEN"}
    env["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = proxy.cert_file
    url = f"sc://localhost:{proxy.port}/;use_ssl=true;token={token};user_id={user}"
    return subprocess.run([sys.executable, "-c", CLIENT, url, path], env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_python_client_commits_through_a_tls_proxy_with_its_token(server, proxy, tmp_path):
    ops = server.session("ops")
    path = str(tmp_path / "tls" / "t")
    os.makedirs(os.path.dirname(path))
    ops.sql(f"GRANT OWNER ON PATH '{os.path.dirname(path)}' TO alice").collect()
    before = len(proxy.requests())
    done = _tls_client(proxy, server.tokens["alice"], "alice", path)
    assert done.returncode == 0 and "version 0" in done.stdout, done.stdout + done.stderr
    assert len(proxy.requests()) > before  # it went through the proxy, over TLS
    assert [(h["version"], h.get("userName")) for h in DeltaTable(path).history()] == [(0, "alice")]
    # Through the proxy too: a wrong token is refused and nothing is committed.
    refused = _tls_client(proxy, "not-a-token", "alice", path)
    assert refused.returncode != 0 and "UNAUTHENTICATED" in refused.stderr.upper(), refused.stderr
    assert DeltaTable(path).version() == 0


def test_the_go_contract_test_passes_with_a_token_through_a_tls_proxy(server, proxy, tmp_path):
    import go_contract

    ops = server.session("ops")
    work = str(tmp_path / "go")
    os.makedirs(work)
    ops.sql(f"GRANT OWNER ON PATH '{work}' TO alice").collect()
    report = go_contract.run(f"localhost:{proxy.port}", server.tokens["alice"], work, str(tmp_path / "report.json"),
                             user="alice", tls_ca=proxy.cert_file)
    go_contract.check(work, report)
    assert {h.get("userName") for h in DeltaTable(os.path.join(work, "parted")).history()} == {"alice"}


def test_a_staged_commit_names_the_principal_that_staged_it(server, tmp_path):
    alice, bob, ops = server.session("alice"), server.session("bob"), server.session("ops")
    path = str(tmp_path / "staged" / "t")
    os.makedirs(os.path.dirname(path))
    ops.sql(f"GRANT OWNER ON PATH '{os.path.dirname(path)}' TO alice").collect()
    staged = filecommit.write(alice.createDataFrame([(1, "x")], "id long, s string"), path, stage=True)
    assert staged.staged_by == "alice"
    assert filecommit.get_staged(ops, path, staged.id).staged_by == "alice"
    # The record under _delta_log/_staged names it too (what another server reads).
    with open(os.path.join(path, "_delta_log", "_staged", f"{staged.id}.json")) as f:
        assert '"stagedBy":"alice"' in f.readline()
    with pytest.raises(SparkConnectGrpcException) as e:  # bob holds no grant on it
        filecommit.commit(bob, path, staged)
    assert error_class(e) == "FILECOMMIT_PERMISSION_DENIED"
    # The admin publishes it: the version carries the publisher in commitInfo.
    assert filecommit.commit(ops, path, staged).version == 0
    assert [(h["version"], h.get("userName")) for h in DeltaTable(path).history()] == [(0, "ops")]
