"""Feeding the contextual-utility index from the reward log, shared by every process.

A process's :class:`~packs.learning.context.ContextIndex` is filled once from ``reward_events``
(the newest ``history`` rewards of each memory) and then kept current: before a
contextual recall, :meth:`ContextFeed.sync` compares the table version with the one it
last read, and when another writer has committed since, reads the events it has not
seen yet (its own rewards reach the index as they happen). Learning is therefore shared
by every handle on the Pack, within the storage layer's read consistency (one second,
``packs/store/gateway.py``) plus the other writer's flush window.

New events are the other writers' rows created since the newest one seen, less a slack
that covers a writer flushing late (a buffered row carries the time it was created, not
committed); event ids already fed within that slack are skipped.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from packs.lazy import lazy_module
from packs.learning.context import ContextIndex, history_entry
from packs.learning.ema import REVISION_SOURCE
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.gateway import PackStore

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

_EVENT_COLUMNS = [
    "event_id",
    "episode_id",
    "memory_id",
    "value",
    "weight",
    "source",
    "magnitude",
    "created_at",
    "writer",
    "seq",
]
# Hand-set: well above the default flush window (5 s) and a retried flush's backoff
# (up to 60 s), so a late-committed row is still read; rows older than this are taken
# as seen.
SYNC_SLACK = timedelta(minutes=10)
# How often a recall asks LanceDB for the reward log's version. A writer's handle sees other
# processes' commits only once a second anyway (WRITER_CONSISTENCY), and the ask cost
# 10-16 ms on the loaded 2-core box (its event loop), per recall (issue 24, docs/recall.md).
LOOK_EVERY_S = 0.5


def _timestamp(at: datetime) -> str:
    return f"timestamp {sql_literal(at.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S.%f'))}"


class ContextFeed:
    """Loads a ContextIndex from the log once, then feeds it other writers' rewards."""

    def __init__(self, store: PackStore, index: ContextIndex, writer: str) -> None:
        self._store = store
        self.index = index
        self.writer = writer
        self._version: int | None = None
        self._looked = -LOOK_EVERY_S  # time.monotonic() of the last version check
        self._watermark: datetime | None = None
        self._fed: dict[str, datetime] = {}  # event ids fed within the slack window

    def reset(self) -> None:
        """Start again: the next look loads the whole log (after a forget, whose rows and
        episodes the index must not keep); the tables are read at their latest commit."""
        self._version, self._watermark, self._fed = None, None, {}
        self.index.clear()
        for name in (schemas.REWARD_EVENTS, schemas.EPISODES):
            self._store.latest_version(name)

    def load(self) -> set[str]:
        """Fill the index from the whole log (the newest rewards per memory); the ids of
        the events it read."""
        version = self._log_version()
        events = self._read_events("weight > 0")
        recent = (
            events.sort(["created_at", "writer", "seq"])
            .group_by("memory_id", maintain_order=True)
            .tail(self.index.rule.history)
            .sort(["created_at", "writer", "seq"])  # LRU order: the newest touched last
        )
        self._feed(recent)
        # helped since its last revision (a revised memory starts afresh: docs/rewards.md)
        era = (pl.col("source") == REVISION_SOURCE).cast(pl.Int64).cum_sum().over("memory_id")
        current = events.sort(["created_at", "writer", "seq"]).with_columns(era=era)
        current = current.filter(pl.col("era") == pl.col("era").max().over("memory_id"))
        self.index.mark_helped(
            current.filter((pl.col("value") > 0) & (pl.col("source") != "intrinsic"))[
                "memory_id"
            ].unique()
        )
        self._advance(events, version)
        self.index.loaded = True
        return set(events["event_id"].to_list())

    def sync(self) -> int:
        """Feed the events other writers committed since the last look; how many."""
        if time.monotonic() - self._looked < LOOK_EVERY_S:
            return 0
        self._looked = time.monotonic()
        version = self._log_version()
        if version == self._version:
            return 0
        clause = f"weight > 0 AND writer != {sql_literal(self.writer)}"
        if self._watermark is not None:
            clause += f" AND created_at >= {_timestamp(self._watermark - SYNC_SLACK)}"
        events = self._read_events(clause)
        if self._fed and events.height:
            events = events.filter(~pl.col("event_id").is_in(list(self._fed)))
        events = events.sort(["created_at", "writer", "seq"])
        self._feed(events)
        self._advance(events, version)
        return events.height

    # --- internals -----------------------------------------------------------------------

    def _log_version(self) -> int:
        return self._store.version(schemas.REWARD_EVENTS)

    def _read_events(self, clause: str) -> pl.DataFrame:
        table = self._store.scan(schemas.REWARD_EVENTS, _EVENT_COLUMNS, clause)
        frame = pl.from_arrow(table)
        if not isinstance(frame, pl.DataFrame):  # pragma: no cover - a table gives a frame
            raise TypeError("reward_events did not read as a table")
        return frame

    def _feed(self, events: pl.DataFrame) -> None:
        if not events.height:
            return
        vectors = self._query_vectors(events["episode_id"].unique().to_list())
        for row in events.iter_rows(named=True):
            if row["source"] == REVISION_SOURCE:  # a new action: its history starts afresh
                self.index.drop(row["memory_id"])
                continue
            query = vectors.get(row["episode_id"])
            if query is None:  # the episode was not committed: nothing to condition on
                continue
            reward, weight = history_entry(
                row["value"], row["weight"], row["source"], row["magnitude"]
            )
            self.index.add(
                row["memory_id"],
                query,
                reward,
                weight,
                intrinsic=row["source"] == "intrinsic",
                episode=row["episode_id"],
            )

    def _query_vectors(self, episode_ids: list[str]) -> dict[str, np.ndarray]:
        vectors: dict[str, np.ndarray] = {}
        for start in range(0, len(episode_ids), 1_000):
            chunk = episode_ids[start : start + 1_000]
            rows = self._store.scan(
                schemas.EPISODES, ["id", "query_embedding"], in_clause("id", chunk)
            ).to_pylist()
            vectors.update({r["id"]: np.asarray(r["query_embedding"]) for r in rows})
        return vectors

    def _advance(self, events: pl.DataFrame, version: int) -> None:
        self._version = version
        if events.height:
            newest: Any = events["created_at"].max()
            if self._watermark is None or newest > self._watermark:
                self._watermark = newest
            for event_id, at in zip(
                events["event_id"].to_list(), events["created_at"].to_list(), strict=True
            ):
                self._fed[event_id] = at
        if self._watermark is not None:
            horizon = self._watermark - SYNC_SLACK
            self._fed = {e: at for e, at in self._fed.items() if at >= horizon}
