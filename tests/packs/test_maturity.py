"""maturity(): the five signals, by hand on a small log, and cold -> warm over time."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import polars as pl
import pytest

from packs import KnowledgeChunk, Pack
from packs.maturity import compute_maturity
from tests.support.storage import storage_of


def test_signals_by_hand():
    memories = pl.DataFrame(
        {
            "kind": ["memory", "memory", "knowledge", "knowledge"],
            "utility": [0.5, -0.5, 0.0, 0.0],
            "reward_count": [2, 2, 0, 0],
        }
    )
    rewards = pl.DataFrame(
        {
            "episode_id": ["e1", "e1", "e2", "e2"],
            "memory_id": ["a", "b", "a", "b"],
            "value": [1.0, -1.0, 1.0, -1.0],
            "weight": [1.0, 1.0, 1.0, 1.0],
            "idempotency_key": ["k1", "k1", "k2", "k2"],
        }
    )
    injected = pl.DataFrame({"item_id": ["a", "b", "a", "b"]})
    m = compute_maturity(datetime.now(UTC), 0.3, memories, 4, rewards, injected)
    assert m.q_variance == pytest.approx(0.25)  # utilities +-0.5
    assert m.q_noise_floor == pytest.approx(0.3 / 1.7 * 1.0)  # Var(r) = 1
    assert m.q_variance_ratio == pytest.approx(0.25 / (0.3 / 1.7))
    assert m.hit_rate == pytest.approx(0.5)
    assert m.coverage == pytest.approx(math.log(2) / math.log(4))
    assert m.feedback_density == pytest.approx(0.5)
    assert (m.memory_count, m.knowledge_count, m.stage) == (2, 2, "cold")


def test_pack_warms_up_from_cold(tmp_path):
    rng = np.random.default_rng(0)
    with Pack.open("warming", tmp_path, settings={"k2": 1}) as pack:
        pack.add_knowledge(
            [
                KnowledgeChunk(f"Rule {i}: topic {i} explained in detail.", "rules.md", i)
                for i in range(12)
            ]
        )
        stages = [pack.maturity(record=True)]
        assert stages[0].stage == "cold" and stages[0].episode_count == 0
        for _block in range(3):
            for _ in range(100):
                topic = int(rng.integers(0, 12))
                recall = pack.recall(f"question about topic {topic}")
                good = recall.items and recall.items[0].text.startswith(f"Rule {topic}:")
                pack.feedback(recall.episode_id, 1.0 if good else -1.0)
            stages.append(pack.maturity(record=True))
        assert stages[1].stage == "warming"
        assert stages[-1].stage == "warm", stages[-1]
        assert stages[-1].episode_count == 300 and stages[-1].feedback_density == 1.0
        traces = storage_of(pack)._table("state_traces").to_arrow().to_pylist()
        assert [t["stage"] for t in traces] == [s.stage for s in stages]
