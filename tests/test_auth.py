"""Who is calling: a server that authenticates its clients with bearer tokens
(``spark.filecommit.auth.mode=tokens``, ``tests/tenants.py``) refuses a request without a token,
with a token it does not know, or whose user id claims another principal, before the request
reaches Spark; a verified principal's commits carry its name in ``commitInfo.userId`` /
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


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = TenantServer(str(tmp_path_factory.mktemp("auth")),
                       {"alice": Tenant(groups=["team-a"]), "bob": Tenant(), "ops": Tenant(admin=True)})
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
