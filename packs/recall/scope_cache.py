"""Phase A's in-memory scan for one scope of a Pack too large to hold whole.

Above :data:`~packs.recall.vector_cache.MAX_CACHED_ROWS` rows the Pack's vector cache
stands aside and LanceDB searches. A scope (one user of an app serving many) sees its own
rows and the shared ones, often a few thousand among millions: LanceDB's ANN index probes
only some partitions (it missed some of a scope's nearest rows), and its exact filtered
search and full-text search cost 100-400 ms per query at 1M rows on the shared box
(docs/recall.md). So the visible rows of the most recently used scopes are held in small
:class:`~packs.recall.vector_cache.VectorCache` instances (made with the scope's clause),
each kept current by the table version like the big one, and searched exactly with its
BM25 index. A scope is cached only when maintenance's tags index counts its rows cheaply
and they are at most :data:`SCOPE_ROWS`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from packs.recall.indexed import CANDIDATE_COLUMNS, visible_rows
from packs.recall.vector_cache import VectorCache
from packs.store import schemas
from packs.store.gateway import PackStore

# Hand-set: a scope's rows held at most (about 2 KB a row with its columns), and all the
# scopes' rows together; the least recently used scope is dropped first.
SCOPE_ROWS = 20_000
SCOPE_BUDGET_ROWS = 200_000


class ScopeCaches:
    """The visible rows of recently used scopes, one cache per visibility clause."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._caches: OrderedDict[str, VectorCache] = OrderedDict()

    def __len__(self) -> int:
        return len(self._caches)

    def get(
        self, store: PackStore, visible: str | None, columns: Sequence[str] = CANDIDATE_COLUMNS
    ) -> VectorCache | None:
        """A current cache of the rows ``visible`` lets through (with ``columns``), or None
        when they are too many (or can't be counted without reading every row)."""
        if visible is None:
            return None
        cache = self._caches.pop(visible, None)
        if cache is None:
            rows = visible_rows(store, visible)
            if rows is None or rows > SCOPE_ROWS:
                return None
            cache = VectorCache(self.dim, max_rows=SCOPE_ROWS, defer=0, where=visible)
        if not cache.sync(store, schemas.MEMORIES, columns):
            return None  # grew past SCOPE_ROWS: LanceDB answers, and it is dropped
        self._caches[visible] = cache
        total = sum(c.rows for c in self._caches.values())
        while total > SCOPE_BUDGET_ROWS and len(self._caches) > 1:
            total -= self._caches.popitem(last=False)[1].rows
        return cache

    def clear(self) -> None:
        self._caches.clear()
