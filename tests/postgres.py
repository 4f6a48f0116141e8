"""A throw-away PostgreSQL server for the suite's shared Hive metastore (Debian's ``postgresql``
package; ``make pg-jdbc-jar`` fetches the JDBC driver the Connect servers load).

The cluster is created with ``initdb`` in a fresh temporary directory and serves on 127.0.0.1 at a
free port with ``trust`` authentication, until :meth:`PostgresServer.stop`. PostgreSQL refuses to
run as root: as root it runs as the ``postgres`` user (``runuser``), otherwise as the current user.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time

from cluster import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JDBC_JARS = os.path.join(ROOT, ".build", "jdbc-jars")
DATABASE = "metastore"
SETUP_HINT = ("run `make pg-jdbc-jar` for the JDBC driver, and install PostgreSQL "
              "(`apt-get install postgresql`; .ci/run does it when root)")


def jdbc_jars() -> list[str]:
    """The PostgreSQL JDBC driver jar(s) of ``make pg-jdbc-jar``; FileNotFoundError when missing."""
    jars = sorted(glob.glob(os.path.join(JDBC_JARS, "postgresql-*.jar")))
    if not jars:
        raise FileNotFoundError(f"no PostgreSQL JDBC driver in {JDBC_JARS}: {SETUP_HINT}")
    return jars


def bin_dir() -> str:
    """The newest installed PostgreSQL's binaries (``/usr/lib/postgresql/<major>/bin``, or ``initdb``
    on PATH); FileNotFoundError when PostgreSQL is not installed."""
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[-3]))
    if dirs:
        return os.path.dirname(dirs[-1])
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(found)
    raise FileNotFoundError(f"PostgreSQL is not installed (no initdb): {SETUP_HINT}")


class PostgresServer:
    """One PostgreSQL cluster; :attr:`url` is the JDBC URL of its ``metastore`` database."""

    def __init__(self) -> None:
        self.bin = bin_dir()
        self.as_root = os.geteuid() == 0
        self.base = tempfile.mkdtemp(prefix="filecommit-pg-")
        self.data = os.path.join(self.base, "data")
        self.log_path = os.path.join(self.base, "postgres.log")
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{DATABASE}?user=postgres"

    def _cmd(self, *args: str) -> list[str]:
        return (["runuser", "-u", "postgres", "--"] if self.as_root else []) + list(args)

    def start(self, timeout_s: float = 60.0) -> None:
        """initdb, start, wait until it answers, create the metastore database."""
        if self.as_root:
            shutil.chown(self.base, "postgres", "postgres")
        subprocess.run(self._cmd(os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "postgres",
                                 "--auth=trust", "-E", "UTF8", "--no-sync"),
                       check=True, capture_output=True)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            self._cmd(os.path.join(self.bin, "postgres"), "-D", self.data, "-p", str(self.port), "-k", self.base,
                      "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                      # A lock held for long is a stuck metastore: fail its statement instead of hanging.
                      "-c", "lock_timeout=60s"),
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout_s
        while True:
            ready = subprocess.run([os.path.join(self.bin, "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
                                    "postgres"],
                                   capture_output=True)
            if ready.returncode == 0:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                with open(self.log_path, errors="replace") as f:
                    raise RuntimeError(f"PostgreSQL did not start on port {self.port}:\n{f.read()[-2000:]}")
            time.sleep(0.1)
        subprocess.run([os.path.join(self.bin, "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                        DATABASE], check=True, capture_output=True)

    def tables(self) -> list[str]:
        """Names of the metastore's tables (``TBLS.TBL_NAME``), read with ``psql``: what the
        database itself holds, independent of any Spark server."""
        out = subprocess.run([os.path.join(self.bin, "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
                              "postgres", "-d", DATABASE, "-At", "-c", 'SELECT "TBL_NAME" FROM "TBLS"'],
                             check=True, capture_output=True, text=True)
        return sorted(line for line in out.stdout.splitlines() if line)

    def stop(self) -> None:
        """Fast shutdown (``pg_ctl stop -m fast``), then the directory is removed."""
        if self.proc is not None:
            if self.proc.poll() is None:
                subprocess.run(self._cmd(os.path.join(self.bin, "pg_ctl"), "stop", "-D", self.data, "-m", "fast",
                                         "-w"), capture_output=True)
                try:
                    self.proc.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, 9)
                    self.proc.wait()
            self.proc = None
        shutil.rmtree(self.base, ignore_errors=True)
