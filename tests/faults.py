"""Arming the server's fault injection from the test process (the jar built from
``server-plugin/src/test/java/io/filecommit/testing/faults``).

The embedded test server (``conftest.py``) is started with :func:`server_conf`: the test jar next to
the plugin jar, ``spark.delta.logStore.file.impl`` = ``FaultInjectingLogStore`` (every local table's
commits, reads, listings and checkpoints), ``spark.sql.streaming.checkpointFileManagerClass`` =
``FaultInjectingCheckpointFileManager`` (every sink's ``_spark_metadata`` log) and the static conf
``spark.filecommit.test.faultsDir`` naming a directory of this process. Both wrappers delegate to the
real classes until a rule in that directory arms a fault; a client session's conf cannot name the
directory (the server reads it from its own static conf, ``SparkEnv``).

:func:`arm` writes one rule file; the server appends a line to ``<rule>.fired`` each time it fires,
so a test can prove its fault was hit (:meth:`Fault.fired`).
"""

from __future__ import annotations

import glob
import json
import os
import uuid

FAULTS_DIR_CONF = "spark.filecommit.test.faultsDir"
LOGSTORE = "io.filecommit.testing.faults.FaultInjectingLogStore"
CHECKPOINT_FILE_MANAGER = "io.filecommit.testing.faults.FaultInjectingCheckpointFileManager"

# The steps the server can fail (FaultPlan.Point).
COMMIT_BEFORE = "commit.before"  # commit write: nothing written, IOException
COMMIT_AFTER = "commit.after"  # commit published, then IOException (lost response)
COMMIT_EXISTS = "commit.exists"  # commit published, then FileAlreadyExistsException
COMMIT_ERROR_BEFORE = "commit.error.before"  # commit write: nothing written, StackOverflowError (an Error)
COMMIT_ERROR_AFTER = "commit.error.after"  # commit published, then StackOverflowError
COMMIT_READ = "commit.read"  # LogStore.read of a commit file: IOException
COMMIT_HOLD = "commit.hold"  # commit write waits until the rule is disarmed (or timeout_ms), then writes
LIST = "list"  # LogStore.listFrom in the table's log: IOException
LAST_CHECKPOINT_BEFORE = "last_checkpoint.before"
LAST_CHECKPOINT_AFTER = "last_checkpoint.after"
CHECKPOINT_BEFORE = "checkpoint.before"  # checkpoint Parquet not written
SINK_BEFORE = "sink.before"  # _spark_metadata batch file not renamed into place, IOException
SINK_AFTER = "sink.after"  # batch file in place, then IOException (lost response)

ALWAYS = -1

_directory: str | None = None


def fault_jar() -> str:
    """The fault-injection jar: ``$FILECOMMIT_TEST_JAR``, else ``server-plugin/target/*-tests.jar``
    (``make build``)."""
    env = os.environ.get("FILECOMMIT_TEST_JAR")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    jars = sorted(glob.glob(os.path.join(root, "server-plugin", "target", "filecommit-server-plugin-*-tests.jar")))
    if not jars:
        raise FileNotFoundError("fault-injection jar server-plugin/target/filecommit-server-plugin-*-tests.jar "
                                "missing: run `make build`")
    return jars[-1]


def server_conf(plugin_jar: str, faults_dir: str) -> dict:
    """The embedded test server's extra static conf; remembers ``faults_dir`` for :func:`arm`."""
    global _directory
    os.makedirs(faults_dir, exist_ok=True)
    _directory = faults_dir
    return {
        "spark.jars": f"{plugin_jar},{fault_jar()}",
        "spark.delta.logStore.file.impl": LOGSTORE,
        "spark.sql.streaming.checkpointFileManagerClass": CHECKPOINT_FILE_MANAGER,
        FAULTS_DIR_CONF: faults_dir,
    }


def directory() -> str | None:
    """The faults directory the server reads: the embedded server's, or ``$FILECOMMIT_TEST_FAULTS_DIR``
    for a remote server started with the test jar and that conf (None: faults cannot be armed)."""
    return _directory or os.environ.get("FILECOMMIT_TEST_FAULTS_DIR")


class Fault:
    """One armed rule: :meth:`fired` counts its firings, :meth:`disarm` (or leaving a ``with``
    block) removes it."""

    def __init__(self, name: str, rule: dict):
        self.name = name
        self.rule = rule

    @property
    def _base(self) -> str:
        return os.path.join(directory(), self.name)

    def fired(self) -> int:
        try:
            with open(self._base + ".fired") as fh:
                return sum(1 for line in fh if line.strip())
        except FileNotFoundError:
            return 0

    def fired_paths(self) -> list[str]:
        try:
            with open(self._base + ".fired") as fh:
                return [line.split(" ", 1)[1].strip() for line in fh if line.strip()]
        except FileNotFoundError:
            return []

    def disarm(self) -> None:
        try:
            os.remove(self._base + ".json")
        except FileNotFoundError:
            pass

    def __enter__(self) -> Fault:
        return self

    def __exit__(self, *exc) -> None:
        self.disarm()

    def __repr__(self) -> str:
        return f"Fault({self.rule}, fired={self.fired()})"


def arm(table: str, point: str, times: int = 1, skip: int = 0, version: int | None = None) -> Fault:
    """Arms ``point`` for files under ``table`` (a table or sink root): the first ``skip`` matching
    calls pass, the next ``times`` fail (:data:`ALWAYS`: every one); ``version`` limits commit
    points to that commit file. Written to a temporary name and renamed, so the server never reads
    half a rule."""
    d = directory()
    if d is None:
        raise RuntimeError("no faults directory: the server was not started with the fault-injection jar")
    rule = {"table": os.path.realpath(table), "point": point, "times": times, "skip": skip}
    if version is not None:
        rule["version"] = version
    name = f"{point}-{uuid.uuid4().hex[:12]}"
    tmp = os.path.join(d, f".{name}.tmp")
    with open(tmp, "w") as fh:
        json.dump(rule, fh)
    os.replace(tmp, os.path.join(d, name + ".json"))
    return Fault(name, rule)
