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

    Eligible items are knowledge chunks with no reward history yet (docs/brief.md, scale 0.1);
    the bonus fades as an item is used.
    """
    u = np.asarray(uses, dtype=np.float64)
    return np.where(np.asarray(eligible, dtype=bool), scale / np.sqrt(1.0 + u), 0.0)


def fused_relevance(
    similarity: NDArray[np.floating],
    lexical_rank: NDArray[np.integer],
    k: int,
    lexical_weight: float = 1.0,
) -> Array:
    """Reciprocal-rank fusion of Phase A's two lists (Cormack, Clarke and Büttcher 2009,
    k=60 there), rescaled so a candidate first in both scores 1:

    ``rel = (k+1)/2 · (1/(k + rank_cos) + w_lex/(k + rank_lex))``, rank from 1 within
    each list (weighted RRF; ``w_lex`` = 1 is plain RRF). Every candidate
    is in the cosine list (ordered by ``similarity``, ties by position: a row found by its
    words alone still has a cosine); the lexical list is BM25's top-k1, given by
    ``lexical_rank`` (0-based, -1 outside it), and a candidate outside it gets nothing
    from it. Ranks, not scores, so BM25's unbounded scale and cosine's narrow one weigh
    the same.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    cosine_rank = np.empty(sim.size, dtype=np.int64)
    cosine_rank[np.lexsort((np.arange(sim.size), -sim))] = np.arange(sim.size)
    lexical = np.asarray(lexical_rank, dtype=np.int64)
    fused = 1.0 / (k + 1 + cosine_rank)
    fused += np.where(lexical >= 0, lexical_weight / (k + 1 + lexical), 0.0)
    return fused * (k + 1) / 2.0


def thompson_draw(
    utility: NDArray[np.floating],
    evidence_share: NDArray[np.floating],
    scale: float,
    rng: np.random.Generator,
) -> Array:
    """One posterior draw of each candidate's utility for this query (Thompson sampling
    among the top-k1; Chapelle and Li 2011, Russo et al. 2018).

    The posterior of ``U(m | q)`` is read as Gaussian with mean ``U`` and standard
    deviation ``scale / sqrt(1 + n)``, where ``n = s / (1 - s)`` is the evidence near the
    query in prior pseudo-counts (``s`` = ``W / (W + kappa)``, ``ContextIndex.assess``). A
    memory judged on one reward is uncertain, so a wrong early punishment still lets it
    be shown again and corrected; many agreeing rewards make it certain. A candidate with
    no evidence near the query is left at its prior (the exploration bonus covers cold
    knowledge). Draws are clipped to [-1, 1].
    """
    u = np.asarray(utility, dtype=np.float64)
    share = np.clip(np.asarray(evidence_share, dtype=np.float64), 0.0, 1.0 - 1e-9)
    n = share / (1.0 - share)
    noise = rng.standard_normal(u.size) * scale / np.sqrt(1.0 + n)
    return np.where(share > 0, np.clip(u + noise, -1.0, 1.0), u)


def blended_relevance(
    similarity: NDArray[np.floating],
    lexical: NDArray[np.floating],
    weights: RankWeights,
    lexical_weight: float,
) -> Array:
    """``z(sim) + w_lex · z(bm25)``, each z-scored within the pool (BM25 0 outside its
    list), in similarity units again: scaled back by the similarity's spread."""
    sim = np.asarray(similarity, dtype=np.float64)
    z_sim = guarded_zscore(sim, weights.z_floor_similarity, weights.z_clip)
    z_lex = guarded_zscore(np.asarray(lexical, dtype=np.float64), 1e-9, weights.z_clip)
    spread = max(float(sim.std()), weights.z_floor_similarity) if sim.size else 1.0
    return (z_sim + lexical_weight * z_lex) * spread


@dataclass(frozen=True)
class RankWeights:
    """Weights of the Phase B blend. ``lam`` splits similarity and utility (MemRL λ).

    No defaults here: they live once, in :class:`packs.settings.PackSettings`, and reach
    the ranking through :func:`packs.recall.scoring.rank_weights`.
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


@dataclass(frozen=True)
class SlateGuard:
    """What :func:`guard_slate` changed: why each placed candidate is in the slate."""

    order: NDArray[np.int64]
    reserved: int | None = None  # the unrewarded top-1 that kept its slot
    explored: int | None = None  # the candidate swapped in by exploration
    propensity: float | None = None  # the chance that swap had
    capped: int | None = None  # the unlinked candidate that took a linked winner's place

    def placed_by(self, i: int) -> str | None:
        """Why candidate ``i`` is in the slate beyond its score, if it is."""
        reasons = {self.explored: "explored", self.reserved: "reserved", self.capped: "link_cap"}
        return reasons.get(i)


def guard_slate(
    order: NDArray[np.int64],
    score: NDArray[np.floating],
    base_top: int | None,
    against: NDArray[np.bool_],
    linked: NDArray[np.bool_],
    k2: int,
    explore: tuple[float, float, float] | None = None,
) -> SlateGuard:
    """Structural rules over Phase B's winners ``order`` (best first; pure).

    1. **New questions keep what they had.** ``base_top``, the top-1 of the ranking the
       Pack would make had it never been rewarded, keeps a slot unless this question's
       own evidence is against it (``against``): it replaces the last winner. So learning
       can add to a slate but never takes its best unrewarded guess away on a question
       its evidence does not reach.
    2. **Links never fill every slot** (``k2 > 1``): when every winner is there through
       an associative link (``linked``) and none is ``base_top``, the last linked winner
       gives its place to the best candidate that is not linked.
    3. **Exploration** (``explore`` = (draw, share, second draw), both draws uniform in
       [0, 1)): with probability ``share`` one winner other than the first and
       ``base_top`` is swapped for the best candidate outside the slate; the swapped-in
       candidate's propensity is ``share / eligible``.
    """
    kept = [int(i) for i in order]
    n = len(score)
    reserved = explored = capped = None
    propensity = None
    if base_top is not None and kept and base_top not in kept and not against[base_top]:
        kept[-1] = base_top
        reserved = base_top
    if k2 > 1 and len(kept) == k2 and all(linked[i] for i in kept) and base_top not in kept:
        rest = [i for i in _by_score(score) if i not in kept and not linked[i]]
        if rest:
            kept[-1] = capped = rest[0]
    if explore is not None and k2 > 1 and len(kept) == k2 and n > k2:
        draw, share, pick = explore
        eligible = [p for p in range(1, len(kept)) if kept[p] != reserved]
        outside = [i for i in _by_score(score) if i not in kept]
        if draw < share and eligible and outside:
            position = eligible[min(int(pick * len(eligible)), len(eligible) - 1)]
            kept[position] = explored = outside[0]
            propensity = share / len(eligible)
    order = np.array(kept, dtype=np.int64)
    return SlateGuard(order, reserved, explored, propensity, capped if capped in kept else None)


def _by_score(score: NDArray[np.floating]) -> list[int]:
    """Candidates best first, ties by Phase A position (as :func:`rerank` orders them)."""
    s = np.asarray(score, dtype=np.float64)
    return [int(i) for i in np.lexsort((np.arange(s.size), -np.round(s, 12)))]
