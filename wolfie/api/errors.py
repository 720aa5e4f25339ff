"""Every failure of the REST API as ``{"error": {"type": ..., "message": ...}}``, on one line.

Bad input is a 4xx, never a traceback or a 500: the engine's
:class:`~packs.errors.WolfieError` by the built-in it also derives from (a
``LookupError`` such as an unknown episode, memory or Pack is 404, a ``ValueError`` 400,
a ``PermissionError`` 403), a schema violation 422 naming the parameter and its limit
(:func:`wolfie.input_errors.one_line`, the MCP server's words), a body that can't be
parsed 400, too large a body 413. A transient storage fault is 503 with ``Retry-After``.
Only a server fault is a 500, and its text stays in the server's log.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from packs.errors import PackNotServed as PackNotServed  # its home is the drawn tree
from packs.errors import TooManyRuns, TransientError, WolfieError
from wolfie.input_errors import one_line

log = logging.getLogger("wolfie.api")

MESSAGE_CHARS = 2_000  # longest message returned (hand-set: ids and values stay readable)
RETRY_AFTER_S = "1"  # hand-set: storage faults the engine retries pass within seconds
# The first match wins: an error class, or a built-in the engine's errors also derive from.
STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (TransientError, 503),
    (TooManyRuns, 429),
    (LookupError, 404),
    (PermissionError, 403),
    (ValueError, 400),
)


class BodyTooLarge(Exception):
    """A streamed body passed the server's limit (``wolfie.api.app.MAX_BODY_BYTES``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} bytes")
        self.limit = limit


def too_large_response(limit: int) -> JSONResponse:
    return error_response(
        413,
        "BodyTooLarge",
        f"The body is larger than {limit >> 20} MiB; send less "
        "at once (e.g. knowledge in smaller batches).",
    )


def status_of(error: WolfieError) -> int:
    return next((status for kind, status in STATUS if isinstance(error, kind)), 500)


def error_response(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    text = " ".join(message.split())
    if len(text) > MESSAGE_CHARS:
        text = f"{text[: MESSAGE_CHARS - 3]}..."
    body = {"error": {"type": kind, "message": text}}
    return JSONResponse(body, status_code=status, headers=headers)


def install(app: FastAPI) -> None:
    """Register the handlers that give every failure the envelope."""

    @app.exception_handler(WolfieError)
    async def wolfie_error(request: Request, exc: WolfieError) -> JSONResponse:
        status = status_of(exc)
        if status >= 500:
            log.error("%s %s failed: %r", request.method, request.url.path, str(exc))
        headers = {"Retry-After": RETRY_AFTER_S} if status == 503 else None
        return error_response(status, type(exc).__name__, str(exc), headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, "InvalidInput", one_line(exc.errors()))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        if isinstance(exc.__cause__, BodyTooLarge):  # a chunked body, cut while parsed
            return too_large_response(exc.__cause__.limit)
        return error_response(
            exc.status_code, _kind(exc.status_code), _detail(exc), dict(exc.headers or {})
        )

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("%s %s crashed", request.method, request.url.path)
        return error_response(
            500, "InternalError", "The server failed on this request; its log has the cause."
        )


def _kind(status: int) -> str:
    """``404`` -> ``NotFound``; a 400 is the body's fault: ``InvalidInput``."""
    if status == 400:
        return "InvalidInput"
    return HTTPStatus(status).phrase.title().replace(" ", "").replace("-", "")


def _detail(exc: HTTPException) -> str:
    cause: Any = exc.__cause__
    if exc.status_code == 400 and cause is not None:  # FastAPI couldn't parse the body
        return f"The body could not be read as JSON: {type(cause).__name__}: {cause}"
    if exc.status_code == 404:
        return "No such route; the routes are listed at /docs and /openapi.json."
    return str(exc.detail)
