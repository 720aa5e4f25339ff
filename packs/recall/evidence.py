"""The learned evidence behind ``U(m|q)`` for an explained recall (packs/recall/explain.py):
the past questions a memory was rewarded on, each with its similarity to this question,
its reward and the weight the contextual utility gave it, the top 5 by weight.

Read from the reward log and the episodes (stored, and still in this handle's buffer),
the way the contextual index was filled (``packs/learning/feed.py``): the newest
``rule.history`` rewards since the memory's last revision, each weighted by the rule's
transfer kernel at its question's similarity times the reward's own weight (its credit).
Read only when ``explain`` is asked, only for the items recall returned.
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

Rows = Callable[[str, str, Sequence[str], list[str]], list[dict[str, Any]]]


def past_questions(
    rows: Rows, memory_ids: Sequence[str], query: np.ndarray, index: ContextIndex
) -> dict[str, list[dict[str, Any]]]:
    """For each of ``memory_ids`` with rewards, its top :data:`TOP` past questions by
    weight. ``rows(table, column, values, columns)`` reads the rows whose ``column`` is in
    ``values``, stored or buffered (:meth:`packs.journal.episodes.EpisodeLog.logged`)."""
    if not memory_ids:
        return {}
    rule = index.rule
    events = rows(schemas.REWARD_EVENTS, "memory_id", list(memory_ids), [*_EVENTS, *_EVENT_ORDER])
    events.sort(key=lambda e: tuple(e[c] for c in _EVENT_ORDER))
    per_memory: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event["source"] == REVISION_SOURCE:  # a revision starts the history afresh
            per_memory[event["memory_id"]] = []
        elif event["weight"] > 0:
            per_memory.setdefault(event["memory_id"], []).append(event)
    kept = {m: history[-rule.history :] for m, history in per_memory.items() if history}
    episode_ids = sorted({e["episode_id"] for history in kept.values() for e in history})
    episodes = rows(schemas.EPISODES, "id", episode_ids, ["id", "query_text", "query_embedding"])
    asked = {e["id"]: e for e in episodes}
    q = np.asarray(query, dtype=np.float32)
    out: dict[str, list[dict[str, Any]]] = {}
    for memory_id, history in kept.items():
        known = [e for e in history if e["episode_id"] in asked]
        if not known:
            continue
        entries = [
            history_entry(e["value"], e["weight"], e["source"], e["magnitude"]) for e in known
        ]
        rewards = np.array([reward for reward, _ in entries])
        credit = np.array([weight for _, weight in entries])
        vectors = np.array(
            [asked[e["episode_id"]]["query_embedding"] for e in known], dtype=np.float16
        )
        cosines = vectors.astype(np.float32) @ q
        kernel = rule.kernel.weights(cosines, rewards, rule.theta, index) * credit
        top = np.lexsort((-cosines, -kernel))[:TOP]
        out[memory_id] = [
            {
                "episode_id": known[j]["episode_id"],
                "question": asked[known[j]["episode_id"]]["query_text"],
                "similarity": float(cosines[j]),
                "reward": float(rewards[j]),
                "credit": float(credit[j]),
                "weight": float(kernel[j]),
                "source": known[j]["source"],
            }
            for j in top
        ]
    return out
