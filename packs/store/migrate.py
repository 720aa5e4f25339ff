"""Named migrations: bringing a Pack written by an older schema up to date, one named
step at a time (the model is simonw/llm's ``migrations.py``).

:data:`MIGRATIONS` lists the steps in order. Each is applied once and recorded in the
Pack's ``pack_meta`` as its own key (``migration:<name>``), so two processes recording
steps at once never overwrite each other's record. A Pack made by this code records
every step when it is created (its tables already have the newest shape). A Pack made
before the steps were named carries only ``schema_version``: the steps of that schema
and older count as applied (:func:`applied`), and are recorded on the next writable open.

Run when a Pack is opened writable (:mod:`packs.opening`). A read-only handle can't
write, so it reads an older Pack as it is: the few reads that differ on an older shape
are in :mod:`packs.store.lifecycle` and :mod:`packs.store.lesson_scopes`. Every step is
safe to repeat and to race with another process doing the same: columns are added only
where missing (:meth:`~packs.store.admin.StoreAdmin.add_columns`: the loser of a race
finds them added), tables are created only where missing, and ``schema_version`` is
written last, for older Wolfies to refuse a Pack newer than they know.

A step that an older Wolfie could not read past raises
:data:`~packs.store.schemas.SCHEMA_VERSION`; the last step's ``schema`` is that version
(tests/packs/store/test_migrations.py).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from packs.store import schemas
from packs.store.gateway import PackStore

log = logging.getLogger(__name__)

RECORD_PREFIX = "migration:"  # pack_meta key of one applied step


@dataclass(frozen=True)
class Migration:
    name: str  # mNNN_what, unique, in order
    schema: int  # the schema version that introduced it
    apply: Callable[[PackStore, int], None]  # (store, embedding dim)


MIGRATIONS: list[Migration] = []


def migration(schema: int) -> Callable[[Callable[[PackStore, int], None]], Migration]:
    """Register the decorated function as the next step, introduced by ``schema``."""

    def register(apply: Callable[[PackStore, int], None]) -> Migration:
        step = Migration(apply.__name__, schema, apply)
        MIGRATIONS.append(step)
        return step

    return register


def _ensure(store: PackStore, name: str, dim: int) -> None:
    store.ensure_table(name, schemas.all_schemas(dim)[name])


@migration(1)
def m001_initial(store: PackStore, dim: int) -> None:
    """The tables of schema 1 (a new Pack is made whole by ``PackStore.create``)."""
    for name in (
        schemas.MEMORIES,
        schemas.EPISODES,
        schemas.RETRIEVAL_LOG,
        schemas.REWARD_EVENTS,
        schemas.STATE_TRACES,
        schemas.VALIDATIONS,
        schemas.LESSON_LOG,
        schemas.MERGES,
    ):
        _ensure(store, name, dim)


@migration(2)
def m002_lifecycle(store: PackStore, dim: int) -> None:
    """``memories`` gains the lifecycle columns (:data:`schemas.LIFECYCLE_FIELDS`, null for
    every existing row) and the Pack the ``forgotten`` table (docs/forgetting.md)."""
    store.add_columns(schemas.MEMORIES, schemas.LIFECYCLE_FIELDS)
    _ensure(store, schemas.FORGOTTEN, dim)


@migration(3)
def m003_memory_history(store: PackStore, dim: int) -> None:
    """The ``memory_history`` table (``Pack.revise``)."""
    _ensure(store, schemas.MEMORY_HISTORY, dim)


@migration(4)
def m004_admission(store: PackStore, dim: int) -> None:
    """``memories`` gains the admission columns (:data:`schemas.ADMISSION_FIELDS`, issue
    30) and ``lesson_log`` the provenance columns (:data:`schemas.LESSON_PROVENANCE_FIELDS`),
    null for every existing row."""
    store.add_columns(schemas.MEMORIES, schemas.ADMISSION_FIELDS)
    _ensure(store, schemas.LESSON_LOG, dim)
    store.add_columns(schemas.LESSON_LOG, schemas.LESSON_PROVENANCE_FIELDS)


@migration(5)
def m005_lexical_and_tuning(store: PackStore, dim: int) -> None:
    """``retrieval_log`` gains ``lexical`` (each candidate's BM25 score, null for episodes
    logged before) and the Pack the ``tuning`` table (``Pack.tune``)."""
    store.add_columns(schemas.RETRIEVAL_LOG, schemas.RETRIEVAL_LOG_FIELDS_5)
    _ensure(store, schemas.TUNING, dim)


@migration(6)
def m006_slate_columns(store: PackStore, dim: int) -> None:
    """``retrieval_log`` gains ``placed_by`` and ``propensity`` (the reserved slot and
    exploration swaps of issue 41; null for episodes logged before)."""
    store.add_columns(schemas.RETRIEVAL_LOG, schemas.RETRIEVAL_LOG_FIELDS_6)


@migration(6)
def m007_lesson_scope(store: PackStore, dim: int) -> None:
    """``lesson_log`` gains ``scope`` (:data:`schemas.LESSON_SCOPE_FIELDS`: the scope of a
    scoped caller's lesson of a shared memory, issue 42), null for every existing row."""
    store.add_columns(schemas.LESSON_LOG, schemas.LESSON_SCOPE_FIELDS)


def applied(meta: Mapping[str, Any]) -> list[str]:
    """The names of the steps a Pack's ``pack_meta`` says were applied, in order: those
    recorded, and those of its ``schema_version`` and older (a Pack made before names)."""
    version = int(meta.get("schema_version", 0))
    return [m.name for m in MIGRATIONS if RECORD_PREFIX + m.name in meta or m.schema <= version]


def pending(meta: Mapping[str, Any]) -> list[Migration]:
    """The steps still to apply to the Pack whose ``pack_meta`` is ``meta``, in order."""
    done = set(applied(meta))
    return [m for m in MIGRATIONS if m.name not in done]


def records(names: list[str], *, ran: bool) -> dict[str, Any]:
    """``pack_meta`` values recording ``names`` as applied (``ran`` False: not run on this
    Pack, which was made in the newest shape or recorded only an old ``schema_version``)."""
    at = datetime.now(UTC).isoformat()
    return {RECORD_PREFIX + name: {"at": at, "ran": ran} for name in names}


def migrate(store: PackStore, dim: int, meta: Mapping[str, Any]) -> list[str]:
    """Apply the steps the Pack (whose ``pack_meta`` is ``meta``) lacks, each recorded as
    it lands; the names applied (none: nothing was to do, and nothing is written)."""
    implied = [n for n in applied(meta) if RECORD_PREFIX + n not in meta]
    steps = pending(meta)
    if not steps and not implied:
        return []
    store.require_writable("upgrade the Pack's schema")
    if implied:  # a Pack made before the steps were named
        store.write_meta(records(implied, ran=False))
    for step in steps:
        step.apply(store, dim)
        store.write_meta(records([step.name], ran=True))
    store.write_meta({"schema_version": schemas.SCHEMA_VERSION})
    names = [s.name for s in steps]
    if names:
        log.info("Pack %r migrated: %s", store.location.name, ", ".join(names))
    return names


def upgrade(store: PackStore, dim: int, version: int) -> bool:
    """Deprecated: :func:`migrate` with the Pack's ``pack_meta``. Migrate the Pack from
    schema ``version``; True when anything was to do."""
    warnings.warn(
        "packs.store.migrate.upgrade is deprecated; use migrate(store, dim, store.read_meta())",
        DeprecationWarning,
        stacklevel=2,
    )
    return bool(migrate(store, dim, {**store.read_meta(), "schema_version": version}))
