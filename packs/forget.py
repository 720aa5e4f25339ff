"""Forgetting: removing memories, or every row of one user, from a Pack for good
(docs/forgetting.md).

:class:`ForgetService` resolves what to forget (ids, a scope or a filter), deletes it
from every table (:func:`packs.store.erasure.delete_rows`), records a tombstone that
other processes read to clean their caches (:mod:`packs.journal.forgotten`), applies it
to this handle at once, and with ``purge`` takes the bytes out of storage
(:func:`packs.store.erasure.purge_pending`), at most once a minute per Pack
(:mod:`packs.purges`).

What goes with a forgotten memory: its row, its reward events, retrieval-log rows,
merges and lesson log. What goes with a forgotten scope: its memories and chunks (with
the above), the lessons it wrote of shared memories (packs/store/lesson_scopes.py), and
the episodes recalled in it (their query text), with their retrieval logs and
validations. The reward events those episodes gave to memories that stay (the
shared ones) are kept, their idempotency keys (a caller's text) replaced by their ids:
dropping them would change the utilities every other user ranks by.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from packs.errors import InvalidInput, UnknownMemory
from packs.journal.flush import Flusher
from packs.journal.forgotten import ForgetWatch
from packs.purges import PurgeQueue
from packs.records import ForgetReport
from packs.settings import ActiveSettings
from packs.store import schemas, tombstones
from packs.store.erasure import ID_CHUNK, delete_rows, strip_keys
from packs.store.filters import MEMORY_FILTER_COLUMNS, in_clause, sql_literal, where_clause
from packs.store.gateway import PackStore
from packs.store.lesson_scopes import SCOPE_COLUMN
from packs.store.scopes import (
    SCOPE_KEY,
    check_scope,
    own_clause,
    recalled_in_clause,
    scope_digest,
)
from packs.validation import shown

MAX_IDS = 100_000  # ids one call may name (hand-set: a few MB of clause text in chunks)


class ForgetService:
    """Forgets memories, chunks and users' episodes of one Pack."""

    def __init__(
        self,
        store: PackStore,
        settings: ActiveSettings,
        flusher: Flusher,
        forgets: ForgetWatch,
        lock: threading.RLock,
    ) -> None:
        self._store = store
        self._flusher = flusher
        self._forgets = forgets
        self._lock = lock
        self.purges = PurgeQueue(store, settings)  # at most one purge a minute (default)

    def forget(
        self,
        memory_ids: Sequence[str] | None = None,
        *,
        scope: str | None = None,
        where: Mapping[str, Any] | None = None,
        purge: bool = False,
    ) -> ForgetReport:
        """Forget ``memory_ids``, or every row of ``scope``, or the rows ``where`` matches
        (exactly one). Unknown ids raise :class:`UnknownMemory` and forget nothing."""
        self._store.require_writable("forget")
        if sum(x is not None for x in (memory_ids, scope, where)) != 1:
            raise InvalidInput(
                "Give exactly one of memory_ids (a list of ids), scope (a user or session) "
                "or where (a filter over memories)."
            )
        if not isinstance(purge, bool):
            raise InvalidInput(f"purge must be True or False, got {shown(purge)}.")
        with self._lock:
            self._flusher.flush()  # this handle's buffered rows go too
            episodes: list[str] = []
            digests: list[str] = []  # a forgotten scope: its episodes still in buffers
            if memory_ids is not None:
                ids = self._known(_check_ids(memory_ids))
            elif scope is not None:
                ids, episodes = self._scope_rows(_scope(scope))
                salt = tombstones.forget_salts(self._store, create=True)[0]
                digests = [scope_digest(scope, salt)]
            else:
                ids = self._ids(_clause(where))
            removed = delete_rows(self._store, ids, episodes)
            if scope is not None:  # its lessons of
                clause = f"{SCOPE_COLUMN} = {sql_literal(scope)}"  # shared memories
                removed[schemas.LESSON_LOG] += self._store.delete(schemas.LESSON_LOG, clause)
            keys = strip_keys(self._store, episodes)  # their events on memories that stay
            if ids or episodes or digests:
                tables = [name for name, count in removed.items() if count]
                tables += [schemas.REWARD_EVENTS] if keys else []
                stone = tombstones.record(
                    self._store, ids, episodes, digests, tables, datetime.now(UTC)
                )
                self._forgets.seen(stone)
                self._forgets.apply(ids, episodes, digests)
        due = self.purges.request() if purge else None  # outside the lock: seconds
        return ForgetReport(removed, tuple(ids), purge and due is None, due)

    def _known(self, ids: list[str]) -> list[str]:
        found = set(self._ids_where(ids))
        missing = [m for m in ids if m not in found]
        if missing:
            raise UnknownMemory(
                f"Pack {self._store.location.name!r} has no memory {missing[:10]}"
                f"{f' ({len(missing)} unknown)' if len(missing) > 10 else ''}; nothing was "
                "forgotten. Pass ids that recall, search or remember returned."
            )
        return ids

    def _ids_where(self, ids: list[str]) -> list[str]:
        found: list[str] = []
        for start in range(0, len(ids), ID_CHUNK):
            found += self._ids(in_clause("id", ids[start : start + ID_CHUNK]))
        return found

    def _ids(self, clause: str) -> list[str]:
        return self._store.scan(schemas.MEMORIES, ["id"], clause)["id"].to_pylist()

    def _scope_rows(self, scope: str) -> tuple[list[str], list[str]]:
        """The memories and chunks of ``scope``, and the episodes recalled in it."""
        episodes = self._store.scan(schemas.EPISODES, ["id"], recalled_in_clause(scope))
        return self._ids(own_clause(scope)), episodes["id"].to_pylist()


def _check_ids(memory_ids: object) -> list[str]:
    if isinstance(memory_ids, str) or not isinstance(memory_ids, Sequence):
        raise InvalidInput(f"memory_ids must be a list of id strings, got {shown(memory_ids)}.")
    strings = all(isinstance(m, str) and m for m in memory_ids)
    if not strings or not 0 < len(memory_ids) <= MAX_IDS:
        raise InvalidInput(
            f"memory_ids must hold 1 to {MAX_IDS} non-empty id strings, got "
            f"{len(memory_ids)} items: {shown(memory_ids)}."
        )
    return list(dict.fromkeys(memory_ids))


def _scope(scope: object) -> str:
    checked = check_scope(scope)
    if checked is None:  # pragma: no cover - None never reaches here
        raise InvalidInput("scope must name a user or session.")
    return checked


def _clause(where: object) -> str:
    """A filter over memories: columns (``MEMORY_FILTER_COLUMNS``) and metadata keys,
    ``scope`` included, each value escaped (:func:`packs.store.filters.where_clause`)."""
    if not isinstance(where, Mapping) or not where:
        raise InvalidInput(
            f"where must be a non-empty object of column or metadata key: value, got "
            f"{shown(where)}; to forget everything of one user pass scope= instead."
        )
    columns = {k: v for k, v in where.items() if k in MEMORY_FILTER_COLUMNS}
    metadata = {k: v for k, v in where.items() if k not in MEMORY_FILTER_COLUMNS}
    if SCOPE_KEY in metadata:
        check_scope(metadata[SCOPE_KEY])
    clause = where_clause(columns, metadata)
    if clause is None:  # pragma: no cover - a non-empty mapping always gives a clause
        raise InvalidInput("where matched no column or metadata key.")
    return clause
