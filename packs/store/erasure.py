"""Erasing rows for good (docs/forgetting.md): the deletes of a forget, and the purge that
takes the deleted rows' bytes out of storage.

A LanceDB delete only marks rows deleted: their bytes stay in the data files (a fragment
is rewritten by compaction only once a tenth of it is deleted), in every older version,
and in every index built over them. A purge therefore, for each table a forget deleted
from,

1. rewrites every live row of a table that holds text, so no current data file holds a
   deleted row (:meth:`~packs.store.admin.StoreAdmin.rewrite`), and rebuilds every index
   of it, whatever its type: full-text, BTREE, BITMAP and LABEL_LIST hold the words, ids
   and tags of deleted rows, a vector index their (quantised) embeddings; an index of a
   type it can't rebuild is dropped (:func:`reindex`);
2. compacts and drops every older version (``optimize`` with retention 0), which deletes
   the files only they referenced.

Before that it erases again what landed late, for every tombstone still watching
(:func:`packs.store.tombstones.watching`): rows of the forgotten memories, episodes and
scopes created before the forget that another process flushed after it (a buffer already
on its way), and the idempotency keys of the forgotten episodes' reward events on
memories that stay (caller text; the events keep ids and numbers only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from packs.store import schemas, tombstones
from packs.store.filters import in_clause
from packs.store.fulltext import text_config
from packs.store.gateway import PackStore
from packs.store.lifecycle import timestamp_literal
from packs.store.maintenance import btree, ivf_sq, label_list
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
# Tables whose rows hold a caller's text: rewritten whole by a purge. reward_events holds
# idempotency keys, which callers choose. The others hold ids and numbers; their deleted
# rows leave with their older versions and compaction.
TEXT_TABLES = frozenset(
    {
        schemas.MEMORIES,
        schemas.EPISODES,
        schemas.MERGES,
        schemas.VALIDATIONS,
        schemas.LESSON_LOG,
        schemas.MEMORY_HISTORY,
        schemas.REWARD_EVENTS,
    }
)
# How each index type LanceDB lists (upper case, without "_") is built again.
_REBUILD: dict[str, Callable[[], Any]] = {
    "FTS": text_config,
    "INVERTED": text_config,
    "BTREE": btree,
    "LABELLIST": label_list,
    "IVFSQ": ivf_sq,
}


def delete_rows(
    store: PackStore,
    memory_ids: Sequence[str],
    episode_ids: Sequence[str],
    before: datetime | None = None,
) -> dict[str, int]:
    """Delete the rows of ``memory_ids`` and ``episode_ids`` from every table; the count
    per table. With ``before`` (the late pass), only log rows created by then, and no
    ``memories`` row (one remembered since is a new memory)."""
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


def strip_keys(store: PackStore, episode_ids: Sequence[str]) -> int:
    """The idempotency keys of ``episode_ids``' reward events, which stay on memories
    that stay, replaced by the event's id: the caller's text goes, the event keeps ids
    and numbers only. How many events changed."""
    changed = 0
    for chunk in _chunks(episode_ids):
        where = f"{in_clause('episode_id', chunk)} AND idempotency_key != event_id"
        changed += store.update_where(schemas.REWARD_EVENTS, where, {"idempotency_key": "event_id"})
    return changed


def erase_late(store: PackStore) -> tuple[set[str], list[str]]:
    """Erase again, for every tombstone still watching, what landed after its forget
    (the module docstring); the tables that lost rows or keys, and the tombstones
    watched."""
    store.latest_version(schemas.FORGOTTEN)  # the pass sees every commit made so far
    store.latest_version(schemas.EPISODES)
    watched = tombstones.watching(store)
    touched: set[str] = set()
    salts = tombstones.forget_salts(store) if watched else []
    for stone in watched:
        episodes = [*(stone["episode_ids"] or []), *_recalled_in(store, stone, salts)]
        late = delete_rows(store, stone["memory_ids"] or [], episodes, stone["at"])
        touched |= {name for name, count in late.items() if count}
        if strip_keys(store, episodes):
            touched.add(schemas.REWARD_EVENTS)
    return touched, [stone["forget_id"] for stone in watched]


def purge_pending(store: PackStore) -> int:
    """Purge what every forget not yet purged left behind, and what landed late of every
    tombstone still watching; how many forgets were pending."""
    waiting = tombstones.pending(store)
    touched, watched = erase_late(store)
    tables = touched | {name for stone in waiting for name in stone["tables"] or []}
    purge_tables(store, tables)
    tombstones.mark_purged(store, watched)
    return len(waiting)


def _recalled_in(store: PackStore, stone: dict[str, Any], salts: list[str]) -> list[str]:
    """Episodes recalled in a forgotten scope before the forget, stored since."""
    digests = set(stone["scopes"] or [])
    if not digests:
        return []
    clause = f"strpos(filter_json, 'scope=') > 0 AND created_at <= {timestamp_literal(stone['at'])}"
    rows = store.scan(schemas.EPISODES, ["id", "filter_json"], clause).to_pylist()
    return [row["id"] for row in rows if recalled_in(row["filter_json"], digests, salts)]


def purge_tables(store: PackStore, tables: Iterable[str]) -> None:
    """Leave no data file, index or older version of ``tables`` holding a deleted row."""
    for name in sorted(tables):
        if name in TEXT_TABLES and store.rewrite(name):
            reindex(store, name)
        store.optimize(name, timedelta(0))


def reindex(store: PackStore, name: str) -> list[str]:
    """Build every index of ``name`` again (they may hold deleted rows' words, tags, ids or
    vectors); one of a type not in :data:`_REBUILD` is dropped (maintenance builds the
    indexes it keeps when they are due). The names of the indexes dropped."""
    dropped = []
    for kind, columns, index in store.indexes(name):
        build = _REBUILD.get(kind.upper().replace("_", ""))
        if build is None or len(columns) != 1:
            store.drop_index(name, index)
            dropped.append(index)
        else:
            store.create_index(name, columns[0], build())
    return dropped


def _chunks(ids: Sequence[str]) -> Iterable[list[str]]:
    items = list(ids)
    for start in range(0, len(items), ID_CHUNK):
        yield items[start : start + ID_CHUNK]
