"""Other handles' forgets, applied to this handle (docs/forgetting.md).

A forget deletes rows in storage, which every handle's reads see within its read
consistency. What a handle holds in memory it learns from the ``forgotten`` table
(:mod:`packs.store.tombstones`): :meth:`ForgetWatch.poll`, called before a recall ranks
(at most once every :data:`POLL_SECONDS`) and right before every flush writes (always,
at the newest commit: a row of a forget made before the flush never lands), reads the
tombstones written since it last looked and drops the forgotten memories and episodes from the
learned state (stored and pending values, the contextual index and its links, which load
again from the log), from the episode cache and from the rows buffered to write, with the
episodes buffered in a forgotten scope (known by its digest).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from packs.errors import PackNotFound
from packs.journal.episodes import EpisodeLog
from packs.journal.write_buffer import WriteBuffer
from packs.learning.state import LearningState
from packs.store import schemas, tombstones
from packs.store.gateway import PackStore
from packs.store.scopes import recalled_in

# Hand-set: within the shared-learning bound (another process's next recall within 2 s,
# issue 14) with the storage layer's 1 s read consistency, at one version check a second.
POLL_SECONDS = 1.0
ABSENT_RECHECK_SECONDS = 30.0  # a Pack older than the table, opened read-only
# Buffered rows of a forgotten memory or episode, by table and key column.
_BY_MEMORY = ((schemas.RETRIEVAL_LOG, "item_id"), (schemas.REWARD_EVENTS, "memory_id"))
_BY_EPISODE = (
    (schemas.EPISODES, "id"),
    (schemas.EPISODE_OUTCOMES, "id"),
    (schemas.RETRIEVAL_LOG, "episode_id"),
    (schemas.VALIDATIONS, "episode_id"),
)


class ForgetWatch:
    """Keeps one handle's memory free of what any handle forgot."""

    def __init__(
        self,
        store: PackStore,
        buffer: WriteBuffer,
        learning: LearningState,
        episodes: EpisodeLog,
        lock: threading.RLock,
    ) -> None:
        self._store = store
        self._lock = lock  # the handle's: what this handle holds changes under it
        self._buffer = buffer
        self._learning = learning
        self._episodes = episodes
        self._seen: set[str] = set()
        self._version: int | None = None
        self._next_look = 0.0

    def seen(self, forget_id: str) -> None:
        """A forget this handle made itself (and applied already)."""
        self._seen.add(forget_id)

    def poll(self, *, fresh: bool = False) -> int:
        """Apply the forgets other handles made since the last look; how many. ``fresh``
        (a flush about to write): look now, at the newest commit, whenever the last look
        was; else at most every :data:`POLL_SECONDS`, within the read consistency."""
        now = time.monotonic()
        if now < self._next_look and not fresh:
            return 0
        self._next_look = now + POLL_SECONDS
        try:
            if fresh:
                version = self._store.latest_version(schemas.FORGOTTEN)
            else:
                version = self._store.version(schemas.FORGOTTEN)
        except PackNotFound:  # a Pack older than schema 2, opened read-only
            self._next_look = now + ABSENT_RECHECK_SECONDS
            return 0
        if version == self._version:
            return 0
        new = [s for s in tombstones.read(self._store) if s["forget_id"] not in self._seen]
        if new:
            with self._lock:
                self.apply(
                    [m for stone in new for m in stone["memory_ids"] or []],
                    [e for stone in new for e in stone["episode_ids"] or []],
                    [d for stone in new for d in stone["scopes"] or []],
                )
            self._seen.update(stone["forget_id"] for stone in new)
        self._version = version
        return len(new)

    def apply(
        self, memory_ids: Iterable[str], episode_ids: Iterable[str], scopes: Iterable[str] = ()
    ) -> None:
        """Drop these memories and episodes, and the episodes buffered in the scopes of
        these digests, from everything this handle holds."""
        memories, episodes, digests = set(memory_ids), set(episode_ids), set(scopes)
        if digests:
            salts = tombstones.forget_salts(self._store)
            pending = self._buffer.pending_rows(schemas.EPISODES)
            episodes |= {
                row["id"] for row in pending if recalled_in(row.get("filter_json"), digests, salts)
            }
        self._learning.forget(memories)
        self._episodes.forget(episodes)
        for ids, keys in ((memories, _BY_MEMORY), (episodes, _BY_EPISODE)):
            for table, column in keys if ids else ():
                self._buffer.discard(table, column, ids)
