"""Every reward source checks the episode's scope against the caller's (issue 31, 10):
the engine's half of what ``tests/wolfie/test_mcp_scoped_rewards.py`` shows through MCP."""

from __future__ import annotations

import pytest

from packs import Pack
from packs.errors import UnknownEpisode
from tests.support.packs import table_versions


@pytest.fixture
def episodes(pack: Pack) -> tuple[str, str, str]:
    pack.remember("What is my locker code", "Locker 4411", scope="alice")
    pack.remember("Where do I park", "Level 2", scope=None)
    alices = pack.recall("my locker code", scope="alice").episode_id
    shared = pack.recall("where do I park").episode_id
    bobs = pack.recall("where do I park", scope="bob").episode_id
    assert alices and shared and bobs
    pack.flush()
    return alices, shared, bobs


def test_no_source_rewards_another_scopes_episode(pack: Pack, episodes):
    """Bug: rewards took any episode id, whatever the caller's scope."""
    alices, shared, bobs = episodes
    calls = [
        lambda e: pack.feedback(e, -1.0, scope="bob"),
        lambda e: pack.feedback(e, stars=1, scope="bob"),
        lambda e: pack.outcome(e, -3.0, scope="bob"),
        lambda e: pack.signal(e, "ignored", scope="bob"),
        lambda e: pack.vote({e: "x", bobs: "x"}, scope="bob"),
        lambda e: pack.validate(e, "out", hook=lambda output, context: False, scope="bob"),
        lambda e: pack.resolve(e, "BOB WAS HERE", success=False, scope="bob"),
    ]
    before = table_versions(pack)
    for call in calls:
        for episode in (alices, shared):  # another user's, and a recall with no scope
            with pytest.raises(UnknownEpisode, match="scope 'bob'"):
                call(episode)
            pack.flush()
    assert table_versions(pack) == before
    assert pack.feedback(bobs, 1.0, scope="bob").applied == 1  # its own scope's
    assert pack.feedback(alices, 1.0).applied == 1  # the operator's call: no scope
