"""Phase B math against values worked out by hand."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from packs.recall.ranking import (
    exploration_bonus,
    guarded_zscore,
    rerank,
    similarity_from_distance,
)
from packs.recall.scoring import rank_weights
from packs.settings import PackSettings

DEFAULT_WEIGHTS = rank_weights(PackSettings().ranking)


def test_similarity_is_one_minus_cosine_distance():
    assert similarity_from_distance(np.array([0.0, 0.25, 1.0, 2.0])) == pytest.approx(
        [1.0, 0.75, 0.0, -1.0]
    )


def test_zscore_plain_pool():
    # mean 2, population std sqrt(2/3)
    z = guarded_zscore(np.array([1.0, 2.0, 3.0]), floor=0.01, clip=3.0)
    assert z == pytest.approx([-1.224745, 0.0, 1.224745], abs=1e-6)


def test_zscore_ties_and_single_item_are_zero():
    assert guarded_zscore(np.array([5.0, 5.0, 5.0]), 0.1, 3.0) == pytest.approx([0, 0, 0])
    assert guarded_zscore(np.array([0.7]), 0.1, 3.0) == pytest.approx([0.0])
    assert guarded_zscore(np.array([]), 0.1, 3.0).size == 0


def test_zscore_floor_keeps_thin_evidence_small():
    """Most utilities 0 and one 0.01: without a floor that 0.01 would be z = 2.0."""
    values = np.array([0.0, 0.0, 0.0, 0.0, 0.01])
    unguarded = guarded_zscore(values, floor=1e-12, clip=10.0)
    assert unguarded[-1] == pytest.approx(2.0)
    guarded = guarded_zscore(values, floor=0.1, clip=3.0)
    # mean 0.002, spread max(0.004, 0.1) = 0.1
    assert guarded == pytest.approx([-0.02, -0.02, -0.02, -0.02, 0.08])


def test_zscore_clip():
    values = np.array([0.0] * 99 + [1.0])
    assert guarded_zscore(values, floor=1e-9, clip=3.0)[-1] == pytest.approx(3.0)


@given(
    arrays(np.float64, st.integers(0, 40), elements=st.floats(-1e6, 1e6)),
    st.floats(1e-6, 10.0),
    st.floats(0.1, 10.0),
)
def test_zscore_always_finite_and_clipped(values, floor, clip):
    z = guarded_zscore(values, floor, clip)
    assert z.shape == values.shape
    assert np.isfinite(z).all()
    assert (np.abs(z) <= clip + 1e-12).all()


@given(arrays(np.float64, st.integers(1, 30), elements=st.floats(-1, 1)), st.floats(0.05, 1.0))
def test_zscore_with_floor_never_exceeds_gap_over_floor(values, floor):
    """Thin-evidence guard: |z| <= (max - min) / floor, so tiny gaps stay tiny scores."""
    z = guarded_zscore(values, floor, clip=1e9)
    gap = float(values.max() - values.min())
    assert (np.abs(z) <= gap / floor + 1e-9).all()


def test_exploration_bonus_fades_with_use():
    bonus = exploration_bonus(np.array([0, 3, 8, 0]), np.array([True, True, True, False]), 0.1)
    assert bonus == pytest.approx([0.1, 0.05, 0.1 / 3, 0.0])


def test_rerank_balanced_weights_tie_break_by_phase_a_order():
    sim = np.array([0.9, 0.8, 0.7])
    util = np.array([-0.5, 0.0, 0.5])
    zeros = np.zeros(3)
    ranking = rerank(sim, util, zeros, np.zeros(3, int), np.zeros(3, bool), DEFAULT_WEIGHTS, 3)
    # z_sim = [1.2247, 0, -1.2247], z_util = [-1.2247, 0, 1.2247]: scores all 0
    assert ranking.score == pytest.approx([0.0, 0.0, 0.0], abs=1e-9)
    assert list(ranking.order) == [0, 1, 2]


def test_rerank_utility_heavy_weights_reverse_the_order():
    sim = np.array([0.9, 0.8, 0.7])
    util = np.array([-0.5, 0.0, 0.5])
    weights = dataclasses.replace(DEFAULT_WEIGHTS, lam=0.7)
    ranking = rerank(sim, util, np.zeros(3), np.zeros(3, int), np.zeros(3, bool), weights, 2)
    # 0.3 * 1.2247 - 0.7 * 1.2247 = -0.4899
    assert ranking.score == pytest.approx([-0.489898, 0.0, 0.489898], abs=1e-6)
    assert list(ranking.order) == [2, 1]


def test_rerank_bonus_and_confidence_enter_the_score():
    sim = np.array([0.5, 0.5])
    util = np.zeros(2)
    conf = np.array([0.0, 1.0])
    ranking = rerank(sim, util, conf, np.array([0, 0]), np.array([True, False]), DEFAULT_WEIGHTS, 2)
    # z_conf = [-1, 1] (std 0.5 > floor 0.1); item 0 gets bonus 0.1: scores -0.1+0.1 and 0.1
    assert ranking.score == pytest.approx([0.0, 0.1])
    assert list(ranking.order) == [1, 0]
