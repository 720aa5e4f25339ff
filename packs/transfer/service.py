"""A Pack's side of export and import (``pack.transfer``, built in ``packs/services.py``):
its tables written to a file, and a checked, staged file written into it. What an export
holds and what an import takes: :mod:`packs.pack_io`, which runs an import (it opens the
target Pack) over :mod:`packs.transfer.checks`, :mod:`~packs.transfer.staging` and
:mod:`~packs.transfer.rebind`.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from packs.embeddings import EmbeddingInfo
from packs.errors import InvalidInput
from packs.eval_sets import EVAL_SETS, EVAL_SETS_SCHEMA
from packs.journal.flush import Flusher
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore
from packs.store.schemas import SCHEMA_VERSION
from packs.store.tombstones import SALT_KEY
from packs.transfer.checks import KEYS, NEVER_IMPORTED, FileFacts
from packs.transfer.formats import Manifest, encode_schema, is_jsonl, write_export
from packs.transfer.rebind import Rebinding, existing, rebound
from packs.transfer.staging import Staged, check_collisions

# Tables whose rows make a Pack non-empty (an import into it needs ``merge``).
# A merge keeps the target's settings, so also its tuning log (whose rows name its versions).
SETTINGS_TABLES = [schemas.PACK_META, schemas.TUNING]
CONTENT = (schemas.MEMORIES, schemas.EPISODES, schemas.REWARD_EVENTS, schemas.MERGES)


@dataclass(frozen=True)
class TransferReport:
    """What an export wrote or an import read: rows per table."""

    pack: str
    path: str
    format: str  # "parquet" (a directory) or "jsonl"
    tables: dict[str, int]
    embedding: dict[str, Any]
    merged: bool = False  # an import into a Pack that held rows
    rebuilt: int = 0  # an import: memories whose utility the replay of the log corrected
    settings_version: int | None = None
    skipped: list[str] = field(default_factory=list)  # e.g. pack_meta in a merge

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class PackTransfer:
    """Writes one Pack's tables to a file; writes a staged import into it."""

    def __init__(self, store: PackStore, flusher: Flusher, embedding: EmbeddingInfo) -> None:
        self._store = store
        self._flusher = flusher
        self._embedding = embedding

    def export(self, path: str | os.PathLike[str]) -> TransferReport:
        """Write the Pack to ``path``: a new directory of Parquet files, or a ``.jsonl``
        file (every table as committed, the settings versions, never the tombstones)."""
        target = Path(path)
        if target.exists():
            raise InvalidInput(
                f"{str(target)!r} exists; export to a new path (nothing overwritten)."
            )
        if not target.parent.is_dir():
            raise InvalidInput(f"The folder {str(target.parent)!r} does not exist.")
        if not self._store.read_only:
            self._flusher.flush()
        store = self._store
        names = sorted(store.table_names() - set(NEVER_IMPORTED))  # no tombstones
        names = [*[n for n in names if n != schemas.PACK_META], schemas.PACK_META]
        versions = {name: store.version(name) for name in names}
        kept = {schemas.PACK_META: f"key != {sql_literal(SALT_KEY)}"}  # not the forget salt
        entries: dict[str, dict[str, Any]] = {
            name: {
                "rows": store.count(name, kept.get(name), version=versions[name]),
                "version": versions[name],
                "schema": encode_schema(store.schema(name, versions[name])),
            }
            for name in names
        }
        when = datetime.now(UTC).isoformat()
        manifest = Manifest(
            store.location.name, when, SCHEMA_VERSION, self._embedding.to_dict(), entries
        )

        def rows(name: str) -> pa.Table:
            schema = store.schema(name, versions[name])
            found = store.scan(name, schema.names, kept.get(name), version=versions[name])
            return found.cast(schema)

        partial = target.with_name(f".{target.name}.partial-{uuid.uuid4().hex[:8]}")
        try:
            write_export(partial, manifest, rows, jsonl=is_jsonl(target))
            partial.rename(target)
        finally:
            if partial.is_dir():
                shutil.rmtree(partial)
            elif partial.exists():
                partial.unlink()
        counts = {name: int(entry["rows"]) for name, entry in entries.items()}
        return TransferReport(
            store.location.name, str(target), format_of(target), counts, manifest.embedding
        )

    def holds_rows(self) -> bool:
        """Whether the Pack holds content (an import into it needs ``merge``)."""
        return any(self._store.count(t) for t in CONTENT if self._store.has_table(t))

    def rebinding(self, facts: FileFacts, *, fresh: bool) -> Rebinding:
        """Refuse a file whose rows collide with the Pack's; which of its memories and
        episodes the Pack already holds (``fresh``: they land under new ids)."""
        check_collisions(self._store, facts)
        return existing(self._store, facts.held, fresh=fresh)

    def write(self, staged: Staged, binding: Rebinding, *, keep_settings: bool) -> None:
        """Write what :func:`~packs.transfer.staging.stage` checked: each table by
        insert-only merge on its key, never naming a row the Pack held before
        (:mod:`packs.transfer.rebind`)."""
        store = self._store
        for name in staged.tables:
            if name in staged.skipped or name == schemas.PACK_META:
                continue
            if keep_settings and name in SETTINGS_TABLES:  # its versions name the file's settings
                continue
            for batch in staged.batches(name):
                store.merge(name, rebound(name, batch, binding), list(KEYS[name]))
        if not keep_settings and staged.meta:
            store.write_meta(staged.meta)


def tables(dim: int) -> dict[str, pa.Schema]:
    """Every table an import may write, by name."""
    extra = {schemas.EVAL_RUNS: schemas.EVAL_RUNS_SCHEMA, EVAL_SETS: EVAL_SETS_SCHEMA}
    return {**schemas.all_schemas(dim), **extra}


def format_of(path: Path) -> str:
    return "jsonl" if is_jsonl(path) else "parquet"
