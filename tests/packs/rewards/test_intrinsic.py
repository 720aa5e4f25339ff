"""Intrinsic reward: the math, the echo-chamber guard as a property, and resolve()."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packs import Pack
from packs.errors import InvalidSettings
from packs.learning.ema import RewardStep, fold
from packs.rewards.intrinsic import intrinsic_reward
from packs.settings import RewardSettings
from tests.support.storage import storage_of


def unit(*values):
    v = np.array(values, dtype=np.float64)
    return v / np.linalg.norm(v)


def test_exploit_is_cosine_to_the_success_centroid():
    response = unit(1, 0, 0)
    successes = np.array([unit(1, 1, 0), unit(1, -1, 0), unit(1, 0, 0)])
    # centroid direction is (1, 0, 0) exactly
    assert intrinsic_reward(response, successes, np.zeros((0, 3)), 3) == pytest.approx(1.0)


def test_explore_only_penalises_resembling_failures():
    response = unit(1, 0, 0)
    successes = np.array([unit(0, 1, 0)] * 3)  # orthogonal: exploit 0
    near_failure = np.array([unit(1, 1, 0)])  # cos 0.7071
    far_failure = np.array([unit(-1, 0, 0)])  # cos -1: never a bonus
    assert intrinsic_reward(response, successes, near_failure, 3) == pytest.approx(-0.707107)
    assert intrinsic_reward(response, successes, far_failure, 3) == pytest.approx(0.0)


def test_silent_below_min_neighbours():
    assert intrinsic_reward(unit(1, 0), np.array([unit(1, 0)] * 2), np.zeros((0, 2)), 3) is None


vectors = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
    lambda v: np.linalg.norm(v) > 1e-3
)


@given(vectors, st.lists(vectors, min_size=3, max_size=6), st.lists(vectors, max_size=4))
def test_intrinsic_reward_is_in_range(response, successes, failures):
    r = intrinsic_reward(
        unit(*response),
        np.array([unit(*s) for s in successes]),
        np.array([unit(*f) for f in failures]).reshape(-1, 4),
        3,
    )
    assert r is not None and -1.0 <= r <= 1.0


@settings(max_examples=300)
@given(
    st.floats(-1.0, 1.0),
    st.lists(st.tuples(st.floats(-1, 1), st.floats(0.001, 1.0), st.floats(0, 1)), max_size=200),
    st.floats(0.01, 0.49),
    st.floats(0.5, 1.0),
)
def test_intrinsic_only_rewards_never_reach_the_success_threshold(start, steps, w, threshold):
    """Starting below the success threshold, no sequence of intrinsic-only rewards (value
    w * r_int, any r_int in [-1, 1], any alpha, any weight) lifts a utility to it."""
    q0 = min(start, threshold - 1e-9)
    state = fold([], None)
    state = type(state)(q0, 0.0, 0)
    for r_int, alpha, weight in steps:
        state = fold([RewardStep(w * r_int, alpha, weight, 0.1)], state)
        assert state.utility < threshold


@given(st.floats(0.01, 0.49), st.floats(0.01, 1.0))
def test_fixed_point_of_constant_intrinsic_reward_is_at_most_w(w, alpha):
    state = fold([RewardStep(w * 1.0, alpha, 1.0, 0.1)] * 2000)
    assert state.utility <= w + 1e-12
    assert state.utility == pytest.approx(w, abs=1e-6) or alpha * 2000 < 50


def test_settings_refuse_a_weight_at_or_above_the_threshold():
    with pytest.raises(InvalidSettings, match="success pool"):
        RewardSettings(intrinsic_weight=0.5, success_threshold=0.5)


@pytest.fixture
def warm_pack(tmp_path):
    """Three successful memories about stops, one failure: enough neighbours to score."""
    with Pack.open(
        "intrinsic", tmp_path, settings={"rewards": {"intrinsic_min_neighbours": 3}}
    ) as pack:
        good = [
            ("My long is up 1R, what do I do with the stop?", "Moved the stop to break-even"),
            ("Long trade up 1R, where should my stop go", "Stop to break-even, then trail it"),
            ("Up one R on a long, how to manage the stop", "Raised the stop to entry, held"),
        ]
        ids = [pack.remember(i, r, polarity="success").id for i, r in good]
        pack.remember(
            "My long is near the stop, should I widen it",
            "Moved the stop lower to give it room",
            polarity="failure",
        )
        # make the three successes successful by utility (item-level credit)
        for _ in range(4):
            recall = pack.recall("my long trade is up by 1R, where does the stop go", k=4)
            pack.apply_reward(
                recall.episode_id, 1.0, source="explicit", signal="rating", memory_ids=ids
            )
        pack.flush()
        yield pack


def test_resolve_rewards_a_response_like_past_successes(warm_pack):
    recall = warm_pack.recall("long is up 1R, what now with my stop?", k=2)
    before = {i: warm_pack.get(i)["utility"] for i in recall.ids}
    result = warm_pack.resolve(recall.episode_id, "Put the stop at break-even and trail it")
    assert result.neighbours >= 3 and result.intrinsic is not None and result.intrinsic > 0.3
    event_value = 0.2 * result.intrinsic
    for memory_id in recall.ids:
        expected = before[memory_id] + 0.3 * (event_value - before[memory_id])
        assert warm_pack.get(memory_id)["utility"] == pytest.approx(expected)
    warm_pack.flush()
    (episode,) = (
        storage_of(warm_pack)
        ._table("episodes")
        .search()
        .where(f"id = '{recall.episode_id}'")
        .to_list()
    )
    assert (
        episode["response"].startswith("Put the stop") and len(episode["response_embedding"]) == 384
    )


def test_resolve_penalises_a_response_like_a_known_failure(warm_pack):
    recall = warm_pack.recall("my long is up 1R, what should I do with the stop?", k=1)
    good = warm_pack.resolve(recall.episode_id, "Stop to break-even and trail it").intrinsic
    recall = warm_pack.recall("my long is up 1R, what should I do with the stop?", k=1)
    bad = warm_pack.resolve(recall.episode_id, "Moved the stop lower to give it room").intrinsic
    assert bad < good


def test_resolve_is_silent_on_a_cold_store(trading_pack):
    recall = trading_pack.recall("earnings tomorrow", k=1)
    result = trading_pack.resolve(recall.episode_id, "Halve the size", success=True)
    assert result.intrinsic is None and result.intrinsic_reward is None
    assert result.success_reward.utilities[recall.ids[0]] == pytest.approx(0.3)
