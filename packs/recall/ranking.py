"""Phase B ranking math: pure functions over numpy arrays, no I/O.

Score convention, written down once: **higher is better**. LanceDB returns a cosine
``_distance``; :func:`similarity_from_distance` is the one place it becomes a similarity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def similarity_from_distance(distance: NDArray[np.floating]) -> Array:
    """Cosine similarity from LanceDB's cosine distance: ``sim = 1 - d``."""
    return 1.0 - np.asarray(distance, dtype=np.float64)


def guarded_zscore(values: NDArray[np.floating], floor: float, clip: float) -> Array:
    """z-score within the pool, safe with ties, one item and thin evidence.

    ``z_i = clip((x_i - mean) / max(std, floor), -clip, clip)`` with the population std.
    The ``floor`` keeps a pool of near-equal values (all utilities 0 but one at 0.01)
    from turning a negligible gap into a whole standard deviation; ``clip`` bounds any
    one signal's pull (MemRL clips utility z-scores to [-3, 3]). Ties and a single item
    give 0 for everyone.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    spread = max(float(x.std()), floor)
    return np.clip((x - x.mean()) / spread, -clip, clip)


def exploration_bonus(
    uses: NDArray[np.integer], eligible: NDArray[np.bool_], scale: float
) -> Array:
    """UCB-style bonus ``scale / sqrt(1 + uses)`` for eligible items, 0 elsewhere.

    Eligible items are knowledge chunks with no reward history yet (MISSION.md, scale 0.1);
    the bonus fades as an item is used.
    """
    u = np.asarray(uses, dtype=np.float64)
    return np.where(np.asarray(eligible, dtype=bool), scale / np.sqrt(1.0 + u), 0.0)


@dataclass(frozen=True)
class RankWeights:
    """Weights of the Phase B blend. ``lam`` splits similarity and utility (MemRL λ).

    No defaults here: they live once, in :class:`packs.settings.PackSettings`, and reach
    the ranking through :func:`packs.recall.phases.rank_weights`.
    """

    lam: float
    w_confidence: float
    explore_bonus: float
    z_floor_similarity: float
    z_floor_utility: float
    z_floor_confidence: float
    z_clip: float


@dataclass(frozen=True)
class Ranking:
    """Per-candidate parts of the score, in candidate order, plus the winners' order."""

    z_similarity: Array
    z_utility: Array
    z_confidence: Array
    bonus: Array
    score: Array
    order: NDArray[np.int64]  # indices of the kept candidates, best first


def rerank(
    similarity: NDArray[np.floating],
    utility: NDArray[np.floating],
    confidence: NDArray[np.floating],
    uses: NDArray[np.integer],
    explore_eligible: NDArray[np.bool_],
    weights: RankWeights,
    k2: int,
) -> Ranking:
    """MemRL Phase B: blend z-scored signals and keep the top ``k2``.

    ``score = (1-λ)·z(sim) + λ·z(Q) + w_c·z(conf) + bonus``. Ties are broken by Phase A
    order (higher similarity first), so the result is deterministic.
    """
    z_sim = guarded_zscore(similarity, weights.z_floor_similarity, weights.z_clip)
    z_q = guarded_zscore(utility, weights.z_floor_utility, weights.z_clip)
    z_c = guarded_zscore(confidence, weights.z_floor_confidence, weights.z_clip)
    bonus = exploration_bonus(uses, explore_eligible, weights.explore_bonus)
    score = (1.0 - weights.lam) * z_sim + weights.lam * z_q + weights.w_confidence * z_c + bonus
    # lexsort: last key is primary. Sort by -score, then by Phase A position. Scores are
    # rounded for the sort so that float noise (1e-16) can't break an exact tie.
    order = np.lexsort((np.arange(score.size), -np.round(score, 12)))[:k2].astype(np.int64)
    return Ranking(z_sim, z_q, z_c, bonus, score, order)
