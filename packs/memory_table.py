"""A page of a Pack's memories for a caller holding an open Pack (the explorer's table,
wolfie/ui/): filtered by scope, kind, status and text, sorted by utility, uses or age.

Never loads every row: one read of the filtered rows' id and sort column, sorted in
Arrow, then one read of the page's rows (benchmarks/explorer_bench.py measures it at
100k memories). Reached as ``pack.memory_table`` (:class:`MemoryTable`, built in
``packs/services.py``), which also answers ingest's look-ups of stored knowledge.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from packs.deprecation import moved
from packs.errors import InvalidInput
from packs.journal.flush import Flusher
from packs.records import Record
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.gateway import PackStore
from packs.store.lifecycle import EXPIRES, HELD, SUPERSEDED, marks_of, status_clause
from packs.store.scopes import check_scope, same_scope_clause, visible_clause

_LOOKUP_BATCH = 500  # first chunks looked up per query (each up to ~1,200 characters)

# sort name -> (column, descending); "age": the newest first
SORTS = {"utility": ("utility", True), "uses": ("usage_count", True), "age": ("created_at", True)}
STATUSES = ("current", "held", "superseded", "expired")
KINDS = (schemas.KIND_MEMORY, schemas.KIND_KNOWLEDGE)
MAX_PAGE = 200  # rows a page may ask for (hand-set: a screen's worth, several times over)
MAX_SEARCH_CHARS = 200  # a text search's length (hand-set)
_COLUMNS = ["id", "kind", "intent_text", "utility", "usage_count", "reward_count", "tags"]
_LIFECYCLE = ["created_at", EXPIRES, SUPERSEDED]


@dataclass(frozen=True)
class MemoryRow(Record):
    id: str
    kind: str
    text: str
    utility: float
    uses: int
    rewards: int
    created_at: datetime
    status: str


@dataclass(frozen=True)
class MemoryPage(Record):
    rows: tuple[MemoryRow, ...]
    total: int  # rows matching the filters
    page: int  # from 1
    size: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))


class MemoryTable:
    """The memories table as a caller pages through it (the explorer) or looks its
    knowledge up (ingest: what a Pack holds of the documents it would write)."""

    def __init__(self, store: PackStore, flusher: Flusher) -> None:
        self._store = store
        self._flusher = flusher

    def page(
        self,
        *,
        scope: str | None = None,
        every: bool = False,
        kind: str | None = None,
        status: str | None = None,
        text: str | None = None,
        sort: str = "age",
        page: int = 1,
        size: int = 50,
    ) -> MemoryPage:
        """Page ``page`` of the memories ``scope`` can see (its own and the shared ones;
        ``every``: all), filtered and sorted."""
        if sort not in SORTS:
            raise InvalidInput(f"sort must be one of {sorted(SORTS)}, not {sort!r}.")
        if kind not in (None, *KINDS):
            raise InvalidInput(f"kind must be one of {KINDS} or none, not {kind!r}.")
        if status not in (None, *STATUSES):
            raise InvalidInput(f"status must be one of {STATUSES} or none, not {status!r}.")
        for name, value, top in (("page", page, 10**7), ("size", size, MAX_PAGE)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                raise InvalidInput(f"{name} must be an int from 1 to {top}, not {value!r}.")
        if text is not None and (not isinstance(text, str) or len(text) > MAX_SEARCH_CHARS):
            raise InvalidInput(
                f"A text search is a string of at most {MAX_SEARCH_CHARS} characters."
            )
        store = self._store
        if not store.read_only:
            self._flusher.flush()
        store.latest_version(schemas.MEMORIES)  # other handles' commits
        now = datetime.now(UTC)
        clauses = [] if every else [visible_clause(check_scope(scope))]
        if kind:
            clauses.append(f"kind = {sql_literal(kind)}")
        if text and text.strip():
            clauses.append(f"strpos(lower(intent_text), {sql_literal(text.strip().lower())}) > 0")
        if status:
            clauses.append(status_clause(store, status, now))
        where = " AND ".join(f"({c})" for c in clauses) or None
        column, descending = SORTS[sort]
        keys = store.scan(schemas.MEMORIES, ["id", column], where)
        # a stable sort (ties keep the scan's order): no string tiebreak, which cost ~250 ms
        # of a 100k page (benchmarks/explorer_bench.py)
        order = pc.sort_indices(
            keys, sort_keys=[(column, "descending" if descending else "ascending")]
        )
        start = (page - 1) * size
        ids = keys["id"].take(order[start : start + size]).to_pylist()
        rows = _rows(store, ids, now) if ids else []
        return MemoryPage(tuple(rows), keys.num_rows, page, size)

    def knowledge_texts(
        self, sources: list[str], scope: str | None = None
    ) -> dict[tuple[str, int], str]:
        """(source, position) -> text of the knowledge rows of ``sources`` that belong to
        ``scope`` (the shared rows for None)."""
        if not sources:
            return {}
        kind = f"kind = {sql_literal(schemas.KIND_KNOWLEDGE)}"
        where = f"{kind} AND {in_clause('source', sources)} AND {same_scope_clause(scope)}"
        if not self._store.count(schemas.MEMORIES, where):
            return {}
        columns = ["source", "source_position", "intent_text"]
        rows = self._store.scan(schemas.MEMORIES, columns, where).to_pylist()
        return {(r["source"], int(r["source_position"])): r["intent_text"] for r in rows}

    def knowledge_documents(
        self, texts: dict[str, dict[int, str]], scopes: dict[str, str | None]
    ) -> dict[str | None, dict[str, dict[int, str]]]:
        """Per scope, the stored documents (source -> position -> text) whose first chunk
        is the first chunk of one of ``texts``: the only ones that can hold the same."""
        firsts: dict[str | None, set[str]] = {}
        for source, doc in texts.items():
            if 0 in doc:
                firsts.setdefault(scopes[source], set()).add(doc[0])
        kind = f"kind = {sql_literal(schemas.KIND_KNOWLEDGE)}"
        found: dict[str | None, dict[str, dict[int, str]]] = {}
        for scope, heads in firsts.items():
            scoped = f"{kind} AND {same_scope_clause(scope)}"
            candidates: set[str] = set()
            ordered = sorted(heads)
            for start in range(0, len(ordered), _LOOKUP_BATCH):
                batch = ordered[start : start + _LOOKUP_BATCH]
                where = f"{scoped} AND source_position = 0 AND {in_clause('intent_text', batch)}"
                candidates |= set(
                    self._store.scan(schemas.MEMORIES, ["source"], where)["source"].to_pylist()
                )
            if not candidates:
                continue
            where = f"{scoped} AND {in_clause('source', sorted(candidates))}"
            columns = ["source", "source_position", "intent_text"]
            for row in self._store.scan(schemas.MEMORIES, columns, where).to_pylist():
                doc = found.setdefault(scope, {}).setdefault(row["source"], {})
                doc[int(row["source_position"])] = row["intent_text"]
        return found


class _Kept(Protocol):  # an open Pack, as the deprecated function below takes it
    @property
    def memory_table(self) -> MemoryTable: ...


def memory_page(pack: _Kept, **options: Any) -> MemoryPage:
    """Deprecated: ``pack.memory_table.page(**options)``."""
    moved("packs.memory_table.memory_page(pack)", "pack.memory_table.page()")
    return pack.memory_table.page(**options)


def _rows(store: Any, ids: list[str], now: datetime) -> list[MemoryRow]:
    wanted = [*_COLUMNS, "created_at", *marks_of(store, [*_LIFECYCLE[1:], HELD])]
    table: pa.Table = store.scan(schemas.MEMORIES, wanted, in_clause("id", ids))
    found = {row["id"]: row for row in table.to_pylist()}
    return [_row(found[m], now) for m in ids if m in found]


def _row(row: dict[str, Any], now: datetime) -> MemoryRow:
    return MemoryRow(
        id=row["id"],
        kind=row["kind"],
        text=row["intent_text"],
        utility=float(row["utility"]),
        uses=int(row["usage_count"]),
        rewards=int(row["reward_count"]),
        created_at=row["created_at"],
        status=status_of(row, now),
    )


def status_of(row: dict[str, Any], now: datetime) -> str:
    """current, held, superseded or expired (the first that holds, in that order)."""
    if row.get(SUPERSEDED) is not None:
        return "superseded"
    if row.get(HELD) is not None:
        return "held"
    expires = row.get(EXPIRES)
    if expires is not None and expires <= now:
        return "expired"
    return "current"
