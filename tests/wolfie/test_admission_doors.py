"""Admission control at every door (issue 30): ``wolfie remember`` and ``wolfie memory
held`` as subprocesses, and ``wolfie mcp`` through the SDK client. The engine's record
(status held / refused, the reason) comes back whole at each one."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from packs import Pack
from tests.support.mcp_session import call, stdio_session
from tests.wolfie.test_cli import wolfie

pytestmark = pytest.mark.slow

GUESS = ("Which port does the staging database use?", "I think port 5433, not sure")


def _gated(root: Path, name: str) -> None:
    with Pack.open(name, root, settings={"admission": {"policy": "on"}}):
        pass


def _json(done) -> dict:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_cli_refuses_holds_and_lists_what_waits(tmp_root: Path):
    _gated(tmp_root, "ops")
    pack = ["--pack", "ops", "--root", str(tmp_root)]
    said = wolfie("remember", "thanks!", "ok, sounds good", *pack, columns=200)
    assert said.returncode == 0 and "Refused: nothing stored (boilerplate" in said.stdout
    held = _json(wolfie("remember", *GUESS, *pack, "--confidence", "0.3", "--json"))
    assert held["status"] == "held" and "confidence 0.30" in held["reason"]
    listed = _json(wolfie("memory", "held", *pack, "--json"))
    assert [m["id"] for m in listed["memories"]] == [held["id"]]
    table = wolfie("memory", "held", *pack, columns=200)
    assert table.returncode == 0 and held["id"] in table.stdout and "confidence" in table.stdout
    bad = wolfie("remember", *GUESS, *pack, "--confidence", "7")
    assert bad.returncode == 2 and "confidence must be a number from 0 to 1" in bad.stderr


def test_mcp_remember_holds_refuses_and_the_held_tool_lists(tmp_root: Path):
    _gated(tmp_root, "agents")

    async def main() -> None:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            refused = await call(session, "remember", intent="hi", response="thanks!")
            assert refused["status"] == "refused" and refused["id"] is None
            episode = (await call(session, "recall", query=GUESS[0]))["episode_id"]
            held = await call(
                session,
                "remember",
                intent=GUESS[0],
                response=GUESS[1],
                confidence=0.2,
                episode_id=episode,
                scope="alice",
            )
            assert held["status"] == "held"
            assert (await call(session, "held", scope="bob"))["memories"] == []
            waiting = (await call(session, "held", scope="alice"))["memories"]
            assert [(m["id"], m["episode_id"]) for m in waiting] == [(held["id"], episode)]
            await call(session, "feedback", episode_id=episode, rating=1.0)
            assert (await call(session, "held", scope="alice"))["memories"] == []
            found = await call(session, "search", query="staging database port", scope="alice")
            assert held["id"] in [item["id"] for item in found["items"]]

    anyio.run(main)
