"""Bringing a Pack written by an older schema up to :data:`packs.store.schemas.SCHEMA_VERSION`.

Run when a Pack is opened writable (a read-only handle reads the old schema as it is:
:mod:`packs.store.lifecycle` applies only where the columns exist). Every step is safe to
repeat and to race with another process doing the same: columns are added only where
missing, tables created only where missing, and the version is written last.

- 1 -> 2: ``memories`` gains the lifecycle columns (:data:`schemas.LIFECYCLE_FIELDS`,
  null for every existing row) and the Pack gains the ``forgotten`` table.
- 2 -> 3: the Pack gains the ``memory_history`` table (``Pack.revise``; a revision also
  creates it when missing).
- 3 -> 4: ``memories`` gains the admission columns (:data:`schemas.ADMISSION_FIELDS`) and
  ``lesson_log`` the provenance columns (:data:`schemas.LESSON_PROVENANCE_FIELDS`), null
  for every existing row.
- 4 -> 5: ``retrieval_log`` gains ``lexical`` (each candidate's BM25 score, null for
  episodes logged before) and the Pack gains the ``tuning`` table (``Pack.tune``).
- 5 -> 6: ``retrieval_log`` gains ``placed_by`` and ``propensity`` (the reserved slot and
  exploration swaps of issue 41; null for episodes logged before), and ``lesson_log``
  gains ``scope`` (:data:`schemas.LESSON_SCOPE_FIELDS`: the scope of a scoped caller's
  lesson of a shared memory, issue 42), null for every existing row.
"""

from __future__ import annotations

import logging

from packs.store import schemas
from packs.store.gateway import PackStore

log = logging.getLogger(__name__)


def upgrade(store: PackStore, dim: int, version: int) -> bool:
    """Migrate the Pack from schema ``version``; True when anything was to do."""
    if version >= schemas.SCHEMA_VERSION:
        return False
    store.require_writable("upgrade the Pack's schema")
    added = store.add_columns(
        schemas.MEMORIES, (*schemas.LIFECYCLE_FIELDS, *schemas.ADMISSION_FIELDS)
    )
    if store.has_table(schemas.LESSON_LOG):
        added += store.add_columns(
            schemas.LESSON_LOG, (*schemas.LESSON_PROVENANCE_FIELDS, *schemas.LESSON_SCOPE_FIELDS)
        )
    added += store.add_columns(
        schemas.RETRIEVAL_LOG, (*schemas.RETRIEVAL_LOG_FIELDS_5, *schemas.RETRIEVAL_LOG_FIELDS_6)
    )
    store.create(dim)  # the tables this schema added (existing ones are left alone)
    store.write_meta({"schema_version": schemas.SCHEMA_VERSION})
    log.info(
        "Pack %r upgraded from schema %d to %d (columns added: %s)",
        store.location.name,
        version,
        schemas.SCHEMA_VERSION,
        added,
    )
    return True
