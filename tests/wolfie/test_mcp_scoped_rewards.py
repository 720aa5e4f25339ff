"""A server pinned to one user rewards only that user's episodes (issue 31, item 10),
through ``wolfie mcp`` over stdio with the official SDK client."""

from __future__ import annotations

from pathlib import Path

import anyio

from packs import Pack
from tests.support.mcp_session import call, error_of, stdio_session


def test_a_pinned_server_cant_reward_another_scopes_episode(tmp_root: Path):
    """Bug: a server pinned to Bob accepted feedback, signal and resolve on one of
    Alice's episodes, given its id: Alice's memory moved 0.0 -> -0.3, and Bob's text was
    written into her episode as its response."""

    async def main() -> tuple[str, str, str]:
        async with stdio_session(tmp_root, "--pack", "agents") as session:
            mine = await call(
                session,
                "remember",
                intent="What is my locker code",
                response="Locker 4411",
                scope="alice",
            )
            alices = await call(session, "recall", query="my locker code", scope="alice")
        async with stdio_session(tmp_root, "--pack", "agents", "--scope", "bob") as bob:
            episode = alices["episode_id"]
            for tool, arguments in [
                ("feedback", {"rating": -1.0}),
                ("signal", {"name": "ignored"}),
                ("outcome", {"amount": -5.0}),
                ("resolve", {"response": "BOB WAS HERE", "success": False}),
                ("feedback", {"rating": -1.0, "scope": "bob"}),
            ]:
                text = await error_of(bob, tool, episode_id=episode, **arguments)
                assert "UnknownEpisode" in text and "scope 'bob'" in text, text
            await call(bob, "remember", intent="Where is my bike", response="Rack B")
            bobs = await call(bob, "recall", query="where is my bike")
            rewarded = await call(bob, "feedback", episode_id=bobs["episode_id"], rating=1.0)
            assert rewarded["applied"] == 1  # its own episode: rewarded as before
        return mine["id"], episode, bobs["episode_id"]

    memory, episode, _ = anyio.run(main)
    with Pack.open("agents", tmp_root, read_only=True) as pack:
        assert pack.get(memory)["utility"] == 0.0
        assert pack.get(memory)["reward_count"] == 0
        row = pack.query("episodes", where={"id": episode}, columns=["response"]).to_dicts()
        assert row == [{"response": None}]
        assert pack.query("rewards", where={"episode_id": episode}).height == 0
