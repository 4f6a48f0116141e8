"""The Go client's contract test (client/go/filecommit/contract_test.go) run from Python and checked
with delta-rs, an independent reader: :func:`run` starts ``go test`` against a server and returns its
JSON report; :func:`check` reads the tables it wrote back.

The Go side writes two tables with commands built in Go (a SQL and a Range relation as input, a
DELETE, a txn, a staged write published by id), a third with Spark Connect's plain
``WriteOperation`` (source ``delta``, as any Spark Connect client sends ``df.write.format("delta")``)
read back with ``format("delta")`` on the server, and a JSON report of what the server streamed
back. Needs ``go`` on PATH (or ``$GO``) and the stubs from ``make go-gen``.
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
from helpers import delta_rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GO_DIR = os.path.join(ROOT, "client", "go")


def _go() -> str:
    go = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
    if not os.path.exists(go):
        pytest.fail("the Go toolchain is missing: install Go >= 1.24 or set $GO")
    if not os.path.isdir(os.path.join(GO_DIR, "gen", "filecommit", "v1")):
        pytest.fail("client/go/gen is missing: run `make go-gen`")
    return go


def _adds(path: str, version: int) -> dict[str, int]:
    """delta-rs' active files at ``version``: unquoted path -> size in bytes."""
    from deltalake import DeltaTable

    actions = pa.table(DeltaTable(path, version=version).get_add_actions(flatten=True)).to_pylist()
    return {unquote(a["path"]): a["size_bytes"] for a in actions}


def run(hostport: str, token: str, work: str, report_path: str, *, user: str | None = None,
        tls_ca: str | None = None, command: str | None = None) -> dict:
    """Runs ``TestContract`` and returns its report (table name -> streamed results in order).

    :param hostport: the server's (or a proxy's) ``host:port``
    :param token: the bearer token ("" for none)
    :param work: the directory the Go test writes its tables under
    :param report_path: where the Go test writes its JSON report
    :param user: the user id of its requests (default the Go test's own, ``go-contract-test``)
    :param tls_ca: a PEM file of trusted certificate authorities: the Go client connects with TLS
    :param command: a command running the compiled test binary (``FILECOMMIT_GO_COMMAND``) instead of ``go test``
    :raises AssertionError: when the Go test fails or is skipped
    """
    env = dict(os.environ, FILECOMMIT_GO_REMOTE=hostport, FILECOMMIT_GO_TOKEN=token,
               FILECOMMIT_GO_TABLE_DIR=work, FILECOMMIT_GO_REPORT=report_path)
    if user:
        env["FILECOMMIT_GO_USER"] = user
    if tls_ca:
        env["FILECOMMIT_GO_TLS_CA"] = tls_ca
    if command:
        cmd = [*shlex.split(command), "-test.count=1", "-test.v", "-test.run", "^TestContract$"]
    else:
        cmd = [_go(), "test", "-count=1", "-v", "-run", "^TestContract$", "./..."]
    proc = subprocess.run(cmd, cwd=GO_DIR, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "--- PASS: TestContract" in proc.stdout, proc.stdout  # ran, not skipped
    with open(report_path) as f:
        return json.load(f)["tables"]


def check(work: str, report: dict) -> None:
    """Reads the Go test's tables under ``work`` back with delta-rs and checks them against its report.

    :raises AssertionError: on any difference
    """
    from deltalake import DeltaTable

    # The partitioned table: 100 rows appended (version 0), ids < 10 deleted (version 1), a staged
    # append of ids 100..109 published (version 2).
    parted = os.path.join(work, "parted")
    assert DeltaTable(parted).version() == 2
    rows = delta_rows(parted, ["id", "part", "name"], version=1)
    assert rows["id"].tolist() == list(range(10, 100))
    assert rows["part"].tolist() == [i % 4 for i in range(10, 100)]
    assert rows["name"].tolist() == [f"row-{i}" for i in range(10, 100)]
    published = delta_rows(parted, ["id", "part", "name"])
    assert published["id"].tolist() == list(range(10, 110))
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
    assert delta_rows(ranged, ["id"])["id"].tolist() == list(range(1000))
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
    assert rows["id"].tolist() == sorted(after_merge)
    assert rows[rows["id"].isin([16, 18, 20, 24])]["part"].tolist() == [1, 1, 1, 1]
    assert len(delta_rows(os.path.join(work, "standard_merged"), ["id"])) == 19
    copied = delta_rows(os.path.join(work, "standard_v0"), ["id", "part"])
    assert copied["id"].tolist() == list(range(20))
