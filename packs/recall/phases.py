"""Phase A (vector recall) and Phase B (re-rank) over the ``memories`` table.

Phase A is the only I/O here: an exact cosine top-k1 from the Pack's in-memory
:class:`~packs.recall.vector_cache.VectorCache`, or one LanceDB cosine search when there is no
cache or it stands aside. Phase B is pure apart
from reading pending learned state through the ``learned`` callback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from packs.recall.ranking import RankWeights, rerank, similarity_from_distance
from packs.recall.vector_cache import VectorCache
from packs.records import RecalledItem
from packs.rewards.ema import LearnedState
from packs.settings import PackSettings
from packs.store import schemas
from packs.store.gateway import PackStore

CANDIDATE_COLUMNS = [
    "id", "kind", "intent_text", "response_summary", "experience_summary", "utility",
    "confidence", "usage_count", "reward_count", "signal_polarity", "source", "title",
    "start_s", "end_s",
]  # fmt: skip

# (memory id, stored learned state) -> (effective state, pending uses)
LearnedLookup = Callable[[str, LearnedState], tuple[LearnedState, int]]
# (memory id, global utility) -> the utility for this query (packs/recall/context.py)
ContextLookup = Callable[[str, float], float]


@dataclass(frozen=True)
class Candidates:
    """Phase A output: column lists in similarity order, and the similarities."""

    columns: dict[str, list[Any]]
    similarity: np.ndarray

    def __len__(self) -> int:
        return len(self.similarity)

    @property
    def ids(self) -> list[str]:
        return self.columns["id"]


@dataclass(frozen=True)
class Ranked:
    items: list[RecalledItem]
    log_rows: list[dict[str, Any]]  # one per candidate, for ``retrieval_log``

    @property
    def injected(self) -> list[str]:
        return [item.id for item in self.items]


def rank_weights(settings: PackSettings) -> RankWeights:
    s = settings
    return RankWeights(
        s.lam, s.w_confidence, s.explore_bonus, s.z_floor_similarity, s.z_floor_utility,
        s.z_floor_confidence, s.z_clip,
    )  # fmt: skip


def phase_a(
    store: PackStore,
    vector: np.ndarray,
    k1: int,
    clause: str | None,
    delta: float,
    cache: VectorCache | None = None,
    linked: Sequence[str] = (),
) -> Candidates:
    """Cosine top-``k1`` over memories and knowledge, keeping similarity >= ``delta``.

    With ``cache`` the search is the exact in-memory scan (packs/recall/vector_cache.py);
    LanceDB answers when there is none or it stands aside (too many rows to hold).
    """
    name = schemas.MEMORIES
    if cache is not None and cache.sync(store, name, CANDIDATE_COLUMNS):
        mask = cache.allowed(store, name, clause) if clause else None
        hits = cache.top_k(vector, k1, mask)
        similarity = similarity_from_distance(hits.distance)
        positions = hits.positions[similarity >= delta]
        similarity = similarity[similarity >= delta]
        if linked:
            # Associative links: memories rewarded for queries like this one join the
            # pool even when this wording's similarity left them out (no floor: the
            # link is the evidence); the filter's mask still applies.
            known = set(cache.ids(positions))
            extra = cache.lookup(vector, [m for m in linked if m not in known], mask)
            positions = np.concatenate([positions, extra.positions])
            similarity = np.concatenate([similarity, similarity_from_distance(extra.distance)])
        return Candidates(cache.columns(positions), similarity)
    found = store.search(name, vector, CANDIDATE_COLUMNS, clause, limit=k1)
    similarity = similarity_from_distance(found["_distance"].to_numpy())
    kept = np.flatnonzero(similarity >= delta)
    ordered = found.take(pa.array(kept, type=pa.int64()))
    columns = {column: ordered[column].to_pylist() for column in CANDIDATE_COLUMNS}
    return Candidates(columns, similarity[kept])


def phase_b(
    cand: Candidates,
    learned: LearnedLookup,
    settings: PackSettings,
    k2: int,
    contextual: ContextLookup | None = None,
) -> Ranked:
    """Blend z-scored similarity, utility and confidence; keep the top ``k2``.

    With ``contextual``, the utility blended is the query-conditioned ``U(m | q)``; the
    global EMA utility stays the displayed track record.
    """
    col = cand.columns
    n = len(cand)
    utility, confidence = np.zeros(n), np.zeros(n)
    uses, rewards = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    for i, memory_id in enumerate(col["id"]):
        stored = LearnedState(col["utility"][i], col["confidence"][i], col["reward_count"][i])
        state, pending_uses = learned(memory_id, stored)
        utility[i], confidence[i], rewards[i] = state.utility, state.confidence, state.reward_count
        uses[i] = col["usage_count"][i] + pending_uses
    ranked_utility = utility
    if contextual is not None:
        ranked_utility = np.array(
            [contextual(m, q) for m, q in zip(col["id"], utility, strict=True)]
        )
    knowledge = np.array([kind == schemas.KIND_KNOWLEDGE for kind in col["kind"]], dtype=bool)
    ranking = rerank(
        cand.similarity, ranked_utility, confidence, uses, knowledge & (rewards == 0),
        rank_weights(settings), k2,
    )  # fmt: skip
    context_values = None if contextual is None else ranked_utility
    items = []
    for i in ranking.order:
        polarity = col["signal_polarity"][i]
        warning = polarity == "failure" or (
            rewards[i] > 0 and utility[i] <= settings.failure_utility
        )
        items.append(
            RecalledItem(
                id=col["id"][i],
                kind=col["kind"][i],
                text=col["intent_text"][i],
                lesson=col["experience_summary"][i],
                response=col["response_summary"][i],
                similarity=float(cand.similarity[i]),
                utility=float(utility[i]),
                confidence=float(confidence[i]),
                score=float(ranking.score[i]),
                exploration_bonus=float(ranking.bonus[i]),
                usage_count=int(uses[i]),
                reward_count=int(rewards[i]),
                polarity=polarity,
                warning=bool(warning),
                contextual_utility=None if context_values is None else float(context_values[i]),
                source=col["source"][i],
                title=col["title"][i],
                start_s=col["start_s"][i],
                end_s=col["end_s"][i],
            )
        )
    final_rank = {int(i): r for r, i in enumerate(ranking.order)}
    log_rows = [
        {
            "item_id": col["id"][i],
            "kind": col["kind"][i],
            "phase_a_rank": i,
            "similarity": float(cand.similarity[i]),
            "utility": float(utility[i]),
            "contextual_utility": None if context_values is None else float(context_values[i]),
            "confidence": float(confidence[i]),
            "z_similarity": float(ranking.z_similarity[i]),
            "z_utility": float(ranking.z_utility[i]),
            "z_confidence": float(ranking.z_confidence[i]),
            "bonus": float(ranking.bonus[i]),
            "score": float(ranking.score[i]),
            "injected": i in final_rank,
            "final_rank": final_rank.get(i),
        }
        for i in range(n)
    ]
    return Ranked(items, log_rows)
