"""rebuild_utilities(): the vectorised replay equals the plain loop and the online path."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packs import Pack
from packs.learning.replay import ORDER, replay, replay_loop
from tests.support.storage import storage_of


def events_frame(rows):
    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    return pl.DataFrame(
        {
            "memory_id": [r[0] for r in rows],
            "created_at": [base + dt.timedelta(microseconds=i) for i in range(len(rows))],
            "writer": ["w"] * len(rows),
            "seq": list(range(len(rows))),
            "value": [r[1] for r in rows],
            "alpha": [r[2] for r in rows],
            "weight": [r[3] for r in rows],
            "confidence_rate": [r[4] for r in rows],
        },
        schema_overrides={"seq": pl.Int64},
    )


def compare(frame):
    fast = {r["memory_id"]: r for r in replay(frame).iter_rows(named=True)}
    slow = replay_loop(frame.sort(ORDER).iter_rows(named=True))
    assert set(fast) == set(slow)
    for memory_id, (q, c, n) in slow.items():
        assert fast[memory_id]["utility"] == pytest.approx(q, abs=1e-9)
        assert fast[memory_id]["confidence"] == pytest.approx(c, abs=1e-9)
        assert fast[memory_id]["reward_count"] == n


event = st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.floats(-1, 1),
    st.floats(0.001, 1.0),
    st.sampled_from([0.0, 0.2, 0.5, 1.0]),
    st.floats(0.0, 1.0),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(event, min_size=1, max_size=80))
def test_vectorised_replay_equals_the_loop(rows):
    compare(events_frame(rows))


def test_long_histories_cross_chunk_boundaries():
    """5,000 events on one memory (with some alpha = 1 resets) span several chunks."""
    rng = np.random.default_rng(7)
    rows = [
        ("long", float(v), 1.0 if rng.random() < 0.01 else 0.3, 1.0, 0.1)
        for v in rng.uniform(-1, 1, 5000)
    ] + [("short", 0.5, 0.3, 1.0, 0.1)]
    compare(events_frame(rows))


def test_empty_log():
    frame = events_frame([("a", 1.0, 0.3, 0.0, 0.1)])
    assert replay(frame).height == 0


def test_rebuild_equals_online_on_a_real_pack(trading_pack):
    queries = ["breakout", "earnings tomorrow", "losing position", "plan before session"]
    rng = np.random.default_rng(3)
    for i in range(40):
        recall = trading_pack.recall(queries[i % 4])
        kind = i % 4
        if kind == 0:
            trading_pack.feedback(recall.episode_id, float(rng.uniform(-1, 1)))
        elif kind == 1:
            trading_pack.outcome(recall.episode_id, float(rng.normal()))
        elif kind == 2:
            trading_pack.signal(recall.episode_id, "accepted", recall.ids[:1])
        else:
            trading_pack.feedback(recall.episode_id, stars=int(rng.integers(1, 6)))
    report = trading_pack.rebuild_utilities(write=False)
    assert report.events > 40
    assert report.changed == 0
    assert report.max_utility_drift < 1e-9 and report.max_confidence_drift < 1e-9


def test_rebuild_repairs_utilities_lost_after_the_log(trading_pack, tmp_path):
    """A crash after the reward log was written but before the utilities were."""
    recall = trading_pack.recall("breakout")
    trading_pack.feedback(recall.episode_id, 1.0)
    trading_pack.flush()
    lost = {"utility": "0.0", "confidence": "0.0", "reward_count": "0"}
    storage_of(trading_pack).update_where("memories", "true", lost)
    report = trading_pack.rebuild_utilities()
    assert report.changed == len(recall.ids) and report.max_utility_drift == pytest.approx(0.3)
    with Pack.open("test", tmp_path) as pack:
        assert all(pack.get(i)["utility"] == pytest.approx(0.3) for i in recall.ids)
        assert pack.rebuild_utilities().changed == 0  # a second run changes nothing


def test_regression_rounding_made_a_negative_chunk():
    """Bug: the global cumsum left a group's running log-product at +1e-17, which gave
    chunk -1, split the group into two segments without carrying the value across, and
    rebuilt confidence 0.0 instead of 0.1 (found by Hypothesis)."""
    rows = [("a", 0.0, 1.0, 0.0, 0.0)] * 9 + [
        ("b", 0.0, 1.0, 0.2, 0.5),
        ("a", 0.0, 1.0, 0.2, 0.0),
        ("a", 0.0, 1.0, 0.2, 1.0),
        ("a", 0.0, 1.0, 0.2, 0.0),
    ]
    compare(events_frame(rows))
