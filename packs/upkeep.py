"""Upkeep of an open Pack: what the nightly ``maintain-pack`` flow runs.

Flushes the handle, forgets the memories whose ``expires_at`` has passed, purges what
earlier forgets left in older versions (:func:`packs.store.erasure.purge_pending`), then
compacts, cleans up old versions and builds the indexes that are due
(:func:`packs.store.maintenance.maintain_store`). Reached as ``pack.upkeep``
(:class:`Upkeep`, built in ``packs/services.py``).
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Protocol

from packs.deprecation import moved
from packs.forget import ForgetService
from packs.journal.flush import Flusher
from packs.settings import ActiveSettings
from packs.store import schemas
from packs.store.erasure import ID_CHUNK, purge_pending
from packs.store.gateway import PackStore
from packs.store.lifecycle import status_clause
from packs.store.maintenance import DEFAULT_INDEX_THRESHOLD, MaintenanceReport, maintain_store


class Upkeep:
    """Maintains one Pack: expiry, purge, compaction, old versions, indexes."""

    def __init__(
        self,
        store: PackStore,
        settings: ActiveSettings,
        flusher: Flusher,
        forget: ForgetService,
    ) -> None:
        self._store = store
        self._settings = settings
        self._flusher = flusher
        self._forget = forget

    def maintain(
        self,
        retention: timedelta | None = None,
        index_threshold: int = DEFAULT_INDEX_THRESHOLD,
    ) -> MaintenanceReport:
        """Flush, forget expired memories, purge pending forgets, compact every table, drop
        versions older than ``retention`` (default: the Pack's ``version_retention_hours``),
        and build the indexes that are due."""
        if retention is None:
            retention = timedelta(hours=self._settings.value.flush.version_retention_hours)
        self._store.require_writable("maintain the Pack")
        self._flusher.flush()
        expired = self.forget_expired()
        purged = purge_pending(self._store)
        report = maintain_store(self._store, retention, index_threshold)
        return dataclasses.replace(report, expired=expired, purged=purged)

    def forget_expired(self, now: datetime | None = None) -> int:
        """Forget every memory whose ``expires_at`` is past (already never recalled); how
        many."""
        clause = status_clause(self._store, "expired", now or datetime.now(UTC))
        ids = self._store.scan(schemas.MEMORIES, ["id"], clause)["id"].to_pylist()
        forgotten = 0
        for start in range(0, len(ids), ID_CHUNK):  # by filter: one forgotten meanwhile is fine
            chunk = ids[start : start + ID_CHUNK]
            forgotten += len(self._forget.forget(None, where={"id": chunk}).memory_ids)
        return forgotten

    def drop_all(self) -> None:
        """Drop every table of the Pack (``wolfie demo --fresh``): nothing of it is left,
        and the next :meth:`Pack.open` creates it anew."""
        self._store.drop_all()


class _Kept(Protocol):  # an open Pack, as the deprecated functions below take it
    @property
    def upkeep(self) -> Upkeep: ...


def maintain(
    pack: _Kept,
    retention: timedelta | None = None,
    index_threshold: int = DEFAULT_INDEX_THRESHOLD,
) -> MaintenanceReport:
    """Deprecated: ``pack.upkeep.maintain(retention, index_threshold)``."""
    moved("packs.upkeep.maintain(pack)", "pack.upkeep.maintain()")
    return pack.upkeep.maintain(retention, index_threshold)


def forget_expired(pack: _Kept, now: datetime | None = None) -> int:
    """Deprecated: ``pack.upkeep.forget_expired(now)``."""
    moved("packs.upkeep.forget_expired(pack)", "pack.upkeep.forget_expired()")
    return pack.upkeep.forget_expired(now)
