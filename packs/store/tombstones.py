"""The ``forgotten`` table: one tombstone per ``Pack.forget`` call.

A tombstone names the memories and episodes a forget removed (ids only, never text), the
digest of a forgotten scope (not its name: enough to know its episodes again), the
tables it deleted rows from, and when its purge ran (``purged_at``; null means the older
versions still hold the rows, and ``maintain-pack`` purges them). Other processes read
new tombstones to drop those ids from their caches (:mod:`packs.journal.forgotten`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from packs.store import schemas
from packs.store.gateway import PackStore

COLUMNS = ["forget_id", "at", "memory_ids", "episode_ids", "scopes", "tables", "purged_at"]


def record(
    store: PackStore,
    memory_ids: Sequence[str],
    episode_ids: Sequence[str],
    scopes: Sequence[str],
    tables: Sequence[str],
    at: datetime,
) -> str:
    """Store one tombstone (not yet purged); its id. ``scopes`` are scope digests."""
    forget_id = "fg_" + uuid.uuid4().hex
    row = {
        "forget_id": forget_id, "at": at, "memory_ids": list(memory_ids),
        "episode_ids": list(episode_ids), "scopes": list(scopes), "tables": sorted(tables),
        "purged_at": None,
    }  # fmt: skip
    store.append(schemas.FORGOTTEN, pa.Table.from_pylist([row], schema=schemas.FORGOTTEN_SCHEMA))
    return forget_id


def read(store: PackStore, where: str | None = None) -> list[dict[str, Any]]:
    """Every tombstone (matching ``where``), oldest first."""
    rows = store.scan(schemas.FORGOTTEN, COLUMNS, where).to_pylist()
    return sorted(rows, key=lambda r: r["at"])


def pending(store: PackStore) -> list[dict[str, Any]]:
    """The tombstones whose older versions were not purged yet."""
    return read(store, "purged_at IS NULL")


def mark_purged(store: PackStore, forget_ids: Sequence[str]) -> None:
    if not forget_ids:
        return
    now = datetime.now(UTC)
    stamp = pa.table(
        {"forget_id": list(forget_ids), "purged_at": [now] * len(forget_ids)},
        schema=pa.schema([schemas.FORGOTTEN_SCHEMA.field(c) for c in ("forget_id", "purged_at")]),
    )
    store.merge(schemas.FORGOTTEN, stamp, "forget_id", update=True, insert=False)
