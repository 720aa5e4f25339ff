"""Which Packs live under a root, and how big they are.

A Pack is ``<root>/<name>``: a LanceDB database whose ``pack_meta`` table exists
(:meth:`packs.store.gateway.PackStore.exists`). Listing reads folder names (a local root) or
one level of key prefixes (``s3://bucket/prefix``), then counts rows with Lance's
``count_rows``, which reads fragment metadata and never the vectors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from packs.errors import InvalidInput, PackNotFound, StorageError
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore
from packs.store.locations import is_remote, locate, resolve_root, storage_options_from_env
from packs.validation import check_pack_name


@dataclass(frozen=True)
class PackInfo:
    """One Pack under a root, with its row counts."""

    name: str
    uri: str
    memories: int
    knowledge: int
    episodes: int
    reward_events: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_packs(
    root: str | os.PathLike[str] | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> list[PackInfo]:
    """Every Pack directly under ``root`` (default ``WOLFIE_ROOT`` or ``./.wolfie``),
    sorted by name. Folders that are not Packs are skipped; a missing root has none."""
    resolved = resolve_root(root)
    names = (
        _remote_names(resolved, storage_options) if is_remote(resolved) else _local_names(resolved)
    )
    found = []
    for name in names:
        store = PackStore(locate(name, resolved, storage_options), read_only=True)
        if store.exists():
            found.append(_info(store))
    return found


def _info(store: PackStore) -> PackInfo:
    return PackInfo(
        name=store.location.name,
        uri=store.location.uri,
        memories=store.count(schemas.MEMORIES, f"kind = {sql_literal(schemas.KIND_MEMORY)}"),
        knowledge=store.count(schemas.MEMORIES, f"kind = {sql_literal(schemas.KIND_KNOWLEDGE)}"),
        episodes=_count(store, schemas.EPISODES),
        reward_events=_count(store, schemas.REWARD_EVENTS),
    )


def _count(store: PackStore, table: str) -> int:
    return store.count(table) if store.has_table(table) else 0


def _valid(name: str) -> bool:
    try:
        check_pack_name(name)
    except InvalidInput:
        return False
    return True


def _local_names(root: str) -> list[str]:
    path = Path(root)
    if not path.exists():
        return []
    if not path.is_dir():
        raise InvalidInput(f"Pack root {root!r} is a file, not a folder; pass a folder.")
    try:
        entries = sorted(p.name for p in path.iterdir() if p.is_dir())
    except OSError as exc:
        raise StorageError(f"Can't list Pack root {root!r}: {exc}") from exc
    return [name for name in entries if _valid(name)]


def _remote_names(root: str, storage_options: Mapping[str, str] | None) -> list[str]:
    from botocore.exceptions import BotoCoreError, ClientError

    from packs.store.s3 import s3_client

    scheme, _, rest = root.partition("://")
    if scheme not in ("s3", "s3a"):
        raise InvalidInput(f"Listing Packs under {scheme}:// is not supported; use s3:// roots.")
    bucket, _, prefix = rest.partition("/")
    prefix = f"{prefix.strip('/')}/" if prefix.strip("/") else ""
    options = {**storage_options_from_env(), **(storage_options or {})}
    client = s3_client(options)
    names: list[str] = []
    try:
        pages = client.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix, Delimiter="/"
        )
        for page in pages:
            for common in page.get("CommonPrefixes", []):
                names.append(common["Prefix"][len(prefix) :].rstrip("/"))
    except (BotoCoreError, ClientError) as exc:
        if "NoSuchBucket" in str(exc):
            raise PackNotFound(f"No bucket {bucket!r} for Pack root {root!r}.") from exc
        raise StorageError(f"Can't list Pack root {root!r}: {exc}") from exc
    return sorted(name for name in names if _valid(name))
