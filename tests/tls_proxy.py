"""A TLS-terminating gRPC proxy in front of a Spark Connect server, as ``docs/sharing.md`` shows it:
nginx (Debian's ``nginx-light``) with ``grpc_pass``, and a self-signed certificate for
``localhost`` / ``127.0.0.1`` made with ``openssl``. Spark 4.3's Connect server serves plain gRPC only,
and the official Spark Connect clients send a bearer token only over TLS (``use_ssl=true``).

    proxy = TlsProxy(work_dir, upstream_port=15002)
    proxy.start()
    url = f"sc://localhost:{proxy.port}/;use_ssl=true;token=...;user_id=..."
    # trust proxy.cert_file: GRPC_DEFAULT_SSL_ROOTS_FILE_PATH (Python), FILECOMMIT_GO_TLS_CA (Go)
    proxy.stop()
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest
from cluster import free_port

NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {work}/access.log;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    server {{
        listen 127.0.0.1:{port} ssl http2;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        client_max_body_size 0;
        location / {{
            grpc_pass grpc://127.0.0.1:{upstream};
            grpc_read_timeout 3600s;
            grpc_send_timeout 3600s;
        }}
    }}
}}
"""


class TlsProxy:
    """nginx terminating TLS on ``127.0.0.1:port`` and forwarding gRPC to ``127.0.0.1:upstream_port``.

    :param work_dir: directory for the certificate, the key, the nginx config and its logs
    :param upstream_port: the Spark Connect server's port
    :raises pytest.fail.Exception: from :meth:`start` when nginx or openssl is missing
    """

    def __init__(self, work_dir: str, upstream_port: int):
        self.work_dir = work_dir
        self.upstream_port = upstream_port
        self.port = free_port()
        self.cert_file = os.path.join(work_dir, "proxy.crt")
        self.key_file = os.path.join(work_dir, "proxy.key")
        self._proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Makes the certificate, starts nginx and waits (at most 30 s) until it accepts connections."""
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(nginx) or not shutil.which("openssl"):
            pytest.fail("nginx and openssl are needed for the TLS proxy test: apt-get install nginx-light openssl "
                        "(.ci/run installs them)")
        os.makedirs(self.work_dir, exist_ok=True)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                        "-keyout", self.key_file, "-out", self.cert_file],
                       check=True, capture_output=True)
        conf = os.path.join(self.work_dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(work=self.work_dir, port=self.port, cert=self.cert_file, key=self.key_file,
                                      upstream=self.upstream_port))
        # -e: the startup error log too goes to the work directory, not /var/log/nginx
        self._proc = subprocess.Popen([nginx, "-p", self.work_dir, "-c", conf, "-e", os.path.join(self.work_dir,
                                       "error.log")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise AssertionError(f"nginx exited: {self._proc.stderr.read().decode() if self._proc.stderr else ''}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"nginx did not listen on 127.0.0.1:{self.port} within 30 s")

    def requests(self) -> list[str]:
        """The lines of the proxy's access log: one per gRPC call it forwarded."""
        path = os.path.join(self.work_dir, "access.log")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return f.read().splitlines()

    def stop(self) -> None:
        """Stops nginx (its master and worker)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
