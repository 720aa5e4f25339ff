"""Running the MCP server: stdio, or streamable HTTP behind a bearer-token check.

The token check is the REST API's bearer guard (:class:`wolfie.bearer.BearerGuard`), in
front of the SDK's Starlette app as ASGI (the SDK's app has no routes of ours to hang a
FastAPI dependency on): every HTTP request to the server must carry
``Authorization: Bearer <token>`` (compared in constant time), or it gets 401, with the
REST API's error envelope, before the MCP layer sees it. Once the HTTP server listens it
prints the URL it serves to stderr (:class:`wolfie.announcing.Announcing`; port 0 picks a
free port).
"""

from __future__ import annotations

import logging
import sys
import warnings
from dataclasses import dataclass, field

import uvicorn
from starlette.types import ASGIApp

from packs.ingest.policy import IngestPolicy
from packs.pack import Pack
from wolfie.announcing import Announcing
from wolfie.bearer import BearerGuard
from wolfie.mcp.ingest_runs import DEFAULT_MAX_RUNS, IngestRuns
from wolfie.mcp.lesson_limits import LessonLimits
from wolfie.mcp.server import build_server

log = logging.getLogger("wolfie.mcp")

TOKEN_ENV = "WOLFIE_MCP_TOKEN"  # read by the command (wolfie/commands/mcp.py)


def BearerToken(app: ASGIApp, token: str) -> ASGIApp:
    """Deprecated (one release): ``BearerGuard(token, TOKEN_ENV).asgi(app)``."""
    warnings.warn(
        "wolfie.mcp.runtime.BearerToken is deprecated; use "
        "wolfie.bearer.BearerGuard(token, env).asgi(app).",
        DeprecationWarning,
        stacklevel=2,
    )
    return BearerGuard(token, TOKEN_ENV).asgi(app)


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
    return app if token is None else BearerGuard(token, TOKEN_ENV).asgi(app)


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
        log.warning("No %s set: any local process can call this server.", TOKEN_ENV)
    handle = _open(pack, root, read_only)
    try:
        app = http_app(handle, root, host, token, scope, ingest)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning")
        Announcing(config, lambda url: f"Wolfie MCP serving Pack {pack!r} at {url}/mcp").run()
    finally:
        handle.close()
