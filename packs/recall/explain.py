"""Why each recalled item ranked where it did: the ``explain`` object of
``recall(..., explain=True)`` (docs/recall.md, "Explanations").

Built after the fact from what Phase A and Phase B already computed, the
:class:`~packs.recall.candidates.Candidates` and the :class:`~packs.recall.scoring.Scored`
of :func:`~packs.recall.scoring.score_pool`, so a recall without ``explain`` does nothing
more than before. Pure: the learned evidence (past questions, read from the log) is
handed in by :mod:`packs.recall.evidence`.

Each item's ``explain`` has four parts, each a flat dict so later reasons can join as
fields:

- ``phase_a``: ``similarity``, ``lexical`` (BM25) and the fused ``relevance``, each with
  its 1-based rank in the pool (``lexical_rank`` None outside BM25's list);
- ``phase_b``: the blend's ``terms`` as they were added (``relevance``, ``link``,
  ``utility``, ``confidence``, ``bonus``, ``spread``) and the ``score`` they sum to, the
  ``rank`` it earned and the weights;
- ``utility``: ``U(m|q)`` as ranked, its mean and evidence share, the track record and
  the ``evidence`` (past questions, top 5 by weight);
- ``placement``: what else placed it: a ``link`` (its key similarity and question),
  ``placed_by`` (None: its score; ``reserved``: the unrewarded top-1's slot,
  ``link_cap``: it took a linked winner's place, ``explored``: an exploration swap;
  ``packs/recall/ranking.guard_slate``), ``status``, ``lesson`` and ``warning``. A placed
  item stands where the rule put it, not where its terms would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from packs.recall.candidates import Candidates
from packs.recall.fusion import fusion_for
from packs.recall.phases import Ranked
from packs.recall.ranking import guarded_zscore
from packs.recall.scoring import LearnedLookup, Scored, rank_weights
from packs.recall.spread import distances
from packs.settings import RankingSettings

Evidence = Mapping[str, Sequence[Mapping[str, Any]]]  # memory id -> past questions


def _ranks(values: np.ndarray) -> np.ndarray:
    """1-based rank of each value, highest first, ties by pool position."""
    order = np.lexsort((np.arange(values.size), -values))
    ranks = np.empty(values.size, dtype=np.int64)
    ranks[order] = np.arange(1, values.size + 1)
    return ranks


def relevance_of(
    cand: Candidates, similarity: np.ndarray, r: RankingSettings, explore: bool
) -> np.ndarray:
    """The relevance Phase B z-scores for ``similarity``: the fusion of it with BM25
    where BM25 joined (:func:`packs.recall.scoring.score_pool`'s own steps)."""
    weights = rank_weights(r)
    if not explore:
        weights = replace(weights, explore_bonus=0.0)
    fusion = fusion_for(r, weights)
    if fusion is not None and cand.lexical_rank is not None and cand.lexical is not None:
        return np.asarray(fusion.relevance(similarity, cand.lexical, cand.lexical_rank))
    return np.asarray(similarity, dtype=np.float64)


def explain_pool(
    cand: Candidates,
    scored: Scored,
    learned: LearnedLookup,
    r: RankingSettings,
    *,
    explore: bool,
    evidence: Evidence | None = None,
    indices: Sequence[int] | None = None,
) -> dict[int, dict[str, Any]]:
    """The ``explain`` object of each candidate in ``indices`` (default: the winners,
    ``scored.ranking.order``), keyed by its place in the pool.

    ``explore`` says whether the recall explored (a search does not: no bonus). The
    terms sum to the score the ranking sorted by: a ``link`` term is what ranking by the
    link's key added over the memory's own similarity, a ``spread`` term what adjacency
    links added (0 without them).
    """
    ranking = scored.ranking
    weights = rank_weights(r)
    lam, w_c = weights.lam, weights.w_confidence
    relevance = relevance_of(cand, cand.ranking_similarity, r, explore)
    own = relevance_of(cand, cand.similarity, r, explore)
    z_own = guarded_zscore(own, weights.z_floor_similarity, weights.z_clip)
    base = (
        (1.0 - lam) * ranking.z_similarity
        + lam * ranking.z_utility
        + w_c * ranking.z_confidence
        + ranking.bonus
    )
    sim_rank, rel_rank = _ranks(cand.similarity), _ranks(relevance)
    lex = cand.lexical_rank
    final = {int(i): place + 1 for place, i in enumerate(ranking.order)}
    chosen = ranking.order if indices is None else indices
    linked_by = _links(cand)
    inhibited = _inhibition(cand, r, [int(j) for j in ranking.order])
    out: dict[int, dict[str, Any]] = {}
    for i in (int(j) for j in chosen):
        memory_id = cand.ids[i]
        terms = {
            "relevance": float((1.0 - lam) * z_own[i]),
            "link": float((1.0 - lam) * (ranking.z_similarity[i] - z_own[i])),
            "utility": float(lam * ranking.z_utility[i]),
            "confidence": float(w_c * ranking.z_confidence[i]),
            "bonus": float(ranking.bonus[i]),
            "spread": float(ranking.score[i] - base[i]),
            "inhibition": inhibited.get(i, 0.0),
        }
        mean, share = learned.assess(memory_id, float(scored.utility[i]))
        past = list((evidence or {}).get(memory_id, ()))
        out[i] = {
            "phase_a": {
                "pool": len(cand),
                "similarity": float(cand.similarity[i]),
                "similarity_rank": int(sim_rank[i]),
                "lexical": None if cand.lexical is None else float(cand.lexical[i]),
                "lexical_rank": None if lex is None or lex[i] < 0 else int(lex[i]) + 1,
                "relevance": float(relevance[i]),
                "relevance_rank": int(rel_rank[i]),
            },
            "phase_b": {
                "terms": terms,
                "score": float(ranking.score[i]) + inhibited.get(i, 0.0),
                "rank": final.get(i),
                "z": {
                    "relevance": float(ranking.z_similarity[i]),
                    "utility": float(ranking.z_utility[i]),
                    "confidence": float(ranking.z_confidence[i]),
                },
                "weights": {"lam": lam, "w_confidence": w_c},
            },
            "utility": {
                "contextual": bool(learned.contextual),
                "ranked": float(scored.ranked_utility[i]),
                "mean": float(mean),
                "drawn": bool(learned.contextual and explore and r.thompson_scale > 0),
                "evidence_share": float(share),
                "track_record": float(scored.utility[i]),
                "confidence": float(scored.confidence[i]),
                "reward_count": int(scored.rewards[i]),
                "uses": int(scored.uses[i]),
                "evidence": past,
            },
            "placement": {
                "placed_by": None if scored.guard is None else scored.guard.placed_by(i),
                "link": _link(linked_by.get(i), past),
                "status": "current",
                "lesson": bool(cand.columns["experience_summary"][i]),
                "polarity": cand.columns["signal_polarity"][i],
            },
        }
    return out


def _inhibition(cand: Candidates, r: RankingSettings, order: list[int]) -> dict[int, float]:
    """What lateral inhibition took from each candidate when it was picked (a winner:
    ``r.inhibition`` for each earlier pick within ``spread_hops`` of it) or when the
    picking stopped (the others): :func:`packs.recall.spread.inhibited_order`'s steps."""
    if r.inhibition <= 0 or r.spread_hops < 1:
        return {}
    dist = distances(cand.columns["source"], cand.columns["source_position"])
    near = np.isfinite(dist) & (dist <= r.spread_hops)
    place = {i: t for t, i in enumerate(order)}
    out = {}
    for i in range(len(cand)):
        earlier = order[: place.get(i, len(order))]
        count = int(near[i, earlier].sum()) if earlier else 0
        if count:
            out[i] = -r.inhibition * count
    return out


def _links(cand: Candidates) -> dict[int, float]:
    """Pool places that ranked by a link's key (better than their own similarity)."""
    if cand.ranked_similarity is None:
        return {}
    better = np.flatnonzero(cand.ranked_similarity > cand.similarity)
    return {int(i): float(cand.ranked_similarity[i]) for i in better}


def _link(key: float | None, past: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A link's key similarity and the helped past question nearest this one (the key's
    question: a link's key is a past question the memory helped,
    ``packs/learning/links.py``)."""
    if key is None:
        return None
    helped = [p for p in past if p.get("reward", 0.0) > 0]
    best = max(helped, key=lambda p: p.get("similarity", 0.0), default=None)
    return {
        "key_similarity": key,
        "question": None if best is None else best.get("question"),
        "episode_id": None if best is None else best.get("episode_id"),
    }


def term_sum(explain: Mapping[str, Any]) -> float:
    """The terms of one ``explain`` re-added: the score recall sorted by."""
    return float(sum(explain["phase_b"]["terms"].values()))


def explained(
    ranked: Ranked,
    cand: Candidates,
    learned: LearnedLookup,
    r: RankingSettings,
    explore: bool,
    why: Callable[[list[str]], Evidence],
) -> Ranked:
    """``ranked`` with each item's ``explain``; ``why`` reads the past questions of the
    rewarded winners (:func:`packs.recall.evidence.past_questions`)."""
    scored = ranked.scored
    if scored is None:  # pragma: no cover - phase_b always scores
        return ranked
    order = [int(i) for i in scored.ranking.order]
    rewarded = [cand.ids[i] for i in order if scored.rewards[i] > 0]
    evidence = why(rewarded) if rewarded else {}
    explains = explain_pool(cand, scored, learned, r, explore=explore, evidence=evidence)
    items = [
        replace(item, explain=explains[i]) for item, i in zip(ranked.items, order, strict=True)
    ]
    return replace(ranked, items=items)
