"""Reading single rows of a Pack: one memory with its merge provenance, who wrote its
lesson, and its learned state as this handle sees it (pending rewards and uses
included)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from packs.errors import InvalidInput, UnknownMemory
from packs.journal.flush import Flusher
from packs.lazy import lazy_module
from packs.learning.state import LearningState, learned_of
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore
from packs.store.lesson_scopes import own_lessons_clause
from packs.store.query import query_table

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

_MERGE_COLUMNS = ["at", "source", "intent_text", "metadata_json"]
_LESSON_COLUMNS = ["at", "writer", "model", "prompt_version", "episode_id"]


class MemoryReader:
    """Reads memory and knowledge rows of one Pack."""

    def __init__(self, store: PackStore, learning: LearningState, flusher: Flusher) -> None:
        self._store = store
        self._learning = learning
        self._flusher = flusher

    def query(
        self,
        table: str,
        where: Mapping[str, object] | None,
        columns: list[str] | None,
        limit: int | None,
        version: int | None,
    ) -> pl.DataFrame:
        """Filter a table into a polars DataFrame, flushed first on a writable handle;
        ``version`` reads the past (store/query.py)."""
        if not self._store.read_only:
            self._flusher.flush()
        return query_table(self._store, table, where, columns, limit, version)

    def get(self, memory_id: str) -> dict[str, Any]:
        """One memory or knowledge row (learned columns include pending updates)."""
        if not isinstance(memory_id, str):
            raise InvalidInput(f"memory_id must be a str, got {type(memory_id).__name__}.")
        rows = self._store.get(schemas.MEMORIES, f"id = {sql_literal(memory_id)}")
        if not rows:
            raise UnknownMemory(f"Pack {self._store.location.name!r} has no memory {memory_id!r}.")
        row = rows[0]
        if self._store.has_table(schemas.MERGES):
            clause = f"memory_id = {sql_literal(memory_id)}"
            merges = self._store.scan(schemas.MERGES, _MERGE_COLUMNS, clause).to_pylist()
            row["provenance"] = list(row["provenance"] or []) + sorted(
                merges, key=lambda m: m["at"]
            )
        row["lesson_provenance"] = self._lesson_provenance(memory_id)
        state, uses = self._learning.pending_applied(memory_id, learned_of(row))
        row.update(
            utility=state.utility,
            confidence=state.confidence,
            reward_count=state.reward_count,
            usage_count=row["usage_count"] + uses,
        )
        return row

    def _lesson_provenance(self, memory_id: str) -> dict[str, Any] | None:
        """Who wrote the memory's current lesson: the newest written ``lesson_log`` row
        (writer, model, prompt version, episode, when); None without one."""
        if not self._store.has_table(schemas.LESSON_LOG):
            return None
        columns = [c for c in _LESSON_COLUMNS if self._store.has_column(schemas.LESSON_LOG, c)]
        clause = f"memory_id = {sql_literal(memory_id)} AND status = 'written'"
        clause += f" AND {own_lessons_clause(self._store)}"  # a scope's lesson: not the row's
        written = self._store.scan(schemas.LESSON_LOG, columns, clause).to_pylist()
        return max(written, key=lambda r: r["at"]) if written else None

    def count(self, table: str, kind: str | None) -> int:
        """Rows in ``table`` (of ``kind``, when given)."""
        return self._store.count(table, f"kind = {sql_literal(kind)}" if kind else None)
