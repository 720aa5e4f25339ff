"""``wolfie mcp`` as an agent host drives it: a spawned server over stdio or HTTP, and
the official MCP SDK's own client, with helpers for a call's result or its tool error."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[2]


def mcp_env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "WOLFIE_MCP_TOKEN"}
    env.update(HF_HUB_OFFLINE="1", DO_NOT_TRACK="1", WOLFIE_ROOT=str(root), **extra)
    return env


def mcp_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "wolfie.cli", "mcp", *args]


@asynccontextmanager
async def stdio_session(
    root: Path, *args: str, errlog: TextIO = sys.stderr, **client: Any
) -> AsyncIterator[ClientSession]:
    """A ``wolfie mcp ARGS`` process over stdio, with a session initialised on it; the
    server's stderr goes to ``errlog``, ``client`` to the SDK's ``ClientSession`` (e.g. a
    ``sampling_callback``)."""
    command = mcp_command(*args)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=mcp_env(root), cwd=str(REPO)
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, **client) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, token: str, **options: Any) -> AsyncIterator[ClientSession]:
    """A session on ``wolfie mcp --http`` at ``url``, with the bearer ``token``;
    ``options`` go to the SDK's ``ClientSession``."""
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write, **options) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """The structured result of a call that must succeed."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def error_of(session: ClientSession, tool: str, **arguments: Any) -> str:
    """The text of a call that must fail with a tool error."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should have failed: {result}"
    return " ".join(getattr(part, "text", "") for part in result.content)
