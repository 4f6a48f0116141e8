"""The oldest supported client against this session's server: pyspark's Connect-only
``pyspark-client`` 4.1.3 (no JVM, no jars), the filecommit client installed ``--no-deps`` on it, and
delta-spark 4.2.0's pure-Python Delta Connect client (``delta.tables.DeltaTable``).

``make client-venvs`` makes that venv (``.venv-clients/oldest``) before the tests run; the test runs
``tests/client_versions_smoke.py`` with its Python against the server's URL, as
``tests/test_go_client.py`` runs the Go client, and checks the tables it wrote with delta-rs, an
independent reader: rows, versions, operations, and the file actions the old client received
against the log; and the errors as the old client raises them (a commit conflict as its
Delta-named type, a refusal's error class, ``local_session`` without a JVM).
``FILECOMMIT_OLDEST_CLIENT_PYTHON`` names another interpreter to run it with (e.g. a venv of
pyspark-client 4.2.0 and delta-spark 4.3.0, as docs/quickstart.md, "Client versions", shows).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from urllib.parse import unquote

import pyarrow as pa
import pytest
from helpers import delta_rows, delta_table, shared_dir

from filecommit import _connect

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "tests", "client_versions_smoke.py")


def _python() -> str:
    python = os.environ.get("FILECOMMIT_OLDEST_CLIENT_PYTHON") or os.path.join(
        ROOT, ".venv-clients", "oldest", "bin", "python")
    if not os.path.exists(python):
        pytest.fail(f"{python} is missing: run `make client-venvs`")
    return python


def _url(spark) -> str:
    """``sc://host:port/;token=...;user_id=...`` of the session's server: its token (the embedded
    server's random one, which the session's client holds) and, on a server that authenticates
    principals, the suite's principal as the user id, as the session claims it."""
    url = os.environ.get("FILECOMMIT_REMOTE") or _connect.server_url(spark)
    params = [f"token={spark.client.token}"] if spark.client.token else []
    if os.environ.get("FILECOMMIT_TEST_PRINCIPAL"):
        params.append(f"user_id={os.environ['FILECOMMIT_TEST_PRINCIPAL']}")
    return "sc://" + url[len("sc://"):].partition("/")[0] + "/" + "".join(";" + p for p in params)


def _log_adds(path: str, version: int) -> dict[str, int]:
    """delta-rs' active files at ``version``: unquoted path -> size in bytes."""
    actions = pa.table(delta_table(path, version).get_add_actions(flatten=True)).to_pylist()
    return {unquote(a["path"]): a["size_bytes"] for a in actions}


def test_oldest_client_writes_deletes_merges_and_delta_spark_deletes(spark, tmp_path):
    work = shared_dir(tmp_path)
    outside = f"/var/tmp/filecommit-client-versions-{uuid.uuid4().hex[:8]}/t"  # outside the allowed roots
    report_path = os.path.join(str(tmp_path), "report.json")
    proc = subprocess.run([_python(), SMOKE, _url(spark), work, outside, report_path],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(report_path) as f:
        report = json.load(f)
    print(f"client {report['pyspark']}, delta-spark {report['delta_spark']}: imports {report['import_seconds']} s, "
          f"all {report['seconds']} s, steps {report['step_seconds']}")
    if not os.environ.get("FILECOMMIT_OLDEST_CLIENT_PYTHON"):
        assert (report["pyspark"], report["delta_spark"]) == ("4.1.3", "4.2.0")
        assert report["local_session"] == "ImportError"  # pyspark-client has no JVM to start a server
    path = report["path"]

    # What the old client received is what the log holds: versions and each commit's file actions.
    assert [report[k]["version"] for k in ("write", "append", "delete", "merge")] == [0, 1, 2, 3]
    assert all(report[k]["committed"] for k in ("write", "append", "delete", "merge"))
    previous: dict[str, int] = {}
    for version, step in enumerate(("write", "append", "delete", "merge")):
        current = _log_adds(path, version)
        added = {unquote(a["path"]): a["size"] for a in report[step]["adds"]}
        assert added == {p: s for p, s in current.items() if p not in previous}, step
        assert {unquote(p) for p in report[step]["removes"]} == set(previous) - set(current), step
        previous = current
    assert {a["partition_values"]["kind"] for a in report["write"]["adds"]} == {"a", "b"}
    assert report["delete"]["metrics"]["deleted"] == 1
    assert (report["merge"]["metrics"]["updated"], report["merge"]["metrics"]["inserted"]) == (1, 1)

    # History through both clients, and the errors through the old client's conversion: a conflict
    # as its Delta-named type, a refusal with its error class, and no JVM for an embedded server.
    operations = ["WRITE", "WRITE", "DELETE", "MERGE", "DELETE", "DELETE"]
    assert report["history"] == [[v, op] for v, op in enumerate(operations[:4])][::-1]
    assert report["delta_history"] == [[v, op] for v, op in enumerate(operations[:5])]
    assert [c["operation"] for c in sorted(delta_table(path).history(), key=lambda c: c["version"])] == operations
    assert report["delta_is_delta_table"] is True
    assert report["delta_delete"] == [{"num_affected_rows": 1}]
    assert report["delete_again"]["version"] == 5
    assert set(_log_adds(path, 4)) - set(_log_adds(path, 5)) == {unquote(p) for p in report["delete_again"]["removes"]}
    assert report["conflict"] == ["ConcurrentDeleteReadException", "DELTA_CONCURRENT_DELETE_READ", True]
    assert report["outside"] == "FILECOMMIT_PATH_NOT_ALLOWED"
    assert not os.path.exists(os.path.dirname(outside))

    # The rows: as the old clients read them back on the server, and as delta-rs reads each state.
    after_merge = [[1, "a", 11], [3, "a", 30], [4, "b", 40], [5, "c", 50], [6, "c", 60], [7, "c", 70], [9, "d", 90]]
    assert report["rows"] == after_merge
    after_delta_delete = [r for r in after_merge if r[0] != 3]
    assert report["delta_rows"] == after_delta_delete
    final = [r for r in after_delta_delete if r[0] != 4]
    for version, rows in ((3, after_merge), (4, after_delta_delete), (5, final)):
        got = delta_rows(path, ["id", "kind", "v"], version=version)
        assert sorted([int(r.id), r.kind, int(r.v)] for r in got.itertuples()) == rows, version
