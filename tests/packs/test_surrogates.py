"""Lone surrogates (issue 23): what invalid UTF-8 in argv, or a JSON ``"\\udce9"``,
becomes in Python.

Bug: a lone surrogate in ``validate(output=...)`` or ``apply_reward(signal=...)`` was
accepted and buffered; from then on every ``flush()`` and ``close()`` raised
``UnicodeEncodeError`` and later good episodes and rewards were never stored. Every
free-text input is now refused before anything is buffered, and a bad value that still
reaches the buffer is isolated by the flush, as a NaN vector is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import packs.rewards.service as reward_service
from packs import KnowledgeChunk, Pack
from packs.errors import InvalidFilter, InvalidInput, UnwritableRows, WolfieError
from packs.hooks import register_hook, unregister_hook
from packs.store import schemas as S
from tests.support.packs import SeededEmbedder
from tests.support.storage import storage_of

BAD = "caf\udce9"  # b"caf\xe9" decoded from argv with surrogateescape
OPEN = {"delta": -1.0, "k1": 10, "k2": 2, "dedup_threshold": 1.0}


def passes(output: str, context: dict[str, Any]) -> bool:
    return True


@pytest.fixture
def pack(tmp_path: Path) -> Iterator[Pack]:
    register_hook("surrogate-test", passes)
    settings = {**OPEN, "rewards": {"validation_hook": "surrogate-test"}}
    with Pack.open("bytes", tmp_path, embedder=SeededEmbedder(), settings=settings) as handle:
        handle.remember("Chased a breakout", "Stopped out at -1R")
        handle.remember("Waited for the retest", "Entered at the level, +2R")
        yield handle
    unregister_hook("surrogate-test")


def stored(pack: Pack, table: str) -> list[dict[str, Any]]:
    pack.flush()
    return storage_of(pack)._table(table).to_arrow().to_pylist()


CALLS: dict[str, Callable[[Pack, str], Any]] = {
    "validate output": lambda p, e: p.validate(e, BAD),
    "apply_reward signal": lambda p, e: p.apply_reward(e, 1.0, source="api", signal=BAD),
    "apply_reward source": lambda p, e: p.apply_reward(e, 1.0, source=BAD, signal="x"),
    "idempotency key": lambda p, e: p.feedback(e, 1.0, idempotency_key=BAD),
    "resolve response": lambda p, e: p.resolve(e, BAD),
    "recall query": lambda p, e: p.recall(BAD),
    "recall scope": lambda p, e: p.recall("breakout", scope=BAD),
    "search filter value": lambda p, e: p.search("breakout", where={"source": BAD}),
    "search metadata key": lambda p, e: p.search("breakout", metadata={BAD: "x"}),
    "search metadata value": lambda p, e: p.search("breakout", metadata={"desk": BAD}),
    "remember intent": lambda p, e: p.remember(BAD, "a response"),
    "remember response": lambda p, e: p.remember("an intent", BAD),
    "remember outcome": lambda p, e: p.remember("an intent", "a response", outcome=BAD),
    "remember metadata key": lambda p, e: p.remember("an intent", "r", metadata={BAD: 1}),
    "remember metadata value": lambda p, e: p.remember("an intent", "r", metadata={"d": BAD}),
    "remember scope": lambda p, e: p.remember("an intent", "a response", scope=BAD),
    "remember source": lambda p, e: p.remember("an intent", "a response", source=BAD),
    "chunk text": lambda p, e: p.add_knowledge([KnowledgeChunk(BAD, "doc.md", 0)]),
    "chunk source": lambda p, e: p.add_knowledge([KnowledgeChunk("text", BAD, 0)]),
    "chunk metadata": lambda p, e: p.add_knowledge(
        [KnowledgeChunk("text", "doc.md", 0, metadata={"k": BAD})]
    ),
}


@pytest.mark.parametrize("call", list(CALLS), ids=list(CALLS))
def test_a_lone_surrogate_is_refused_before_anything_is_buffered(pack: Pack, call: str):
    episode = pack.recall("breakout").episode_id
    pack.flush()
    with pytest.raises((InvalidInput, InvalidFilter), match="surrogate") as raised:
        CALLS[call](pack, episode)
    assert isinstance(raised.value, WolfieError)
    assert pack._svc.flusher.idle()  # nothing was buffered
    assert pack.count() == 2 and pack.count(kind="knowledge") == 0
    pack.feedback(episode, 1.0)  # and the Pack goes on
    pack.close()
    assert len(stored(pack, S.REWARD_EVENTS)) == 2


def test_a_bad_row_that_reached_the_buffer_never_blocks_the_rest(
    pack: Pack, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    """The last line of defence: with the input check switched off, the bad reward event
    is dropped at the flush (named in the error and the log) and every other row is
    stored, then and afterwards; ``close()`` works."""
    monkeypatch.setattr(reward_service, "check_text", lambda value, *args: value)
    bad_episode = pack.recall("breakout").episode_id
    pack.apply_reward(bad_episode, 1.0, source="api", signal=BAD)
    good = [pack.recall(f"retest {i}").episode_id for i in range(5)]
    for episode in good:
        pack.feedback(episode, 0.5)
    with caplog.at_level(logging.ERROR), pytest.raises(UnwritableRows, match="reward_events"):
        pack.flush()
    assert "reward_events" in caplog.text
    events = stored(pack, S.REWARD_EVENTS)
    assert sorted({row["episode_id"] for row in events}) == sorted(good)
    assert len(events) == 10 and {row["signal"] for row in events} == {"rating"}
    assert {row["id"] for row in stored(pack, S.EPISODES)} == {bad_episode, *good}
    pack.feedback(pack.recall("breakout again").episode_id, 1.0)
    pack.close()  # nothing of the bad row is left to fail again
    assert len(stored(pack, S.REWARD_EVENTS)) == 12
