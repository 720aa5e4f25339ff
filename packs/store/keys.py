"""Unenforced primary keys: what keeps a concurrent ``merge_insert`` from storing a row
twice.

Two processes inserting the same new key with ``merge_insert`` both commit (each adds a
fragment and touches none the other touched) unless the key column is the table's
*unenforced primary key*: then Lance records the inserted keys in the commit, and the
later of two commits that inserted the same key fails with a retryable conflict and is
re-run, matching the row now there (lance-format/lance#4585, #5633). Measured with
LanceDB 0.40: two processes inserting the same 1,000 keys in batches of 50 stored 1,150
rows without the key and 1,000 with it.

``memories.id`` is the key (``add_knowledge`` and ``remember`` insert by it). It is set
when a Pack is created, and on the first writable open of a Pack made before it.
"""

from __future__ import annotations

import logging

import pyarrow as pa

from packs.errors import TransientStorageError
from packs.store import schemas
from packs.store.faults import storage_step
from packs.store.gateway import PackStore

log = logging.getLogger(__name__)

PRIMARY_KEYS = {schemas.MEMORIES: "id"}
_MARKER = b"lance-schema:unenforced-primary-key"


def has_primary_key(schema: pa.Schema, column: str) -> bool:
    metadata = schema.field(column).metadata or {}
    return any(key.startswith(_MARKER) for key in metadata)


def ensure_primary_keys(store: PackStore) -> list[str]:
    """Set the missing primary keys of :data:`PRIMARY_KEYS`; returns the tables changed.
    A process setting the same key at the same moment may win: its key serves."""
    store.require_writable("set the primary keys")
    changed = []
    for name, column in PRIMARY_KEYS.items():
        if has_primary_key(store.schema(name), column):
            continue
        table = store._table(name)
        try:
            with storage_step(store.location, f"set the primary key of {name!r}"):
                table.set_unenforced_primary_key(column)
        except (ValueError, TransientStorageError) as exc:  # another writer set it first
            store.latest_version(name)
            if not has_primary_key(store.schema(name), column):
                raise
            log.info("primary key of %r set by another writer: %s", name, exc)
            continue
        changed.append(name)
    return changed
