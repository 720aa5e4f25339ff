"""The online path and the replay are two computations that must agree, and can fail to.

The flush stores the EMA fold of each memory's log (packs/learning/online.py); the
replay is the vectorised closed form (packs/learning/replay.py). Before issue 13 the
flush stored the replay itself, so ``rebuild_utilities`` compared the replay with the
replay and a wrong online fold (Q moved away from the reward, reaching -1.86) passed with
zero drift.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from packs import Pack
from packs.learning import ema
from packs.learning.online import fold_log
from packs.learning.replay import replay

QUERIES = ["breakout", "earnings tomorrow", "losing position", "plan before session"]


def online_utilities(events: pl.DataFrame) -> pl.DataFrame:
    """What the online path stores for ``events``, in the replay's columns."""
    states = fold_log(events)
    return pl.DataFrame(
        {
            "memory_id": list(states),
            "utility": [s.utility for s in states.values()],
            "confidence": [s.confidence for s in states.values()],
            "reward_count": [s.reward_count for s in states.values()],
        },
        schema={
            "memory_id": pl.String,
            "utility": pl.Float64,
            "confidence": pl.Float64,
            "reward_count": pl.Int64,
        },
    )


def reward_many(pack: Pack, rounds: int = 40) -> None:
    """Every reward source that moves utilities, in a seeded mix."""
    rng = np.random.default_rng(3)
    for i in range(rounds):
        recall = pack.recall(QUERIES[i % 4])
        episode = recall.episode_id or ""
        kind = i % 4
        if kind == 0:
            pack.feedback(episode, float(rng.uniform(-1, 1)))
        elif kind == 1:
            pack.outcome(episode, float(rng.normal()))
        elif kind == 2:
            pack.signal(episode, "accepted", list(recall.ids[:1]))
        else:
            pack.feedback(episode, stars=int(rng.integers(1, 6)))
    pack.flush()


def stored(pack: Pack) -> dict[str, float]:
    rows = pack.query("items", columns=["id", "utility", "reward_count"]).to_dicts()
    return {r["id"]: r["utility"] for r in rows if r["reward_count"]}


def test_the_online_fold_and_the_replay_agree_on_a_real_pack(trading_pack):
    reward_many(trading_pack)
    events = trading_pack.reward_log()
    online = {r["memory_id"]: r for r in online_utilities(events).iter_rows(named=True)}
    replayed = {r["memory_id"]: r for r in replay(events).iter_rows(named=True)}
    assert set(online) == set(replayed) and len(online) >= 3
    for memory_id, row in replayed.items():
        assert online[memory_id]["utility"] == pytest.approx(row["utility"], abs=1e-9)
        assert online[memory_id]["confidence"] == pytest.approx(row["confidence"], abs=1e-9)
        assert online[memory_id]["reward_count"] == row["reward_count"]
    # What the flush stored is the online fold, and the rebuild sees no drift from it.
    assert stored(trading_pack) == pytest.approx(
        {m: r["utility"] for m, r in online.items()}, abs=1e-12
    )
    report = trading_pack.rebuild_utilities(write=False)
    assert report.events > 40 and report.changed == 0
    assert report.max_utility_drift < 1e-9 and report.max_confidence_drift < 1e-9


def wrong_ema_step(q: float, reward: float, alpha: float, weight: float = 1.0) -> float:
    """Q moved away from the reward: the planted bug."""
    return q - alpha * weight * (reward - q)


def test_a_wrong_online_fold_shows_as_drift(trading_pack, monkeypatch):
    """Regression (issue 13): the drift report could not fail. With the EMA step moving Q
    the wrong way online, the rebuild must report drift, and with ``write`` repair it."""
    monkeypatch.setattr(ema, "ema_step", wrong_ema_step)
    reward_many(trading_pack)
    report = trading_pack.rebuild_utilities(write=False)
    assert report.changed > 0
    assert report.max_utility_drift > 0.05
    assert isinstance(report.drift, pl.DataFrame) and report.drift.height == report.changed
    monkeypatch.undo()
    assert trading_pack.rebuild_utilities().changed == report.changed  # repaired
    assert trading_pack.rebuild_utilities(write=False).changed == 0


def test_a_wrong_fold_is_caught_without_any_stored_state():
    """The comparison the recompute flow reports: online fold against replay of one log."""
    base = pl.datetime(2026, 1, 1, time_zone="UTC")
    events = pl.DataFrame(
        {
            "memory_id": ["a"] * 6,
            "created_at": [0, 1, 2, 3, 4, 5],
            "writer": ["w"] * 6,
            "seq": list(range(6)),
            "value": [1.0, 0.5, -0.2, 1.0, 1.0, 0.8],
            "alpha": [0.3] * 6,
            "weight": [1.0] * 6,
            "confidence_rate": [0.1] * 6,
        }
    ).with_columns(created_at=base + pl.duration(microseconds=pl.col("created_at")))
    right = online_utilities(events)["utility"][0]
    assert right == pytest.approx(replay(events)["utility"][0], abs=1e-12)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ema, "ema_step", wrong_ema_step)
        wrong = online_utilities(events)["utility"][0]
    assert abs(wrong - replay(events)["utility"][0]) > 0.5


def test_two_writers_in_one_microsecond_are_replayed_in_the_online_order():
    """Found by the 8-writer test: two processes logged rewards for one memory in the same
    microsecond, and the replay broke the tie by first appearance where the online fold
    sorts by writer, so a correct stored state drifted 1e-8 from the rebuild."""
    from datetime import UTC, datetime

    from packs.learning.online import fold_log

    at = datetime(2026, 12, 2, 11, 1, 14, 179359, tzinfo=UTC)
    events = pl.DataFrame(
        {
            "memory_id": ["m1"] * 3,
            "created_at": [at, at, at.replace(microsecond=179360)],
            "writer": ["w-zeta", "w-alpha", "w-alpha"],  # zeta appears first
            "seq": [7, 3, 4],
            "value": [1.0, -1.0, 0.5],
            "alpha": [0.3] * 3,
            "weight": [1.0] * 3,
            "confidence_rate": [0.1] * 3,
        }
    )
    online = fold_log(events)["m1"]
    [rebuilt] = replay(events).to_dicts()
    assert rebuilt["utility"] == pytest.approx(online.utility, abs=1e-12)
    assert rebuilt["confidence"] == pytest.approx(online.confidence, abs=1e-12)
