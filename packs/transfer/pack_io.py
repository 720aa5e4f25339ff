"""Export a Pack to a file and import it back (``wolfie export`` / ``wolfie import``).

**Export** writes every table's rows as committed (memories and knowledge with their
embeddings and learned columns, episodes, retrieval logs, the reward log, merges,
memory history, lessons, validations, traces, eval sets and runs) and ``pack_meta``,
which holds the embedding info and *every* settings version (``settings@N``) besides
the current one. It leaves out the tombstones (``forgotten``: ids of what was forgotten,
which an import never takes) and the salt of their scope digests. It reads each table at
its latest version; a writable handle flushes first, other processes' buffered rows are
not included. The file appears whole or not at all (written beside it, then renamed).

**Import** refuses a file from another embedding space or a newer schema, and a Pack
that holds rows unless ``merge`` is given: then rows whose key the Pack has are kept and
only new ones are added (the Pack's settings stay). The whole file is read, checked
(:mod:`packs.transfer.checks`: tables, keys, lengths, vectors, scopes, references) and
staged before the Pack is created or written (:mod:`packs.transfer.staging`), so a file
refused anywhere writes nothing. Tombstones and scope tags are never taken from a file.
Rows are written by insert-only ``merge_insert`` on each table's key, and a merge never
names a row the Pack held before (:mod:`packs.transfer.rebind`): a file's memory or
episode the Pack already holds lands as a new row under a fresh id, or, restoring a
whole Pack (``keep_scopes``), is that row, the file's rewards, history and lessons of it
dropped. An import that stopped half-way is completed by running it again with
``merge`` and ``keep_scopes`` (without, what it wrote lands again, as new rows). Last, the
utilities are rebuilt from the imported reward log (``rebuild_utilities``), so the
stored values equal the replay of the log: drift 0. The learned contextual index is
derived from the log and the episodes, so it comes back with them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from packs.embeddings import EmbeddingInfo, EmbeddingProvider
from packs.embeddings.onnx_minilm import OnnxMiniLM
from packs.errors import InvalidInput, PackNotEmpty, PackNotFound, SchemaVersionError
from packs.eval_sets import EVAL_SETS, EVAL_SETS_SCHEMA
from packs.pack import Pack, storage_of
from packs.settings import PackSettings
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.scopes import check_scope
from packs.store.tombstones import SALT_KEY
from packs.transfer.checks import KEYS, NEVER_IMPORTED, ImportRules
from packs.transfer.formats import Manifest, encode_schema, is_jsonl, read_manifest, write_export
from packs.transfer.rebind import Rebinding, existing, rebound
from packs.transfer.staging import Staged, check_collisions, stage

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


def export_pack(pack: Pack, path: str | os.PathLike[str]) -> TransferReport:
    """Write ``pack`` to ``path``: a new directory of Parquet files, or a ``.jsonl`` file."""
    target = Path(path)
    if target.exists():
        raise InvalidInput(f"{str(target)!r} exists; export to a new path (nothing overwritten).")
    if not target.parent.is_dir():
        raise InvalidInput(f"The folder {str(target.parent)!r} does not exist.")
    if not pack.read_only:
        pack.flush()
    store = storage_of(pack)
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
    manifest = Manifest(pack.name, when, schemas.SCHEMA_VERSION, pack.embedding.to_dict(), entries)

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
    return TransferReport(pack.name, str(target), _format(target), counts, manifest.embedding)


def import_pack(
    path: str | os.PathLike[str],
    name: str,
    root: str | os.PathLike[str] | None = None,
    *,
    merge: bool = False,
    scope: str | None = None,
    keep_scopes: bool = False,
    embedder: EmbeddingProvider | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> TransferReport:
    """Read the export at ``path`` into Pack ``name`` under ``root`` (the module
    docstring): the whole file is checked and staged first, then written. ``scope``
    makes every memory and episode that scope's; ``keep_scopes`` keeps the file's
    scopes (a whole Pack restored); with neither, a scoped row is refused."""
    source = Path(path)
    manifest = read_manifest(source)
    if manifest.schema_version > schemas.SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{str(source)!r} was exported with schema version {manifest.schema_version}, "
            f"newer than this Wolfie ({schemas.SCHEMA_VERSION}). Upgrade Wolfie to import it."
        )
    info = EmbeddingInfo.from_dict(manifest.embedding)
    (embedder.info if embedder else OnnxMiniLM.info).check_compatible(info, manifest.pack)
    scope = check_scope(scope)
    if scope is not None and keep_scopes:
        raise InvalidInput(
            "Give a scope (--scope) or keep the file's scopes (--keep-scopes), not both."
        )

    def opened(read_only: bool = False, create: bool = True) -> Pack:
        return Pack.open(
            name, root, read_only, create=create, embedder=embedder, storage_options=storage_options
        )

    target = _existing(opened)
    merged = target is not None and target.holds_rows
    if target is not None and merged and not merge:
        raise PackNotEmpty(
            f"Pack {name!r} under {target.root!r} already holds rows; import into a new "
            "Pack, or pass merge (--merge) to add the file's new rows to it."
        )
    tables = _tables(info.dim)
    with tempfile.TemporaryDirectory(prefix="wolfie-import-") as folder:
        staged = stage(source, manifest, ImportRules(tables, scope, keep_scopes), Path(folder))
        settings = target.settings if target else staged.settings() or PackSettings()
        staged.facts.check(settings.max_text_chars)
        binding = Rebinding()
        if target is not None:
            with opened(read_only=True) as pack:
                check_collisions(storage_of(pack), staged.facts)
                binding = existing(storage_of(pack), staged.facts.held, fresh=not keep_scopes)
        with opened() as pack:
            info.check_compatible(pack.embedding, name)
            _write_staged(pack, staged, binding, keep_settings=merged)
    with opened() as pack:
        rebuilt = pack.rebuild_utilities(write=True).changed
        settings_version = pack.settings_version
    skipped = [*staged.skipped, *(SETTINGS_TABLES if merged else [])]
    return TransferReport(
        name,
        str(source),
        _format(source),
        staged.counts,
        manifest.embedding,
        merged,
        rebuilt,
        settings_version,
        skipped,
    )


@dataclass(frozen=True)
class _Target:
    root: str
    settings: PackSettings
    holds_rows: bool


def _existing(opened: Callable[..., Pack]) -> _Target | None:
    """The target Pack as it is before the import (read-only), or None if there is none."""
    try:
        with opened(read_only=True, create=False) as pack:
            store = storage_of(pack)
            rows = any(store.count(t) for t in CONTENT if store.has_table(t))
            return _Target(pack.root, pack.settings, rows)
    except PackNotFound as missing:
        if not missing.pack:  # not "no such Pack" but, say, no bucket: the import stops
            raise
        return None


def _write_staged(pack: Pack, staged: Staged, binding: Rebinding, *, keep_settings: bool) -> None:
    """Write what :func:`stage` checked: each table by insert-only merge on its key,
    never naming a row the Pack held before (:mod:`packs.transfer.rebind`)."""
    store = storage_of(pack)  # a table the Pack lacks is created by the write
    for name in staged.tables:
        if name in staged.skipped or name == schemas.PACK_META:
            continue
        if keep_settings and name in SETTINGS_TABLES:  # its versions name the file's settings
            continue
        for batch in staged.batches(name):
            store.merge(name, rebound(name, batch, binding), list(KEYS[name]))
    if not keep_settings and staged.meta:
        store.write_meta(staged.meta)


def _tables(dim: int) -> dict[str, pa.Schema]:
    """Every table an import may write, by name."""
    extra = {schemas.EVAL_RUNS: schemas.EVAL_RUNS_SCHEMA, EVAL_SETS: EVAL_SETS_SCHEMA}
    return {**schemas.all_schemas(dim), **extra}


def _format(path: Path) -> str:
    return "jsonl" if is_jsonl(path) else "parquet"
