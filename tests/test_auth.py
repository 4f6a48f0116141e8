"""Who is calling: a server that authenticates its clients with bearer tokens
(``spark.filecommit.auth.mode=tokens``, ``tests/tenants.py``) refuses a request without a token,
with a token it does not know, or whose user id claims another principal, before the request
reaches Spark; a verified principal's commits carry its name in ``commitInfo.userId`` /
``userName``, as delta-rs and Spark + Delta read them."""

from __future__ import annotations

import os

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
