"""The REST API as a FastAPI app over open Packs (``wolfie api``).

- **Routes**: ``/v1/packs/{pack}/...`` (:mod:`wolfie.api.routes`), ``GET /healthz``, the
  OpenAPI schema at ``/openapi.json`` and its pages at ``/docs`` and ``/redoc``, whose
  scripts this server serves (:mod:`wolfie.api.docs_pages`: no CDN). A read-only server
  has no write routes at all (they are absent from the schema too).
- **Explorer**: the Pack explorer's pages at ``/ui`` (:mod:`wolfie.ui`, docs/explorer.md).
- **Auth**: with a token, every ``/v1/`` and ``/ui`` request needs ``Authorization: Bearer <token>``
  (compared in constant time) or gets 401 before anything reads its body: the bearer
  guard the MCP transport uses too (:class:`wolfie.bearer.BearerGuard`), a ``Security``
  dependency of the ``/v1`` and ``/ui`` routers (the schema documents it; the routes
  enforce it) and, before that, the same check in :class:`Guard`. ``/healthz``,
  ``/openapi.json``, ``/docs``, ``/redoc`` and their assets are open: they hold no Pack
  data. Without a token the server binds loopback only (the command refuses another
  address) and answers only requests whose ``Host`` is a loopback name, so a web page
  can't reach it through DNS rebinding.
- **Limits**: a body over :data:`MAX_BODY_BYTES` is refused with 413 while it streams.
- **Errors**: :mod:`wolfie.api.errors`: one envelope, one line.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wolfie.api import docs_pages, errors, routes
from wolfie.api.deps import Served
from wolfie.api.errors import BodyTooLarge, error_response, too_large_response
from wolfie.api.models import ErrorBody, Health
from wolfie.bearer import BearerGuard, dependencies
from wolfie.front_door import ScopeGuard
from wolfie.ui import pages
from wolfie.ui.security import Csrf

TOKEN_ENV = "WOLFIE_API_TOKEN"  # read by the command (wolfie/commands/api.py)
# Hand-set: 1,000 knowledge chunks of 20,000 characters (the default max_text_chars) is
# about 20 MB of JSON; a body larger than this is refused before it is read whole.
MAX_BODY_BYTES = 32 << 20
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in {
        400: "Bad input",
        401: "No or a wrong bearer token",
        403: "Not allowed",
        404: "Unknown Pack, episode or memory",
        413: "Body too large",
        422: "A parameter breaks its limits",
        503: "Storage busy: retry",
    }.items()
}


class Guard:
    """ASGI middleware for what must happen before FastAPI reads a body, which it does
    before it resolves any dependency: the bearer token on ``/v1/`` and ``/ui`` (the
    routers' ``Security`` dependency, :class:`~wolfie.bearer.BearerGuard`, checked here
    first, so a stranger's body is never read), ``Host`` names without a token (a
    loopback-only server answers nothing else, ``/docs`` included), and the body size
    limit (a declared length at once, a streamed body as it arrives)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.bearer = BearerGuard(token, TOKEN_ENV) if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self._refusal(scope)
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, self._bounded(receive), send)

    def _refusal(self, scope: Scope) -> Any:
        headers = Headers(scope=scope)
        if self.bearer is None:
            host = headers.get("host", "").rsplit(":", 1)[0]
            if host and host not in LOOPBACK_HOSTS:
                return error_response(
                    400,
                    "InvalidInput",
                    f"Host {host!r} is not a loopback name; without "
                    f"{TOKEN_ENV} this server answers only 127.0.0.1 and localhost.",
                )
        elif _guarded(scope["path"]) and not self.bearer.authorised(headers):
            return self.bearer.refusal()
        length = headers.get("content-length", "0")
        if not (length.isascii() and length.isdigit()) or int(length) > MAX_BODY_BYTES:
            return _too_large()
        return None

    @staticmethod
    def _bounded(receive: Receive) -> Receive:
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > MAX_BODY_BYTES:
                raise BodyTooLarge(MAX_BODY_BYTES)
            return message

        return bounded


def _guarded(path: str) -> bool:
    """The paths that need the token: the API's and the explorer's."""
    return path.startswith("/v1/") or path == "/ui" or path.startswith("/ui/")


def _too_large() -> Any:
    return too_large_response(MAX_BODY_BYTES)


def build_app(served: Served, token: str | None) -> ASGIApp:
    """The app over ``served`` (its Packs, already open, and its scope), behind
    :class:`Guard`."""
    return Guard(fastapi_app(served, token), token)


def openapi_schema() -> dict[str, Any]:
    """The schema of a writable server with a token: every route, the bearer scheme."""
    return fastapi_app(Served({}, ScopeGuard(None)), token="schema").openapi()


def fastapi_app(served: Served, token: str | None) -> FastAPI:
    """The routes, the error handlers and the schema; the routes of ``/v1`` and ``/ui``
    need the token (a ``Security`` dependency); :func:`build_app` puts :class:`Guard`
    in front."""
    app = FastAPI(
        title="Wolfie",
        summary="Self-evolving memory for AI agents: Packs whose memories learn a utility.",
        version="1",
        responses=ERRORS,
        docs_url=None,  # docs_pages serves /docs and /redoc from the package, no CDN
        redoc_url=None,
    )
    docs_pages.install(app)
    app.state.served = served
    errors.install(app)

    @app.exception_handler(BodyTooLarge)
    async def too_large(request: Any, exc: BodyTooLarge) -> Any:
        return _too_large()

    @app.get("/healthz", response_model=Health, summary="Alive (no token needed)")
    def healthz() -> Health:
        return Health(status="ok")

    guarded = dependencies(BearerGuard(token, TOKEN_ENV) if token else None)
    app.include_router(routes.reads, dependencies=guarded)
    if served.writable:
        app.include_router(routes.writes, dependencies=guarded)
    app.include_router(pages.router(served, Csrf()), dependencies=guarded)  # docs/explorer.md
    return app
