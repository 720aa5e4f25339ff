"""The learned state a handle sees: stored utility, confidence and reward count, with
the steps still buffered applied on top (so buffering never changes a ranking)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packs.errors import UnknownMemory
from packs.rewards.ema import LearnedState
from packs.store import schemas
from packs.store.filters import in_clause
from packs.store.gateway import PackStore
from packs.store.write_buffer import WriteBuffer

LEARNED_COLUMNS = ["id", "utility", "confidence", "usage_count", "reward_count", "last_used_at"]
STORED_CACHE = 200_000  # learned states remembered (a few MB)


def learned_of(row: Mapping[str, Any]) -> LearnedState:
    return LearnedState(float(row["utility"]), float(row["confidence"]), int(row["reward_count"]))


class LearnedStates:
    """Stored learned state of the memories this handle has read, plus pending steps.

    The stored values are remembered so a reward after a recall needs no table read;
    every recall and flush refreshes them.
    """

    def __init__(self, store: PackStore, buffer: WriteBuffer) -> None:
        self._store = store
        self._buffer = buffer
        self._stored: dict[str, LearnedState] = {}

    def effective(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        """Pending steps applied to a freshly read stored state, which is remembered."""
        if len(self._stored) >= STORED_CACHE:
            self._stored.clear()
        self._stored[memory_id] = stored
        return self._buffer.effective(memory_id, stored)

    def pending(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        """Pending steps applied to ``stored``, which is not remembered."""
        return self._buffer.effective(memory_id, stored)

    def store(self, memory_id: str, state: LearnedState) -> None:
        """Remember what a flush just wrote for ``memory_id``."""
        self._stored[memory_id] = state

    def forget(self) -> None:
        """Drop remembered stored states (after the table was rewritten elsewhere)."""
        self._stored.clear()

    def current(self, ids: list[str]) -> dict[str, LearnedState]:
        """Current learned state of ``ids``: stored values plus pending steps."""
        missing = [memory_id for memory_id in ids if memory_id not in self._stored]
        if missing:
            rows = self._store.get(
                schemas.MEMORIES, in_clause("id", missing), LEARNED_COLUMNS, len(missing)
            )
            for row in rows:
                self._stored[row["id"]] = learned_of(row)
        out = {}
        for memory_id in ids:
            if memory_id not in self._stored:
                raise UnknownMemory(
                    f"Pack {self._store.location.name!r} has no memory {memory_id!r}."
                )
            out[memory_id] = self._buffer.effective(memory_id, self._stored[memory_id])[0]
        return out
