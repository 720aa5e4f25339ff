"""Opening a Pack's storage: found or created, its schema version and embedding
checked, its stored settings read (the :class:`~packs.pack.Pack` facade then builds its
services over what this returns)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from packs.embeddings import EmbeddingInfo, EmbeddingProvider
from packs.embeddings.onnx_minilm import OnnxMiniLM
from packs.errors import PackNotFound, SchemaVersionError, TransientStorageError
from packs.settings import ActiveSettings, PackSettings
from packs.store import integrity, schemas
from packs.store.fulltext import ensure_text_index
from packs.store.gateway import PackStore
from packs.store.keys import ensure_primary_keys
from packs.store.locations import locate, make_local_folder
from packs.store.migrate import MIGRATIONS, migrate, records

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OpenedStore:
    store: PackStore
    settings: PackSettings  # as stored
    settings_version: int
    embedding: EmbeddingInfo
    requested: PackSettings | None  # settings the caller asked for, to store if they differ


def open_store(
    name: str,
    root: str | os.PathLike[str] | None,
    read_only: bool,
    *,
    create: bool,
    embedder: EmbeddingProvider | None,
    settings: PackSettings | Mapping[str, Any] | None,
    storage_options: Mapping[str, str] | None,
) -> OpenedStore:
    """The storage of Pack ``name``, created when missing (see :meth:`Pack.open`)."""
    location = locate(name, root, storage_options)
    store = PackStore(location, read_only=read_only)
    if isinstance(settings, Mapping):
        settings = PackSettings.from_dict(dict(settings))
    # pack_meta is created last and written after it, so a Pack whose creation
    # crashed half-way has no schema_version yet and is finished on the next open;
    # tables with rows and no settings are refused (packs/store/integrity.py).
    meta = _stored_meta(store)
    if "schema_version" not in meta:
        rows = integrity.table_rows(store)
        integrity.check_settings_kept(store, rows)
        if read_only or not create:
            raise PackNotFound(
                f"No Pack {name!r} under {location.root!r}. Check the name and root "
                "(WOLFIE_ROOT), or open it writable with create=True to make it.",
                name,
                location.root,
            )
        dropped = integrity.drop_half_made(store, rows)
        if dropped:
            log.warning("Pack %r: dropped half-made tables %s to create them again", name, dropped)
        info = embedder.info if embedder else OnnxMiniLM.info
        created = _create(store, info, settings or PackSettings())
        return OpenedStore(store, created, 1, info, None)
    integrity.check_latest_commits(store)
    version = int(meta.get("schema_version", 0))
    if version > schemas.SCHEMA_VERSION:
        raise SchemaVersionError(
            f"Pack {name!r} has schema version {version}, newer than this Wolfie "
            f"({schemas.SCHEMA_VERSION}). Upgrade Wolfie to open it."
        )
    stored = EmbeddingInfo.from_dict(meta["embedding"])
    (embedder.info if embedder else OnnxMiniLM.info).check_compatible(stored, name)
    if not read_only:
        migrate(store, stored.dim, meta)  # the named steps it lacks (packs/store/migrate.py)
        _index_text(store)
        ensure_primary_keys(store)  # a Pack made before them (packs/store/keys.py)
    if embedder is None and stored.provider != OnnxMiniLM.info.provider:
        log.info("Pack %r was built with %s; using the compatible default", name, stored)
    return OpenedStore(
        store,
        PackSettings.from_dict(meta.get("settings", {})),
        int(meta.get("settings_version", 1)),
        stored,
        settings,
    )


def _stored_meta(store: PackStore) -> dict[str, Any]:
    """The stored ``pack_meta`` values; none when the table is missing or half-made."""
    if not store.exists():
        return {}
    try:
        return store.read_meta()
    except PackNotFound:  # listed without a committed version: a creation cut short
        return {}


def _index_text(store: PackStore) -> None:
    """Full-text indexes for a Pack made before them (packs/store/fulltext.py). Another
    process building them at the same moment may win the commit: its index serves."""
    try:
        built = ensure_text_index(store)
    except TransientStorageError as exc:
        log.info("full-text index of %r left to another writer: %s", store.location.name, exc)
        return
    if built:
        log.info("built the full-text index of %r on %s", store.location.name, built)


def _create(store: PackStore, info: EmbeddingInfo, settings: PackSettings) -> PackSettings:
    make_local_folder(store.location)  # a root that can't hold it fails here, clearly
    store.create(info.dim)
    ensure_primary_keys(store)
    ensure_text_index(store)
    store.write_meta(
        {
            "schema_version": schemas.SCHEMA_VERSION,
            "embedding": info.to_dict(),
            "settings": settings.to_dict(),
            "settings_version": 1,
            "settings@1": settings.to_dict(),
            "created_at": datetime.now(UTC).isoformat(),
            **records([m.name for m in MIGRATIONS], ran=False),  # made in the newest shape
        }
    )
    return settings


def store_settings(
    store: PackStore,
    active: ActiveSettings,
    changes: Mapping[str, Any],
    work_by: Callable[[PackSettings], None],
) -> PackSettings:
    """Store ``active`` with ``changes`` applied as its next version, make it the one in
    force and hand it to ``work_by`` (the handle's parts that work by it); unknown keys
    are refused."""
    store.require_writable("change settings")
    settings = active.value.replace(**changes)
    version = active.version + 1
    store.write_meta(
        {
            "settings": settings.to_dict(),
            "settings_version": version,
            f"settings@{version}": settings.to_dict(),
        }
    )
    active.value, active.version = settings, version
    work_by(settings)
    return settings
