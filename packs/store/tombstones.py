"""The ``forgotten`` table: one tombstone per ``Pack.forget`` call.

A tombstone names the memories and episodes a forget removed (ids only, never text), the
digest of a forgotten scope (not its name, and keyed by the Pack's own random salt:
enough to know its episodes again, not to confirm a guessed user id), the tables it
deleted rows from, and when a purge last ran over it (``purged_at``; null means the
older versions still hold the rows, and ``maintain-pack`` purges them). Other processes
read new tombstones to drop those ids from their caches (:mod:`packs.journal.forgotten`).

A tombstone keeps watching after its purge: a row of what it forgot that another process
had buffered lands late, and every purge and every ``maintain-pack`` erases such rows
again (:func:`packs.store.erasure.erase_late`), until a purge has run :data:`WATCH`
after the forget (:func:`watching`).
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore

COLUMNS = ["forget_id", "at", "memory_ids", "episode_ids", "scopes", "tables", "purged_at"]
# How long after a forget its rows may still land late. A handle reads the newest
# tombstones right before every flush writes (packs/journal/forgotten.py), so a late row
# is one whose flush was already under way, its commit retries included: seconds, a
# minute at worst. A day (hand-set) covers that many times over, and a nightly
# maintain-pack makes the pass that ends the watch.
WATCH = timedelta(days=1)
SALT_KEY = "forget_salt"  # pack_meta key of the salt of scope digests


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
        "forget_id": forget_id,
        "at": at,
        "memory_ids": list(memory_ids),
        "episode_ids": list(episode_ids),
        "scopes": list(scopes),
        "tables": sorted(tables),
        "purged_at": None,
    }
    store.append(schemas.FORGOTTEN, pa.Table.from_pylist([row], schema=schemas.FORGOTTEN_SCHEMA))
    return forget_id


def read(store: PackStore, where: str | None = None) -> list[dict[str, Any]]:
    """Every tombstone (matching ``where``), oldest first."""
    rows = store.scan(schemas.FORGOTTEN, COLUMNS, where).to_pylist()
    return sorted(rows, key=lambda r: r["at"])


def pending(store: PackStore) -> list[dict[str, Any]]:
    """The tombstones whose older versions were not purged yet."""
    return read(store, "purged_at IS NULL")


def watching(store: PackStore) -> list[dict[str, Any]]:
    """The tombstones whose rows may still land late: not purged, or last purged before
    :data:`WATCH` had passed since the forget."""
    return [s for s in read(store) if s["purged_at"] is None or s["purged_at"] < s["at"] + WATCH]


def mark_purged(store: PackStore, forget_ids: Sequence[str]) -> None:
    if not forget_ids:
        return
    now = datetime.now(UTC)
    stamp = pa.table(
        {"forget_id": list(forget_ids), "purged_at": [now] * len(forget_ids)},
        schema=pa.schema([schemas.FORGOTTEN_SCHEMA.field(c) for c in ("forget_id", "purged_at")]),
    )
    store.merge(schemas.FORGOTTEN, stamp, "forget_id", update=True, insert=False)


def forget_salts(store: PackStore, *, create: bool = False) -> list[str]:
    """The Pack's random salts of scope digests (hex), the one to digest with first; read
    at the newest commit. ``create`` makes the first when there is none (a forget of a
    scope). Two processes creating one at once may both store theirs: every salt stored
    is kept and matched (:func:`packs.store.scopes.recalled_in`), so neither digest is
    lost; the oldest is the one used from then on."""
    store.latest_version(schemas.PACK_META)
    salts = _salts(store)
    if not salts and create and not store.read_only:
        salt = json.dumps(secrets.token_hex(16))
        row = {"key": SALT_KEY, "value_json": salt, "updated_at": datetime.now(UTC)}
        created = pa.Table.from_pylist([row], schema=schemas.PACK_META_SCHEMA)
        store.append(schemas.PACK_META, created)
        store.latest_version(schemas.PACK_META)
        salts = _salts(store)
    return salts


def _salts(store: PackStore) -> list[str]:
    where = f"key = {sql_literal(SALT_KEY)}"
    rows = store.scan(schemas.PACK_META, ["value_json", "updated_at"], where).to_pylist()
    ordered = sorted(rows, key=lambda r: (r["updated_at"], r["value_json"]))
    return [value for r in ordered if isinstance(value := json.loads(r["value_json"]), str)]
