"""The one bearer-token guard of the HTTP doors: the REST API and its explorer
(``wolfie api``) and MCP's streamable HTTP transport (``wolfie mcp --http``).

A request passes when its ``Authorization`` header is ``Bearer <token>``, compared in
constant time (:func:`hmac.compare_digest`); any other gets 401 with
``WWW-Authenticate: Bearer realm="wolfie"`` (RFC 6750, section 3) and the doors' error
envelope, ``{"error": {"type": "Unauthorized", "message": ...}}``. The guard is an
:class:`~fastapi.security.HTTPBearer`, so it is a FastAPI ``Security`` dependency (the
schema documents the scheme, the route enforces it), and :meth:`BearerGuard.asgi` puts the
same check in front of an ASGI app that has no routes to depend on (MCP's transport) or
must refuse before a body is read (:class:`wolfie.api.app.Guard`).
"""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import HTTPException, Security
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.datastructures import Headers
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

CHALLENGE = 'Bearer realm="wolfie"'  # RFC 6750, section 3: what a 401 answers with
UNAUTHORIZED = "Unauthorized"  # the envelope's type: HTTP 401's reason phrase


class BearerGuard(HTTPBearer):
    """``Authorization: Bearer <token>`` or 401; ``env`` names the variable the server
    read the token from (the schema and the 401 say which)."""

    def __init__(self, token: str, env: str) -> None:
        # "HTTPBearer": the scheme's name in the published schema (the TypeScript client's)
        super().__init__(
            scheme_name="HTTPBearer", description=f"The server's {env}.", auto_error=False
        )
        self._expected = f"Bearer {token}".encode()
        self.message = f"Send Authorization: Bearer <{env}>."

    def authorised(self, headers: Headers) -> bool:
        sent = headers.get("authorization", "").encode("latin-1")
        return hmac.compare_digest(sent, self._expected)

    async def __call__(self, request: HTTPConnection) -> HTTPAuthorizationCredentials | None:
        """The ``Security`` dependency: the credentials, or 401 (rendered by the app's
        ``HTTPException`` handler as the envelope, :mod:`wolfie.api.errors`)."""
        if not self.authorised(request.headers):
            raise HTTPException(401, self.message, headers={"WWW-Authenticate": CHALLENGE})
        return await super().__call__(request)

    def refusal(self) -> JSONResponse:
        """The 401 as a response, for a check made before any route runs."""
        body = {"error": {"type": UNAUTHORIZED, "message": self.message}}
        return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": CHALLENGE})

    def asgi(self, app: ASGIApp) -> ASGIApp:
        """``app`` behind this guard: an HTTP request without the token gets 401 before
        ``app`` sees it (lifespan events pass)."""

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and not self.authorised(Headers(scope=scope)):
                await self.refusal()(scope, receive, send)
                return
            await app(scope, receive, send)

        return guarded


def dependencies(guard: BearerGuard | None) -> list[Any]:
    """A router's dependencies: the guard as ``Security``, or none without a token."""
    return [Security(guard)] if guard is not None else []
