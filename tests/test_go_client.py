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

import os

import go_contract
import pytest
from helpers import shared_dir

from filecommit import _connect

pytestmark = pytest.mark.slow


def _address(spark) -> tuple[str, str]:
    """host:port and bearer token of the server (``sc://host:port/;token=...``; the embedded server
    has a random token that its pyspark client holds)."""
    url = os.environ.get("FILECOMMIT_REMOTE") or _connect.server_url(spark)
    hostport = url[len("sc://"):].partition("/")[0]
    return hostport, spark.client.token or ""


@pytest.mark.container
def test_go_client_writes_deletes_and_reads_back(spark, tmp_path):
    container = os.environ.get("FILECOMMIT_GO_COMMAND")
    work = shared_dir(tmp_path)
    # In a container the report must be on the shared volume too.
    report_path = os.path.join(work if container else str(tmp_path), "report.json")
    hostport, token = _address(spark)
    # A server that authenticates principals pins each token's user id: the Go client claims the
    # suite's principal (FILECOMMIT_TEST_PRINCIPAL) as pyspark's session does.
    report = go_contract.run(hostport, token, work, report_path, command=container,
                             user=os.environ.get("FILECOMMIT_TEST_PRINCIPAL"))
    go_contract.check(work, report)
