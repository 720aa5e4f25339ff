"""The episode log: one row per logged recall, its retrieval log rows, and its outcome.

Rows go to the :class:`~packs.journal.write_buffer.WriteBuffer`; recent episodes (their
injected ids and query vector) are cached so a reward after a recall reads no table.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from packs.errors import InvalidInput, UnknownEpisode
from packs.journal.arrival import await_stored, new_episode_id
from packs.journal.write_buffer import WriteBuffer
from packs.learning.state import LearningState
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.gateway import PackStore
from packs.store.scopes import episode_scope

EPISODE_CACHE = 10_000  # recent episodes kept in memory for reward lookups


class EpisodeLog:
    """Logs episodes into ``buffer`` and finds them again, buffered or stored."""

    def __init__(self, store: PackStore, buffer: WriteBuffer, learning: LearningState) -> None:
        self._store = store
        self._buffer = buffer
        self._learning = learning
        # episode id -> (injected ids, query vector, the scope it was recalled in), for
        # rewards (and their scope check) and contextual utility
        self._recent: OrderedDict[str, tuple[list[str], np.ndarray, str | None]] = OrderedDict()
        self._ranked_utility: dict[str, dict[str, float]] = {}  # of the recent episodes
        self._asked: dict[str, str] = {}  # the question of the recent episodes logged here

    def log(
        self,
        text: str,
        vector: np.ndarray,
        k1: int,
        k2: int,
        clause: str | None,
        candidate_ids: list[str],
        injected: list[str],
        log_rows: list[dict[str, Any]],
        settings_version: int,
    ) -> str:
        """Buffer the episode, its retrieval-log rows (one per candidate) and one use per
        ``injected`` memory (in rank order)."""
        now = datetime.now(UTC)
        episode_id = new_episode_id(now)
        episode = {
            "id": episode_id,
            "created_at": now,
            "query_text": text,
            "query_embedding": vector,
            "k1": k1,
            "k2": k2,
            "filter_json": clause,
            "candidate_ids": list(candidate_ids),
            "injected_ids": injected,
            "settings_version": settings_version,
        }
        self._buffer.add_rows(schemas.EPISODES, [episode])
        self._buffer.add_rows(
            schemas.RETRIEVAL_LOG,
            [{**row, "episode_id": episode_id, "created_at": now} for row in log_rows],
        )
        self._learning.use(injected, now)
        self._remember(episode_id, injected, vector, episode_scope(clause))
        self._ranked_utility[episode_id] = _ranked(log_rows)
        self._asked[episode_id] = text
        return episode_id

    def _remember(
        self, episode_id: str, injected: list[str], query: np.ndarray, scope: str | None
    ) -> None:
        self._recent[episode_id] = (injected, np.asarray(query, dtype=np.float32), scope)
        while len(self._recent) > EPISODE_CACHE:
            evicted, _ = self._recent.popitem(last=False)
            self._ranked_utility.pop(evicted, None)
            self._asked.pop(evicted, None)

    def forget(self, episode_ids: Iterable[str]) -> None:
        """Drop forgotten episodes from the cache (a reward for one is then unknown)."""
        for episode_id in episode_ids:
            self._recent.pop(episode_id, None)
            self._ranked_utility.pop(episode_id, None)
            self._asked.pop(episode_id, None)

    def ranked_utility(self, episode_id: str) -> dict[str, float]:
        """The utility ``U(m | q)`` each injected memory was ranked by in the episode
        (from this handle's memory, else the retrieval log); empty in global mode."""
        if episode_id in self._ranked_utility:
            return self._ranked_utility[episode_id]
        rows = [
            r
            for r in self._buffer.pending_rows(schemas.RETRIEVAL_LOG)
            if r["episode_id"] == episode_id
        ]
        if not rows:
            where = f"episode_id = {sql_literal(episode_id)} AND injected"
            columns = ["item_id", "injected", "contextual_utility"]
            rows = self._store.scan(schemas.RETRIEVAL_LOG, columns, where).to_pylist()
        return _ranked(rows)

    def _cached(self, episode_id: str) -> tuple[list[str], np.ndarray, str | None]:
        if episode_id not in self._recent:
            row = self.episode(episode_id, ["injected_ids", "query_embedding", "filter_json"])
            injected = list(row["injected_ids"] or [])
            vector = np.asarray(row["query_embedding"])
            self._remember(episode_id, injected, vector, episode_scope(row["filter_json"]))
        return self._recent[episode_id]

    def arrive(self, episode_id: str, flush_s: float) -> None:
        """Without the handle's lock, before a reward: an episode neither this handle's
        nor stored yet may be on its way from the process that served it; wait for it
        (bounded: :func:`packs.journal.arrival.await_stored`)."""
        if episode_id in self._recent:
            return
        if any(row["id"] == episode_id for row in self._buffer.pending_rows(schemas.EPISODES)):
            return
        await_stored(self._store, episode_id, flush_s)

    def injected_ids(self, episode_id: str) -> list[str]:
        """The memories an episode injected; :class:`UnknownEpisode` if never logged."""
        return self._cached(episode_id)[0]

    def check_scope(self, episode_id: str, scope: str | None) -> None:
        """A caller in ``scope`` reaches only the episodes recalled in that scope (from
        the episode's stored filter, :func:`~packs.store.scopes.episode_scope`); another
        scope's, or a shared recall's, is unknown to it, as recall would not show it.
        ``None``: the operator's call, unchecked. :class:`UnknownEpisode` if never
        logged."""
        if scope is None:
            self._cached(episode_id)
            return
        if not isinstance(scope, str):
            raise InvalidInput(f"scope must be a str or None, got {type(scope).__name__}.")
        if self._cached(episode_id)[2] != scope:
            raise UnknownEpisode(
                f"Pack {self._store.location.name!r} has no episode {episode_id!r} recalled "
                f"in scope {scope!r}; reward the episodes this scope's recalls returned."
            )

    def query_vector(self, episode_id: str) -> np.ndarray:
        """The episode's query embedding (float32)."""
        return self._cached(episode_id)[1]

    def episode(self, episode_id: str, columns: list[str]) -> dict[str, Any]:
        """Columns of one episode, buffered or stored; :class:`UnknownEpisode` if none."""
        for row in self._buffer.pending_rows(schemas.EPISODES):
            if row["id"] == episode_id:
                return {c: row.get(c) for c in columns}
        clause = f"id = {sql_literal(episode_id)}"
        hits = self._store.get(schemas.EPISODES, clause, columns)
        if not hits:  # another process's, landed since this handle's version: read it
            self._store.latest_version(schemas.EPISODES)
            hits = self._store.get(schemas.EPISODES, clause, columns)
        if not hits:
            raise UnknownEpisode(
                f"Pack {self._store.location.name!r} has no episode {episode_id!r}; pass "
                "the episode_id that recall() returned."
            )
        return hits[0]

    def asked(self, memory_ids: Iterable[str]) -> dict[str, list[tuple[str, str, np.ndarray]]]:
        """The recent episodes this handle logged that injected each of ``memory_ids``:
        (episode id, question, query vector), read from memory only."""
        wanted = set(memory_ids)
        out: dict[str, list[tuple[str, str, np.ndarray]]] = {m: [] for m in wanted}
        for episode_id, (injected, vector, _) in self._recent.items():
            text = self._asked.get(episode_id)
            if text is None:
                continue
            for memory_id in wanted.intersection(injected):
                out[memory_id].append((episode_id, text, vector))
        return out

    def logged(
        self, table: str, column: str, values: Sequence[str], columns: list[str]
    ) -> list[dict[str, Any]]:
        """``columns`` of the rows of ``table`` whose ``column`` is in ``values``: stored,
        and still in this handle's buffer (an explanation's evidence, packs/recall/evidence.py)."""
        wanted = set(values)
        if not wanted:
            return []
        key = "event_id" if table == schemas.REWARD_EVENTS else "id"
        found = {
            row[key]: {c: row.get(c) for c in columns}
            for row in self._buffer.pending_rows(table)
            if row.get(column) in wanted
        }
        if self._store.has_table(table):
            stored = self._store.scan(table, [key, *columns], in_clause(column, sorted(wanted)))
            for row in stored.to_pylist():
                found.setdefault(row[key], {c: row.get(c) for c in columns})
        return list(found.values())

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
        for row in self._buffer.unsent_rows(schemas.EPISODES):
            if row["id"] == episode_id:  # no flush took it yet: complete the row itself
                row.update(update)
                return
        self._buffer.add_rows(schemas.EPISODE_OUTCOMES, [update])


def _ranked(log_rows: list[dict[str, Any]]) -> dict[str, float]:
    """The ``U(m | q)`` each injected memory was ranked by (contextual mode only)."""
    return {
        r["item_id"]: r["contextual_utility"]
        for r in log_rows
        if r["injected"] and r["contextual_utility"] is not None
    }
