"""Idempotency keys of reward calls: a redelivered reward is applied once.

A key names one reward of one episode: the same key on another episode (another
caller's, another scope's) is another reward, never a duplicate (issue 23). The truth
is the buffer and the stored ``reward_events`` log; the in-memory keys are only a
bounded cache of the most recent ones, so memory stays flat however many rewards a
long-lived handle applies (docs/durability.md).
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
        self._recent: OrderedDict[tuple[str, str], None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._recent)

    def seen(self, episode_id: str, key: str) -> bool:
        """Was a reward of ``episode_id`` with idempotency ``key`` recorded (buffered or
        stored)?"""
        named = (episode_id, key)
        if named in self._recent:
            self._recent.move_to_end(named)
            return True
        pending = self._buffer.pending_rows(schemas.REWARD_EVENTS)
        if any((row["episode_id"], row["idempotency_key"]) == named for row in pending):
            return True
        where = f"idempotency_key = {sql_literal(key)} AND episode_id = {sql_literal(episode_id)}"
        return self._store.count(schemas.REWARD_EVENTS, where) > 0

    def remember(self, episode_id: str, key: str) -> None:
        named = (episode_id, key)
        self._recent[named] = None
        self._recent.move_to_end(named)
        while len(self._recent) > self.bound:
            self._recent.popitem(last=False)
