"""``wolfie mcp`` driven by the official MCP SDK's own client, as an agent host drives it:
a spawned server over stdio, and a spawned server over streamable HTTP with a token."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession

from tests.support.mcp_session import (
    REPO,
    call,
    error_of,
    http_session,
    mcp_command,
    mcp_env,
    stdio_session,
)

pytestmark = pytest.mark.slow

TOKEN = "s3cret-test-token"
WRITE_TOOLS = {
    "recall",
    "remember",
    "feedback",
    "signal",
    "outcome",
    "resolve",
    "ingest",
    "ingest_status",
    "forget",
    "revise",
    "distill",
}
READ_TOOLS = {"search", "maturity", "history", "held", "tuning"}


def announced_url(proc: subprocess.Popen[str], timeout_s: float = 120) -> str:
    """The URL ``wolfie mcp --http`` prints to stderr once it listens; stderr is drained
    on after it (a full pipe would block the server)."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True
    ).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if proc.poll() is not None:
                pytest.fail(f"wolfie mcp --http exited: {''.join(seen)[-2000:]}")
            continue
        seen.append(line)
        if match := re.search(r"serving Pack 'agents' at (http://\S+/mcp)", line):
            return match.group(1)
    proc.kill()
    pytest.fail(f"wolfie mcp --http announced no URL in {timeout_s} s: {''.join(seen)[-2000:]}")


@pytest.fixture
def http_server(tmp_root: Path):
    """``wolfie mcp --http 127.0.0.1:0`` (any free port): the URL it announces."""
    proc = subprocess.Popen(
        mcp_command("--pack", "agents", "--http", "127.0.0.1:0"),
        cwd=REPO,
        env=mcp_env(tmp_root, WOLFIE_MCP_TOKEN=TOKEN),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = announced_url(proc)
    # Announced means listening: the first request is answered (401 without the token).
    assert httpx.get(url, timeout=5).status_code == 401
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


async def learning_loop(session: ClientSession) -> None:
    """remember -> recall -> feedback -> recall: the remembered memory's utility rises."""
    tools = {tool.name for tool in (await session.list_tools()).tools}
    assert tools == WRITE_TOOLS | READ_TOOLS
    stored = await call(
        session,
        "remember",
        intent="The deploy failed with a locked database",
        response="Stop the scheduler before migrating, then rerun the deploy.",
        outcome="fixed",
        polarity="success",
    )
    query = "deploy fails because the database is locked"
    first = await call(session, "recall", query=query)
    item = next(i for i in first["items"] if i["id"] == stored["id"])
    assert first["episode_id"]
    assert "locked database" in first["prompt"]
    rewarded = await call(session, "feedback", episode_id=first["episode_id"], rating=1.0)
    assert rewarded["applied"] >= 1 and stored["id"] in rewarded["track_records"]
    second = await call(session, "recall", query=query)
    after = next(i for i in second["items"] if i["id"] == stored["id"])
    assert after["ranked_utility"] > item["ranked_utility"]
    # one meaning per name: feedback reports what the next recall of this question sees,
    # U(m|q) as ranked_utility and the global Q as track_record
    assert after["ranked_utility"] == pytest.approx(rewarded["ranked_utilities"][stored["id"]])
    assert after["track_record"] == pytest.approx(rewarded["track_records"][stored["id"]])
    assert rewarded["track_records"][stored["id"]] == pytest.approx(0.3)  # 0 + 0.3 (1 - 0)
    assert rewarded["ranked_utilities"][stored["id"]] != rewarded["track_records"][stored["id"]]


def test_stdio_server_runs_the_learning_loop(tmp_root: Path):
    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            await learning_loop(session)

    anyio.run(main)


def test_http_server_runs_the_learning_loop_with_the_token(http_server: str):
    async def main() -> None:
        async with http_session(http_server, TOKEN) as session:
            await learning_loop(session)

    anyio.run(main)


def test_http_server_answers_401_without_the_token(http_server: str):
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    assert httpx.post(http_server, json=message, headers=headers).status_code == 401
    wrong = {**headers, "Authorization": "Bearer not-the-token"}
    refused = httpx.post(http_server, json=message, headers=wrong)
    assert refused.status_code == 401
    # The REST API's guard and envelope (wolfie/bearer.py): one bearer check for both doors.
    assert refused.headers["www-authenticate"] == 'Bearer realm="wolfie"'
    assert refused.json() == {
        "error": {
            "type": "Unauthorized",
            "message": "Send Authorization: Bearer <WOLFIE_MCP_TOKEN>.",
        }
    }

    async def main() -> None:
        with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as it likes
            async with http_session(http_server, token="not-the-token"):
                pass

    anyio.run(main)


def test_http_refuses_a_public_address_without_a_token(tmp_root: Path):
    done = subprocess.run(
        mcp_command("--pack", "agents", "--http", "0.0.0.0:8799"),
        cwd=REPO,
        env=mcp_env(tmp_root),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "WOLFIE_MCP_TOKEN" in done.stderr


def test_scopes_are_isolated_and_a_pinned_server_keeps_its_scope(tmp_root: Path):
    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            mine = await call(
                session,
                "remember",
                intent="My locker code",
                response="It is 4512",
                scope="alice",
            )
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
            made = await call(session, "remember", intent="Backups run nightly", response="At 02")
        async with stdio_session(tmp_root, "--pack", "agents", "--read-only") as session:
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert tools == READ_TOOLS
            found = await call(session, "search", query="when do backups run")
            assert found["episode_id"] is None and found["items"]
            mature = await call(session, "maturity")
            assert mature["stage"] == "cold" and mature["memory_count"] == 1
            refused = await error_of(session, "remember", intent="x", response="y")
            assert "unknown tool" in refused.lower()
            versions = (await call(session, "history", memory_id=made["id"]))["versions"]
            assert [v["event"] for v in versions] == ["remember"]
            refused = await error_of(session, "revise", memory_id=made["id"], outcome="ok")
            assert "unknown tool" in refused.lower()

    anyio.run(main)


def test_revise_and_history_keep_to_the_callers_scope(tmp_root: Path):
    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            mine = await call(
                session,
                "remember",
                intent="My deploy key expired",
                response="Ask ops for a new one",
                scope="alice",
            )
            shared = await call(
                session, "remember", intent="Deploys freeze on Fridays", response="Ship on Thursday"
            )
            done = await call(
                session,
                "revise",
                memory_id=mine["id"],
                scope="alice",
                response="Rotate it yourself with `keys rotate`",
                polarity="success",
            )
            assert done["status"] == "revised" and done["version"]["version"] == 2
            assert done["version"]["changes"]["response"] == {
                "old": "Ask ops for a new one",
                "new": "Rotate it yourself with `keys rotate`",
            }
            found = await call(session, "recall", query="rotate the deploy key", scope="alice")
            assert found["items"][0]["id"] == mine["id"]
            assert "keys rotate" in found["prompt"]
            versions = await call(session, "history", memory_id=mine["id"], scope="alice")
            assert [(v["event"], v["source"]) for v in versions["versions"]] == [
                ("remember", "agent"),
                ("revise", "mcp"),
            ]
            seen = await call(session, "history", memory_id=shared["id"], scope="alice")
            assert len(seen["versions"]) == 1  # a shared memory: visible, not revisable
            text = await error_of(
                session, "revise", memory_id=shared["id"], scope="alice", outcome="x"
            )
            assert "shared by every scope" in text
            text = await error_of(session, "history", memory_id=mine["id"], scope="bob")
            assert "UnknownMemory" in text and "in this scope" in text
            text = await error_of(session, "revise", memory_id=mine["id"], polarity="meh")
            assert "polarity" in text
        async with stdio_session(tmp_root, "--pack", "agents", "--scope", "bob") as pinned:
            text = await error_of(pinned, "revise", memory_id=mine["id"], outcome="x")
            assert "in this scope" in text
            text = await error_of(pinned, "history", memory_id=mine["id"])
            assert "in this scope" in text

    anyio.run(main)


def test_hostile_arguments_get_clear_tool_errors_and_the_server_lives_on(tmp_root: Path):
    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            await call(session, "remember", intent="Restart the worker", response="systemctl")
            episode = (await call(session, "recall", query="restart worker"))["episode_id"]
            # the input schema bounds the rating, so the SDK refuses it before the tool runs
            refused = await error_of(session, "feedback", episode_id=episode, rating=7)
            assert "rating" in refused and "less than or equal to 1" in refused
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


async def finished_run(session: ClientSession, run_id: str, **scope: str) -> dict[str, Any]:
    """``ingest_status`` polled until the run has ended."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        status = await call(session, "ingest_status", run_id=run_id, **scope)
        if status["state"] != "running":
            return status
        await anyio.sleep(1)
    pytest.fail(f"ingest run {run_id} still running after 300 s: {status}")


def test_ingest_returns_at_once_and_the_run_lands_in_the_pack(tmp_root: Path, tmp_path: Path):
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "oncall.md").write_text(
        "# On call\n\nThe pager rotation changes every Monday at 09:00 in Lisbon.\n"
    )

    async def main() -> None:
        args = ("--pack", "agents", "--ingest-root", str(tmp_path))
        async with stdio_session(tmp_root, *args) as session:
            started = time.monotonic()
            run = await call(session, "ingest", sources=[str(docs)])
            assert time.monotonic() - started < 10, "ingest must not wait for the run"
            assert run["run_id"].startswith("mcp-ingest-")
            assert "sources" in await error_of(session, "ingest", sources=[])
            status = await finished_run(session, run["run_id"])
            assert status["state"] == "finished", status
            assert (status["items"], status["ingested"], status["failed"]) == (1, 1, 0)
            assert status["chunks"] >= 1 and status["errors"] == []
            found = await call(session, "search", query="when does the pager rotation change")
            assert any("Monday at 09:00" in item["text"] for item in found["items"]), status

    anyio.run(main)


def test_a_recalls_episode_is_stored_soon_after_the_answer(http_server: str, tmp_root: Path):
    """Issue 24: recall answers without flushing first (that was most of its time) and
    hands its episode to the background flusher: another process finds it well before
    the 5 s flush window, and rewards it from the CLI."""
    from packs import Pack

    async def main() -> str:
        async with http_session(http_server, TOKEN) as session:
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
        cwd=REPO,
        env=mcp_env(tmp_root),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
