"""Running the MCP server: stdio, or streamable HTTP behind a bearer-token check.

The token check is a small ASGI middleware in front of the SDK's Starlette app: every
HTTP request to the server must carry ``Authorization: Bearer <token>`` (compared in
constant time), or it gets 401 before the MCP layer sees it. Once the HTTP server
listens it prints the URL it serves to stderr (port 0 picks a free port).
"""

from __future__ import annotations

import hmac
import logging
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import uvicorn

from packs.ingest.policy import IngestPolicy
from packs.pack import Pack
from wolfie.mcp.ingest_runs import DEFAULT_MAX_RUNS, IngestRuns
from wolfie.mcp.lesson_limits import LessonLimits
from wolfie.mcp.server import build_server

log = logging.getLogger("wolfie.mcp")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BearerToken:
    """ASGI middleware: HTTP requests without the right bearer token get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            body = b'{"error": "unauthorized: send Authorization: Bearer <WOLFIE_MCP_TOKEN>"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="wolfie"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        for name, value in scope.get("headers") or []:
            if name.lower() == b"authorization":
                return hmac.compare_digest(bytes(value), self.expected)
        return False


def _open(pack: str, root: str | None, read_only: bool) -> Pack:
    return Pack.open(pack, root, read_only=read_only)


def _log_to_stderr() -> None:
    # stdout carries the MCP protocol in stdio mode: nothing else may be written there.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)


@dataclass(frozen=True)
class IngestLimits:
    """What the operator lets agents ingest (``wolfie mcp`` flags)."""

    policy: IngestPolicy = field(default_factory=IngestPolicy)
    max_runs: int = DEFAULT_MAX_RUNS
    lessons: LessonLimits = field(default_factory=LessonLimits)  # sampled lessons' bounds


def serve_stdio(
    pack: str,
    root: str | None,
    *,
    read_only: bool,
    scope: str | None,
    ingest: IngestLimits | None = None,
) -> None:
    """Serve MCP over stdin/stdout until the host closes the pipe."""
    _log_to_stderr()
    handle = _open(pack, root, read_only)
    try:
        limits = ingest or IngestLimits()
        runs = IngestRuns(pack, root, limits.policy, limits.max_runs)
        build_server(handle, scope=scope, runs=runs, lessons=limits.lessons).run("stdio")
    finally:
        handle.close()


def http_app(
    handle: Pack,
    root: str | None,
    host: str,
    token: str | None,
    scope: str | None,
    ingest: IngestLimits | None = None,
) -> ASGIApp:
    """The streamable HTTP app at ``/mcp``, behind the token check when a token is set."""
    limits = ingest or IngestLimits()
    runs = IngestRuns(handle.name, root, limits.policy, limits.max_runs)
    server = build_server(handle, scope=scope, runs=runs, lessons=limits.lessons)
    app: ASGIApp = server.streamable_http_app(streamable_http_path="/mcp", host=host)
    return app if token is None else BearerToken(app, token)


def serve_http(
    pack: str,
    root: str | None,
    host: str,
    port: int,
    token: str | None,
    *,
    read_only: bool,
    scope: str | None,
    ingest: IngestLimits | None = None,
) -> None:
    """Serve MCP over streamable HTTP at ``http://host:port/mcp``."""
    _log_to_stderr()
    if token is None:
        log.warning("No WOLFIE_MCP_TOKEN set: any local process can call this server.")
    handle = _open(pack, root, read_only)
    try:
        app = http_app(handle, root, host, token, scope, ingest)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning")
        _Announcing(config, pack).run()
    finally:
        handle.close()


class _Announcing(uvicorn.Server):
    """uvicorn's server, printing the URL it serves once it listens."""

    def __init__(self, config: Any, pack: str) -> None:
        super().__init__(config)
        self.pack = pack

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            print(
                f"Wolfie MCP serving Pack {self.pack!r} at http://{shown}:{port}/mcp",
                file=sys.stderr,
                flush=True,
            )
