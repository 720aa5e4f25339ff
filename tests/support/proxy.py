"""Proxies in front of a storage endpoint, for fault tests.

:class:`FlakyProxy` works on TCP and can take an endpoint down and bring it back: while
down, new connections are reset at once and open ones are cut, as when a storage
endpoint restarts; while up, bytes are forwarded unchanged.

:class:`FaultyHttpProxy` works on HTTP: it forwards each request and counts it by method,
and can answer S3-style errors instead (503 SlowDown, 500 InternalError for the next N
requests or for T seconds; 403 AccessDenied for every write, as read-only credentials).
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass


class FlakyProxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.refused = 0
        self.serving = threading.Event()
        self.serving.set()
        self.outage_s: float | None = None
        self.open_sockets: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        threading.Thread(target=self.accept_loop, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def down(self) -> None:
        self.serving.clear()
        with self.lock:
            for sock in list(self.open_sockets):
                _reset(sock)
            self.open_sockets.clear()

    def up(self) -> None:
        self.serving.set()

    def outage(self, seconds: float) -> None:
        """Go down now; come back ``seconds`` after the first connection is refused."""
        self.outage_s = seconds
        self.down()

    def close(self) -> None:
        self.down()
        self.listener.close()

    def accept_loop(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            if not self.serving.is_set():
                self.refused += 1
                _reset(client)
                if self.outage_s is not None:
                    timer = threading.Timer(self.outage_s, self.up)
                    timer.daemon = True
                    timer.start()
                    self.outage_s = None
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _reset(client)
                continue
            with self.lock:
                self.open_sockets.update((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    def pump(self, src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _reset(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()


def _host_port(endpoint: str) -> tuple[str, int]:
    host, port = endpoint.removeprefix("http://").rstrip("/").split(":")
    return host, int(port)


@contextlib.contextmanager
def flaky_proxy(endpoint: str) -> Iterator[FlakyProxy]:
    """A proxy in front of ``http://host:port``; closed on exit."""
    proxy = FlakyProxy(_host_port(endpoint))
    try:
        yield proxy
    finally:
        proxy.close()


WRITE_METHODS = frozenset({"PUT", "POST", "DELETE"})
_S3_CODES = {500: "InternalError", 503: "SlowDown", 403: "AccessDenied"}
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "proxy-connection"})


@dataclass
class Fault:
    """Answer ``status`` instead of forwarding: to the next ``count`` requests, or to every
    request until ``until`` (monotonic clock); only to writes when ``writes_only``."""

    status: int
    count: int | None = None
    until: float | None = None
    writes_only: bool = False

    def applies(self, method: str) -> bool:
        if self.writes_only and method not in WRITE_METHODS:
            return False
        if self.until is not None:
            return time.monotonic() < self.until
        return self.count is None or self.count > 0


class FaultyHttpProxy:
    """An HTTP reverse proxy on 127.0.0.1 that forwards to ``upstream`` or injects faults."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.requests: Counter[str] = Counter()  # forwarded, by method
        self.injected: Counter[int] = Counter()  # answered with an error, by status
        self.fault: Fault | None = None
        self.lock = threading.Lock()
        handler = type("Handler", (_ProxyHandler,), {"proxy": self})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail(
        self,
        status: int,
        *,
        count: int | None = None,
        seconds: float | None = None,
        writes_only: bool = False,
    ) -> None:
        """Answer ``status`` to the next ``count`` requests, or for ``seconds`` from now,
        or (neither given) until :meth:`heal`."""
        until = None if seconds is None else time.monotonic() + seconds
        with self.lock:
            self.fault = Fault(status, count, until, writes_only)

    def deny_writes(self) -> None:
        """403 AccessDenied to every PUT, POST and DELETE: read-only credentials."""
        self.fail(403, writes_only=True)

    def heal(self) -> None:
        with self.lock:
            self.fault = None

    def writes(self) -> int:
        return sum(n for method, n in self.requests.items() if method in WRITE_METHODS)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def injects(self, method: str) -> int | None:
        with self.lock:
            fault = self.fault
            if fault is None or not fault.applies(method):
                return None
            if fault.count is not None:
                fault.count -= 1
            self.injected[fault.status] += 1
            return fault.status


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    proxy: FaultyHttpProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0], 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def forward(self) -> None:
        body = self.read_body()
        status = self.proxy.injects(self.command)
        if status is not None:
            code = _S3_CODES.get(status, "Error")
            self.reply(
                status,
                {"Content-Type": "application/xml"},
                f"<Error><Code>{code}</Code><Message>injected by the test proxy"
                f"</Message></Error>".encode(),
            )
            return
        upstream = http.client.HTTPConnection(*self.proxy.upstream, timeout=30)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            headers["Content-Length"] = str(len(body))
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            data = response.read()
            kept = {k: v for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP}
        finally:
            upstream.close()
        with self.proxy.lock:
            self.proxy.requests[self.command] += 1
        self.reply(response.status, kept, data, head=self.command == "HEAD")

    def reply(self, status: int, headers: dict[str, str], data: bytes, head: bool = False) -> None:
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() != "content-length":
                self.send_header(name, value)
        length = headers.get("Content-Length") or headers.get("content-length")
        self.send_header("Content-Length", length if head and length else str(len(data)))
        self.end_headers()
        if not head:
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward


@contextlib.contextmanager
def faulty_http_proxy(endpoint: str) -> Iterator[FaultyHttpProxy]:
    """An HTTP fault proxy in front of ``http://host:port``; closed on exit."""
    proxy = FaultyHttpProxy(_host_port(endpoint))
    try:
        yield proxy
    finally:
        proxy.close()
