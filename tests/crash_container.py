"""The Spark Connect server of the crash test in a container: ``podman kill`` is the crash.

``ContainerServer`` has the interface of ``crash_server.ConnectServer`` (``start``, ``kill``,
``alive``, ``stop``, ``log_tail``, ``url``, ``port``), so ``tests/test_crash.py``'s run drives it
unchanged. The server is the image of ``docker/Dockerfile`` (target ``server``, built by
``docker/test-containers.sh``): it runs as the image's non-root user, on the host's network
(bound to 127.0.0.1), with a 1 GiB heap in a 2 GiB container, and writes its tables on a host
directory mounted at the same path, where the test's independent readers read them.

* ``start()``: the first time ``podman run -d``, afterwards ``podman start`` of the same container
  (the same volume, the same configuration); then, as ``ConnectServer``, waits until a Spark
  Connect session on it runs a query.
* ``kill()``: ``podman kill --signal KILL``: the container's init (tini) and with it every process
  in the container's PID namespace (the JVM, its Python workers) die at once, as in a machine or
  container crash; then ``podman wait``.
* ``stop()``: the same kill; ``remove()``: ``podman rm -f -v`` (teardown; the tables are on the
  host directory).
"""

from __future__ import annotations

import shlex
import subprocess
import time

from crash_server import ConnectServer, _port_open


class ContainerServer(ConnectServer):
    """One server container, restartable after ``kill()``.

    :param podman: the podman command with its global flags (e.g. ``podman --runtime=runc
        --cgroup-manager=cgroupfs``), split like a shell would
    :param run_opts: further ``podman run`` options (``--network=host --ulimit ...``), split likewise
    :param image: the server image
    :param name: container name
    :param shared: host directory mounted at the same path; the server may write only under it
        (``spark.filecommit.allowedRoots``)
    :param log_path: file receiving ``podman logs`` of the container at ``log_tail()``
    :param server_opts: extra spark-submit arguments (``FILECOMMIT_SERVER_OPTS``)
    :param memory: the container's memory limit (``--memory`` and ``--memory-swap``: no swap)
    """

    def __init__(self, podman: str, run_opts: str, image: str, name: str, shared: str, log_path: str,
                 server_opts: str = "--driver-memory 1g", memory: str = "2g"):
        super().__init__(jar="", plugin_class="", log_path=log_path)
        self.podman = shlex.split(podman)
        self.run_opts = shlex.split(run_opts)
        self.image = image
        self.name = name
        self.shared = shared
        self.server_opts = server_opts
        self.memory = memory
        self.created = False

    def _podman(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*self.podman, *args], capture_output=True, text=True, check=check, timeout=timeout)

    def command(self) -> list[str]:
        """The ``podman run`` of the first start."""
        return [*self.podman, "run", "-d", "--name", self.name, *self.run_opts,
                f"--memory={self.memory}", f"--memory-swap={self.memory}",
                "-v", f"{self.shared}:{self.shared}",
                "-e", "FILECOMMIT_BIND=127.0.0.1", "-e", f"FILECOMMIT_PORT={self.port}",
                "-e", f"FILECOMMIT_ALLOWED_ROOTS=file:{self.shared}",
                "-e", f"FILECOMMIT_SERVER_OPTS={self.server_opts}",
                # The token from the environment (run-standalone.sh), not on the command line.
                "-e", f"SPARK_CONNECT_AUTHENTICATE_TOKEN={self.token}",
                self.image]

    def start(self, timeout: float = 180) -> float:
        """Start (or restart) the container; seconds until a query runs.

        :raises RuntimeError: the container exited or was not ready in ``timeout`` s (logs quoted)
        """
        if self.alive():
            raise RuntimeError("server container already running")
        self.starts += 1
        t0 = time.monotonic()
        if not self.created:
            subprocess.run(self.command(), capture_output=True, text=True, check=True, timeout=120)
            self.created = True
        else:
            self._podman("start", self.name)
        deadline = t0 + timeout
        # The port is probed every 0.2 s, the container's state (a `podman inspect`, a Go process
        # that costs the JVM starting next to it CPU time on a small machine) every 2 s.
        next_inspect = time.monotonic() + 2.0
        while not _port_open(self.port):
            if time.monotonic() >= next_inspect:
                if not self.alive():
                    raise RuntimeError(f"server container exited during start #{self.starts}\n{self.log_tail()}")
                next_inspect = time.monotonic() + 2.0
            if time.monotonic() > deadline:
                raise RuntimeError(f"server container not listening on {self.port} after {timeout} s "
                                   f"(start #{self.starts})\n{self.log_tail()}")
            time.sleep(0.2)
        self._probe(max(5.0, deadline - time.monotonic()))
        return time.monotonic() - t0

    def alive(self) -> bool:
        if not self.created:
            return False
        r = self._podman("inspect", "-f", "{{.State.Running}}", self.name, check=False)
        return r.stdout.strip() == "true"

    def kill(self) -> None:
        """``podman kill --signal KILL`` the container and wait until it has exited."""
        if not self.alive():
            return
        self.kills += 1
        self._podman("kill", "--signal", "KILL", self.name)
        self._podman("wait", self.name, check=False)

    def stop(self) -> None:
        """As ``ConnectServer.stop``: the same SIGKILL (the container stays for ``inspect``)."""
        self.kill()

    def remove(self) -> None:
        """Teardown: remove the container and its anonymous volume."""
        if self.created:
            self._podman("rm", "-f", "-v", self.name, check=False)
            self.created = False

    def inspect(self, fmt: str) -> str:
        """``podman inspect -f fmt`` of the container."""
        return self._podman("inspect", "-f", fmt, self.name).stdout.strip()

    def exec(self, *cmd: str) -> str:
        """stdout of ``cmd`` run in the container."""
        return self._podman("exec", self.name, *cmd).stdout

    def log_tail(self, chars: int = 8000) -> str:
        if not self.created:
            return "(no container)"
        r = self._podman("logs", self.name, check=False)
        text = r.stdout + r.stderr
        with open(self.log_path, "w") as fh:
            fh.write(text)
        return f"--- server container log tail ({self.name}) ---\n" + text[-chars:]
