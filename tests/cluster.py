"""A Spark standalone cluster on this machine for tests: one master, two workers, and a Spark
Connect server with the filecommit plugin attached to that master, with authentication on.

Every process is a JVM of the Spark that the pyspark wheel ships (``bin/spark-class`` /
``bin/spark-submit``, as ``sbin/start-master.sh``, ``start-worker.sh`` and
``start-connect-server.sh`` run them), bound to 127.0.0.1, with small heaps by default: each worker
offers one core and 1 GiB, each application gets one executor of 512 MiB per worker, the server's
driver 1 GiB (``bench/bench_bulk_write.py --master standalone`` asks for more, and passes server
conf of its own). Each process is
started in its own process group, so stopping kills its children too (a worker's executors);
:meth:`StandaloneCluster.stop` runs on every exit path of the fixture and at interpreter exit, and
ends with SIGKILL for anything that outlived SIGTERM. Logs go to one directory; :meth:`logs`
returns their tails for failure reports.

Usage (``tests/test_cluster.py``)::

    with StandaloneCluster(work_dir, jar, allowed_root) as cluster:
        spark = cluster.session()       # sc://localhost:<port>/;token=<token>
"""

from __future__ import annotations

import atexit
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
PLUGIN_CLASS = "io.filecommit.connect.FileCommitPlugin"
# filecommit.server.DELTA_CONNECT_COMMAND_CLASS / DELTA_CONNECT_RELATION_CLASS (delta-spark's DeltaTable API)
DELTA_CONNECT_COMMAND_CLASS = "io.filecommit.connect.DeltaConnectCommands"
DELTA_CONNECT_RELATION_CLASS = "io.filecommit.connect.DeltaConnectRelations"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


class StandaloneCluster:
    """Master, two workers and a Connect server with the plugin; see the module docstring.

    Args:
        work_dir: directory for logs and the workers' work directories.
        jar: the plugin jar (``--jars``: on the driver and shipped to the executors).
        allowed_root: ``spark.filecommit.allowedRoots`` of the server.
        workers: number of workers (one core each).
        start_timeout: seconds for each process to come up.
        extra_jars: more jars after ``jar`` in ``--jars`` (e.g. the native Parquet writer's,
            ``filecommit.server.find_native_jars()``).
        worker_memory: memory each worker offers (Spark's ``--memory``, e.g. ``"1g"``).
        executor_memory: ``spark.executor.memory`` (at most ``worker_memory``).
        driver_memory: the server's ``--driver-memory``.
        conf: more server conf, over the defaults of :meth:`start` (str -> str).
        name: the application's name (master UI, logs).
    """

    def __init__(self, work_dir: str, jar: str, allowed_root: str, workers: int = 2, start_timeout: float = 180,
                 extra_jars: Sequence[str] = (), worker_memory: str = "1g", executor_memory: str = "512m",
                 driver_memory: str = "1g", conf: Mapping[str, str] | None = None,
                 name: str = "filecommit cluster tests"):
        self.work_dir = work_dir
        self.jar = jar
        self.extra_jars = list(extra_jars)
        self.worker_memory = worker_memory
        self.executor_memory = executor_memory
        self.driver_memory = driver_memory
        self.extra_conf = dict(conf or {})
        self.name = name
        self.allowed_root = allowed_root
        self.n_workers = workers
        self.start_timeout = start_timeout
        self.token = secrets.token_hex(16)
        # The master's RPC and web UI ports are chosen by the OS at bind time (port 0) and read back
        # from its log by start(): a port picked here could be taken by another process (another
        # pytest-xdist worker's JVMs) before the master binds it, and Spark then moves on to the next.
        self.master_port = 0
        self.master_ui_port = 0
        self.connect_port = free_port()
        self.procs: dict[str, subprocess.Popen] = {}
        self._logs: dict[str, str] = {}
        self._sessions: list = []
        os.makedirs(work_dir, exist_ok=True)

    # ------------------------------------------------------------------------------ processes
    def _env(self, daemon: bool) -> dict:
        env = dict(os.environ)
        if daemon:  # master and workers; the launcher would give it to spark-submit's driver too
            env["SPARK_DAEMON_MEMORY"] = "256m"
        env.update(SPARK_HOME=spark_home(), SPARK_LOCAL_IP="127.0.0.1",
                   PYSPARK_PYTHON=sys.executable, SPARK_CONF_DIR=os.path.join(self.work_dir, "conf"),
                   SPARK_CONNECT_AUTHENTICATE_TOKEN=self.token)
        env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        return env

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = os.path.join(self.work_dir, f"{name}.log")
        self._logs[name] = log
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=self._env(daemon=name != "server"), start_new_session=True)
        self.procs[name] = proc
        return proc

    def _wait(self, what: str, ready, proc_names: list[str]) -> None:
        deadline = time.time() + self.start_timeout
        while not ready():
            for n in proc_names:
                if self.procs[n].poll() is not None:
                    raise RuntimeError(f"{n} exited with {self.procs[n].returncode} while waiting for {what}\n"
                                       + self.logs())
            if time.time() > deadline:
                raise RuntimeError(f"timed out after {self.start_timeout}s waiting for {what}\n" + self.logs())
            time.sleep(0.5)

    def master_state(self) -> dict:
        """The master's JSON status page (``/json/``): workers, applications, cores in use."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.master_ui_port}/json/", timeout=5) as r:
            return json.load(r)

    def _cores_in_use(self) -> int:
        try:
            return sum(w.get("coresused", 0) for w in self.master_state()["workers"] if w.get("state") == "ALIVE")
        except OSError:
            return -1

    def _alive_workers(self) -> int:
        try:
            return int(self.master_state().get("aliveworkers", 0))
        except OSError:
            return -1

    def start(self) -> StandaloneCluster:
        """Start master, workers and server; wait until the server has one executor per worker."""
        os.makedirs(os.path.join(self.work_dir, "conf"), exist_ok=True)
        spark_class = os.path.join(spark_home(), "bin", "spark-class")
        self._start("master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", "0", "--webui-port", "0"])
        self._wait("the master's ports in its log", self._read_master_ports, ["master"])
        self._wait("the master", lambda: port_open(self.master_port) and self._alive_workers() >= 0, ["master"])
        for i in range(self.n_workers):
            self.start_worker(i)
        self._wait(f"{self.n_workers} workers", lambda: self._alive_workers() == self.n_workers,
                   list(self.procs))
        conf = {
            "spark.connect.extensions.command.classes": f"{PLUGIN_CLASS},{DELTA_CONNECT_COMMAND_CLASS}",
            "spark.connect.extensions.relation.classes": DELTA_CONNECT_RELATION_CLASS,
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.connect_port),
            "spark.filecommit.allowedRoots": self.allowed_root,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.memory": self.executor_memory,
            "spark.executor.cores": "1",
            "spark.cores.max": str(self.n_workers),
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "4",
            "spark.pyspark.python": sys.executable,
            # A failed task attempt is not retried on the executor where it failed (Spark's
            # excludeOnFailure, spark.excludeOnFailure.task.maxTaskAttemptsPerExecutor = 1).
            "spark.excludeOnFailure.enabled": "true",
            "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{self._log_config()}",
            **self.extra_conf,
        }
        argv = [os.path.join(spark_home(), "bin", "spark-submit"), "--class", SERVER_CLASS,
                "--name", self.name, "--master", f"spark://127.0.0.1:{self.master_port}",
                "--driver-memory", self.driver_memory, "--jars", ",".join([self.jar, *self.extra_jars])]
        for k, v in conf.items():
            argv += ["--conf", f"{k}={v}"]
        self._start("server", argv)
        self._wait("the Connect server's port", lambda: port_open(self.connect_port), list(self.procs))
        self._wait(f"{self.n_workers} executors", lambda: self._cores_in_use() == self.n_workers, list(self.procs))
        return self

    def _read_master_ports(self) -> bool:
        """Set master_port and master_ui_port from the master's log lines ``Starting Spark master at
        spark://127.0.0.1:<port>`` and ``Bound MasterWebUI to 127.0.0.1, and started at http://...:<port>``
        (Spark's ``Master`` and ``WebUI.bind`` log them at INFO); True once both are there."""
        with open(self._logs["master"], errors="replace") as f:
            text = f.read()
        rpc = re.search(r"Starting Spark master at spark://[^:\s]+:(\d+)", text)
        ui = re.search(r"Bound MasterWebUI to \S+, and started at https?://[^:\s]+:(\d+)", text)
        if rpc and ui:
            self.master_port, self.master_ui_port = int(rpc.group(1)), int(ui.group(1))
        return bool(rpc and ui)

    def start_worker(self, i: int) -> None:
        """Start worker ``i`` (one core, ``worker_memory``) registered with the master."""
        spark_class = os.path.join(spark_home(), "bin", "spark-class")
        work = os.path.join(self.work_dir, f"worker{i}")
        os.makedirs(work, exist_ok=True)
        self._start(f"worker{i}", [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                   "--webui-port", "0", "--cores", "1", "--memory", self.worker_memory,
                                   "--work-dir", work, f"spark://127.0.0.1:{self.master_port}"])

    def _log_config(self) -> str:
        """The embedded client's quiet log4j2 file, used for the server too (warnings and up)."""
        from filecommit import session

        return session.QUIET_LOG_CONFIG

    # ------------------------------------------------------------------------------ clients
    @property
    def url(self) -> str:
        """``sc://localhost:<port>/;token=<token>`` (pyspark sends a token without TLS only to localhost)."""
        return f"sc://localhost:{self.connect_port}/;token={self.token}"

    def session(self):
        """A new Spark Connect session on the server (stopped by :meth:`stop`)."""
        from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

        os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
        s = RemoteSparkSession.builder.remote(self.url).create()
        self._sessions.append(s)
        return s

    # ------------------------------------------------------------------------------ teardown
    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to process ``name`` only (not its group), e.g. a worker JVM."""
        proc = self.procs[name]
        if proc.poll() is None:
            os.kill(proc.pid, sig)
            proc.wait(timeout=60)

    def stop(self) -> None:
        """Stop sessions, then server, workers and master (SIGTERM to each process group, SIGKILL
        after 30 s); also kills whatever is left in those groups (executors)."""
        for s in self._sessions:
            try:
                s.stop()
            except Exception:  # noqa: BLE001 - the server may be gone already
                pass
        self._sessions.clear()
        order = ["server"] + sorted(n for n in self.procs if n.startswith("worker")) + ["master"]
        for name in order:
            proc = self.procs.get(name)
            if proc is None:
                continue
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(proc.pid, signal.SIGKILL)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        deadline = time.time() + 10
        while self.pids() and time.time() < deadline:  # SIGKILLed group members vanishing
            time.sleep(0.2)

    def pids(self) -> set[int]:
        """Every live process (zombies aside) in the cluster's process groups (for leak checks)."""
        groups = {p.pid for p in self.procs.values()}
        out = set()
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if fields[0] != "Z" and int(fields[2]) in groups:
                    out.add(int(entry))
        return out

    def logs(self, lines: int = 60) -> str:
        """The last ``lines`` lines of every process's log."""
        out = []
        for name, path in self._logs.items():
            try:
                with open(path, errors="replace") as f:
                    tail = f.readlines()[-lines:]
            except OSError:
                tail = ["(no log)\n"]
            out.append(f"----- {name} ({path}) -----\n" + "".join(tail))
        return "\n".join(out)

    def __enter__(self) -> StandaloneCluster:
        atexit.register(self.stop)
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
        atexit.unregister(self.stop)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass

