"""A TCP proxy that can take an endpoint down and bring it back: a real outage for tests.

While down, new connections are reset at once and open ones are cut, as when a storage
endpoint restarts; while up, bytes are forwarded unchanged.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator


class FlakyProxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.refused = 0
        self._up = threading.Event()
        self._up.set()
        self._outage_s: float | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def down(self) -> None:
        self._up.clear()
        with self._lock:
            for sock in list(self._open):
                _reset(sock)
            self._open.clear()

    def up(self) -> None:
        self._up.set()

    def outage(self, seconds: float) -> None:
        """Go down now; come back ``seconds`` after the first connection is refused."""
        self._outage_s = seconds
        self.down()

    def close(self) -> None:
        self.down()
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            if not self._up.is_set():
                self.refused += 1
                _reset(client)
                if self._outage_s is not None:
                    timer = threading.Timer(self._outage_s, self.up)
                    timer.daemon = True
                    timer.start()
                    self._outage_s = None
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _reset(client)
                continue
            with self._lock:
                self._open.update((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _reset(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()


@contextlib.contextmanager
def flaky_proxy(endpoint: str) -> Iterator[FlakyProxy]:
    """A proxy in front of ``http://host:port``; closed on exit."""
    host, port = endpoint.removeprefix("http://").rstrip("/").split(":")
    proxy = FlakyProxy((host, int(port)))
    try:
        yield proxy
    finally:
        proxy.close()
