"""Upkeep of an open Pack: what the nightly ``maintain-pack`` flow runs.

Flushes the handle, forgets the memories whose ``expires_at`` has passed, purges what
earlier forgets left in older versions (:func:`packs.store.erasure.purge_pending`), then
compacts, cleans up old versions and builds the indexes that are due
(:func:`packs.store.maintenance.maintain_store`).
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from packs.pack import Pack, storage_of
from packs.store import schemas
from packs.store.erasure import ID_CHUNK, purge_pending
from packs.store.lifecycle import status_clause
from packs.store.maintenance import DEFAULT_INDEX_THRESHOLD, MaintenanceReport, maintain_store


def maintain(
    pack: Pack,
    retention: timedelta | None = None,
    index_threshold: int = DEFAULT_INDEX_THRESHOLD,
) -> MaintenanceReport:
    """Flush, forget expired memories, purge pending forgets, compact every table, drop
    versions older than ``retention`` (default: the Pack's ``version_retention_hours``),
    and build the indexes that are due."""
    if retention is None:
        retention = timedelta(hours=pack.settings.flush.version_retention_hours)
    storage_of(pack).require_writable("maintain the Pack")
    pack.flush()
    expired = forget_expired(pack)
    purged = purge_pending(storage_of(pack))
    report = maintain_store(storage_of(pack), retention, index_threshold)
    return dataclasses.replace(report, expired=expired, purged=purged)


def forget_expired(pack: Pack, now: datetime | None = None) -> int:
    """Forget every memory whose ``expires_at`` is past (already never recalled); how many."""
    clause = status_clause(storage_of(pack), "expired", now or datetime.now(UTC))
    ids = storage_of(pack).scan(schemas.MEMORIES, ["id"], clause)["id"].to_pylist()
    forgotten = 0
    for start in range(0, len(ids), ID_CHUNK):  # by filter: one forgotten meanwhile is no error
        forgotten += len(pack.forget(where={"id": ids[start : start + ID_CHUNK]}).memory_ids)
    return forgotten
