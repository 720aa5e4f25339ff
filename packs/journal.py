"""The Pack's journal: episodes, retrieval logs, reward events and learned state.

Everything on the hot path (a recall, a reward) goes to a :class:`WriteBuffer` first and
is written in batches by :meth:`Journal.flush`; reads of learned state always see the
stored values with pending steps applied, so buffering never changes a ranking.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from packs import schemas
from packs.buffer import PendingMemory, WriteBuffer
from packs.context import ContextIndex, history_entry
from packs.context_feed import ContextFeed
from packs.errors import (
    PackNotFound,
    TransientError,
    UnknownEpisode,
    UnknownMemory,
    UnwritableRows,
    WolfieError,
)
from packs.filters import in_clause, sql_literal
from packs.flusher import BackgroundFlush
from packs.replay import REPLAY_COLUMNS, replay
from packs.retrieval import Candidates, Ranked
from packs.rewards import LearnedState, RewardStep, fold
from packs.rows import stable_hash
from packs.storage import PackStore

log = logging.getLogger(__name__)

_LEARNED_COLUMNS = ["id", "utility", "confidence", "usage_count", "reward_count", "last_used_at"]
_EPISODE_CACHE = 10_000  # recent episodes kept in memory for reward lookups
_STORED_CACHE = 200_000  # learned states remembered (a few MB)
# Idempotency keys remembered in memory (the most recent; hand-set: about 1 MB of keys).
# Only a fast path: an older key is found in the buffer or in ``reward_events``.
SEEN_KEYS_BOUND = 10_000
# The key (or keys) that name a buffered row in logs, per table.
_ROW_KEYS: dict[str, tuple[str, ...]] = {
    schemas.EPISODES: ("id",),
    schemas.EPISODE_OUTCOMES: ("id",),
    schemas.RETRIEVAL_LOG: ("episode_id", "item_id"),
    schemas.REWARD_EVENTS: ("event_id",),
    schemas.VALIDATIONS: ("episode_id", "hook"),
}
_IDEMPOTENT_KEYS: dict[str, str | list[str]] = {
    schemas.EPISODES: "id",
    schemas.RETRIEVAL_LOG: ["episode_id", "item_id"],
    schemas.REWARD_EVENTS: "event_id",
}


def _refused_data(exc: BaseException) -> bool:
    """An error about the rows themselves (Arrow could not convert or cast them, Lance's
    vector checks refused them), as opposed to storage, commits or files: only these
    are worth isolating row by row."""
    return isinstance(exc, pa.ArrowException) or "arrow" in str(exc).lower()


def learned_of(row: Mapping[str, Any]) -> LearnedState:
    return LearnedState(float(row["utility"]), float(row["confidence"]), int(row["reward_count"]))


class Journal:
    """Buffered logging and learned-state bookkeeping for one open Pack."""

    def __init__(self, store: PackStore, dim: int, flush_rows: int, flush_seconds: float) -> None:
        self._store = store
        self._schemas = schemas.buffer_schemas(dim)
        self.buffer = WriteBuffer(flush_rows, flush_seconds)
        # episode id -> (injected ids, query vector), for rewards and contextual utility
        self._episodes: OrderedDict[str, tuple[list[str], np.ndarray]] = OrderedDict()
        self.context = ContextIndex(dim, history=16)
        self._seen_keys: OrderedDict[str, None] = OrderedDict()
        self.seen_keys_bound = SEEN_KEYS_BOUND
        # Stored (flushed) learned state of memories this process has read, so a reward
        # after a recall needs no table read. Refreshed by every recall and flush.
        self._stored: dict[str, LearnedState] = {}
        self._commits: dict[str, int] = {}
        self.compact_every = 64
        self.retention = timedelta(hours=24)
        self._failures = 0
        self._retry_after = 0.0
        self.lock = threading.RLock()
        self.writer = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.context_feed = ContextFeed(store, self.context, self.writer)
        self._keyed_events: set[str] = set()  # buffered events under a caller's key
        self.background = BackgroundFlush(self._flush_if_due, lambda: self.buffer.flush_seconds)
        self._seq = itertools.count()

    # --- flushing ------------------------------------------------------------------------

    def flush(self) -> None:
        """Write buffered episodes, retrieval logs, reward events and learned state now.

        The reward log is written before the utilities it explains, so a crash between
        the two leaves utilities that ``rebuild_utilities`` restores from the log.
        Whatever a failed write had not stored stays buffered for the next flush.
        """
        with self.lock:
            if self.buffer.empty():
                return
            if self._store.deleted():
                self._drop_for_deleted_pack()
            tables, memories = self.buffer.drain(self._schemas)
            rejected: list[str] = []
            try:
                self._write_logs(tables, rejected)
                if memories:
                    self._write_learned(memories)
                    memories = {}
            except BaseException:
                self.buffer.restore(tables, memories)
                raise
            self._compact_due_tables()
            if rejected:
                raise UnwritableRows(
                    f"Pack {self._store.location.name!r} refused {len(rejected)} buffered "
                    f"row(s), which were dropped (the rest were written): {rejected[:10]}. "
                    "Each is logged at ERROR with the reason."
                )

    def maybe_flush(self) -> None:
        """Flush if due. On the hot path a transient storage fault does not raise: the
        rows stay buffered and the next due flush, ``flush()`` or ``close()`` retries.

        In durable mode (``log_flush_rows=1``) every fault raises, so a call never
        returns as if stored when its commit failed; its rows stay buffered, and the
        same call again (same idempotency key) retries the write.
        """
        if not self.buffer.due():
            return
        if self.buffer.flush_rows <= 1:
            self.flush()
            return
        if time.monotonic() < self._retry_after:
            return
        try:
            self.flush()
        except TransientError as exc:
            self._failures += 1
            self._retry_after = time.monotonic() + min(60.0, 2.0**self._failures)
            log.warning("Flush deferred (%s); %d buffered rows kept", exc, self.buffer.row_count())
        except UnwritableRows:
            # Logged row by row; the call that happened to flush is not the one at fault.
            self._failures, self._retry_after = 0, 0.0
        else:
            self._failures, self._retry_after = 0, 0.0

    def _flush_if_due(self) -> None:
        """The background flusher's call: what a call would have flushed had one come."""
        with self.lock:
            if self.buffer.due():
                self.maybe_flush()

    def _drop_for_deleted_pack(self) -> None:
        """The Pack's folder was deleted under this handle: writing would recreate half
        a Pack (log tables with no ``pack_meta``), so the buffered rows are dropped."""
        count = self.buffer.row_count()
        self.buffer.drain(self._schemas)
        location = self._store.location
        log.error(
            "Pack %r at %r was deleted while open; dropping %d buffered rows instead of "
            "recreating it",
            location.name, location.root, count,
        )  # fmt: skip
        raise PackNotFound(
            f"Pack {location.name!r} under {location.root!r} was deleted while open; its "
            f"{count} buffered rows were dropped rather than recreate half a Pack."
        )

    def _write_logs(self, tables: dict[str, pa.Table], rejected: list[str]) -> None:
        """Write each pending log table; remove it from ``tables`` once stored. Rows the
        table refuses on their own are dropped and named in ``rejected``."""
        order = (
            schemas.EPISODES, schemas.EPISODE_OUTCOMES, schemas.RETRIEVAL_LOG,
            schemas.REWARD_EVENTS, schemas.VALIDATIONS,
        )  # fmt: skip
        for name in order:
            if name in tables:
                self._write_isolating(name, tables, rejected)
                self.buffer.retried.discard(name)
                del tables[name]

    def _write_isolating(self, name: str, tables: dict[str, pa.Table], rejected: list[str]) -> None:
        """Write ``tables[name]``; if the table refuses the data itself (not a storage
        fault), split it in halves until the refused rows stand alone, write the rest,
        and drop those rows, so one bad row never blocks the rows buffered after it.

        Only Arrow's refusals (a cast, a NaN vector) are taken for bad rows. Storage
        faults, transient or permanent, and anything else raise with the unwritten rows
        left in ``tables[name]`` for the buffer to keep.
        """
        pending = [tables[name]]
        refused: list[tuple[dict[str, Any], BaseException]] = []
        while pending:
            part = pending[0]
            try:
                self._write_table(name, part)
            except BaseException as exc:
                if isinstance(exc, WolfieError | OSError) or not _refused_data(exc):
                    # a storage fault, transient or not: keep every unwritten row
                    tables[name] = pa.concat_tables(pending)
                    raise
                self.buffer.retried.add(name)  # from here on, write each row once by key
                if part.num_rows > 1:
                    half = part.num_rows // 2
                    pending[:1] = [part.slice(0, half), part.slice(half)]
                    continue
                refused.append((part.to_pylist()[0], exc))
            pending.pop(0)
        for row, reason in refused:
            key = "/".join(str(row.get(k)) for k in _ROW_KEYS.get(name, ()))
            log.error("Dropped a %s row %s that the table refused: %s", name, key, reason)
            rejected.append(f"{name}:{key}")

    def _write_table(self, name: str, data: pa.Table) -> None:
        if name == schemas.REWARD_EVENTS and self._keyed_events:
            ids = data.column("event_id").to_pylist()
            keyed = pa.array([event_id in self._keyed_events for event_id in ids])
            if pc.any(keyed).as_py():
                # a key another process may have received too: stored once, by event id,
                # matched against the latest commit (not this handle's cached view)
                self._store.open_version(name)
                self._store.merge(name, data.filter(keyed), "event_id")
                self._count_commit(name)
                data = data.filter(pc.invert(keyed))
                self._keyed_events.difference_update(ids)
                if not data.num_rows:
                    return
        if name == schemas.EPISODE_OUTCOMES:
            self._store.merge(schemas.EPISODES, data, "id", update=True, insert=False)
        elif name in _IDEMPOTENT_KEYS and name in self.buffer.retried:
            # the failed attempt may have committed: write each row once by its key
            self._store.merge(name, data, _IDEMPOTENT_KEYS[name])
        else:  # appends stay cheap as tables grow (merge_insert joins the whole key)
            self._store.append(name, data)
        self._count_commit(schemas.EPISODES if name == schemas.EPISODE_OUTCOMES else name)

    def _write_learned(self, memories: dict[str, PendingMemory]) -> None:
        """Store usage and learned state for the memories touched since the last flush.

        Usage counts are incremented in place (``usage_count + n``), so concurrent
        writers add up. Utility, confidence and reward count are the replay of each
        memory's whole reward log (already written by this flush), and a row is only
        overwritten by a replay that saw at least as many events: whichever writer
        flushes last, the stored state equals the replay of the log.
        """
        by_uses: dict[int, list[str]] = {}
        for memory_id, pending in memories.items():
            if pending.uses:
                by_uses.setdefault(pending.uses, []).append(memory_id)
        for uses, ids in sorted(by_uses.items()):
            self._store.increment(schemas.MEMORIES, ids, "usage_count", uses, "last_used_at")
            self._count_commit(schemas.MEMORIES)
            for memory_id in ids:  # a retried flush must not count these uses again
                memories[memory_id].uses = 0
        rewarded = [memory_id for memory_id, pending in memories.items() if pending.steps]
        if not rewarded:
            return
        events = self._store.read_columns(
            schemas.REWARD_EVENTS, list(REPLAY_COLUMNS), in_clause("memory_id", rewarded)
        )
        rebuilt = replay(pl.from_arrow(events))  # type: ignore[arg-type]
        now = datetime.now(UTC)
        rows = [
            {"id": row["memory_id"], "utility": row["utility"], "confidence": row["confidence"],
             "reward_count": row["reward_count"], "updated_at": now}
            for row in rebuilt.to_dicts()
        ]  # fmt: skip
        if rows:
            memories_schema = self._schemas[schemas.MEMORIES]
            schema = pa.schema([memories_schema.field(column) for column in rows[0]])
            table = pa.Table.from_pylist(rows, schema=schema)
            self._store.merge(
                schemas.MEMORIES, table, "id",
                update="target.reward_count <= source.reward_count", insert=False,
            )  # fmt: skip
            self._count_commit(schemas.MEMORIES)
            for row in rows:
                self._stored[row["id"]] = LearnedState(
                    row["utility"], row["confidence"], row["reward_count"]
                )

    def _count_commit(self, name: str) -> None:
        self._commits[name] = self._commits.get(name, 0) + 1

    def _compact_due_tables(self) -> None:
        """Merge small fragments of tables this journal has committed to often."""
        for name, count in list(self._commits.items()):
            if count < self.compact_every:
                continue
            try:
                self._store.compact(name, self.retention)
                self._commits[name] = 0
            except (OSError, RuntimeError) as exc:  # a concurrent commit: try next time
                log.warning("Compaction of %s deferred: %s", name, exc)

    # --- episodes ------------------------------------------------------------------------

    def log_episode(
        self,
        text: str,
        vector: np.ndarray,
        k1: int,
        k2: int,
        clause: str | None,
        candidates: Candidates,
        ranked: Ranked,
        settings_version: int,
    ) -> str:
        episode_id = "ep_" + uuid.uuid4().hex
        now = datetime.now(UTC)
        injected = ranked.injected
        episode = {
            "id": episode_id,
            "created_at": now,
            "query_text": text,
            "query_embedding": vector,
            "k1": k1,
            "k2": k2,
            "filter_json": clause,
            "candidate_ids": list(candidates.ids),
            "injected_ids": injected,
            "settings_version": settings_version,
        }
        self.buffer.add_rows(schemas.EPISODES, [episode])
        self.buffer.add_rows(
            schemas.RETRIEVAL_LOG,
            [{**row, "episode_id": episode_id, "created_at": now} for row in ranked.log_rows],
        )
        for memory_id in injected:
            self.buffer.add_use(memory_id, now)
        self._cache_episode(episode_id, injected, vector)
        return episode_id

    def _cache_episode(self, episode_id: str, injected: list[str], query: np.ndarray) -> None:
        self._episodes[episode_id] = (injected, np.asarray(query, dtype=np.float32))
        while len(self._episodes) > _EPISODE_CACHE:
            self._episodes.popitem(last=False)

    def _cached(self, episode_id: str) -> tuple[list[str], np.ndarray]:
        if episode_id not in self._episodes:
            row = self.episode(episode_id, ["injected_ids", "query_embedding"])
            self._cache_episode(
                episode_id, list(row["injected_ids"] or []), np.asarray(row["query_embedding"])
            )
        return self._episodes[episode_id]

    def injected_ids(self, episode_id: str) -> list[str]:
        """The memories an episode injected; :class:`UnknownEpisode` if never logged."""
        return self._cached(episode_id)[0]

    def episode(self, episode_id: str, columns: list[str]) -> dict[str, Any]:
        """Columns of one episode, buffered or stored; :class:`UnknownEpisode` if none."""
        for row in self.buffer.pending_rows(schemas.EPISODES):
            if row["id"] == episode_id:
                return {c: row.get(c) for c in columns}
        hits = (
            self._store.table(schemas.EPISODES)
            .search()
            .where(f"id = {sql_literal(episode_id)}")
            .select(columns)
            .limit(1)
            .to_list()
        )
        if not hits:
            raise UnknownEpisode(
                f"Pack {self._store.location.name!r} has no episode {episode_id!r}; pass "
                "the episode_id that recall() returned."
            )
        return hits[0]

    def record_outcome(
        self, episode_id: str, response: str, vector: np.ndarray, success: bool | None
    ) -> None:
        """Buffer the episode's response, its embedding and its success flag."""
        update = {
            "id": episode_id,
            "response": response,
            "response_embedding": vector,
            "success": success,
            "resolved_at": datetime.now(UTC),
        }
        for row in self.buffer.pending_rows(schemas.EPISODES):
            if row["id"] == episode_id:  # not written yet: complete the row itself
                row.update(update)
                return
        self.buffer.add_rows(schemas.EPISODE_OUTCOMES, [update])

    # --- rewards -------------------------------------------------------------------------

    def key_seen(self, key: str) -> bool:
        """Was a reward with idempotency ``key`` recorded? The in-memory keys are only a
        bounded cache of recent ones; the buffer and the stored log are the truth."""
        if key in self._seen_keys:
            self._seen_keys.move_to_end(key)
            return True
        if any(
            row["idempotency_key"] == key for row in self.buffer.pending_rows(schemas.REWARD_EVENTS)
        ):
            return True
        clause = f"idempotency_key = {sql_literal(key)}"
        return self._store.table(schemas.REWARD_EVENTS).count_rows(clause) > 0

    def record_reward(
        self,
        episode_id: str,
        targets: list[str],
        step: RewardStep,
        *,
        key: str,
        source: str,
        signal: str,
        magnitude: float | None,
        keyed: bool = False,
    ) -> dict[str, float]:
        """Buffer one reward event per target and its step; return the new utilities.

        ``keyed``: the caller's idempotency key, which another process may receive too
        (a webhook retried to another worker). Event ids derive from the key, and keyed
        events are written by ``merge_insert`` on that id, so whichever process commits
        second stores nothing and the replay of the log counts the reward once.
        """
        states = self.learned_states(targets)
        now = datetime.now(UTC)
        rows, utilities = [], {}
        for memory_id in targets:
            before = states[memory_id]
            after = fold([step], before)
            self.buffer.add_step(memory_id, step)
            if step.weight > 0 and self.context.loaded:
                reward, weight = history_entry(step.value, step.weight, source, magnitude)
                self.context.add(
                    memory_id, self._cached(episode_id)[1], reward, weight,
                    intrinsic=source == "intrinsic",
                )  # fmt: skip
            utilities[memory_id] = after.utility
            rows.append(
                {
                    "event_id": "rw_" + stable_hash(key, memory_id),
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
                    "q_before": before.utility,
                    "q_after": after.utility,
                    "created_at": now,
                    "writer": self.writer,
                    "seq": next(self._seq),
                }
            )
        self.buffer.add_rows(schemas.REWARD_EVENTS, rows)
        if keyed:
            self._keyed_events.update(str(row["event_id"]) for row in rows)
        self._remember_key(key)
        return utilities

    def _remember_key(self, key: str) -> None:
        self._seen_keys[key] = None
        self._seen_keys.move_to_end(key)
        while len(self._seen_keys) > self.seen_keys_bound:
            self._seen_keys.popitem(last=False)

    # --- contextual utility -------------------------------------------------------------

    def load_context(self) -> None:
        """Fill the context index from the log once (flushing this handle's rows first),
        then keep it current with what other writers log (:mod:`packs.context_feed`)."""
        if not self.context.loaded:
            self.flush()
            self.context_feed.load()
        else:
            self.context_feed.sync()

    # --- learned state -------------------------------------------------------------------

    def stored_learned(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        rows = (
            self._store.table(schemas.MEMORIES)
            .search()
            .where(in_clause("id", ids))
            .select(_LEARNED_COLUMNS)
            .limit(len(ids))
            .to_list()
        )
        return {row["id"]: row for row in rows}

    def effective(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        """Pending steps applied to a freshly read stored state, which is remembered."""
        if len(self._stored) >= _STORED_CACHE:
            self._stored.clear()
        self._stored[memory_id] = stored
        return self.buffer.effective(memory_id, stored)

    def forget_learned(self) -> None:
        """Drop remembered stored states (after the table was rewritten elsewhere)."""
        self._stored.clear()

    def learned_states(self, ids: list[str]) -> dict[str, LearnedState]:
        """Current learned state of ``ids``: stored values plus pending steps."""
        missing = [memory_id for memory_id in ids if memory_id not in self._stored]
        for memory_id, row in self.stored_learned(missing).items():
            self._stored[memory_id] = learned_of(row)
        out = {}
        for memory_id in ids:
            if memory_id not in self._stored:
                raise UnknownMemory(
                    f"Pack {self._store.location.name!r} has no memory {memory_id!r}."
                )
            out[memory_id] = self.buffer.effective(memory_id, self._stored[memory_id])[0]
        return out
