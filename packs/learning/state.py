"""One handle's learned state: the single owner of what a Pack has learned, per handle.

A memory's learned values are stored in two tables only: ``reward_events`` (the
append-only log) and the ``memories`` columns the log explains (``utility``,
``confidence``, ``reward_count``, ``usage_count``). Everything else a handle knows about
them lives in one :class:`LearningState`:

- the stored values it has read (so a reward after a recall reads no table);
- the reward steps and uses not written yet (so buffering never changes a ranking);
- the contextual index of rewarded queries (``U(m | q)``, associative links), fed by
  other processes' rewards through :class:`~packs.learning.feed.ContextFeed`.

Recall reads through :meth:`LearningState.view`, the reward ledger records through
:meth:`LearningState.reward`, and the flush writes through :meth:`LearningState.write`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from packs.lazy import lazy_module
from packs.learning.context import ContextIndex, ContextRule, history_entry
from packs.learning.ema import REVISION_SOURCE, LearnedState, RewardStep, fold
from packs.learning.feed import ContextFeed
from packs.learning.online import ONLINE_COLUMNS, fold_log
from packs.store import schemas
from packs.store.filters import in_clause
from packs.store.gateway import PackStore
from packs.store.merges import folded_into

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

LEARNED_COLUMNS = ["id", "utility", "confidence", "usage_count", "reward_count", "last_used_at"]
STORED_CACHE = 200_000  # stored learned states remembered per handle (a few MB)
# Rewards recorded before the contextual index loads, kept to join it (hand-set: a
# handle that only rewards, in global mode, keeps at most this many, about 15 MB).
UNFED_BOUND = 10_000
_UNKNOWN = 2**63  # the reward count a flush writes, before its fold has counted it


def learned_of(row: Any) -> LearnedState:
    """The stored learned state of a ``memories`` row."""
    return LearnedState(float(row["utility"]), float(row["confidence"]), int(row["reward_count"]))


@dataclass(frozen=True)
class Event:
    """A reward's source, raw magnitude, episode, and each target's event id."""

    source: str
    magnitude: float | None
    episode: str
    ids: Mapping[str, str]


@dataclass(frozen=True)
class Moved:
    """One target of a reward: its step, its utility before and after it."""

    step: RewardStep
    before: float
    after: float


@dataclass
class Pending:
    """What one memory learned on this handle and the ``memories`` table has not yet."""

    uses: int = 0
    last_used_at: datetime | None = None
    steps: list[RewardStep] = field(default_factory=list)


class LearnedView:
    """What recall ranks one query by: each memory's learned state as this handle sees
    it, its utility for this query, and the memories this query reaches by links."""

    def __init__(self, state: LearningState, query: NDArray[np.floating], contextual: bool) -> None:
        self._state = state
        self._query = query
        self.contextual = contextual  # ranked by U(m | q), else by the global Q (MemRL)

    def learned(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        """Stored values (fresh from the table) with the pending steps and uses applied."""
        return self._state.effective(memory_id, stored)

    def assess(self, memory_id: str, global_q: float) -> tuple[float, float]:
        """``U(m | q)`` and the share of it that is evidence from queries like this one
        (:meth:`packs.learning.context.ContextIndex.assess`); the global Q and no share
        in global mode."""
        if not self.contextual:
            return global_q, 0.0
        return self._state.context.assess(memory_id, self._query, global_q)

    def links(self) -> dict[str, float] | None:
        """Memories this query reaches through past questions they helped, with their key
        similarity (docs/contextual.md); None in global mode."""
        return self._state.context.linked(self._query) if self.contextual else None


class LearningState:
    """Everything one handle has learned, read or not yet written (the module docstring)."""

    def __init__(self, store: PackStore, dim: int, rule: ContextRule, writer: str) -> None:
        self._store = store
        self._stored: dict[str, LearnedState] = {}
        self._pending: dict[str, Pending] = {}
        # What a flush took and has not stored yet (it writes without the handle's lock;
        # a failed write leaves it for the next flush): still applied to what recall
        # ranks by, except to a row already stored with it (``_landing``: the reward
        # count the flush's fold writes). Replaced whole, under ``_sent_lock``.
        self._sent: dict[str, Pending] = {}
        self._landing: dict[str, int] = {}
        self._sent_lock = threading.Lock()
        # event id -> (memory id, query, reward, weight, intrinsic, episode), before the load
        self._unfed: dict[
            str, tuple[str, NDArray[np.floating], float, float, bool, str | None]
        ] = {}
        self.context = ContextIndex(dim, rule)
        self._feed = ContextFeed(store, self.context, writer)
        self._memories_schema = schemas.memories_schema(dim)

    # --- recall --------------------------------------------------------------------------

    def loads_next(self) -> bool:
        """The next :meth:`view` fills the contextual index from the whole log (recall
        flushes the handle's own rows before that)."""
        return self.context.rule.mode == "contextual" and not self.context.loaded

    def view(self, query: NDArray[np.floating]) -> LearnedView:
        """The one view recall ranks by, under the index's rule (``settings.context``):
        plain MemRL's global Q in ``global`` mode. In contextual mode the index is brought
        up to date first: filled from the whole log once (:meth:`loads_next`), then fed
        what other writers logged since."""
        contextual = self.context.rule.mode == "contextual"
        if contextual:
            self.sync()
        return LearnedView(self, query, contextual)

    def sync(self) -> None:
        """Load the contextual index from the log once, then keep it current. Rewards this
        handle recorded before the load and had not written yet join it from memory."""
        if not self.context.loaded:
            loaded = self._feed.load()
            for event_id, (memory_id, query, reward, weight, intrinsic, ep) in self._unfed.items():
                if event_id not in loaded:
                    self.context.add(
                        memory_id, query, reward, weight, intrinsic=intrinsic, episode=ep
                    )
            self._unfed.clear()
        else:
            self._feed.sync()

    def ranked(
        self, track_records: dict[str, float], query: NDArray[np.floating]
    ) -> dict[str, float]:
        """What the next recall of ``query`` ranks each memory by, from its global Q
        (``track_records``): ``U(m | q)`` in contextual mode, the global Q otherwise.
        Writes nothing: a cold index loads from the log plus this handle's own unwritten
        rewards."""
        view = self.view(query)
        return {m: view.assess(m, q)[0] for m, q in track_records.items()}

    def effective(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        """Pending steps applied to a freshly read stored state, which is remembered; and
        the pending use count."""
        if len(self._stored) >= STORED_CACHE:
            self._stored.clear()
        self._stored[memory_id] = stored
        return self.pending_applied(memory_id, stored)

    def pending_applied(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        """Pending steps applied to ``stored`` (not remembered), and the pending uses: a
        flush's steps first (unless ``stored`` already holds them), then newer ones."""
        sent, pending = self._sent.get(memory_id), self._pending.get(memory_id)
        if sent is None and pending is None:
            return stored, 0
        steps: list[RewardStep] = []
        uses = 0
        if sent is not None:
            if stored.reward_count < self._landing.get(memory_id, _UNKNOWN):
                steps += sent.steps
            uses += sent.uses
        if pending is not None:
            steps += pending.steps
            uses += pending.uses
        return fold(steps, stored), uses

    def current(self, ids: list[str]) -> dict[str, LearnedState]:
        """Current learned state of ``ids``: stored values plus pending steps. An id the
        table no longer holds (forgotten since it was recalled) is left out."""
        missing = [memory_id for memory_id in ids if memory_id not in self._stored]
        if missing:
            rows = self._store.get(
                schemas.MEMORIES, in_clause("id", missing), LEARNED_COLUMNS, len(missing)
            )
            for row in rows:
                self._stored[row["id"]] = learned_of(row)
        return {
            memory_id: self.pending_applied(memory_id, self._stored[memory_id])[0]
            for memory_id in ids
            if memory_id in self._stored
        }

    # --- recording -----------------------------------------------------------------------

    def use(self, memory_ids: Iterable[str], at: datetime) -> None:
        """One use of each injected memory."""
        for memory_id in memory_ids:
            pending = self._pending.setdefault(memory_id, Pending())
            pending.uses += 1
            pending.last_used_at = at

    def record(
        self,
        memory_id: str,
        step: RewardStep,
        query: NDArray[np.floating] | None,
        source: str,
        magnitude: float | None,
        event_id: str | None = None,
        episode: str | None = None,
    ) -> None:
        """One reward step for ``memory_id``, and its (query, reward) in the contextual
        index (``query``: the episode's query vector; ``episode``: its id, for slate
        credit). Before the index is loaded, the entry waits under its ``event_id`` and
        joins at the load unless the log already holds it."""
        self._pending.setdefault(memory_id, Pending()).steps.append(step)
        if source == REVISION_SOURCE:
            self.context.drop(memory_id)
            self._unfed = {e: v for e, v in self._unfed.items() if v[0] != memory_id}
        elif step.weight > 0 and query is not None:
            reward, weight = history_entry(step.value, step.weight, source, magnitude)
            intrinsic = source == "intrinsic"
            if self.context.loaded:
                self.context.add(
                    memory_id, query, reward, weight, intrinsic=intrinsic, episode=episode
                )
            elif event_id is not None:
                if len(self._unfed) >= UNFED_BOUND:  # the oldest goes: its row is in the log
                    self._unfed.pop(next(iter(self._unfed)))
                self._unfed[event_id] = (memory_id, query, reward, weight, intrinsic, episode)

    def reward(
        self,
        targets: list[str],
        step: RewardStep,
        query: NDArray[np.floating],
        shares: Mapping[str, float] | None,
        event: Event,
    ) -> tuple[dict[str, Moved], dict[str, float]]:
        """Record one reward's step for each of ``targets`` still held (weight scaled by
        ``shares``: a failure's shared blame); each one's step, utility before and after,
        and what the next recall of ``query`` ranks it by (:meth:`ranked`)."""
        states = self.current(targets)
        moved: dict[str, Moved] = {}
        for memory_id in [m for m in targets if m in states]:  # not forgotten meanwhile
            share = 1.0 if shares is None else shares.get(memory_id, 1.0)
            own = step if share == 1.0 else replace(step, weight=step.weight * share)
            before, after = states[memory_id].utility, fold([own], states[memory_id]).utility
            ids = event.ids[memory_id]
            self.record(memory_id, own, query, event.source, event.magnitude, ids, event.episode)
            moved[memory_id] = Moved(own, before, after)
        return moved, self.ranked({m: q.after for m, q in moved.items()}, query)

    def _add_uses(self, ids: list[str], uses: int, committed: Callable[[str], None]) -> None:
        """``usage_count += uses`` for ``ids``. A memory a racing near-duplicate folded
        into another since it was recalled (:mod:`packs.near_duplicates`) passes its uses
        to the memory it was folded into; one forgotten meanwhile takes none."""
        updated = self._store.increment(schemas.MEMORIES, ids, "usage_count", uses, "last_used_at")
        committed(schemas.MEMORIES)
        if updated >= len(ids):
            return
        present = self._store.scan(schemas.MEMORIES, ["id"], in_clause("id", ids))
        gone = sorted(set(ids) - set(present["id"].to_pylist()))
        moved = Counter(folded_into(self._store, gone).values())  # winner: ids folded in
        by_uses: dict[int, list[str]] = {}
        for winner, count in moved.items():
            by_uses.setdefault(count * uses, []).append(winner)
        for total, winners in sorted(by_uses.items()):
            self._store.increment(schemas.MEMORIES, winners, "usage_count", total, "last_used_at")
            committed(schemas.MEMORIES)

    def pending_count(self) -> int:
        """Steps and uses not stored yet: waiting, or taken by a flush."""
        batches = (self._sent.values(), self._pending.values())
        return sum(len(p.steps) + p.uses for batch in batches for p in batch)

    def forget(self, memory_ids: Iterable[str]) -> None:
        """Drop what this handle holds of forgotten memories (stored and pending state),
        and reload the contextual index from the log, which no longer holds them nor
        the forgotten episodes' queries."""
        gone = set(memory_ids)
        for memory_id in gone:
            self._stored.pop(memory_id, None)
            self._pending.pop(memory_id, None)
        with self._sent_lock:  # a new dict: a flush may hold the old one
            self._sent = {m: p for m, p in self._sent.items() if m not in gone}
        self._unfed = {e: v for e, v in self._unfed.items() if v[0] not in gone}
        self._feed.reset()

    def forget_stored(self) -> None:
        """Drop remembered stored states (after the table was rewritten elsewhere)."""
        self._stored.clear()

    # --- flushing ------------------------------------------------------------------------

    def drain(self) -> dict[str, Pending]:
        """Take everything not stored yet (what a failed flush left first) for a flush to
        write; it stays applied to recalls until :meth:`landed`. Under the handle's lock,
        by the flush holding the journal's writing lock."""
        with self._sent_lock:
            batch = dict(self._sent)
            for memory_id, newer in self._pending.items():
                older = batch.get(memory_id)
                if older is None:
                    batch[memory_id] = newer
                    continue
                merged = Pending(older.uses + newer.uses, newer.last_used_at or older.last_used_at)
                merged.steps = [*older.steps, *newer.steps]
                batch[memory_id] = merged
            self._sent, self._pending = batch, {}
        return batch

    def landed(self) -> None:
        """The flush stored what it took: the table holds it now."""
        with self._sent_lock:
            self._sent, self._landing = {}, {}

    def write(
        self, pending: dict[str, Pending], committed: Callable[[str], None], *, logged: bool
    ) -> None:
        """Store usage and learned state for the memories in ``pending`` (the flush's one
        call, after it wrote the reward log; ``logged``: this flush committed to it).

        Usage counts are incremented in place (``usage_count + n``), so concurrent
        writers add up. Utility, confidence and reward count are the online EMA fold of
        each memory's whole reward log (:func:`packs.learning.online.fold_log`), and a
        row is only overwritten by a fold that saw at least as many events: whichever
        writer flushes last, the stored state is the fold of the whole log, which the
        replay must equal. ``committed(table)`` counts each commit (for compaction).
        """
        by_uses: dict[int, list[str]] = {}
        for memory_id, item in pending.items():
            if item.uses:
                by_uses.setdefault(item.uses, []).append(memory_id)
        for uses, ids in sorted(by_uses.items()):
            self._add_uses(ids, uses, committed)
            for memory_id in ids:  # a retried flush must not count these uses again
                pending[memory_id].uses = 0
        rewarded = [memory_id for memory_id, item in pending.items() if item.steps]
        if not rewarded:
            return
        # Fold the latest log, so that two folds with the same count hold the same
        # events. This handle's own commit to it holds every earlier one; without one (a
        # retry after the log landed) its view may lag others' commits by a second.
        if not logged:
            self._store.latest_version(schemas.REWARD_EVENTS)
        events = pl.DataFrame(
            self._store.scan(
                schemas.REWARD_EVENTS, list(ONLINE_COLUMNS), in_clause("memory_id", rewarded)
            )
        )
        states = {m: s for m, s in fold_log(events).items() if s.reward_count}
        if not states:
            return
        self._landing = {m: s.reward_count for m, s in states.items()}  # before the commit
        now = datetime.now(UTC)
        rows: list[dict[str, Any]] = [
            {
                "id": memory_id,
                "utility": state.utility,
                "confidence": state.confidence,
                "reward_count": state.reward_count,
                "updated_at": now,
            }
            for memory_id, state in states.items()
        ]
        schema = pa.schema([self._memories_schema.field(column) for column in rows[0]])
        self._store.merge(
            schemas.MEMORIES,
            pa.Table.from_pylist(rows, schema=schema),
            "id",
            update="target.reward_count <= source.reward_count",
            insert=False,
        )
        committed(schemas.MEMORIES)
        self._stored.update(states)
