"""Idempotency keys of reward calls: a redelivered reward is applied once.

The truth is the buffer and the stored ``reward_events`` log; the in-memory keys are
only a bounded cache of the most recent ones, so memory stays flat however many
rewards a long-lived handle applies (docs/durability.md).
"""

from __future__ import annotations

from collections import OrderedDict

from packs.journal.write_buffer import WriteBuffer
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore

# Idempotency keys remembered in memory (the most recent; hand-set: about 1 MB of keys).
# Only a fast path: an older key is found in the buffer or in ``reward_events``.
SEEN_KEYS_BOUND = 10_000


class IdempotencyKeys:
    """Which idempotency keys were recorded: recent ones in memory, the rest in the log."""

    def __init__(self, store: PackStore, buffer: WriteBuffer, bound: int = SEEN_KEYS_BOUND):
        self._store = store
        self._buffer = buffer
        self.bound = bound
        self._recent: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._recent)

    def seen(self, key: str) -> bool:
        """Was a reward with idempotency ``key`` recorded (buffered or stored)?"""
        if key in self._recent:
            self._recent.move_to_end(key)
            return True
        pending = self._buffer.pending_rows(schemas.REWARD_EVENTS)
        if any(row["idempotency_key"] == key for row in pending):
            return True
        return self._store.count(schemas.REWARD_EVENTS, f"idempotency_key = {sql_literal(key)}") > 0

    def remember(self, key: str) -> None:
        self._recent[key] = None
        self._recent.move_to_end(key)
        while len(self._recent) > self.bound:
            self._recent.popitem(last=False)
