"""Phase B's arithmetic: blend z-scored relevance, utility and confidence, keep the top k2.

:func:`score_pool` is what :func:`packs.recall.phases.phase_b` ranks by, and what the
tuner replays on logged pools (``packs/tuning/replay.py``), so a replayed ranking is the
ranking a recall would have made.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from packs.learning.ema import LearnedState
from packs.recall.candidates import Candidates
from packs.recall.fusion import Fusion, fusion_for
from packs.recall.ranking import (
    Ranking,
    RankWeights,
    SlateGuard,
    guard_slate,
    rerank,
    thompson_draw,
)
from packs.recall.spread import distances, inhibited_order, spread
from packs.settings import RankingSettings
from packs.store import schemas


class LearnedLookup(Protocol):
    """How Phase B reads learned state (:class:`packs.learning.state.LearnedView`)."""

    @property
    def contextual(self) -> bool: ...
    def learned(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]: ...
    def assess(self, memory_id: str, global_q: float) -> tuple[float, float]: ...


def rank_weights(s: RankingSettings) -> RankWeights:
    return RankWeights(
        s.lam,
        s.w_confidence,
        s.explore_bonus,
        s.z_floor_similarity,
        s.z_floor_utility,
        s.z_floor_confidence,
        s.z_clip,
    )


@dataclass(frozen=True)
class Scored:
    """Phase B's numbers for one pool, in candidate order (``ranking.order``: the winners)."""

    utility: np.ndarray  # the global Q (track record)
    confidence: np.ndarray
    rewards: np.ndarray  # reward counts
    uses: np.ndarray
    ranked_utility: np.ndarray  # what the blend used: U(m | q) in contextual mode
    ranking: Ranking
    guard: SlateGuard | None = None  # the structural rules' placements (guard_slate)


def score_pool(
    cand: Candidates,
    learned: LearnedLookup,
    r: RankingSettings,
    k2: int,
    explore: np.random.Generator | None = None,
    explore_share: float = 0.0,
) -> Scored:
    """Blend z-scored relevance, utility and confidence and keep the top ``k2``: the
    arithmetic of :func:`phase_b`, also replayed by the tuner (``packs/tuning/replay.py``).

    ``explore`` (recall's generator) turns exploration on: the bonus of unrewarded
    knowledge and, with ``thompson_scale``, a posterior draw of ``U(m | q)``. Without it
    (``search``) the ranking is the current best estimate, the same on every call.

    In contextual mode, the utility blended is the query-conditioned ``U(m | q)`` and the
    confidence blended counts only as far as the memory's evidence is from queries like
    this one; the global EMA utility and the confidence stay the displayed track record.

    Then :func:`packs.recall.ranking.guard_slate` applies the structural rules: the
    unrewarded ranking's top-1 keeps a slot unless this question's own evidence is
    against it (``ranking.reserve_top``, contextual mode), links never fill every slot, and with
    ``explore`` a share ``explore_share`` of recalls swaps one slate member.
    """
    col = cand.columns
    n = len(cand)
    utility, confidence = np.zeros(n), np.zeros(n)
    uses, rewards = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    for i, memory_id in enumerate(col["id"]):
        stored = LearnedState(col["utility"][i], col["confidence"][i], col["reward_count"][i])
        state, pending_uses = learned.learned(memory_id, stored)
        utility[i], confidence[i], rewards[i] = state.utility, state.confidence, state.reward_count
        uses[i] = col["usage_count"][i] + pending_uses
    ranked_utility, ranked_confidence = utility, confidence
    against = np.zeros(n, dtype=bool)
    if learned.contextual:
        assessed = np.array(
            [learned.assess(m, q) for m, q in zip(col["id"], utility, strict=True)]
        ).reshape(n, 2)
        ranked_utility, ranked_confidence = assessed[:, 0], confidence * assessed[:, 1]
        against = (assessed[:, 1] > 0) & (assessed[:, 0] < 0)  # evidence near this question
        if explore is not None and r.thompson_scale > 0:  # recall explores
            ranked_utility = thompson_draw(
                ranked_utility, assessed[:, 1], r.thompson_scale, explore
            )
    knowledge = np.array([kind == schemas.KIND_KNOWLEDGE for kind in col["kind"]], dtype=bool)
    unrewarded_knowledge = knowledge & (rewards == 0)
    weights = rank_weights(r)
    if explore is None:  # search exploits: no exploration bonus, no draw
        weights = replace(weights, explore_bonus=0.0)
    fusion = fusion_for(r, weights)
    relevance = _relevance(cand, fusion, cand.ranking_similarity)
    ranking = rerank(
        relevance, ranked_utility, ranked_confidence, uses, unrewarded_knowledge, weights, k2
    )
    if r.spread > 0 or r.inhibition > 0:  # adjacency links
        hops = r.spread_hops
        dist = distances(col["source"], col["source_position"])
        score = spread(ranking.score, dist, r.spread, r.spread_decay, hops)
        order = inhibited_order(score, dist, r.inhibition, hops, k2)
        ranking = replace(ranking, score=score, order=order)
    base_top = None
    if r.reserve_top and learned.contextual and n:  # global mode is plain MemRL
        zeros = np.zeros(n)
        plain = _relevance(cand, fusion, cand.similarity)  # no link keys
        base = rerank(plain, zeros, zeros, uses, knowledge, weights, 1)
        base_top = int(base.order[0])
    linked = cand.ranking_similarity > cand.similarity
    draws = None
    if explore is not None and explore_share > 0:
        draws = (float(explore.random()), explore_share, float(explore.random()))
    guard = guard_slate(ranking.order, ranking.score, base_top, against, linked, k2, draws)
    ranking = replace(ranking, order=guard.order)
    return Scored(utility, confidence, rewards, uses, ranked_utility, ranking, guard)


def _relevance(cand: Candidates, fusion: Fusion | None, similarity: np.ndarray) -> np.ndarray:
    """Phase A's two lists fused (cosine alone without BM25)."""
    if fusion is None or cand.lexical_rank is None or cand.lexical is None:
        return similarity
    return np.asarray(fusion.relevance(similarity, cand.lexical, cand.lexical_rank))
