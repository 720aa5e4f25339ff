"""Phase A (vector recall) and Phase B (re-rank) over the ``memories`` table.

Phase A is the only I/O here: an exact cosine top-k1 from the Pack's in-memory
:class:`~packs.recall.vector_cache.VectorCache`, or one LanceDB cosine search when there is no
cache or it stands aside. Phase B's arithmetic is :func:`packs.recall.scoring.score_pool`,
pure apart from reading pending learned state through the ``learned`` lookup; here it
becomes the recalled items and the retrieval log's rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from packs.recall.candidates import Candidates, RecallQuery
from packs.recall.indexed import CANDIDATE_COLUMNS, indexed_lexical, indexed_rows, indexed_top_k
from packs.recall.lexical import mentions, names, row_text
from packs.recall.ranking import SlateGuard, similarity_from_distance
from packs.recall.scope_cache import ScopeCaches
from packs.recall.scoring import LearnedLookup, Scored, score_pool
from packs.recall.spread import neighbour_ids
from packs.recall.vector_cache import VectorCache
from packs.records import RecalledItem
from packs.settings import RankingSettings
from packs.store import schemas
from packs.store.gateway import PackStore
from packs.store.lifecycle import EXPIRES, unexpired_clause


@dataclass(frozen=True)
class Ranked:
    items: list[RecalledItem]
    log_rows: list[dict[str, Any]]  # one per candidate, for ``retrieval_log``
    explored: bool = False  # an exploration swap placed one item
    scored: Scored | None = None  # Phase B's numbers, for an explanation (explain.py)

    @property
    def injected(self) -> list[str]:
        return [item.id for item in self.items]


def phase_a(
    store: PackStore,
    q: RecallQuery,
    cache: VectorCache | None = None,
    scopes: ScopeCaches | None = None,
) -> Candidates:
    """The pool for ``q`` (:class:`~packs.recall.candidates.RecallQuery`).

    With ``cache`` the search is the exact in-memory scan (packs/recall/vector_cache.py);
    LanceDB answers when there is none or it stands aside (too many rows to hold). A
    linked memory joins the pool if it is not in it, and ranks by the better of its
    similarity and its key; the neighbours of adjacency links join it too
    (packs/recall/spread.py). When ``cache`` is too large to hold, ``scopes`` holds the
    rows ``q.visible`` lets through if they are few (packs/recall/scope_cache.py); else
    LanceDB picks its search by how many rows the clause allows (``indexed_top_k``).
    """
    now, clause = q.now, q.clause
    cached_columns = CANDIDATE_COLUMNS if now is None else [*CANDIDATE_COLUMNS, EXPIRES]
    if cache is not None and cache.sync(store, schemas.MEMORIES, cached_columns):
        live = None if now is None else cache.unexpired(now)  # a mask, not a new clause
        return _cached(cache, store, q, clause, live)
    aside = cache is not None and cache.too_large
    small = scopes.get(store, q.visible, cached_columns) if scopes is not None and aside else None
    if small is not None:  # its rows are those ``visible`` lets through
        rest = None if clause == q.visible else clause
        return _cached(small, store, q, rest, None if now is None else small.unexpired(now))
    if now is not None:
        clause = " AND ".join(c for c in (clause, unexpired_clause(now)) if c)
    found = indexed_top_k(store, q.vector, q.k1, clause, q.visible)
    similarity = similarity_from_distance(found["_distance"].to_numpy())
    kept = np.flatnonzero(similarity >= q.delta)
    ordered = found.take(pa.array(kept, type=pa.int64()))
    columns = {column: ordered[column].to_pylist() for column in CANDIDATE_COLUMNS}
    similarity = similarity[kept]
    links = competing_links(q.links, similarity, q.delta, q.top)
    extra_ids = [m for m in links if m not in set(columns["id"])]
    similarity = np.concatenate(
        [similarity, indexed_rows(store, q.vector, extra_ids, clause, columns)]
    )
    words = q.text if q.lexical else None
    found_ids, found_scores, added = indexed_lexical(store, words, q.vector, q.k1, clause, columns)
    lexical = words is not None and found_ids is not None  # None: a Pack made before its index
    similarity = np.concatenate([similarity, added])
    if q.hops:
        place = {m: i for i, m in enumerate(columns["id"])}
        seeds = [*range(min(q.top, len(kept))), *(place[m] for m in (found_ids or [])[: q.top])]
        near = _new(columns["id"], _neighbours(columns, seeds, q.hops))
        added = indexed_rows(store, q.vector, near, clause, columns)
        similarity = np.concatenate([similarity, added])
    return _candidates(columns, similarity, links, found_ids or [], found_scores, q.text, lexical)


def _cached(
    cache: VectorCache,
    store: PackStore,
    q: RecallQuery,
    clause: str | None,
    live: np.ndarray | None,
) -> Candidates:
    """Phase A on the in-memory scan and its BM25 index (``live``: the unexpired rows)."""
    mask = cache.allowed(store, schemas.MEMORIES, clause) if clause else None
    if live is not None:
        mask = live if mask is None else mask & live
    hits = cache.top_k(q.vector, q.k1, mask)
    positions = hits.positions[hits.similarity >= q.delta]
    similarity = hits.similarity[hits.similarity >= q.delta]
    found = len(positions)
    links = competing_links(q.links, similarity, q.delta, q.top)

    def join(ids: list[str]) -> None:
        nonlocal positions, similarity
        extra = cache.lookup(q.vector, _new(cache.ids(positions), ids), mask)
        positions = np.concatenate([positions, extra.positions])
        similarity = np.concatenate([similarity, extra.similarity])

    join(list(links))
    lex_ids: list[str] = []
    lex_scores = np.zeros(0)
    if q.lexical and q.text is not None:
        lex_positions, lex_scores = cache.lexical_top_k(q.text, q.k1, mask)
        lex_ids = cache.ids(lex_positions)
        join(lex_ids)
    columns = cache.columns(positions)
    if q.hops:
        place = {m: i for i, m in enumerate(columns["id"])}
        seeds = [*range(min(q.top, found)), *(place[m] for m in lex_ids[: q.top])]
        before = len(positions)
        join(_neighbours(columns, seeds, q.hops))
        if len(positions) > before:
            extra = cache.columns(positions[before:])
            columns = {name: columns[name] + extra[name] for name in columns}
    lexical = q.lexical and q.text is not None
    return _candidates(columns, similarity, links, lex_ids, lex_scores, q.text, lexical)


def _neighbours(columns: dict[str, list[Any]], seeds: list[int], hops: int) -> list[str]:
    return neighbour_ids(columns["source"], columns["source_position"], seeds, hops)


def _new(pooled: list[str], ids: list[str]) -> list[str]:
    """``ids`` not in the pool yet, in order."""
    have = set(pooled)
    return [m for m in ids if m not in have]


def _candidates(
    columns: dict[str, list[Any]],
    similarity: np.ndarray,
    links: Mapping[str, float] | None,
    lex_ids: list[str],
    lex_scores: np.ndarray,
    text: str | None,
    lexical: bool,
) -> Candidates:
    """The pool, with each member's place in the BM25 list ``lex_ids`` when ``lexical``."""
    ranked = _ranked(_named(links, text, columns), columns["id"], similarity)
    if not lexical:
        return Candidates(columns, similarity, ranked)
    place = {m: r for r, m in enumerate(lex_ids)}
    rank = np.array([place.get(m, -1) for m in columns["id"]], dtype=np.int64)
    scores = np.where(rank >= 0, lex_scores[np.maximum(rank, 0)] if len(lex_scores) else 0.0, 0.0)
    return Candidates(columns, similarity, ranked, rank, scores)


def competing_links(
    links: Mapping[str, float] | None, similarity: np.ndarray, delta: float, k2: int
) -> dict[str, float]:
    """The links whose key would have put their memory among the ``k2`` best by
    similarity (and at least ``delta``): weaker keys change nothing, so a faint
    resemblance to a past question never reshuffles a pool (docs/contextual.md)."""
    if not links:
        return {}
    best = np.sort(similarity)[::-1]
    bar = max(delta, float(best[k2 - 1])) if len(best) >= k2 else delta
    return {m: key for m, key in links.items() if key >= bar}


def _named(
    links: Mapping[str, float] | None, text: str | None, columns: dict[str, list[Any]]
) -> Mapping[str, float] | None:
    """The links whose memory mentions a name the query mentions, when it mentions any:
    a past question about Grace does not vouch for Grace's turn to a question about
    Melanie, however alike the two questions embed (names barely move a sentence
    embedding). A link dropped here leaves its memory to rank by its own similarity."""
    wanted = names(text) if links and text else set()
    if not wanted or links is None:
        return links
    texts = {m: row_text(columns, i) for i, m in enumerate(columns["id"]) if m in links}
    return {m: key for m, key in links.items() if mentions(texts.get(m, ""), wanted)}


def _ranked(
    links: Mapping[str, float] | None, ids: list[str], similarity: np.ndarray
) -> np.ndarray | None:
    """The similarity Phase B ranks by: a linked memory's key when that is better."""
    if not links:
        return None
    keys = np.array([links.get(m, -np.inf) for m in ids], dtype=np.float64)
    return np.maximum(similarity, keys) if len(ids) else similarity


def phase_b(
    cand: Candidates,
    learned: LearnedLookup,
    r: RankingSettings,
    k2: int,
    explore: np.random.Generator | None = None,
    explore_share: float = 0.0,
) -> Ranked:
    """:func:`score_pool`, then the recalled items and one log row per candidate."""
    col = cand.columns
    n = len(cand)
    scored = score_pool(cand, learned, r, k2, explore, explore_share)
    guard = scored.guard
    utility, confidence, rewards = scored.utility, scored.confidence, scored.rewards
    uses, ranked_utility, ranking = scored.uses, scored.ranked_utility, scored.ranking
    context_values = ranked_utility if learned.contextual else None
    items = []
    for i in ranking.order:
        polarity = col["signal_polarity"][i]
        warning = polarity == "failure" or (rewards[i] > 0 and utility[i] <= r.failure_utility)
        items.append(
            RecalledItem(
                id=col["id"][i],
                kind=col["kind"][i],
                text=col["intent_text"][i],
                lesson=col["experience_summary"][i],
                lesson_by="shared" if col["experience_summary"][i] else None,
                response=col["response_summary"][i],
                similarity=float(cand.similarity[i]),
                lexical=0.0 if cand.lexical is None else float(cand.lexical[i]),
                ranked_utility=float(ranked_utility[i]),
                track_record=float(utility[i]),
                confidence=float(confidence[i]),
                score=float(ranking.score[i]),
                exploration_bonus=float(ranking.bonus[i]),
                usage_count=int(uses[i]),
                reward_count=int(rewards[i]),
                polarity=polarity,
                warning=bool(warning),
                source=col["source"][i],
                title=col["title"][i],
                start_s=col["start_s"][i],
                end_s=col["end_s"][i],
                placed_by=_placed(guard, int(i)),
            )
        )
    final_rank = {int(i): r for r, i in enumerate(ranking.order)}
    log_rows = [
        {
            "item_id": col["id"][i],
            "kind": col["kind"][i],
            "phase_a_rank": i,
            "similarity": float(cand.similarity[i]),
            "lexical": None if cand.lexical is None else float(cand.lexical[i]),
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
            "placed_by": _placed(guard, i),
            "propensity": guard.propensity if guard and i == guard.explored else None,
        }
        for i in range(n)
    ]
    return Ranked(items, log_rows, guard is not None and guard.explored is not None, scored)


def _placed(guard: SlateGuard | None, i: int) -> str | None:
    return None if guard is None else guard.placed_by(i)
