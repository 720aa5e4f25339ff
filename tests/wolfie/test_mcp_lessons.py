"""Lessons written by the agent's own model over MCP sampling (issue 30), driven by the
official SDK client and its ``sampling_callback``: over stdio and over HTTP, and with a
client that can't sample, one that refuses and one too slow. Whatever the client does,
the reward lands first and the lesson is either the client's (with its provenance) or the
one that was there (the template's)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.types import CreateMessageRequestParams, CreateMessageResult, ErrorData, TextContent

from packs import Pack
from packs.lessons.writers import TemplateLessonWriter
from tests.support.mcp_session import REPO, call, http_session, mcp_command, mcp_env
from tests.support.mcp_session import stdio_session as stdio
from tests.wolfie.test_mcp import announced_url

pytestmark = pytest.mark.slow

TOKEN = "lesson-test-token"
INTENT = "Deploy failed because the migration locked the users table"
RESPONSE = "Ran the migration in batches of 1000 rows at night"
QUERY = "the migration locks the users table"
LESSON = "Run large migrations in small batches off-peak, never in one transaction."
MODEL = "test-model-7"


def seeded(root: Path) -> tuple[str, str]:
    """A Pack "agents" with one rewarded memory and its template lesson: (id, lesson)."""
    with Pack.open("agents", root) as pack:
        memory = pack.remember(INTENT, RESPONSE).id
        pack.feedback(pack.recall(QUERY).episode_id or "", 1.0)
        assert pack.lessons.refresh(TemplateLessonWriter()).written == 1
        return memory, pack.get(memory)["experience_summary"]


class Client:
    """A sampling callback that answers like a model (``mode``: "answer", "refuse",
    "slow", or a text to answer with) and keeps what it was asked."""

    def __init__(self, mode: str = "answer", probe: Any = None) -> None:
        self.mode = mode
        self.asked: list[CreateMessageRequestParams] = []
        self.probe, self.probed = probe, []  # what ``probe()`` saw when the server asked

    async def __call__(self, ctx: Any, params: CreateMessageRequestParams) -> Any:
        self.asked.append(params)
        if self.probe is not None:
            self.probed.append(self.probe())
        if self.mode == "refuse":
            return ErrorData(code=-1, message="User rejected sampling request")
        if self.mode == "slow":
            await anyio.sleep(8)
        text = LESSON if self.mode in ("answer", "slow") else self.mode
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=text),
            model=MODEL,
            stop_reason="endTurn",
        )


async def rewarded(session: ClientSession, rating: float = 1.0) -> dict[str, Any]:
    episode = (await call(session, "recall", query=QUERY))["episode_id"]
    return await call(session, "feedback", episode_id=episode, rating=rating)


def stored(root: Path, memory: str) -> tuple[dict[str, Any], int]:
    """The memory as stored now, and how many reward events it has."""
    with Pack.open("agents", root, read_only=True) as pack:
        events = pack.query("rewards", where={"memory_id": memory}).height
        return pack.get(memory), events


def check_client_lesson(root: Path, memory: str, result: dict[str, Any], client: Client) -> None:
    [note] = result["lessons"]
    assert note == {
        "memory_id": memory,
        "status": "written",
        "writer": "mcp-sampling",
        "model": MODEL,
        "reason": None,
    }
    asked = client.asked[-1]
    assert asked.max_tokens == 200 and INTENT in asked.messages[0].content.text
    assert "Previous lesson: [template lesson]" in asked.messages[0].content.text
    row, events = stored(root, memory)
    assert row["experience_summary"] == LESSON and events == 2  # the seed's and this one
    provenance = row["lesson_provenance"]
    assert (provenance["writer"], provenance["model"], provenance["prompt_version"]) == (
        "mcp-sampling",
        MODEL,
        "lesson-v1",
    )
    assert provenance["episode_id"] == result["episode_id"]


def test_stdio_client_model_writes_the_lesson_with_its_provenance(tmp_root: Path):
    memory, _template = seeded(tmp_root)
    client = Client()

    async def main() -> None:
        async with stdio(tmp_root, "--pack", "agents", sampling_callback=client) as session:
            result = await rewarded(session)
            check_client_lesson(tmp_root, memory, result, client)
            recalled = await call(session, "recall", query=QUERY)
            assert recalled["items"][0]["lesson"] == LESSON and LESSON in recalled["prompt"]
            versions = (await call(session, "history", memory_id=memory))["versions"]
            last = versions[-1]
            assert (last["event"], last["source"], last["changes"]["lesson"]["new"]) == (
                "lesson",
                "mcp-sampling",
                LESSON,
            )
            assert last["provenance"]["model"] == MODEL
            hostile = "'); DROP TABLE memories; -- " + "x" * 700  # too long: not a lesson
            client.mode = hostile
            kept = await rewarded(session, -0.5)
            assert kept["lessons"][0]["status"] == "kept"
            assert "unusable lesson" in kept["lessons"][0]["reason"]
            client.mode = "'); DROP TABLE memories; --"  # short: stored as text, nothing run
            written = await rewarded(session, 0.5)
            assert written["lessons"][0]["status"] == "written"

    anyio.run(main)
    row, events = stored(tmp_root, memory)
    assert row["experience_summary"] == "'); DROP TABLE memories; --" and events == 4


def test_http_client_model_writes_the_lesson_with_its_provenance(tmp_root: Path):
    memory, _template = seeded(tmp_root)
    client = Client()
    proc = subprocess.Popen(
        mcp_command("--pack", "agents", "--http", "127.0.0.1:0"),
        cwd=REPO,
        env=mcp_env(tmp_root, WOLFIE_MCP_TOKEN=TOKEN),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = announced_url(proc)

        async def main() -> None:
            async with http_session(url, TOKEN, sampling_callback=client) as session:
                check_client_lesson(tmp_root, memory, await rewarded(session), client)

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_client_without_sampling_keeps_the_template_and_distill_writes_one(tmp_root: Path):
    memory, template = seeded(tmp_root)

    async def main() -> None:
        async with stdio(tmp_root, "--pack", "agents") as session:
            result = await rewarded(session)
            [note] = result["lessons"]
            assert note["status"] == "kept" and "sampling capability" in note["reason"]
            assert result["track_records"][memory] > 0.5  # the reward landed
            distilled = await call(session, "distill", memory_ids=[memory])
            assert distilled["lessons"][0]["status"] == "template"

    anyio.run(main)
    row, events = stored(tmp_root, memory)
    assert row["experience_summary"].startswith("[template lesson]") and events == 2
    assert row["lesson_provenance"]["writer"] == "template"
    assert row["experience_summary"] == template  # the same template text, rewritten


def test_a_refusing_client_keeps_the_template_and_the_reward_lands(tmp_root: Path):
    memory, template = seeded(tmp_root)
    client = Client("refuse", probe=lambda: stored(tmp_root, memory)[1])

    async def main() -> None:
        async with stdio(tmp_root, "--pack", "agents", sampling_callback=client) as session:
            [note] = (await rewarded(session))["lessons"]
            assert note["status"] == "kept" and "User rejected" in note["reason"]

    anyio.run(main)
    row, events = stored(tmp_root, memory)
    assert (row["experience_summary"], events) == (template, 2)
    assert client.probed == [2]  # the reward was stored before the client was asked


def test_a_slow_client_times_out_and_a_busy_one_is_rate_limited(tmp_root: Path):
    memory, template = seeded(tmp_root)
    client = Client("slow")
    args = ("--pack", "agents", "--lesson-timeout", "2", "--lesson-rate", "2")

    async def main() -> None:
        async with stdio(tmp_root, *args, sampling_callback=client) as session:
            started = time.monotonic()
            [note] = (await rewarded(session))["lessons"]
            assert time.monotonic() - started < 7  # the client answers after 8 s
            assert note["status"] == "kept" and "within 2 s" in note["reason"]
            client.mode = "answer"
            assert (await rewarded(session))["lessons"][0]["status"] == "written"
            [limited] = (await rewarded(session))["lessons"]  # the third ask this minute
            assert limited["status"] == "kept" and "2 lessons a minute" in limited["reason"]

    anyio.run(main)
    row, events = stored(tmp_root, memory)
    assert row["experience_summary"] == LESSON and events == 4
    assert json.dumps(template)  # the template was the lesson until the client's landed
