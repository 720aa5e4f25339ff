"""How the vector cache (:mod:`packs.recall.vector_cache`) stays current: its reads of
LanceDB, on the query path (:meth:`CacheSync.sync`) or off it (:meth:`CacheSync.prepare`
without the handle's lock, then :meth:`CacheSync.apply` under it).

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

What this handle's own flush wrote is brought in by the flush's thread (issue 31): the
catch-up's reads cost tens of ms at 100k rows (a pass over the row ids, one more per
remembered filter), the tail of recall when a recall paid them. While the flush writes,
and until its catch-up is applied, searches use the cache as it is (:attr:`hold`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from packs.recall.lexical import LexicalIndex
from packs.store.gateway import VECTOR_COLUMN, PackStore
from packs.store.tables import commit_marker

# A writable handle asks for the table's version at most this often while it writes nothing
# itself: other processes' commits reach it within a second anyway (WRITER_CONSISTENCY),
# and the ask cost 10-16 ms per recall on the loaded 2-core box (issue 24, docs/recall.md).
LOOK_EVERY_S = 0.5

# Rebuild once a quarter of the entries are superseded rows (hand-set).
DEAD_SHARE = 0.25


class CacheSync:
    """The reads that keep a :class:`~packs.recall.vector_cache.VectorCache` current (a
    mixin: the cache holds the state and appends what is read)."""

    max_rows: int
    where: str | None
    too_large: bool
    defer: int
    _deferred: int
    reloads: int
    _table_key: tuple[int, str] | None
    _wanted: tuple[str, ...]
    _versions_dir: str | None
    _marker: tuple[int, int] | None
    _looked: tuple[int, tuple[int, int] | None, float]
    lexical: LexicalIndex
    hold: bool
    _version: int | None
    _n: int
    _rowids: NDArray[np.uint64]
    _alive: NDArray[np.bool_]
    _ids: list[str]
    _position: dict[str, int]
    _masks: OrderedDict[str, tuple[NDArray[np.bool_], int]]

    @property
    def rows(self) -> int:  # pragma: no cover - VectorCache's
        raise NotImplementedError

    def _clear(self) -> None:  # pragma: no cover - VectorCache's
        raise NotImplementedError

    def _append(self, data: pa.Table) -> None:  # pragma: no cover - VectorCache's
        raise NotImplementedError

    def _within(self, where: str | None) -> str | None:  # pragma: no cover - VectorCache's
        raise NotImplementedError

    def _squeeze(self) -> None:  # pragma: no cover - VectorCache's
        raise NotImplementedError

    def sync(self, store: PackStore, name: str, columns: Sequence[str] = ("id",)) -> bool:
        """Bring the cache to the table's latest version, with ``columns`` cached; False
        when it should stand aside (more rows than ``max_rows``, or a deferred load)."""
        wanted = tuple(dict.fromkeys(["id", *columns]))
        table = CachedTable(store, name)
        current = self._table_key == table.key and wanted == self._wanted
        if self.hold and current and self._version is not None:
            return True  # this handle's flush is writing: its refresh catches up
        if self._deferred < self.defer and (not current or self._version is None):
            self._deferred += 1
            return False
        marker = commit_marker(self._versions_dir, settled=True) if current else None
        if marker is not None and marker == self._marker and self._version is not None:
            return True  # no commit since the last check (a local table; see commit_marker)
        looked = (store.commits, commit_marker(self._versions_dir), time.monotonic())
        unchanged = looked[:2] == self._looked[:2] and looked[2] - self._looked[2] < LOOK_EVERY_S
        if current and self._version is not None and not store.read_only and unchanged:
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

    def prepare(self, store: PackStore, name: str) -> CatchUp | None:
        """The reads of a catch-up, without the handle's lock: the rows written since the
        cache's state taken at the start, and the rows of each remembered filter among
        them (:meth:`apply` brings them in only if the cache is still in that state).
        None when there is nothing to bring, or when only a full :meth:`sync` can (a
        first load, a renumbering)."""
        base_version, base_n = self._version, self._n
        if base_version is None or not base_n or self._table_key != CachedTable(store, name).key:
            return None
        last = int(self._rowids[base_n - 1])
        covered = {clause: entry[1] for clause, entry in list(self._masks.items())}
        looked = (store.commits, commit_marker(self._versions_dir), time.monotonic())
        version = store.latest_version(name)
        if version == base_version:
            return None
        live = store.count(name, self.where)
        table = CachedTable(store, name)
        new = read_rows(table, [VECTOR_COLUMN, *self._wanted], self._within(f"_rowid > {last}"))
        if live > self.max_rows or new.num_rows >= live:
            return None
        masks = {}
        rowids = self._rowids
        for clause, upto in covered.items():
            where = f"({clause}) AND _rowid > {int(rowids[upto - 1])}" if upto else clause
            found = read_rows(table, [], where)
            masks[clause] = (upto, found["_rowid"].to_numpy().astype(np.uint64))
        return CatchUp(base_version, base_n, version, live, new, masks, looked)

    def apply(self, delta: CatchUp, store: PackStore) -> bool:
        """Bring in what :meth:`prepare` read, under the handle's lock; False if the cache
        moved meanwhile (the next search catches up as before)."""
        if delta.base_version != self._version or delta.base_n != self._n:
            return False
        self._append(delta.new)
        for clause, (covered, rowids) in delta.masks.items():
            entry = self._masks.get(clause)
            if entry is None or entry[1] != covered:
                continue
            grown = np.zeros(self._n, dtype=bool)
            grown[: len(entry[0])] = entry[0]
            positions = np.searchsorted(self._rowids, np.sort(rowids))
            inside = positions < self._n
            positions, rowids = positions[inside], np.sort(rowids)[inside]
            grown[positions[self._rowids[positions] == rowids]] = True
            self._masks[clause] = (grown, self._n)
        if self.rows == delta.live:  # else a delete: the next sync reconciles
            self._version = delta.version
            self._looked = delta.looked  # what was known when it was read: later commits count
        if self._n - self.rows > DEAD_SHARE * max(self._n, 1):
            self._squeeze()
        return True

    def _reload(self, table: CachedTable) -> None:
        self._clear()
        self.reloads += 1
        self._append(read_rows(table, [VECTOR_COLUMN, *self._wanted], self.where))
        self.lexical.retain(self._position)

    def _catch_up(self, table: CachedTable, live: int) -> None:
        # An empty cache reads every row: Lance's row ids are unsigned, so "> -1" is refused.
        where = f"_rowid > {int(self._rowids[self._n - 1])}" if self._n else None
        new = read_rows(table, [VECTOR_COLUMN, *self._wanted], self._within(where))
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
        if self._n - self.rows > DEAD_SHARE * max(self._n, 1):
            self._squeeze()

    def _reconcile(self, table: CachedTable) -> bool:
        """Drop entries whose row is gone; False if a live row is not cached at all."""
        live = np.sort(read_rows(table, [], self.where)["_rowid"].to_numpy().astype(np.uint64))
        cached = self._rowids[self._alive[: self._n]]
        if np.setdiff1d(live, cached, assume_unique=True).size:
            return False
        gone = np.flatnonzero(self._alive[: self._n] & ~np.isin(self._rowids, live))
        for position in gone:
            self._alive[position] = False
            self._position.pop(self._ids[position], None)
        self.lexical.remove(self._ids[p] for p in gone)
        return True


@dataclass(frozen=True)
class CatchUp:
    """What :meth:`VectorCache.prepare` read for :meth:`VectorCache.apply`."""

    base_version: int
    base_n: int
    version: int
    live: int
    new: pa.Table
    masks: dict[str, tuple[int, NDArray[np.uint64]]]  # clause -> (covered, new row ids)
    looked: tuple[int, tuple[int, int] | None, float]  # commits, folder, time before reading


@dataclass(frozen=True)
class CachedTable:
    """One table of one Pack, as the cache reads it (through the storage gateway)."""

    store: PackStore
    name: str

    @property
    def key(self) -> tuple[int, str]:
        return id(self.store), self.name


def read_rows(table: CachedTable, columns: list[str], where: str | None) -> pa.Table:
    """``columns`` plus ``_rowid`` of every row (matching ``where``)."""
    return table.store.scan(table.name, columns, where, with_row_id=True)
