"""Erasing rows for good (docs/forgetting.md): the deletes of a forget, and the purge that
takes the deleted rows' bytes out of storage.

A LanceDB delete only marks rows deleted: their bytes stay in the data files (a fragment
is rewritten by compaction only once a tenth of it is deleted), in every older version,
and in the full-text index. A purge therefore, for each table a forget deleted from,

1. rewrites every live row of a table that holds text, so no current data file holds a
   deleted row (:meth:`~packs.store.admin.StoreAdmin.rewrite`), and rebuilds its indexes
   (the full-text index holds the words of deleted rows);
2. compacts and drops every older version (``optimize`` with retention 0), which deletes
   the files only they referenced.

Before that it deletes again what other processes flushed late: rows of the forgotten
memories, episodes and scopes created before the forget (a buffer not yet written).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from lancedb.index import BTree, IvfSq

from packs.store import schemas, tombstones
from packs.store.filters import in_clause
from packs.store.fulltext import text_config
from packs.store.gateway import PackStore
from packs.store.lifecycle import timestamp_literal
from packs.store.maintenance import ROWS_PER_PARTITION
from packs.store.scopes import recalled_in

ID_CHUNK = 1_000  # ids per IN (...) clause (hand-set: one commit each, short SQL)
# Per table: the column naming a memory, the one naming an episode, the creation time.
_KEYS: dict[str, tuple[str | None, str | None, str | None]] = {
    schemas.MEMORIES: ("id", None, None),
    schemas.MERGES: ("memory_id", None, "at"),
    schemas.LESSON_LOG: ("memory_id", None, "at"),
    schemas.MEMORY_HISTORY: ("memory_id", None, "at"),  # old and new text of revisions
    schemas.REWARD_EVENTS: ("memory_id", None, "created_at"),
    schemas.RETRIEVAL_LOG: ("item_id", "episode_id", "created_at"),
    schemas.EPISODES: (None, "id", "created_at"),
    schemas.VALIDATIONS: (None, "episode_id", "at"),
}
# Tables whose rows hold a user's words: rewritten whole by a purge. The others hold ids
# and numbers; their deleted rows leave with their older versions and compaction.
TEXT_TABLES = frozenset(
    {schemas.MEMORIES, schemas.EPISODES, schemas.MERGES, schemas.VALIDATIONS, schemas.LESSON_LOG,
     schemas.MEMORY_HISTORY}
)  # fmt: skip


def delete_rows(
    store: PackStore,
    memory_ids: Sequence[str],
    episode_ids: Sequence[str],
    before: datetime | None = None,
) -> dict[str, int]:
    """Delete the rows of ``memory_ids`` and ``episode_ids`` from every table; the count
    per table. With ``before`` (a purge's late pass), only log rows created by then, and
    no ``memories`` row (one remembered since is a new memory)."""
    removed: dict[str, int] = {}
    for name, (memory_column, episode_column, at_column) in _KEYS.items():
        if (before is not None and name == schemas.MEMORIES) or not store.has_table(name):
            continue
        count = 0
        for column, ids in ((memory_column, memory_ids), (episode_column, episode_ids)):
            if column is None:
                continue
            for chunk in _chunks(ids):
                where = in_clause(column, chunk)
                if before is not None and at_column is not None:
                    where += f" AND {at_column} <= {timestamp_literal(before)}"
                count += store.delete(name, where)
        removed[name] = count
    return removed


def purge_pending(store: PackStore) -> int:
    """Purge what every forget not yet purged left behind; how many forgets that was."""
    waiting = tombstones.pending(store)
    if not waiting:
        return 0
    tables: set[str] = set()
    for stone in waiting:
        episodes = [*(stone["episode_ids"] or []), *_recalled_in(store, stone)]
        late = delete_rows(store, stone["memory_ids"] or [], episodes, stone["at"])
        tables |= set(stone["tables"] or []) | {name for name, n in late.items() if n}
    purge_tables(store, tables)
    tombstones.mark_purged(store, [stone["forget_id"] for stone in waiting])
    return len(waiting)


def _recalled_in(store: PackStore, stone: dict[str, Any]) -> list[str]:
    """Episodes recalled in a forgotten scope by the forget, stored since (flushed late)."""
    digests = set(stone["scopes"] or [])
    if not digests:
        return []
    clause = f"strpos(filter_json, 'scope=') > 0 AND created_at <= {timestamp_literal(stone['at'])}"
    rows = store.scan(schemas.EPISODES, ["id", "filter_json"], clause).to_pylist()
    return [row["id"] for row in rows if recalled_in(row["filter_json"], digests)]


def purge_tables(store: PackStore, tables: Iterable[str]) -> None:
    """Leave no data file, index or older version of ``tables`` holding a deleted row."""
    for name in sorted(tables):
        if name in TEXT_TABLES and store.rewrite(name):
            _reindex(store, name)
        store.optimize(name, timedelta(0))


def _reindex(store: PackStore, name: str) -> None:
    """Build again the indexes of ``name`` that may hold deleted rows' words or vectors."""
    configs: dict[str, Callable[[], Any]] = {
        "FTS": text_config, "BTREE": BTree, "IVF_SQ": _vector_config,
    }  # fmt: skip
    for kind, columns in store.index_types(name).items():
        config = configs.get(kind.upper())
        if config is not None:
            for column in sorted(columns):
                store.create_index(name, column, config())


def _vector_config() -> IvfSq:
    return IvfSq(distance_type="cosine", target_partition_size=ROWS_PER_PARTITION)


def _chunks(ids: Sequence[str]) -> Iterable[list[str]]:
    items = list(ids)
    for start in range(0, len(items), ID_CHUNK):
        yield items[start : start + ID_CHUNK]
