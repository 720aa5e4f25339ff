"""MCP over stdio that answers every line (issue 31): the SDK's own transport
(:func:`mcp.server.stdio.stdio_server`), with each line checked before it.

The SDK's stdio reader hands a line it can't parse to the session as an exception, and
nothing answers it: a client that sent a lone surrogate escape (``"\\udce9"``), a
5,000-digit integer or 1,000-deep nesting waited for ever, where over HTTP the same line
gets 400. Here every line is first parsed with the SDK's own adapter
(``jsonrpc_message_adapter``); a line it refuses is answered on stdout at once with a
JSON-RPC error, and never reaches the session:

- ``-32602`` (invalid params), with the request's id, when Python reads the line as a
  JSON object (a lone surrogate, a 5,000-digit number the SDK refuses);
- ``-32700`` (parse error) otherwise (nesting past Python's recursion limit, a line cut
  short, no JSON), with the request's id when a shallow read of the line's top level
  finds one (issue 42: a request nested 1,000 deep in ``remember``'s metadata is
  answered with its own id), else ``"id": null``.

Both writers (these answers and the SDK's responses) share one locked stdout, a whole
line per write, so answers never interleave. As the SDK's own transport does, the wire
moves to private descriptors while serving: fd 0 reads the null device and fd 1 writes
to stderr, so nothing a library prints can corrupt the protocol.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from io import TextIOWrapper
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from packs.validation import lone_surrogate


class AnsweringServer(MCPServer):
    """The SDK's ``MCPServer`` whose stdio transport answers every line it can't parse."""

    async def run_stdio_async(self) -> None:
        with _private_wire() as (wire_in, wire_out):
            source = anyio.wrap_file(TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
            out = OneWriter(anyio.wrap_file(TextIOWrapper(wire_out, encoding="utf-8")))
            lines = CheckedLines(source, out)
            async with stdio_server(cast(Any, lines), cast(Any, out)) as (read, write):
                lowlevel = self._lowlevel_server
                await lowlevel.run(read, write, lowlevel.create_initialization_options())


class OneWriter:
    """stdout shared by the SDK's writer and the answers to refused lines: each write, a
    whole line, is written and flushed under one lock."""

    def __init__(self, file: anyio.AsyncFile[str]) -> None:
        self._file = file
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._file.write(text)
            await self._file.flush()

    async def flush(self) -> None:
        async with self._lock:
            await self._file.flush()


class CheckedLines:
    """The lines of ``source`` the SDK can parse; each other line is answered on ``out``
    (:func:`refusal`) and skipped. Blank lines are no message: skipped unanswered."""

    def __init__(self, source: anyio.AsyncFile[str], out: OneWriter) -> None:
        self._source = source
        self._out = out

    def __aiter__(self) -> CheckedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._source.readline()
            if not line:
                raise StopAsyncIteration
            if not line.strip():
                continue
            answer = refusal(line)
            if answer is None:
                return line
            await self._out.write(answer + "\n")


def refusal(line: str) -> str | None:
    """None if the SDK parses ``line`` as a JSON-RPC message, else the JSON-RPC error
    that answers it (the module docstring)."""
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValidationError as exc:
        why = str(exc.errors()[0].get("msg", "unreadable"))
    try:
        value = json.loads(line, parse_int=_small_int)
    except (ValueError, RecursionError):
        parsed, found = False, shallow_id(line)
    else:
        parsed, found = True, value.get("id") if isinstance(value, dict) else None
    request_id = _usable(found)
    if parsed and request_id is not None:
        code, message = types.INVALID_PARAMS, f"Invalid params: {why}"
    else:
        code, message = types.PARSE_ERROR, f"Parse error: {why}"
    error = types.ErrorData(code=code, message=message)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error).model_dump_json()


def _usable(found: object) -> int | str | None:
    if isinstance(found, bool) or not isinstance(found, int | str):
        return None
    if isinstance(found, str) and lone_surrogate(found) is not None:
        return None
    return found


def shallow_id(line: str) -> object:
    """The value of the top-level ``"id"`` of a line that starts as a JSON object, read
    without descending into the other members' values (skipped by counting brackets,
    with no recursion), so nesting or a cut-short tail after the id doesn't hide it;
    None when the line doesn't read that far."""
    text = line.strip()
    try:
        at = _space(text, 0)
        if text[at] != "{":
            return None
        at += 1
        while True:
            at = _space(text, at)
            if text[at] != '"':
                return None
            key, at = scanstring(text, at + 1)
            at = _space(text, at)
            if text[at] != ":":
                return None
            at = _space(text, at + 1)
            if key == "id":
                return _DECODER.raw_decode(text, at)[0]
            at = _space(text, _skip(text, at))
            if text[at] != ",":
                return None
            at += 1
    except (ValueError, IndexError, RecursionError):
        return None


_DECODER = json.JSONDecoder(parse_int=lambda digits: _small_int(digits))  # the id alone
_SPACE = " \t\n\r"


def _space(text: str, at: int) -> int:
    while text[at] in _SPACE:
        at += 1
    return at


def _skip(text: str, at: int) -> int:
    """Past the JSON value at ``at``: a string, a bracketed value (by depth), a scalar."""
    if text[at] == '"':
        return scanstring(text, at + 1)[1]
    if text[at] not in "[{":
        while text[at] not in ",}]" + _SPACE:
            at += 1
        return at
    depth = 0
    while True:
        char = text[at]
        if char == '"':
            at = scanstring(text, at + 1)[1]
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1


def _small_int(digits: str) -> int | None:
    """An integer Python can hold as text (at most 4,300 digits), else None."""
    return int(digits) if len(digits) <= 4_000 else None


@contextmanager
def _private_wire() -> Iterator[tuple[Any, Any]]:
    """stdin and stdout on private descriptors, fd 0 on the null device and fd 1 on
    stderr while serving; both restored after. The private descriptors stay open: a
    worker thread may still block on one as the server stops (the SDK's reason too)."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        with (
            os.fdopen(wire_in, "rb", closefd=False) as read,
            os.fdopen(wire_out, "wb", closefd=False) as write,
        ):
            yield read, write
    finally:
        os.close(null)
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
