"""The reward ledger: one typed ``reward_events`` row per rewarded memory, buffered with
the step that moves the memory's utility online."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
from numpy.typing import NDArray

from packs.journal.write_buffer import WriteBuffer
from packs.learning.ema import REVISION_SOURCE, REVISION_STEP, LearnedState, RewardStep, fold
from packs.learning.state import LearningState
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
    ) -> dict[str, float]:
        """Buffer one reward event per target and its step; return the new utilities.

        ``keyed``: the caller's idempotency key, which another process may receive too
        (a webhook retried to another worker). Event ids derive from the episode, the key
        and the memory (a key names one reward of one episode), and keyed
        events are written by ``merge_insert`` on that id, so whichever process commits
        second stores nothing and the replay of the log counts the reward once.
        ``shares`` scales the step's weight per target (a failure's shared blame);
        ``query`` is the episode's query vector (the contextual index's key).
        """
        states = self._learning.current(targets)
        now = datetime.now(UTC)
        rows, utilities = [], {}
        given = step
        for memory_id in [m for m in targets if m in states]:  # not forgotten meanwhile
            share = 1.0 if shares is None else shares.get(memory_id, 1.0)
            step = given if share == 1.0 else replace(given, weight=given.weight * share)
            before = states[memory_id]
            after = fold([step], before)
            q = (before.utility, after.utility)
            row = self._row(key, episode_id, memory_id, source, signal, magnitude, step, q, now)
            event = str(row["event_id"])
            self._learning.record(memory_id, step, query, source, magnitude, event, episode_id)
            utilities[memory_id] = after.utility
            rows.append(row)
        self._buffer.add_rows(schemas.REWARD_EVENTS, rows)
        if keyed:
            self._buffer.keyed.update(str(row["event_id"]) for row in rows)
        self._keys.remember(episode_id, key)
        return utilities

    def revision(self, memory_id: str, version_id: str, signal: str) -> float:
        """Buffer the event of a revision that reset ``memory_id``'s utility
        (:data:`~packs.learning.ema.REVISION_STEP`, source ``revision``, ``signal`` the
        fields that changed, ``episode_id`` the revision's version id); returns the
        utility it had."""
        before = self._learning.current([memory_id]).get(memory_id, LearnedState(0.0, 0.0, 0))
        after = fold([REVISION_STEP], before)
        self._learning.record(memory_id, REVISION_STEP, None, REVISION_SOURCE, None)
        q, now = (before.utility, after.utility), datetime.now(UTC)
        row = self._row(
            version_id, version_id, memory_id, REVISION_SOURCE, signal, None, REVISION_STEP, q, now
        )
        self._buffer.add_rows(schemas.REWARD_EVENTS, [row])
        return before.utility

    def _row(
        self,
        key: str,
        episode_id: str,
        memory_id: str,
        source: str,
        signal: str,
        magnitude: float | None,
        step: RewardStep,
        q: tuple[float, float],
        now: datetime,
    ) -> dict[str, object]:
        return {
            "event_id": event_id(episode_id, key, memory_id),
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
            "q_before": q[0],
            "q_after": q[1],
            "created_at": now,
            "writer": self.writer,
            "seq": next(self._seq),
        }
