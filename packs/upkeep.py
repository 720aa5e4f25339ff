"""Upkeep of an open Pack: what the nightly ``maintain-pack`` flow runs.

Flushes the handle, then compacts, cleans up old versions and builds the indexes that
are due (:func:`packs.store.maintenance.maintain_store`).
"""

from __future__ import annotations

from datetime import timedelta

from packs.pack import Pack
from packs.store.maintenance import DEFAULT_INDEX_THRESHOLD, MaintenanceReport, maintain_store


def maintain(
    pack: Pack,
    retention: timedelta | None = None,
    index_threshold: int = DEFAULT_INDEX_THRESHOLD,
) -> MaintenanceReport:
    """Flush, compact every table, drop versions older than ``retention`` (default: the
    Pack's ``version_retention_hours``), and build the indexes that are due."""
    if retention is None:
        retention = timedelta(hours=pack.settings.flush.version_retention_hours)
    pack.store.require_writable("maintain the Pack")
    pack.flush()
    return maintain_store(pack.store, retention, index_threshold)
