"""The Go client (client/go) drives the contract against the pytest session's server.

``go test`` runs as a subprocess with the server's address in ``FILECOMMIT_GO_REMOTE``; it writes
two tables with commands built in Go (a SQL and a Range relation as input, a DELETE, a txn, a
staged write published by id), a third with Spark Connect's plain ``WriteOperation`` (source
``delta``, as any Spark Connect client sends ``df.write.format("delta")``) read back with
``format("delta")`` on the server, and a
JSON report of what the server streamed back. The tables are then read here with delta-rs, an
independent reader: rows, versions, the txn, and the streamed file actions against the log.
Needs ``go`` on PATH (or ``$GO``) and the stubs from ``make go-gen``.

``FILECOMMIT_GO_COMMAND`` (set by ``docker/test-containers.sh``) runs the contract test from its
own container instead: a command (split like a shell would) that runs the compiled test binary
(``go test -c``) and passes the ``FILECOMMIT_GO_*`` variables through, e.g.
``podman run --rm --network=host -e FILECOMMIT_GO_REMOTE ... -v /shared:/shared IMAGE``; the tables
and the report then go to the shared volume (``$FILECOMMIT_TEST_DIR``).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from urllib.parse import unquote

import pyarrow as pa
import pytest
from helpers import delta_rows, shared_dir

from filecommit import _connect

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GO_DIR = os.path.join(ROOT, "client", "go")

pytestmark = pytest.mark.slow


def _go() -> str:
    go = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
    if not os.path.exists(go):
        pytest.fail("the Go toolchain is missing: install Go >= 1.24 or set $GO")
    if not os.path.isdir(os.path.join(GO_DIR, "gen", "filecommit", "v1")):
        pytest.fail("client/go/gen is missing: run `make go-gen`")
    return go


def _address(spark) -> tuple[str, str]:
    """host:port and bearer token of the server (``sc://host:port/;token=...``; the embedded server
    has a random token that its pyspark client holds)."""
    url = os.environ.get("FILECOMMIT_REMOTE") or _connect.server_url(spark)
    hostport = url[len("sc://"):].partition("/")[0]
    return hostport, spark.client.token or ""


def _adds(path: str, version: int) -> dict[str, int]:
    """delta-rs' active files at ``version``: unquoted path -> size in bytes."""
    from deltalake import DeltaTable

    actions = pa.table(DeltaTable(path, version=version).get_add_actions(flatten=True)).to_pylist()
    return {unquote(a["path"]): a["size_bytes"] for a in actions}


@pytest.mark.container
def test_go_client_writes_deletes_and_reads_back(spark, tmp_path):
    from deltalake import DeltaTable

    container = os.environ.get("FILECOMMIT_GO_COMMAND")
    work = shared_dir(tmp_path)
    # In a container the report must be on the shared volume too.
    report_path = os.path.join(work if container else str(tmp_path), "report.json")
    hostport, token = _address(spark)
    env = dict(os.environ, FILECOMMIT_GO_REMOTE=hostport, FILECOMMIT_GO_TOKEN=token,
               FILECOMMIT_GO_TABLE_DIR=work, FILECOMMIT_GO_REPORT=report_path)
    if container:
        cmd = [*shlex.split(container), "-test.count=1", "-test.v", "-test.run", "^TestContract$"]
    else:
        cmd = [_go(), "test", "-count=1", "-v", "-run", "^TestContract$", "./..."]
    proc = subprocess.run(cmd, cwd=GO_DIR, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "--- PASS: TestContract" in proc.stdout, proc.stdout  # ran, not skipped
    with open(report_path) as f:
        report = json.load(f)["tables"]

    # The partitioned table: 100 rows appended (version 0), ids < 10 deleted (version 1), a staged
    # append of ids 100..109 published (version 2).
    parted = os.path.join(work, "parted")
    assert DeltaTable(parted).version() == 2
    rows = delta_rows(parted, ["id", "part", "name"], version=1)
    assert rows["id"].tolist() == [float(i) for i in range(10, 100)]
    assert rows["part"].tolist() == [float(i % 4) for i in range(10, 100)]
    assert rows["name"].tolist() == [f"row-{i}" for i in range(10, 100)]
    published = delta_rows(parted, ["id", "part", "name"])
    assert published["id"].tolist() == [float(i) for i in range(10, 110)]
    write, delete, publish = report["parted"]
    published_adds = {unquote(a["add"]["path"]) for a in publish["actions"]["actions"]}
    assert published_adds == set(_adds(parted, 2)) - set(_adds(parted, 1))
    streamed = {unquote(a["add"]["path"]): int(a["add"]["size"]) for a in write["actions"]["actions"]}
    assert streamed == _adds(parted, 0)
    assert int(write["summary"]["numOutputRows"]) == 100
    removed = {unquote(a["remove"]["path"]) for a in delete["actions"]["actions"] if "remove" in a}
    added = {unquote(a["add"]["path"]): int(a["add"]["size"]) for a in delete["actions"]["actions"] if "add" in a}
    assert removed and removed <= set(streamed)
    assert set(_adds(parted, 1)) == (set(streamed) - removed) | set(added)
    assert int(delete["summary"]["numDeletedRows"]) == 10

    # The Range table: written once with txn ("go-contract-test", 7); the repeat committed nothing.
    ranged = os.path.join(work, "ranged")
    dt = DeltaTable(ranged)
    assert dt.version() == 0
    assert dt.transaction_version("go-contract-test") == 7
    assert delta_rows(ranged, ["id"])["id"].tolist() == [float(i) for i in range(1000)]
    first, repeat = report["ranged"]
    assert {unquote(a["add"]["path"]) for a in first["actions"]["actions"]} == set(_adds(ranged, 0))
    assert repeat["summary"].get("committed", False) is False
    assert repeat["actions"].get("actions", []) == []

    # The plain Spark Connect WriteOperation (source "delta"): a partitioned append (version 0),
    # then part = 0 replaced by ids 100..104 (version 1); the refused mode "error" wrote nothing;
    # then a SQL MERGE INTO sent as a plain SQL command (version 2) with ids 15..24 in part 1:
    # matched 15, 17, 19 deleted, the other 7 inserted.
    # Its version 0, read back on the server with format("delta") and copied, has the 20 rows.
    standard = os.path.join(work, "standard")
    assert DeltaTable(standard).version() == 2
    assert DeltaTable(standard).metadata().partition_columns == ["part"]
    rows = delta_rows(standard, ["id", "part"])
    after_merge = (set(range(1, 20, 2)) - {15, 17, 19}) | set(range(100, 105)) | {16, 18, *range(20, 25)}
    assert rows["id"].tolist() == [float(i) for i in sorted(after_merge)]
    assert rows[rows["id"].isin([16, 18, 20, 24])]["part"].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert len(delta_rows(os.path.join(work, "standard_merged"), ["id"])) == 19
    copied = delta_rows(os.path.join(work, "standard_v0"), ["id", "part"])
    assert copied["id"].tolist() == [float(i) for i in range(20)]
