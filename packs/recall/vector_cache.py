"""Phase A's exact cosine search over an in-process copy of the ``memories`` table.

LanceDB's flat search over 100k 384-d vectors measured 10-20x slower than a numpy scan of
the same vectors (docs/recall.md), so a Pack keeps the ``intent_embedding`` column in
memory as a float32 matrix of unit vectors, with each row's ``_rowid`` and the columns
Phase B reads (Arrow, so a 750-character chunk costs its bytes and no Python object).

**Kept current by the table version**, checked on every search
(:meth:`~packs.store.gateway.PackStore.latest_version`; for a local table a ``stat``
of its ``_versions`` folder first tells whether any commit happened at all). When the
version moved, the cache catches up incrementally:

- Lance gives every new fragment a higher id than any before, and writes every update
  (``update``, ``merge_insert``, also of a few columns) as a delete plus a new row, so
  every row written since the last sync has a ``_rowid`` above the highest cached one:
  ``_rowid > max`` reads just those, whole. A cached row is therefore never stale: a
  utility written by another handle arrives as a new row that supersedes the entry of
  the same ``id`` (tests/packs/recall/test_vector_cache.py holds Lance to this).
- If the live count then differs from ``count_rows()`` (a real delete, a restore), every
  live ``_rowid`` is read (no vectors) and the entries are reconciled; an unknown live row
  id forces a full reload.
- Compaction renumbers every row: that arrives as "all rows are new" and starts afresh.

Filters run in LanceDB (the same SQL, read as row ids only) and mask the scan, so
``where``/``metadata``/``kind``/scope clauses behave exactly as before. Above
``max_rows`` the cache stands aside and LanceDB searches (with its ANN index, when
maintenance built one). A cache made with ``where`` holds only the rows it lets through
(one scope's visible rows, ``packs/recall/scope_cache.py``).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from packs.recall.lexical import LexicalIndex, row_text
from packs.store.gateway import VECTOR_COLUMN, PackStore
from packs.store.lifecycle import EXPIRES
from packs.store.schemas import TEXT_COLUMNS
from packs.store.tables import commit_marker

# Hand-set: 500k x 384 float32 is 768 MB per Pack handle; beyond it an ANN index answers
# faster than the scan (the measurements: docs/recall.md).
MAX_CACHED_ROWS = 500_000
_GROWTH = 1.25  # spare capacity so appends rarely copy the matrix
_DEAD_SHARE = 0.25  # rebuild once a quarter of the entries are superseded rows
_FILTER_MASKS = 16  # filter clauses whose matching rows are remembered
_MAX_CHUNKS = 64  # Arrow chunks of the cached columns before they are combined
_NEVER = np.iinfo(np.int64).max  # the expiry of a row without one
# A writable handle asks for the table's version at most this often while it writes nothing
# itself: other processes' commits reach it within a second anyway (WRITER_CONSISTENCY),
# and the ask cost 10-16 ms per recall on the loaded 2-core box (issue 24, docs/recall.md).
LOOK_EVERY_S = 0.5


@dataclass(frozen=True)
class Hits:
    """Cached top-k: entry positions in similarity order, with LanceDB-style cosine
    distances (``1 - cos``) for :func:`packs.recall.ranking.similarity_from_distance`."""

    positions: NDArray[np.int64]
    distance: NDArray[np.float64]


def _unit_rows(column: pa.ChunkedArray | pa.Array, dim: int) -> NDArray[np.float32]:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    flat = column.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    matrix = flat.reshape(-1, dim)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero vector has no direction; LanceDB gives it no similarity either.
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class VectorCache:
    """Exact cosine top-k over one table's vectors, with some columns, in memory.

    Not thread-safe on its own: the Pack calls it under its journal lock.
    """

    def __init__(
        self, dim: int, max_rows: int = MAX_CACHED_ROWS, defer: int = 1, where: str | None = None
    ) -> None:
        self.dim = dim
        self.max_rows = max_rows
        self.where = where  # the rows held: all, or those this SQL clause lets through
        self.too_large = False  # the last sync found more than max_rows rows
        # Searches left to LanceDB before the first load: a one-shot handle (a CLI call,
        # a Prefect task) would otherwise pay the full load for one search that LanceDB
        # answers far sooner (docs/recall.md).
        self.defer = defer
        self._deferred = 0
        self.reloads = 0  # full reads, for tests and the benchmark
        self._table_key: tuple[int, str] | None = None
        self._wanted: tuple[str, ...] = ("id",)
        self._versions_dir: str | None = None
        self._marker: tuple[int, int] | None = None
        # (store.commits, raw folder marker, time.monotonic()) at the last version ask
        self._looked: tuple[int, tuple[int, int] | None, float] = (-1, None, 0.0)
        self.lexical = LexicalIndex()  # BM25 over the cached rows' text, kept with them
        self._clear()

    def _clear(self) -> None:
        self._matrix = np.zeros((0, self.dim), dtype=np.float32)  # spare rows at the end
        self._n = 0  # entries used
        self._rowids = np.zeros(0, dtype=np.uint64)  # ascending, one per entry
        self._expiry = np.zeros(0, dtype=np.int64)  # expires_at in us, _NEVER if none
        self._alive = np.zeros(0, dtype=bool)  # False: superseded or deleted
        self._columns: pa.Table | None = None  # the cached columns, one row per entry
        self._ids: list[str] = []
        self._position: dict[str, int] = {}  # id -> its live entry
        self._masks: OrderedDict[str, tuple[NDArray[np.bool_], int]] = OrderedDict()
        self._version: int | None = None

    @property
    def rows(self) -> int:
        """Live rows cached."""
        return len(self._position)

    @property
    def nbytes(self) -> int:
        """Memory held: the vector matrix (spare rows included) and the cached columns."""
        columns = 0 if self._columns is None else self._columns.nbytes
        return int(self._matrix.nbytes + self._rowids.nbytes + columns)

    # --- keeping current ------------------------------------------------------------------

    def sync(self, store: PackStore, name: str, columns: Sequence[str] = ("id",)) -> bool:
        """Bring the cache to the table's latest version, with ``columns`` cached; False
        when it should stand aside (more rows than ``max_rows``, or a deferred load)."""
        wanted = tuple(dict.fromkeys(["id", *columns]))
        table = _Table(store, name)
        current = self._table_key == table.key and wanted == self._wanted
        if self._deferred < self.defer and (not current or self._version is None):
            self._deferred += 1
            return False
        marker = commit_marker(self._versions_dir, settled=True) if current else None
        if marker is not None and marker == self._marker and self._version is not None:
            return True  # no commit since the last check (a local table; see commit_marker)
        looked = (store.commits, commit_marker(self._versions_dir), time.monotonic())
        if (
            current and self._version is not None and not store.read_only
            and looked[:2] == self._looked[:2] and looked[2] - self._looked[2] < LOOK_EVERY_S
        ):  # fmt: skip
            return True  # nothing written here, the folder unchanged, looked a moment ago
        self._looked = looked
        version = store.latest_version(name)
        if current and version == self._version:
            self._marker = marker
            return True
        live = store.count(name, self.where)
        self.too_large = live > self.max_rows
        if self.too_large:
            self._clear()
            return False
        if not current or self._version is None:
            if self._table_key != table.key:
                self.lexical.clear()
            self._wanted, self._table_key = wanted, table.key
            self._versions_dir = store.versions_dir(name)
            self._reload(table)
            marker = None  # taken before the reload's own check: look again next time
        else:
            self._catch_up(table, live)
        self._version, self._marker = version, marker
        return True

    def _reload(self, table: _Table) -> None:
        self._clear()
        self.reloads += 1
        self._append(_read(table, [VECTOR_COLUMN, *self._wanted], self.where))
        self.lexical.retain(self._position)

    def _catch_up(self, table: _Table, live: int) -> None:
        # An empty cache reads every row: Lance's row ids are unsigned, so "> -1" is refused.
        where = f"_rowid > {int(self._rowids[self._n - 1])}" if self._n else None
        new = _read(table, [VECTOR_COLUMN, *self._wanted], self._within(where))
        renumbered = new.num_rows >= live  # compaction renumbered every row: start afresh
        if renumbered:
            self._clear()
            self.reloads += 1
        self._append(new)
        if renumbered:  # the text index is keyed by id: only rows gone meanwhile leave it
            self.lexical.retain(self._position)
        if self.rows != live and not self._reconcile(table):
            self._reload(table)
            return
        if self._n - self.rows > _DEAD_SHARE * max(self._n, 1):
            self._squeeze()

    def _append(self, data: pa.Table) -> None:
        if not data.num_rows:
            return
        data = data.take(pa.array(np.argsort(data["_rowid"].to_numpy(), kind="stable")))
        end = self._n + data.num_rows
        if end > len(self._matrix):
            # A full load takes what it needs; later appends leave spare rows.
            capacity = end if self._n == 0 else int(end * _GROWTH) + 16
            grown = np.zeros((capacity, self.dim), dtype=np.float32)
            grown[: self._n] = self._matrix[: self._n]
            alive = np.zeros(len(grown), dtype=bool)
            alive[: self._n] = self._alive[: self._n]
            self._matrix, self._alive = grown, alive
        self._matrix[self._n : end] = _unit_rows(data[VECTOR_COLUMN], self.dim)
        self._alive[self._n : end] = True
        rowids = data["_rowid"].to_numpy().astype(np.uint64)
        self._rowids = np.concatenate([self._rowids, rowids])
        self._expiry = np.concatenate([self._expiry, _expiry(data)])
        kept = data.select(list(self._wanted))
        self._columns = kept if self._columns is None else pa.concat_tables([self._columns, kept])
        if self._columns.column(0).num_chunks > _MAX_CHUNKS:
            self._columns = self._columns.combine_chunks()
        ids = data["id"].to_pylist()
        for offset, memory_id in enumerate(ids):
            old = self._position.get(memory_id)
            if old is not None:  # the row moved (an update): the old entry is superseded
                self._alive[old] = False
            self._position[memory_id] = self._n + offset
        self._ids.extend(ids)
        self._n = end
        texts = data.select([c for c in TEXT_COLUMNS if c in data.column_names]).to_pydict()
        if texts:
            self.lexical.upsert(ids, [row_text(texts, i) for i in range(len(ids))])

    def _within(self, where: str | None) -> str | None:
        """``where`` and the cache's own clause."""
        return " AND ".join(f"({w})" for w in (self.where, where) if w) or None

    def _reconcile(self, table: _Table) -> bool:
        """Drop entries whose row is gone; False if a live row is not cached at all."""
        live = np.sort(_read(table, [], self.where)["_rowid"].to_numpy().astype(np.uint64))
        cached = self._rowids[self._alive[: self._n]]
        if np.setdiff1d(live, cached, assume_unique=True).size:
            return False
        gone = np.flatnonzero(self._alive[: self._n] & ~np.isin(self._rowids, live))
        for position in gone:
            self._alive[position] = False
            self._position.pop(self._ids[position], None)
        self.lexical.remove(self._ids[p] for p in gone)
        return True

    def _squeeze(self) -> None:
        """Rebuild without superseded entries."""
        keep = np.flatnonzero(self._alive[: self._n])
        self._matrix = np.ascontiguousarray(self._matrix[keep])
        self._rowids, self._expiry = self._rowids[keep], self._expiry[keep]
        if self._columns is not None:
            self._columns = self._columns.take(pa.array(keep)).combine_chunks()
        self._ids = [self._ids[i] for i in keep]
        self._alive = np.ones(len(keep), dtype=bool)
        self._n = len(keep)
        self._position = {memory_id: i for i, memory_id in enumerate(self._ids)}
        self._masks.clear()  # positions changed

    # --- searching ------------------------------------------------------------------------

    def allowed(self, store: PackStore, name: str, clause: str) -> NDArray[np.bool_]:
        """Which entries match SQL ``clause``, as a mask over the entries.

        LanceDB evaluates the clause (reading row ids only). The mask is kept per clause
        and extended to rows added since, so a repeated filter (the scope clause of every
        recall) costs one scan per table change, not one per recall.
        """
        mask, covered = self._masks.pop(clause, (np.zeros(0, dtype=bool), 0))
        if covered < self._n:
            where = f"({clause})"
            if covered:
                where += f" AND _rowid > {int(self._rowids[covered - 1])}"
            found = _read(_Table(store, name), [], where)
            rowids = np.sort(found["_rowid"].to_numpy().astype(np.uint64))
            positions = np.searchsorted(self._rowids, rowids)
            inside = positions < self._n
            positions, rowids = positions[inside], rowids[inside]
            grown = np.zeros(self._n, dtype=bool)
            grown[: len(mask)] = mask
            grown[positions[self._rowids[positions] == rowids]] = True
            mask, covered = grown, self._n
        self._masks[clause] = (mask, covered)
        while len(self._masks) > _FILTER_MASKS:
            self._masks.popitem(last=False)
        return mask

    def unexpired(self, now: datetime) -> NDArray[np.bool_] | None:
        """Which entries have not expired at ``now``, as a mask (None: none ever expires)."""
        expiry = self._expiry[: self._n]
        if not len(expiry) or int(expiry.min()) == _NEVER:
            return None
        return expiry > int(now.timestamp() * 1_000_000)

    def top_k(
        self, query: NDArray[np.floating], k: int, mask: NDArray[np.bool_] | None = None
    ) -> Hits:
        """The ``k`` live entries nearest to ``query`` by cosine, best first; ``mask``
        (from :meth:`allowed`) restricts the search to a filter's rows."""
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm > 0:
            q = q / norm
        keep = self._alive[: self._n] if mask is None else self._alive[: self._n] & mask
        count = self.rows if mask is None else int(np.count_nonzero(keep))
        positions = None
        if count < self._n // 8:  # a narrow filter: score only its rows
            positions = np.flatnonzero(keep)
            scores = self._matrix[positions] @ q
        else:
            scores = self._matrix[: self._n] @ q
            scores[~keep] = -np.inf
        k = min(k, count)
        if k <= 0:
            return Hits(np.zeros(0, dtype=np.int64), np.zeros(0))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        distance = 1.0 - scores[best].astype(np.float64)
        return Hits((best if positions is None else positions[best]).astype(np.int64), distance)

    def lookup(
        self, query: NDArray[np.floating], ids: Sequence[str],
        mask: NDArray[np.bool_] | None = None,
    ) -> Hits:  # fmt: skip
        """The live entries of ``ids`` that ``mask`` allows, with their distance to
        ``query`` (associative links: candidates found by id, not by similarity)."""
        found = [self._position[i] for i in ids if i in self._position]
        positions = np.asarray([p for p in found if mask is None or bool(mask[p])], dtype=np.int64)
        if not len(positions):
            return Hits(positions, np.zeros(0))
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        scores = self._matrix[positions] @ (q / norm if norm > 0 else q)
        return Hits(positions, 1.0 - scores.astype(np.float64))

    def lexical_top_k(
        self, query: str, k: int, mask: NDArray[np.bool_] | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The ``k`` live entries best by BM25 for ``query`` that ``mask`` allows: their
        positions, best first, and their scores (:class:`~packs.recall.lexical.LexicalIndex`)."""

        def allowed(memory_id: str) -> bool:
            position = self._position.get(memory_id)
            return position is not None and (mask is None or bool(mask[position]))

        hits = self.lexical.search(query, k, allowed)
        positions = np.asarray([self._position[i] for i in hits.ids], dtype=np.int64)
        return positions, hits.scores

    def ids(self, positions: NDArray[np.int64]) -> list[str]:
        return [self._ids[i] for i in positions]

    def columns(self, positions: NDArray[np.int64]) -> dict[str, list[Any]]:
        """The cached columns of these entries, as lists in the order given."""
        if self._columns is None or not len(positions):
            return {name: [] for name in self._wanted}
        # Zero-copy slices: ``take`` on a chunked table concatenates whole chunks first.
        rows = pa.concat_tables([self._columns.slice(int(p), 1) for p in positions])
        return {name: rows[name].to_pylist() for name in self._wanted}


def _expiry(data: pa.Table) -> NDArray[np.int64]:
    """Each row's ``expires_at`` in microseconds since the epoch (:data:`_NEVER` if none)."""
    if EXPIRES not in data.column_names:
        return np.full(data.num_rows, _NEVER, dtype=np.int64)
    return data[EXPIRES].cast(pa.int64()).fill_null(_NEVER).to_numpy().astype(np.int64)


@dataclass(frozen=True)
class _Table:
    """One table of one Pack, as the cache reads it (through the storage gateway)."""

    store: PackStore
    name: str

    @property
    def key(self) -> tuple[int, str]:
        return id(self.store), self.name


def _read(table: _Table, columns: list[str], where: str | None) -> pa.Table:
    """``columns`` plus ``_rowid`` of every row (matching ``where``)."""
    return table.store.scan(table.name, columns, where, with_row_id=True)
