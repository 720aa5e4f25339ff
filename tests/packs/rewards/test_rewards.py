"""Reward math: hand-worked EMA steps and the properties of the update."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from packs.learning.ema import (
    LearnedState,
    RewardStep,
    confidence_step,
    ema_step,
    evidence_direction,
    fold,
)

rewards = st.floats(-1.0, 1.0)
alphas = st.floats(0.001, 1.0)
weights = st.floats(0.0, 1.0)
steps = st.builds(RewardStep, rewards, alphas, weights, st.floats(0.0, 1.0))


def test_ema_steps_by_hand():
    q = ema_step(0.0, 1.0, 0.3)
    assert q == pytest.approx(0.3)
    q = ema_step(q, -1.0, 0.3)
    assert q == pytest.approx(0.3 + 0.3 * (-1.0 - 0.3))  # -0.09
    assert ema_step(0.5, 1.0, 0.3, weight=0.5) == pytest.approx(0.5 + 0.15 * 0.5)


def test_confidence_by_hand():
    # first reward sets the direction: target (1 + 1) / 2 = 1
    c = confidence_step(0.0, 0.0, 1.0, 0.1, 1.0)
    assert c == pytest.approx(0.1)
    # utility is positive now; a -1 contradicts it: target 0
    assert confidence_step(c, 0.3, -1.0, 0.1, 1.0) == pytest.approx(0.09)
    # a consistently negative memory grows confident too
    assert confidence_step(0.0, -0.5, -1.0, 0.1, 1.0) == pytest.approx(0.1)


def test_evidence_direction():
    assert evidence_direction(0.2, -1.0) == 1
    assert evidence_direction(-0.2, 1.0) == -1
    assert evidence_direction(0.0, -0.4) == -1
    assert evidence_direction(0.0, 0.0) == 1


def test_fold_counts_and_matches_stepwise():
    state = fold([RewardStep(1.0, 0.3, 1.0, 0.1), RewardStep(-1.0, 0.3, 1.0, 0.1)])
    assert state.utility == pytest.approx(-0.09)
    assert state.confidence == pytest.approx(0.09)
    assert state.reward_count == 2


@given(st.lists(steps, max_size=60))
def test_utility_and_confidence_stay_in_range(sequence):
    state = LearnedState(0.0, 0.0, 0)
    for step in sequence:
        state = fold([step], state)
        assert -1.0 <= state.utility <= 1.0
        assert 0.0 <= state.confidence <= 1.0
    assert state.reward_count == sum(1 for step in sequence if step.weight > 0)


@given(st.lists(steps, max_size=30), st.lists(steps, max_size=30))
def test_fold_is_a_left_fold(first, second):
    """Replaying the log in one go equals applying it in two flushes (online path)."""
    whole = fold(first + second)
    split = fold(second, fold(first))
    assert whole.utility == pytest.approx(split.utility, abs=1e-12)
    assert whole.confidence == pytest.approx(split.confidence, abs=1e-12)
    assert whole.reward_count == split.reward_count
