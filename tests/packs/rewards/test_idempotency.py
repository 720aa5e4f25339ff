"""Idempotency keys name one reward of one episode (issue 23).

Bug: keys were global to the Pack, so Alice's ``webhook-1`` made Bob's reward with the
key ``webhook-1``, on another episode, come back ``duplicate: true, applied: 0``: it was
silently dropped. The cross-process half (one key delivered to two workers counts once,
another episode's key is another reward) is in ``test_shared_learning.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from packs import Pack
from packs.store import schemas as S
from packs.store.rows import stable_hash
from tests.support.packs import HashEmbedder
from tests.support.storage import storage_of

OPEN = {"delta": -1.0, "k1": 10, "k2": 2, "dedup_threshold": 1.0}


@pytest.fixture
def pack(tmp_path: Path) -> Iterator[Pack]:
    with Pack.open("keys", tmp_path, embedder=HashEmbedder(), settings=OPEN) as handle:
        handle.remember("Chased a breakout", "Stopped out at -1R")
        handle.remember("Waited for the retest", "Entered at the level, +2R")
        yield handle


def test_one_key_on_two_episodes_is_two_rewards(pack: Pack):
    alice = pack.recall("breakout", scope="alice").episode_id
    bob = pack.recall("breakout", scope="bob").episode_id
    first = pack.feedback(alice, 1.0, idempotency_key="webhook-1")
    second = pack.feedback(bob, -1.0, idempotency_key="webhook-1")
    assert (first.applied, first.duplicate) == (2, False)
    assert (second.applied, second.duplicate) == (2, False)
    # the same key on the same episode is still a redelivery, buffered or stored
    assert pack.feedback(bob, -1.0, idempotency_key="webhook-1").duplicate
    pack.flush()
    assert pack.signal(alice, "accepted", idempotency_key="webhook-1").duplicate
    rows = pack.query("rewards", where={"idempotency_key": "webhook-1"})
    assert sorted(rows["episode_id"].to_list()) == sorted([alice, alice, bob, bob])
    assert rows["event_id"].n_unique() == 4


def test_a_fresh_handle_finds_a_stored_key_per_episode(pack: Pack, tmp_path: Path):
    alice = pack.recall("breakout").episode_id
    bob = pack.recall("retest").episode_id
    pack.feedback(alice, 1.0, idempotency_key="webhook-1")
    pack.close()
    with Pack.open("keys", tmp_path, embedder=HashEmbedder()) as again:  # nothing cached
        assert again.feedback(alice, 1.0, idempotency_key="webhook-1").duplicate
        assert not again.feedback(bob, 1.0, idempotency_key="webhook-1").duplicate


def test_a_pack_written_with_global_key_ids_stays_readable(pack: Pack, tmp_path: Path):
    """Events stored before issue 23 carry ids of (key, memory) alone: they replay as
    before, and a redelivery of their key on their episode is still a duplicate."""
    episode = pack.recall("breakout").episode_id
    pack.flush()
    memory = pack.recall("breakout").ids[0]
    old = {
        "event_id": "rw_" + stable_hash("legacy-1", memory),
        "idempotency_key": "legacy-1",
        "episode_id": episode,
        "memory_id": memory,
        "source": "explicit",
        "signal": "rating",
        "magnitude": 1.0,
        "value": 1.0,
        "weight": 1.0,
        "alpha": 0.3,
        "confidence_rate": 0.1,
        "q_before": 0.0,
        "q_after": 0.3,
        "created_at": pa.scalar(0, S.TS).as_py(),
        "writer": "legacy",
        "seq": 0,
    }
    storage_of(pack).append(S.REWARD_EVENTS, pa.Table.from_pylist([old], S.REWARD_EVENTS_SCHEMA))
    pack.rebuild_utilities()
    assert pack.get(memory)["utility"] == pytest.approx(0.3)
    assert pack.feedback(episode, 1.0, idempotency_key="legacy-1").duplicate
    assert pack.rebuild_utilities(write=False).changed == 0
