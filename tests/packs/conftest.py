"""Fixtures for Pack tests: real LanceDB folders and the real default embedder."""

from __future__ import annotations

import pytest

from packs import KnowledgeChunk, Pack


@pytest.fixture
def pack(tmp_path):
    with Pack.open("test", tmp_path) as handle:
        yield handle


@pytest.fixture
def trading_pack(pack):
    """A small Pack: three memories (one failure) and four playbook chunks."""
    pack.remember(
        "Chased an entry after missing the breakout",
        "Bought late at the top; stopped out for -1R",
        outcome="loss -1R",
        polarity="failure",
        metadata={"symbol": "NVDA", "desk": "it's equities"},
    )
    pack.remember(
        "Stock broke out while I was away from the desk",
        "Waited for the retest of the breakout level, entered there with a stop below",
        outcome="win +2R",
        polarity="success",
        metadata={"symbol": "AMD"},
    )
    pack.remember(
        "Earnings tomorrow and holding full size", "Halved the position before the release"
    )
    pack.add_knowledge(
        [
            KnowledgeChunk(
                "Do not chase a breakout that ran without you; wait for a retest.",
                "playbook.md",
                0,
                title="Missed breakouts",
            ),
            KnowledgeChunk("Never add to a losing position.", "playbook.md", 1, title="Risk"),
            KnowledgeChunk("Halve size the day before an earnings release.", "playbook.md", 2),
            KnowledgeChunk("Review the trading plan before each session.", "playbook.md", 3),
        ]
    )
    return pack
