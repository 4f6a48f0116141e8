"""A standalone Spark Connect server with the filecommit plugin, as its own killable process.

Used by ``tests/test_crash.py``: the server is started with ``$SPARK_HOME/bin/spark-submit`` (the
installed ``pyspark`` folder is ``SPARK_HOME``; ``spark-submit`` execs ``spark-class``, which execs
``java``, so the child is the JVM) in its own process group, so that ``kill()`` SIGKILLs the JVM
and its Python workers at once, as a machine or container crash would. Every start appends to one
log file, so a failure can quote what the server said before it died.

No pyspark import at module level: the test process imports pyspark's Connect client lazily (for
the readiness probe only).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

DELTA_CONNECT_COMMAND_CLASS = "io.filecommit.connect.DeltaConnectCommands"
DELTA_CONNECT_RELATION_CLASS = "io.filecommit.connect.DeltaConnectRelations"

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def spark_home() -> str:
    """The installed pyspark package folder, which ships the whole Spark distribution."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        raise RuntimeError("pyspark is not installed")
    return os.path.dirname(spec.origin)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fast_retry_policy():
    """pyspark's retry policy, failing after ~2 s: its default waits up to 10 minutes (exponential
    backoff) for an unreachable server, also in background threads at interpreter exit."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    return DefaultPolicy(max_retries=4, initial_backoff=100, backoff_multiplier=2.0, max_backoff=1000)


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class ConnectServer:
    """One Spark Connect server process at a fixed port, restartable after ``kill()``.

    :param jar: the filecommit plugin jar
    :param plugin_class: the command plugin class (``filecommit.server.PLUGIN_CLASS``)
    :param log_path: file receiving the server's stdout and stderr, across restarts
    :param master: Spark master of the server
    :param conf: further ``--conf`` settings
    :param spark_token: whether the server demands Spark's own shared token
        (``spark.connect.authenticate.token``, in :attr:`url`); False for a server that
        authenticates its clients itself (``spark.filecommit.auth.mode``: ``tests/tenants.py``)
    """

    def __init__(self, jar: str, plugin_class: str, log_path: str, master: str = "local[2]",
                 conf: dict | None = None, port: int | None = None, spark_token: bool = True):
        self.jar = jar
        self.plugin_class = plugin_class
        self.log_path = log_path
        self.master = master
        self.conf = dict(conf or {})
        self.port = port or free_port()
        # Its own auth token, in the URL: pyspark then talks plain gRPC with the token to
        # "localhost" whatever SPARK_CONNECT_AUTHENTICATE_TOKEN this process holds (the embedded
        # server of the suite's ``spark`` fixture sets one, which would make pyspark use TLS).
        self.token = uuid.uuid4().hex if spark_token else None
        self.url = f"sc://localhost:{self.port}/" + (f";token={self.token}" if spark_token else "")
        self.probe_url: str | None = None  # the URL the start probe connects with (default: url)
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.kills = 0

    def command(self) -> list[str]:
        home = spark_home()
        conf = {
            # filecommit.server.COMMAND_CLASSES / DELTA_CONNECT_RELATION_CLASS, as local_session()
            # registers them (the Delta Connect plugins of delta-spark's DeltaTable API).
            "spark.connect.extensions.command.classes": f"{self.plugin_class},{DELTA_CONNECT_COMMAND_CLASS}",
            "spark.connect.extensions.relation.classes": DELTA_CONNECT_RELATION_CLASS,
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "localhost",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "4",
            # As filecommit.local_session(): the server's Python workers use this interpreter.
            "spark.pyspark.python": sys.executable,
        }
        # Each server lives for seconds between kills: the C1 compiler alone halves its start and
        # first-write time on 2 cores (C2 never pays off). No effect on what is committed.
        conf["spark.driver.extraJavaOptions"] = os.environ.get("FILECOMMIT_CRASH_JAVA_OPTS", "-XX:TieredStopAtLevel=1")
        if self.token is not None:
            conf["spark.connect.authenticate.token"] = self.token
        conf.update(self.conf)
        cmd = [os.path.join(home, "bin", "spark-submit"), "--class", SERVER_CLASS, "--master", self.master,
               "--name", "filecommit-crash-test", "--jars", self.jar]
        for k, v in conf.items():
            cmd += ["--conf", f"{k}={v}"]
        # No application resource: as sbin/start-connect-server.sh (spark-daemon.sh submit), the
        # server class is in Spark's own jars.
        return cmd

    def _env(self) -> dict:
        env = {k: v for k, v in os.environ.items()
               if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE",
                            "PYSPARK_SUBMIT_ARGS", "SPARK_CONNECT_AUTHENTICATE_TOKEN")}
        env["SPARK_HOME"] = spark_home()
        env["SPARK_CONNECT_MODE"] = "0"  # as sbin/start-connect-server.sh: a classic server JVM
        env["PYSPARK_PYTHON"] = sys.executable
        env["TZ"] = "UTC"
        return env

    def start(self, timeout: float = 180) -> float:
        """Start the server and wait until a Spark Connect session on it runs a query.

        :returns: seconds from launch to ready
        :raises RuntimeError: the server exited or was not ready in ``timeout`` s (log tail quoted)
        """
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError("server already running")
        self.starts += 1
        t0 = time.monotonic()
        with open(self.log_path, "a") as log:
            log.write(f"\n===== crash test: server start #{self.starts} at {time.strftime('%H:%M:%S')} "
                      f"port {self.port} =====\n")
            log.flush()
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=self._env(), start_new_session=True)
        deadline = t0 + timeout
        while not _port_open(self.port):
            if self.proc.poll() is not None:
                raise RuntimeError(f"Spark Connect server exited with {self.proc.returncode} during start "
                                   f"#{self.starts}\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Spark Connect server not listening on {self.port} after {timeout} s "
                                   f"(start #{self.starts})\n{self.log_tail()}")
            time.sleep(0.2)
        self._probe(max(5.0, deadline - time.monotonic()))
        return time.monotonic() - t0

    def _probe(self, timeout: float) -> None:
        """A real client session: ``spark.range(1).count()`` must answer 1 (in a thread, so a
        hanging call cannot outlive ``timeout``)."""
        from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

        result: dict = {}

        def run():
            try:
                s = RemoteSparkSession.builder.remote(self.probe_url or self.url).create()
                s.client.set_retry_policies([fast_retry_policy()])
                try:
                    result["count"] = s.range(1).count()
                finally:
                    try:
                        s.stop()
                    except Exception:  # noqa: BLE001 - the probe's own cleanup only
                        pass
            except BaseException as e:  # noqa: BLE001 - reported below
                result["error"] = e

        t = threading.Thread(target=run, daemon=True, name="connect-probe")
        t.start()
        t.join(timeout)
        if t.is_alive() or result.get("count") != 1:
            raise RuntimeError(f"Spark Connect server on {self.port} does not answer a query "
                               f"(start #{self.starts}): {result.get('error', 'timeout')!r}\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the server's whole process group (JVM and Python workers) and reap the JVM."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.kills += 1
        pgid = self.proc.pid  # start_new_session: the JVM leads its own process group
        os.killpg(pgid, signal.SIGKILL)
        self.proc.wait(timeout=60)
        # Python workers forked by the JVM are in its group: wait until the whole group is gone.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                break
            time.sleep(0.05)

    def stop(self) -> None:
        """Teardown: the same SIGKILL (the test's tables are checked already)."""
        self.kill()

    def log_tail(self, chars: int = 8000) -> str:
        try:
            with open(self.log_path, errors="replace") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - chars))
                return f"--- server log tail ({self.log_path}) ---\n" + fh.read()
        except OSError as e:
            return f"(no server log: {e})"
