"""Memories on probation (admission control, issue 30; docs/admission.md).

A held memory is stored with ``held_at``, ``held_reason`` and, when the caller named
one, ``held_episode``: the episode it was remembered from. Recall and search leave it out
(:data:`packs.store.lifecycle.NOT_HELD`) until it is confirmed, which clears the three
columns: by a repeat (a ``remember`` that merges into it, or one refused as saying what
it says) or by a positive reward of its episode (:meth:`Probation.confirm_episode`, from
the reward service). ``wolfie memory held`` lists what waits.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from packs.admission.policy import Neighbour
from packs.recall.ranking import similarity_from_distance
from packs.records import HeldMemory
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.gateway import PackStore
from packs.store.lifecycle import HELD, NOT_HELD, NOT_SUPERSEDED, held_clause, marks_of
from packs.store.scopes import SCOPE_KEY, same_scope_clause, visible_clause

_CLEARED = ("id", "held_at", "held_reason", "held_episode", "updated_at")
_LISTED = [
    "id",
    "intent_text",
    "response_summary",
    "outcome",
    "signal_polarity",
    "metadata_json",
    "held_at",
    "held_reason",
    "held_episode",
]


class Probation:
    """Confirms held memories and reads what a new one's neighbours earned."""

    def __init__(self, store: PackStore) -> None:
        self._store = store

    def confirm(self, memory_ids: list[str], now: datetime) -> list[str]:
        """Clear the hold of those of ``memory_ids`` still held; the ids confirmed."""
        if not memory_ids:
            return []
        self._store.latest_version(schemas.MEMORIES)
        clause = f"{in_clause('id', memory_ids)} AND {HELD} IS NOT NULL"
        held = self._store.scan(schemas.MEMORIES, ["id"], clause)["id"].to_pylist()
        if held:
            full = self._store.schema(schemas.MEMORIES)
            columns: dict[str, list[Any]] = {
                "id": held,
                "held_at": [None] * len(held),
                "held_reason": [None] * len(held),
                "held_episode": [None] * len(held),
                "updated_at": [now] * len(held),
            }
            table = pa.table(columns, schema=pa.schema([full.field(c) for c in _CLEARED]))
            self._store.merge(schemas.MEMORIES, table, "id", update=True, insert=False)
        return held

    def confirm_episode(self, episode_id: str, now: datetime) -> list[str]:
        """Confirm the memories held from ``episode_id`` (its reward was positive)."""
        clause = f"held_episode = {sql_literal(episode_id)} AND {HELD} IS NOT NULL"
        found = self._store.scan(schemas.MEMORIES, ["id"], clause)["id"].to_pylist()
        return self.confirm(found, now)

    def neighbours(
        self, vector: np.ndarray, scope: str | None, k: int, clause: str
    ) -> list[Neighbour]:
        """The ``k`` nearest current, admitted memories of ``scope`` (``clause`` adds the
        expiry), with their track records."""
        where = f"kind = {sql_literal(schemas.KIND_MEMORY)} AND {same_scope_clause(scope)}"
        where += f" AND {NOT_SUPERSEDED} AND {NOT_HELD} AND {clause}"
        found = self._store.search(
            schemas.MEMORIES, vector, ["utility", "reward_count"], where, limit=k
        )
        similarity = similarity_from_distance(found["_distance"].to_numpy())
        return [
            Neighbour(float(s), float(u), int(n))
            for s, u, n in zip(
                similarity,
                found["utility"].to_pylist(),
                found["reward_count"].to_pylist(),
                strict=True,
            )
        ]


def held_memories(
    store: PackStore, scope: str | None = None, *, every: bool = False
) -> list[HeldMemory]:
    """The memories on probation, oldest first: those ``scope`` can see (its own and the
    shared ones), or every one with ``every`` (an operator's listing)."""
    clause = f"kind = {sql_literal(schemas.KIND_MEMORY)} AND {held_clause(store)}"
    if not every:
        clause += f" AND {visible_clause(scope)}"
    rows = store.scan(schemas.MEMORIES, marks_of(store, _LISTED), clause).to_pylist()
    return [
        HeldMemory(
            id=r["id"],
            intent=r["intent_text"],
            response=r["response_summary"],
            outcome=r["outcome"],
            polarity=r["signal_polarity"],
            scope=json.loads(r["metadata_json"] or "{}").get(SCOPE_KEY),
            held_at=r["held_at"],
            reason=r["held_reason"],
            episode_id=r["held_episode"],
        )
        for r in sorted(rows, key=lambda r: r["held_at"])
    ]
