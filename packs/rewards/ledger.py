"""The reward ledger: one typed ``reward_events`` row per rewarded memory, buffered with
the step that moves the memory's utility online."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from datetime import UTC, datetime

import numpy as np
from numpy.typing import NDArray

from packs.journal.write_buffer import WriteBuffer
from packs.learning.ema import REVISION_SOURCE, REVISION_STEP, LearnedState, RewardStep, fold
from packs.learning.state import Event, LearningState, Moved
from packs.rewards.idempotency import IdempotencyKeys
from packs.store import schemas
from packs.store.rows import stable_hash


def event_id(episode_id: str, key: str, memory_id: str) -> str:
    """One reward event's id: the same (episode, key, memory) from any process is one
    event. Packs written before issue 23 hold ids of (key, memory) alone; they stay
    readable, and a redelivery is still found by (episode, key) in the log."""
    return "rw_" + stable_hash("episode", episode_id, key, memory_id)


class RewardLedger:
    """Buffers reward events and their steps for one handle (a named ``writer``)."""

    def __init__(
        self,
        buffer: WriteBuffer,
        learning: LearningState,
        keys: IdempotencyKeys,
        writer: str,
    ) -> None:
        self._buffer = buffer
        self._learning = learning
        self._keys = keys
        self.writer = writer
        self._seq = itertools.count()

    def record(
        self,
        episode_id: str,
        targets: list[str],
        step: RewardStep,
        query: NDArray[np.floating],
        *,
        key: str,
        source: str,
        signal: str,
        magnitude: float | None,
        keyed: bool = False,
        shares: Mapping[str, float] | None = None,
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Buffer one reward event per target and hand its step to the learned state;
        return the new utilities and what the next recall of ``query`` ranks them by.

        ``keyed``: the caller's idempotency key, which another process may receive too
        (a webhook retried to another worker). Event ids derive from the episode, the key
        and the memory (a key names one reward of one episode), and keyed
        events are written by ``merge_insert`` on that id, so whichever process commits
        second stores nothing and the replay of the log counts the reward once.
        ``shares`` scales the step's weight per target (a failure's shared blame);
        ``query`` is the episode's query vector (the contextual index's key).
        """
        ids = {memory_id: event_id(episode_id, key, memory_id) for memory_id in targets}
        event = Event(source, magnitude, episode_id, ids)
        moved, ranked = self._learning.reward(targets, step, query, shares, event)
        now = datetime.now(UTC)
        rows = [
            self._row(ids[m], key, episode_id, m, source, signal, magnitude, q, now)
            for m, q in moved.items()
        ]
        utilities = {m: q.after for m, q in moved.items()}
        self._keys.remember(episode_id, key)  # under the handle's lock, with its rows
        self._buffer.add_rows(schemas.REWARD_EVENTS, rows)
        if keyed:
            self._buffer.keyed.update(ids[m] for m in moved)
        return utilities, ranked

    def revision(self, memory_id: str, version_id: str, signal: str) -> float:
        """Buffer the event of a revision that reset ``memory_id``'s utility
        (:data:`~packs.learning.ema.REVISION_STEP`, source ``revision``, ``signal`` the
        fields that changed, ``episode_id`` the revision's version id); returns the
        utility it had."""
        before = self._learning.current([memory_id]).get(memory_id, LearnedState(0.0, 0.0, 0))
        after = fold([REVISION_STEP], before)
        self._learning.record(memory_id, REVISION_STEP, None, REVISION_SOURCE, None)
        q, now = Moved(REVISION_STEP, before.utility, after.utility), datetime.now(UTC)
        event = event_id(version_id, version_id, memory_id)
        row = self._row(
            event, version_id, version_id, memory_id, REVISION_SOURCE, signal, None, q, now
        )
        self._buffer.add_rows(schemas.REWARD_EVENTS, [row])
        return before.utility

    def _row(
        self,
        event: str,
        key: str,
        episode_id: str,
        memory_id: str,
        source: str,
        signal: str,
        magnitude: float | None,
        q: Moved,
        now: datetime,
    ) -> dict[str, object]:
        step = q.step
        return {
            "event_id": event,
            "idempotency_key": key,
            "episode_id": episode_id,
            "memory_id": memory_id,
            "source": source,
            "signal": signal,
            "magnitude": magnitude,
            "value": step.value,
            "weight": step.weight,
            "alpha": step.alpha,
            "confidence_rate": step.confidence_rate,
            "q_before": q.before,
            "q_after": q.after,
            "created_at": now,
            "writer": self.writer,
            "seq": next(self._seq),
        }
