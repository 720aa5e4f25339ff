"""``wolfie mcp`` driven by the official MCP SDK's own client, as an agent host drives it:
a spawned server over stdio, and a spawned server over streamable HTTP with a token."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
TOKEN = "s3cret-test-token"
WRITE_TOOLS = {"recall", "remember", "feedback", "signal", "outcome", "resolve", "ingest"}
READ_TOOLS = {"search", "maturity"}


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "WOLFIE_MCP_TOKEN"}
    env.update(HF_HUB_OFFLINE="1", DO_NOT_TRACK="1", WOLFIE_ROOT=str(root), **extra)
    return env


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "wolfie.cli", "mcp", *args]


@asynccontextmanager
async def stdio_session(root: Path, *args: str) -> AsyncIterator[ClientSession]:
    command = _command(*args)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=_env(root), cwd=str(REPO)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(tmp_root: Path):
    port = _free_port()
    proc = subprocess.Popen(
        _command("--pack", "agents", "--http", f"127.0.0.1:{port}"),
        cwd=REPO, env=_env(tmp_root, WOLFIE_MCP_TOKEN=TOKEN),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"wolfie mcp --http exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("wolfie mcp --http did not start listening in 120 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


@asynccontextmanager
async def http_session(url: str, token: str = TOKEN) -> AsyncIterator[ClientSession]:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def error_of(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should have failed: {result}"
    return " ".join(getattr(part, "text", "") for part in result.content)


async def learning_loop(session: ClientSession) -> None:
    """remember -> recall -> feedback -> recall: the remembered memory's utility rises."""
    tools = {tool.name for tool in (await session.list_tools()).tools}
    assert tools == WRITE_TOOLS | READ_TOOLS
    stored = await call(
        session, "remember", intent="The deploy failed with a locked database",
        response="Stop the scheduler before migrating, then rerun the deploy.",
        outcome="fixed", polarity="success",
    )  # fmt: skip
    query = "deploy fails because the database is locked"
    first = await call(session, "recall", query=query)
    item = next(i for i in first["items"] if i["id"] == stored["id"])
    assert first["episode_id"]
    assert "locked database" in first["prompt"]
    rewarded = await call(session, "feedback", episode_id=first["episode_id"], rating=1.0)
    assert rewarded["applied"] >= 1 and stored["id"] in rewarded["utilities"]
    second = await call(session, "recall", query=query)
    after = next(i for i in second["items"] if i["id"] == stored["id"])
    assert after["ranked_utility"] > item["ranked_utility"]
    # one meaning per name: the track record is what feedback reported
    assert after["track_record"] == pytest.approx(rewarded["utilities"][stored["id"]])
    assert rewarded["utilities"][stored["id"]] == pytest.approx(0.3)  # Q <- 0 + 0.3 (1 - 0)


def test_stdio_server_runs_the_learning_loop(tmp_root: Path):
    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            await learning_loop(session)

    anyio.run(main)


def test_http_server_runs_the_learning_loop_with_the_token(http_server: str):
    async def main() -> None:
        async with http_session(http_server) as session:
            await learning_loop(session)

    anyio.run(main)


def test_http_server_answers_401_without_the_token(http_server: str):
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    assert httpx.post(http_server, json=message, headers=headers).status_code == 401
    wrong = {**headers, "Authorization": "Bearer not-the-token"}
    assert httpx.post(http_server, json=message, headers=wrong).status_code == 401

    async def main() -> None:
        with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as it likes
            async with http_session(http_server, token="not-the-token"):
                pass

    anyio.run(main)


def test_http_refuses_a_public_address_without_a_token(tmp_root: Path):
    done = subprocess.run(
        _command("--pack", "agents", "--http", "0.0.0.0:8799"),
        cwd=REPO, env=_env(tmp_root), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "WOLFIE_MCP_TOKEN" in done.stderr


def test_scopes_are_isolated_and_a_pinned_server_keeps_its_scope(tmp_root: Path):
    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            mine = await call(
                session, "remember", intent="My locker code", response="It is 4512",
                scope="alice",
            )  # fmt: skip
            seen = await call(session, "recall", query="what is my locker code", scope="alice")
            assert mine["id"] in [i["id"] for i in seen["items"]]
            other = await call(session, "recall", query="what is my locker code", scope="bob")
            assert mine["id"] not in [i["id"] for i in other["items"]]
            shared = await call(session, "search", query="what is my locker code")
            assert mine["id"] not in [i["id"] for i in shared["items"]]
        async with stdio_session(tmp_root, "--pack", "agents", "--scope", "bob") as pinned:
            text = await error_of(pinned, "recall", query="locker code", scope="alice")
            assert "pinned to scope 'bob'" in text
            found = await call(pinned, "recall", query="what is my locker code")
            assert mine["id"] not in [i["id"] for i in found["items"]]

    anyio.run(main)


def test_read_only_server_has_only_the_read_tools(tmp_root: Path):
    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            await call(session, "remember", intent="Backups run nightly", response="At 02:00")
        async with stdio_session(tmp_root, "--pack", "agents", "--read-only") as session:
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert tools == READ_TOOLS
            found = await call(session, "search", query="when do backups run")
            assert found["episode_id"] is None and found["items"]
            mature = await call(session, "maturity")
            assert mature["stage"] == "cold" and mature["memory_count"] == 1
            refused = await error_of(session, "remember", intent="x", response="y")
            assert "unknown tool" in refused.lower()

    anyio.run(main)


def test_hostile_arguments_get_clear_tool_errors_and_the_server_lives_on(tmp_root: Path):
    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            await call(session, "remember", intent="Restart the worker", response="systemctl")
            episode = (await call(session, "recall", query="restart worker"))["episode_id"]
            assert "[-1, 1]" in await error_of(session, "feedback", episode_id=episode, rating=7)
            assert (
                "episode"
                in (
                    await error_of(session, "feedback", episode_id="no-such-episode", rating=1)
                ).lower()
            )
            assert "k" in await error_of(session, "recall", query="restart", k=0)
            assert await error_of(session, "recall", query="")
            assert (
                "signal"
                in (await error_of(session, "signal", episode_id=episode, name="rm -rf /")).lower()
            )
            assert await error_of(session, "remember", intent="x" * 10_000_000, response="y")
            huge = {f"k{i}": "v" * 1000 for i in range(5_000)}
            assert await error_of(
                session, "remember", intent="metadata", response="too big", metadata=huge
            )
            assert await error_of(session, "recall", query="x", filters={"source": {"$gt": ""}})
            # Still serving, and the first episode still takes a reward.
            assert (await call(session, "feedback", episode_id=episode, rating=0.5))["applied"]

    anyio.run(main)


def test_ingest_returns_at_once_and_the_run_lands_in_the_pack(tmp_root: Path, tmp_path: Path):
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "oncall.md").write_text(
        "# On call\n\nThe pager rotation changes every Monday at 09:00 in Lisbon.\n"
    )

    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            started = time.monotonic()
            run = await call(session, "ingest", sources=[str(docs)])
            assert time.monotonic() - started < 10, "ingest must not wait for the run"
            assert run["run_id"].startswith("mcp-ingest-")
            assert "sources" in await error_of(session, "ingest", sources=[])
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                found = await call(session, "search", query="when does the pager rotation change")
                if any("Monday at 09:00" in item["text"] for item in found["items"]):
                    break
                await anyio.sleep(2)
            else:
                pytest.fail(f"ingested text never appeared; log:\n{Path(run['log']).read_text()}")
            done = f"{run['run_id']}: 1 of 1 sources ingested"
            while done not in Path(run["log"]).read_text() and time.monotonic() < deadline:
                await anyio.sleep(1)  # the run's process is still finishing its flow
            assert done in Path(run["log"]).read_text()

    anyio.run(main)


def test_a_recalls_episode_is_stored_soon_after_the_answer(http_server: str, tmp_root: Path):
    """Issue 24: recall answers without flushing first (that was most of its time) and
    hands its episode to the background flusher: another process finds it well before
    the 5 s flush window, and rewards it from the CLI."""
    from packs import Pack

    async def main() -> str:
        async with http_session(http_server) as session:
            await call(session, "remember", intent="Printer jams on A3", response="Use tray 2")
            return str((await call(session, "recall", query="printer jams"))["episode_id"])

    episode = anyio.run(main)
    deadline = time.monotonic() + 3.0
    with Pack.open("agents", str(tmp_root), read_only=True) as reader:
        while time.monotonic() < deadline:
            if reader.query("episodes", where={"id": episode}).height:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"episode {episode} not stored 3 s after the recall answered")
    command = ["feedback", episode, "--rating", "1", "--pack", "agents"]
    done = subprocess.run(
        [sys.executable, "-m", "wolfie.cli", *command],
        cwd=REPO, env=_env(tmp_root), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
