"""Phase A's exact cosine search over an in-process copy of the ``memories`` table.

LanceDB's flat search over 100k 384-d vectors measured 10-20x slower than a numpy scan of
the same vectors (docs/recall.md), so a Pack keeps the ``intent_embedding`` column in
memory as a float32 matrix of unit vectors, with each row's ``_rowid`` and the columns
Phase B reads (Arrow, so a 750-character chunk costs its bytes and no Python object).

Kept current by the table version, on the query path or, for what this handle's own
flush wrote, off it (:mod:`packs.recall.cache_sync`).

Filters run in LanceDB (the same SQL, read as row ids only) and mask the scan, so
``where``/``metadata``/``kind``/scope clauses behave exactly as before. Above
``max_rows`` the cache stands aside and LanceDB searches (with its ANN index, when
maintenance built one). A cache made with ``where`` holds only the rows it lets through
(one scope's visible rows, ``packs/recall/scope_cache.py``).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController

from packs.recall.cache_sync import CachedTable, CacheSync, read_rows
from packs.recall.lexical import LexicalIndex, row_text
from packs.store.gateway import VECTOR_COLUMN, PackStore
from packs.store.lifecycle import EXPIRES
from packs.store.schemas import TEXT_COLUMNS

# Hand-set: 500k x 384 float32 is 768 MB per Pack handle; beyond it an ANN index answers
# faster than the scan (the measurements: docs/recall.md).
MAX_CACHED_ROWS = 500_000
_GROWTH = 1.25  # spare capacity so appends rarely copy the matrix
_FILTER_MASKS = 16  # filter clauses whose matching rows are remembered
_MAX_CHUNKS = 64  # Arrow chunks of the cached columns before they are combined
_NEVER = np.iinfo(np.int64).max  # the expiry of a row without one


@dataclass(frozen=True)
class Hits:
    """Cached top-k: entry positions in similarity order, with their cosine similarities."""

    positions: NDArray[np.int64]
    similarity: NDArray[np.float64]


@functools.cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()  # after numpy loaded its BLAS: one scan of the libraries


def one_thread_product(matrix: NDArray[np.float32], vector: NDArray[np.float32]) -> NDArray:
    """``matrix @ vector`` on one BLAS thread. Measured at 100k x 384 under load 10 on the
    2-core box: 9.4 ms p50, 21.2 p95 on one thread against 16.0 / 28.0 on OpenBLAS's two,
    whose threads wait for each other when the box is busy (``benchmarks/recallbench/
    e2e.py``, issue 31). The limit costs about 17 us a call."""
    with _blas().limit(limits=1, user_api="blas"):
        return matrix @ vector


def _unit_rows(column: pa.ChunkedArray | pa.Array, dim: int) -> NDArray[np.float32]:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    flat = column.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    matrix = flat.reshape(-1, dim)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero vector has no direction; LanceDB gives it no similarity either.
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class VectorCache(CacheSync):
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
        # While this handle's flush writes, and until :meth:`apply` brings what it wrote,
        # searches use the cache as it is (the flush's steps are applied on top of it by
        # the learning state) instead of catching up on the query path.
        self.hold = False
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
            found = read_rows(CachedTable(store, name), [], where)
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
            scores = one_thread_product(self._matrix[positions], q)
        else:
            scores = one_thread_product(self._matrix[: self._n], q)
            scores[~keep] = -np.inf
        k = min(k, count)
        if k <= 0:
            return Hits(np.zeros(0, dtype=np.int64), np.zeros(0))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        similarity = scores[best].astype(np.float64)
        return Hits((best if positions is None else positions[best]).astype(np.int64), similarity)

    def lookup(
        self,
        query: NDArray[np.floating],
        ids: Sequence[str],
        mask: NDArray[np.bool_] | None = None,
    ) -> Hits:
        """The live entries of ``ids`` that ``mask`` allows, with their similarity to
        ``query`` (associative links: candidates found by id, not by similarity)."""
        found = [self._position[i] for i in ids if i in self._position]
        positions = np.asarray([p for p in found if mask is None or bool(mask[p])], dtype=np.int64)
        if not len(positions):
            return Hits(positions, np.zeros(0))
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        scores = self._matrix[positions] @ (q / norm if norm > 0 else q)
        return Hits(positions, scores.astype(np.float64))

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
