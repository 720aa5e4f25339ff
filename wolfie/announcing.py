"""The uvicorn server both HTTP doors run (``wolfie api``, ``wolfie mcp --http``): once it
listens it prints one line naming its URL to stderr (port 0 picks a free port), so a
script or a test that started it knows where to go."""

from __future__ import annotations

import sys
from collections.abc import Callable
from socket import socket

import uvicorn


class Announcing(uvicorn.Server):
    """uvicorn's server; ``line(url)`` is printed once it listens on ``url``
    (``http://host:port``, an IPv6 host in brackets)."""

    def __init__(self, config: uvicorn.Config, line: Callable[[str], str]) -> None:
        super().__init__(config)
        self.line = line

    async def startup(self, sockets: list[socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            print(self.line(f"http://{shown}:{port}"), file=sys.stderr, flush=True)
