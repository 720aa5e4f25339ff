"""The learned evidence behind ``U(m|q)`` for an explained recall (packs/recall/explain.py):
the past questions a memory was rewarded on, each with its similarity to this question,
its reward and the weight the contextual utility gave it, the top 5 by weight.

The numbers are the contextual index's own (``ContextIndex.evidence``: what ``assess``
weighed), each weighted by the rule's transfer kernel at its question's similarity times
the reward's own weight (its credit). Each question is named by the episode it came
from: first among the recent episodes this handle logged (no read), else from the reward
log and the episodes (stored, or in the buffer). Without the index (global mode) the
log alone answers, the way the index is filled (``packs/learning/feed.py``): the newest
``rule.history`` rewards since the memory's last revision. Computed only when
``explain`` is asked, only for the rewarded items recall returned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from packs.learning.context import ContextIndex, history_entry
from packs.learning.ema import REVISION_SOURCE
from packs.store import schemas

TOP = 5  # past questions shown per memory (issue 44: "top 5 by weight")
_EVENTS = ["event_id", "episode_id", "memory_id", "source", "value", "weight", "magnitude"]
_EVENT_ORDER = ("created_at", "writer", "seq")

SAME_QUESTION = 0.999  # cosine of a stored float16 query to its float32 self (hand-set)

Rows = Callable[[str, str, Sequence[str], list[str]], list[dict[str, Any]]]
Asked = list[tuple[str, str, np.ndarray]]  # (episode id, question, query vector)
Recent = Callable[[Sequence[str]], dict[str, Asked]]


def past_questions(
    rows: Rows,
    recent: Recent,
    memory_ids: Sequence[str],
    query: np.ndarray,
    index: ContextIndex,
) -> dict[str, list[dict[str, Any]]]:
    """For each of ``memory_ids`` with rewards, its top :data:`TOP` past questions by
    weight. ``recent(ids)``: the episodes this handle logged that injected them
    (:meth:`packs.journal.episodes.EpisodeLog.asked`); ``rows(table, column, values,
    columns)``: the rows whose ``column`` is in ``values``, stored or buffered
    (:meth:`~packs.journal.episodes.EpisodeLog.logged`)."""
    if not memory_ids:
        return {}
    q = np.asarray(query, dtype=np.float32)
    if not index.loaded:  # global mode: the log alone
        return _from_log(rows, memory_ids, q, index)
    known = recent(memory_ids)
    held = {m: h for m in memory_ids if (h := index.evidence(m)) is not None}
    named = {m: _named(vectors, known.get(m, [])) for m, (vectors, _, _) in held.items()}
    missing = [m for m, names in named.items() if any(n is None for n in names)]
    if missing:  # older episodes, or another handle's: read the log
        logged = _logged(rows, missing)
        for m in missing:
            named[m] = _named(held[m][0], known.get(m, []) + logged.get(m, []))
    out = {}
    for memory_id, (vectors, rewards, credit) in held.items():
        entries = [
            (name[0], name[1], vectors[j])
            for j, name in enumerate(named[memory_id])
            if name is not None
        ]
        out[memory_id] = _top(entries, rewards, credit, q, index, named[memory_id])
    return out


def _named(vectors: np.ndarray, known: Asked) -> list[tuple[str, str] | None]:
    """Each stored query's episode (id, question) among ``known``, matched by vector."""
    if not known or not len(vectors):
        return [None] * len(vectors)
    matrix = np.array([v for _, _, v in known], dtype=np.float32)
    sims = np.asarray(vectors, dtype=np.float32) @ matrix.T
    best = sims.argmax(axis=1)
    return [
        (known[b][0], known[b][1]) if sims[j, b] >= SAME_QUESTION else None
        for j, b in enumerate(best)
    ]


def _top(
    entries: list[tuple[str, str, np.ndarray]],
    rewards: np.ndarray,
    credit: np.ndarray,
    q: np.ndarray,
    index: ContextIndex,
    names: list[tuple[str, str] | None],
) -> list[dict[str, Any]]:
    """The top :data:`TOP` named entries by kernel weight times credit."""
    keep = [j for j, name in enumerate(names) if name is not None]
    if not keep:
        return []
    rule = index.rule
    vectors = np.array([v for _, _, v in entries], dtype=np.float32)
    cosines = vectors @ q
    r, c = np.asarray(rewards)[keep], np.asarray(credit)[keep]
    kernel = rule.kernel.weights(cosines, r, rule.theta, index) * c
    top = np.lexsort((-cosines, -kernel))[:TOP]
    return [
        {
            "episode_id": entries[j][0],
            "question": entries[j][1],
            "similarity": float(cosines[j]),
            "reward": float(r[j]),
            "credit": float(c[j]),
            "weight": float(kernel[j]),
        }
        for j in top
    ]


def _events(rows: Rows, memory_ids: Sequence[str], history: int) -> dict[str, list[dict[str, Any]]]:
    """Each memory's newest ``history`` rewards since its last revision, oldest first."""
    events = rows(schemas.REWARD_EVENTS, "memory_id", list(memory_ids), [*_EVENTS, *_EVENT_ORDER])
    events.sort(key=lambda e: tuple(e[c] for c in _EVENT_ORDER))
    per_memory: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event["source"] == REVISION_SOURCE:  # a revision starts the history afresh
            per_memory[event["memory_id"]] = []
        elif event["weight"] > 0:
            per_memory.setdefault(event["memory_id"], []).append(event)
    return {m: h[-history:] for m, h in per_memory.items() if h}


def _questions(rows: Rows, episode_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    found = rows(schemas.EPISODES, "id", episode_ids, ["id", "query_text", "query_embedding"])
    return {e["id"]: e for e in found}


def _logged(rows: Rows, memory_ids: Sequence[str]) -> dict[str, Asked]:
    """The episodes each memory was rewarded in, from the log."""
    kept = _events(rows, memory_ids, 10**9)
    asked = _questions(rows, sorted({e["episode_id"] for h in kept.values() for e in h}))
    return {
        m: [
            (
                e["episode_id"],
                asked[e["episode_id"]]["query_text"],
                np.asarray(asked[e["episode_id"]]["query_embedding"], dtype=np.float32),
            )
            for e in history
            if e["episode_id"] in asked
        ]
        for m, history in kept.items()
    }


def _from_log(
    rows: Rows, memory_ids: Sequence[str], q: np.ndarray, index: ContextIndex
) -> dict[str, list[dict[str, Any]]]:
    """The evidence read from the log alone (no contextual index)."""
    kept = _events(rows, memory_ids, index.rule.history)
    asked = _questions(rows, sorted({e["episode_id"] for h in kept.values() for e in h}))
    out = {}
    for memory_id, history in kept.items():
        found = [e for e in history if e["episode_id"] in asked]
        if not found:
            continue
        pairs = [history_entry(e["value"], e["weight"], e["source"], e["magnitude"]) for e in found]
        entries = [
            (
                e["episode_id"],
                asked[e["episode_id"]]["query_text"],
                np.asarray(asked[e["episode_id"]]["query_embedding"], dtype=np.float32),
            )
            for e in found
        ]
        rewards = np.array([p[0] for p in pairs])
        credit = np.array([p[1] for p in pairs])
        names: list[tuple[str, str] | None] = [(e[0], e[1]) for e in entries]
        out[memory_id] = _top(entries, rewards, credit, q, index, names)
    return out
