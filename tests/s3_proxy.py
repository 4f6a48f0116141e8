"""A small S3 fault proxy for the object-store fault tests: an HTTP server on 127.0.0.1 that
forwards every request to a MinIO server unchanged (same method, path, headers, body; the SigV4
signature stays valid because the ``Host`` header is passed through) and fails the requests a test
selects, as an S3 endpoint under load or a dying store would.

A rule (:meth:`FaultProxy.arm`) matches requests by method and a regular expression on the path,
skips the first ``skip`` matches and then acts on the next ``times`` ones (-1: all):

* ``"503"`` / ``"500"``: answer ``503 SlowDown`` / ``500 InternalError`` (S3's XML error body)
  without forwarding: nothing reached the store;
* ``"after500"``: forward, then answer ``500 InternalError``: the request was carried out and its
  response is lost (the client cannot tell);
* ``"hold"``: wait until the rule is released (:meth:`Rule.release`) before forwarding, so a test
  can kill the store while the request is in flight; a request that cannot be forwarded any more
  gets its connection closed without an answer;
* ``"hold_after"``: forward, then wait until released and close the connection without an
  answer: the request was carried out, and the store can be killed before the client learns it;
* ``"delay"``: sleep ``seconds`` before forwarding, then answer as the store did: a slower store
  (e.g. ~60 ms per conditional PUT, as one key prefix of S3 takes). A delay rule acts on every
  matching request (it never expires: ``times`` is ignored); requests sleep concurrently.

Every rule counts the requests it acted on (:attr:`Rule.fired`), so a test can prove its fault hit.
The proxy also records every request it received as ``(method, path)`` in :attr:`FaultProxy.seen`
(a bench counts a client's requests by type with it).
"""

from __future__ import annotations

import http.client
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

# The path of a commit's conditional PUT: ``/<bucket>/<table>/_delta_log/<20 digits>.json``.
COMMIT_PUT = r"/_delta_log/\d{20}\.json$"
_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "expect"}
_ERRORS = {
    "503": (503, "SlowDown", "Please reduce your request rate."),
    "500": (500, "InternalError", "We encountered an internal error. Please try again."),
    "after500": (500, "InternalError", "We encountered an internal error. Please try again."),
}


class Rule:
    """One armed fault; see the module docstring."""

    def __init__(self, method: str, path: str, action: str, skip: int, times: int, after: Rule | None = None,
                 seconds: float = 0.0):
        if action not in (*_ERRORS, "hold", "hold_after", "delay"):
            raise ValueError(f"unknown action {action!r}")
        if action == "delay":
            times = -1  # a slow store is slow for every request
        self.seconds = seconds
        self.method = method.upper()
        self.pattern = re.compile(path)
        self.action = action
        self.skip = skip
        self.times = times
        self.after = after
        self.seen = 0
        self.fired = 0
        self.held = threading.Event()  # set when a request is being held
        self._release = threading.Event()

    def take(self, method: str, path: str) -> bool:
        """Whether this rule acts on the request (counts it); called under the proxy's lock."""
        if method != self.method or not self.pattern.search(path):
            return False
        if self.after is not None and self.after.fired == 0:
            return False
        self.seen += 1
        if self.seen <= self.skip or (self.times >= 0 and self.fired >= self.times):
            return False
        self.fired += 1
        return True

    def release(self) -> None:
        """Lets held requests go on (to the store, if it is up again)."""
        self._release.set()

    def wait(self, timeout: float) -> None:
        self.held.set()
        self._release.wait(timeout)

    def __repr__(self) -> str:
        return f"Rule({self.method} {self.pattern.pattern} {self.action} skip={self.skip} fired={self.fired})"


class FaultProxy:
    """The proxy: ``endpoint`` (``http://127.0.0.1:<port>``) forwards to ``target``."""

    def __init__(self, target: str):
        self.target = urlparse(target)
        self.rules: list[Rule] = []
        self.seen: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    out = bytearray()
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return bytes(out)
                        out += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))

            def _error(self, action: str) -> None:
                status, code, message = _ERRORS[action]
                body = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
                        f"<Message>{message}</Message><Resource>{self.path}</Resource></Error>").encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":  # a HEAD answer has no body
                    self.wfile.write(body)

            def _drop(self) -> None:
                """The client sees its connection closed without an answer."""
                self.close_connection = True
                try:
                    self.connection.shutdown(2)
                except OSError:
                    pass

            def _forward(self, body: bytes):
                conn = http.client.HTTPConnection(proxy.target.hostname, proxy.target.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                if body or self.command in ("PUT", "POST"):
                    headers["Content-Length"] = str(len(body))
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                return resp, data

            def _handle(self) -> None:
                body = self._body()
                with proxy.lock:
                    proxy.seen.append((self.command, self.path))
                    rule = next((r for r in proxy.rules if r.take(self.command, self.path)), None)
                if rule is not None and rule.action in ("503", "500"):
                    self._error(rule.action)
                    return
                if rule is not None and rule.action == "hold":
                    rule.wait(120)
                if rule is not None and rule.action == "delay":
                    time.sleep(rule.seconds)
                try:
                    resp, data = self._forward(body)
                except OSError:
                    self._drop()  # the store is gone
                    return
                if rule is not None and rule.action == "hold_after":
                    rule.wait(120)
                    self._drop()
                    return
                if rule is not None and rule.action == "after500":
                    self._error(rule.action)
                    return
                self.send_response(resp.status, resp.reason)
                head = self.command == "HEAD"
                for k, v in resp.getheaders():
                    if k.lower() not in _HOP and (head or k.lower() != "content-length"):
                        self.send_header(k, v)
                if not head:  # a HEAD answer keeps the object's length
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="s3-fault-proxy", daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FaultProxy:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.clear()
        self.server.shutdown()
        self.server.server_close()

    def arm(self, method: str, path: str, action: str, *, skip: int = 0, times: int = 1,
            after: Rule | None = None, seconds: float = 0.0) -> Rule:
        """Adds a rule (see the module docstring); ``path`` is a regular expression searched in the
        request path (``/bucket/key?query``); with ``after``, the rule counts requests only once
        that rule has fired; ``seconds``: the sleep of a ``"delay"`` rule."""
        rule = Rule(method, path, action, skip, times, after, seconds)
        with self.lock:
            self.rules.append(rule)
        return rule

    def clear(self) -> None:
        """Removes every rule and releases every held request."""
        with self.lock:
            rules, self.rules = self.rules, []
        for r in rules:
            r.release()
