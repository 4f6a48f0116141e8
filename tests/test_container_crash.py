"""The crash test through the container runtime: ``podman kill`` of the server container.

The run of ``tests/test_crash.py`` (3 writer processes on the host committing to one table with
and without ``txn``, kills at random points and right after commit files appear, checks of the
frozen tables after every kill and at the end with raw JSON, pyarrow, delta-rs and Spark + Delta
against the writers' journals), with the server in a container (``tests/crash_container.py``):
2 kills by ``podman kill --signal KILL`` (one on a commit, one at random), each followed by ``podman start`` of the same container.
Every acknowledged row must be in the tables exactly once.

Runs only when ``FILECOMMIT_CONTAINER_IMAGE`` names the server image (``docker/test-containers.sh
crash``, which also sets ``FILECOMMIT_PODMAN``, ``FILECOMMIT_PODMAN_RUN_OPTS`` and
``FILECOMMIT_TEST_DIR``, a host directory the container's user may write). Kills and writers:
``FILECOMMIT_CONTAINER_CRASH_KILLS`` (default 2), ``FILECOMMIT_CRASH_WRITERS`` (default 3).
"""

from __future__ import annotations

import os
import random

import pytest
from crash_container import ContainerServer
from helpers import shared_dir
from test_crash import WRITERS, Run, run_crash_test

IMAGE = os.environ.get("FILECOMMIT_CONTAINER_IMAGE")
KILLS = int(os.environ.get("FILECOMMIT_CONTAINER_CRASH_KILLS", "2"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not IMAGE, reason="no server image: docker/test-containers.sh crash runs this"),
]


def test_podman_kill_of_the_server_container_during_commit_stream(tmp_path, delta_spark):
    seed = int(os.environ.get("FILECOMMIT_CRASH_SEED") or random.SystemRandom().randrange(2**31))
    if not os.environ.get("FILECOMMIT_TEST_DIR"):
        pytest.fail("FILECOMMIT_TEST_DIR must be a directory the server container mounts and may write")
    root = shared_dir(tmp_path)
    # As crash_server.py: C1 only, a faster start; nothing committed depends on it.
    opts = "--driver-memory 1g --conf spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1"
    server = ContainerServer(os.environ.get("FILECOMMIT_PODMAN", "podman"),
                             os.environ.get("FILECOMMIT_PODMAN_RUN_OPTS", "--network=host"),
                             IMAGE, f"filecommit-crash-{os.getpid()}", os.environ["FILECOMMIT_TEST_DIR"],
                             os.path.join(str(tmp_path), "server.log"), server_opts=opts)
    print(f"\ncontainer crash test: seed {seed} (FILECOMMIT_CRASH_SEED={seed} repeats it), kills {KILLS}, "
          f"writers {WRITERS}, container {server.name}, work dir {root}", flush=True)
    try:
        run_crash_test(Run(root, seed, server=server), delta_spark, KILLS, WRITERS)
        # Every crash was a kill of the container and every restart a start of the same container,
        # which runs as a non-root user under a 2 GiB memory limit.
        assert (server.kills, server.starts) == (KILLS + 1, KILLS + 1)  # + the teardown kill
        assert server.inspect("{{.Config.User}} {{.HostConfig.Memory}}") == f"spark {2 * 1024**3}"
    finally:
        server.remove()
