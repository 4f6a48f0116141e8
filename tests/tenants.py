"""A shared server for tests of principals: one standalone Spark Connect server with the plugin that
authenticates its clients with static bearer tokens (``spark.filecommit.auth.mode=tokens``), and
Spark Connect sessions for each principal, or for a client without a token, with a wrong one, or
claiming another principal's user id.

    server = TenantServer(tmp_dir, {"alice": Tenant(groups=["team-a"]), "ops": Tenant(admin=True)},
                          conf={"spark.filecommit.server.shared": "true"})
    server.start()
    alice = server.session("alice")           # token and user_id of alice
    server.session("alice", user_id="ops")    # alice's token claiming ops: refused by the server
    server.session(None)                      # no token; server.session("x", token="wrong")
    server.stop()

The server's allowed roots are ``roots`` (default: the temp directory); its tokens file holds the
SHA-256 digests of random tokens, one per principal (``TenantServer.tokens``). pyspark sends a
token over a plaintext channel to ``localhost`` only (local channel credentials), as here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import secrets
import tempfile

AUTH_INTERCEPTOR = "io.filecommit.connect.AuthenticationInterceptor"


@dataclasses.dataclass
class Tenant:
    """A principal of the test server: its groups, and whether it administers the server."""

    groups: list[str] = dataclasses.field(default_factory=list)
    admin: bool = False


class TenantServer:
    """One standalone server with principals (``tests/crash_server.py``'s ``ConnectServer``).

    :param work_dir: directory for the tokens file, the grants file and the server log
    :param tenants: principal name -> :class:`Tenant`
    :param conf: further server settings
    :param roots: the allowed roots (``spark.filecommit.allowedRoots``); default the temp directory
    """

    def __init__(self, work_dir: str, tenants: dict[str, Tenant], conf: dict | None = None,
                 roots: list[str] | None = None):
        import crash_server

        import filecommit.server

        self.work_dir = work_dir
        os.makedirs(work_dir, exist_ok=True)
        self.tenants = dict(tenants)
        self.tokens = {name: secrets.token_hex(16) for name in tenants}
        self.tokens_file = os.path.join(work_dir, "tokens.json")
        with open(self.tokens_file, "w") as f:
            json.dump({"tokens": [{"sha256": hashlib.sha256(self.tokens[n].encode()).hexdigest(), "principal": n,
                                   "groups": t.groups} for n, t in tenants.items()]}, f)
        self.grants_file = os.path.join(work_dir, "grants.json")
        admins = [n for n, t in tenants.items() if t.admin]
        server_conf = {
            "spark.filecommit.auth.mode": "tokens",
            "spark.filecommit.auth.tokensFile": self.tokens_file,
            "spark.filecommit.auth.admins": ",".join(admins),
            "spark.filecommit.auth.grantsFile": self.grants_file,
            "spark.filecommit.allowedRoots": ",".join(roots or [os.path.realpath(tempfile.gettempdir())]),
            "spark.connect.grpc.interceptor.classes":
                "io.filecommit.connect.StandardWriteInterceptor,io.filecommit.connect.SharedModeInterceptor,"
                + AUTH_INTERCEPTOR,  # gRPC runs the last one first: authentication before all
            "spark.sql.extensions": "io.filecommit.catalog.FileCommitExtensions",
            "spark.sql.catalog.spark_catalog": "io.filecommit.catalog.FileCommitCatalog",
            "spark.jars": ",".join([filecommit.server.find_plugin_jar(), *filecommit.server.find_native_jars()]),
        }
        server_conf.update(conf or {})
        self.server = crash_server.ConnectServer(filecommit.server.find_plugin_jar(), filecommit.server.PLUGIN_CLASS,
                                                 os.path.join(work_dir, "server.log"), conf=server_conf,
                                                 spark_token=False)
        if admins:
            self.server.probe_url = self.url(admins[0])
        self._sessions: list = []

    def url(self, principal: str | None, token: str | None = None, user_id: str | None = None) -> str:
        """The ``sc://`` URL of a client: ``principal``'s token (or ``token``) and user id (or ``user_id``)."""
        parts = [f"sc://localhost:{self.server.port}/"]
        tok = token if token is not None else (self.tokens.get(principal) if principal else None)
        if tok:
            parts.append(f";token={tok}")
        who = user_id if user_id is not None else principal
        if who:
            parts.append(f";user_id={who}")
        return "".join(parts)

    def start(self) -> float:
        """Starts the server; returns the seconds it took."""
        return self.server.start()

    def session(self, principal: str | None, token: str | None = None, user_id: str | None = None):
        """A new Spark Connect session (stopped by :meth:`stop`). ``principal=None`` and no ``token``:
        a client without a token (the process's ``SPARK_CONNECT_AUTHENTICATE_TOKEN``, which pyspark
        would send otherwise, is hidden while it connects)."""
        from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

        with _without_env("SPARK_CONNECT_AUTHENTICATE_TOKEN"):
            s = RemoteSparkSession.builder.remote(self.url(principal, token, user_id)).create()
        self._sessions.append(s)
        return s

    def stop(self) -> None:
        """Stops the sessions and the server."""
        for s in self._sessions:
            with contextlib.suppress(Exception):
                s.stop()
        self.server.stop()


@contextlib.contextmanager
def _without_env(name: str):
    saved = os.environ.pop(name, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[name] = saved
