"""Write buffering for the hot path: log rows and pending learning, flushed in batches.

Every LanceDB write is a commit and a new fragment, so one commit per recall would
fragment the tables. Recalls and rewards are buffered here and flushed together when
``flush_rows`` rows are pending or ``flush_seconds`` have passed since the first pending
row (checked on each call), on ``Pack.flush()``, on ``Pack.close()`` and at interpreter
exit. See ``docs/durability.md`` for what a crash may lose.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa

from packs.rewards.ema import LearnedState, RewardStep, fold


@dataclass
class PendingMemory:
    """Changes to one memory's learned columns not yet written to ``memories``."""

    uses: int = 0
    last_used_at: datetime | None = None
    steps: list[RewardStep] = field(default_factory=list)


class WriteBuffer:
    """Pending log rows per table, and pending learning per memory id."""

    def __init__(self, flush_rows: int, flush_seconds: float) -> None:
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self._rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._memories: dict[str, PendingMemory] = {}
        self._since: float | None = None
        # Tables whose rows came back from a failed flush: their commit may have landed,
        # so the next write must be idempotent (merge_insert) rather than an append.
        self.retried: set[str] = set()
        # Buffered reward events under a caller's idempotency key: another process may
        # receive the same key, so these are written by merge on their event id.
        self.keyed: set[str] = set()

    # --- adding ------------------------------------------------------------------------

    def add_rows(self, table: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            self._rows[table].extend(rows)
            self._since = self._since or time.monotonic()

    def add_use(self, memory_id: str, at: datetime) -> None:
        pending = self._memories.setdefault(memory_id, PendingMemory())
        pending.uses += 1
        pending.last_used_at = at
        self._since = self._since or time.monotonic()

    def add_step(self, memory_id: str, step: RewardStep) -> None:
        self._memories.setdefault(memory_id, PendingMemory()).steps.append(step)
        self._since = self._since or time.monotonic()

    # --- reading -----------------------------------------------------------------------

    def pending_rows(self, table: str) -> list[dict[str, Any]]:
        return self._rows.get(table, [])

    def effective(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        """The learned state with pending steps applied, and the pending use count."""
        pending = self._memories.get(memory_id)
        if pending is None:
            return stored, 0
        return fold(pending.steps, stored), pending.uses

    def row_count(self) -> int:
        return sum(len(r) for r in self._rows.values()) + sum(
            len(p.steps) + p.uses for p in self._memories.values()
        )

    def due(self) -> bool:
        if self._since is None:
            return False
        if self.row_count() >= self.flush_rows:
            return True
        return time.monotonic() - self._since >= self.flush_seconds

    def empty(self) -> bool:
        return self._since is None

    # --- draining ----------------------------------------------------------------------

    def drain(
        self, schemas: dict[str, pa.Schema]
    ) -> tuple[dict[str, pa.Table], dict[str, PendingMemory]]:
        """Take everything pending: Arrow tables per log table, and pending memories."""
        tables = {
            name: pa.Table.from_pylist(rows, schema=schemas[name])
            for name, rows in self._rows.items()
            if rows
        }
        memories = self._memories
        self._rows = defaultdict(list)
        self._memories = {}
        self._since = None
        return tables, memories

    def restore(self, tables: dict[str, pa.Table], memories: dict[str, PendingMemory]) -> None:
        """Put back what a failed flush had not written yet, ahead of anything newer."""
        for name, table in tables.items():
            self._rows[name] = table.to_pylist() + self._rows.get(name, [])
            self.retried.add(name)
        for memory_id, pending in memories.items():
            newer = self._memories.get(memory_id)
            if newer is not None:
                pending.uses += newer.uses
                pending.steps.extend(newer.steps)
                pending.last_used_at = newer.last_used_at or pending.last_used_at
            self._memories[memory_id] = pending
        if tables or memories:
            self._since = self._since or time.monotonic()
