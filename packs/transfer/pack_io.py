"""Export a Pack to a file and import it back (``wolfie export`` / ``wolfie import``).

**Export** writes every table's rows as committed (memories and knowledge with their
embeddings and learned columns, episodes, retrieval logs, the reward log, merges,
memory history, lessons, validations, traces, eval sets and runs) and ``pack_meta``,
which holds the embedding info and *every* settings version (``settings@N``) besides
the current one. It reads each table at its latest version; a writable handle flushes
first, other processes' buffered rows are not included. The file appears whole or not
at all (written beside it, then renamed).

**Import** creates the Pack (or opens it), refuses a file from another embedding space
or a newer schema, and refuses a Pack that holds rows unless ``merge`` is given: then
rows whose key the Pack has are kept and only new ones are added (the Pack's settings
stay). Rows are written by insert-only ``merge_insert`` on each table's key, so an
import that stopped half-way is completed by running it again with ``merge``. Last, the
utilities are rebuilt from the imported reward log (``rebuild_utilities``), so the
stored values equal the replay of the log: drift 0. The learned contextual index is
derived from the log and the episodes, so it comes back with them.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from packs.embeddings import EmbeddingInfo, EmbeddingProvider
from packs.embeddings.onnx_minilm import OnnxMiniLM
from packs.errors import InvalidInput, SchemaVersionError
from packs.eval_sets import EVAL_SETS, EVAL_SETS_SCHEMA
from packs.pack import Pack
from packs.settings import PackSettings
from packs.store import schemas
from packs.transfer.formats import (
    Manifest,
    encode_schema,
    is_jsonl,
    read_manifest,
    read_tables,
    write_export,
)

# Each table's key: an import inserts the rows whose key is new. A table without one (a
# table of a later Wolfie, say) is appended.
KEYS: dict[str, str | list[str]] = {
    schemas.MEMORIES: "id",
    schemas.EPISODES: "id",
    schemas.RETRIEVAL_LOG: ["episode_id", "item_id"],
    schemas.REWARD_EVENTS: "event_id",
    schemas.MERGES: "merge_id",
    schemas.MEMORY_HISTORY: "version_id",
    schemas.FORGOTTEN: "forget_id",
    schemas.LESSON_LOG: ["memory_id", "at", "writer"],
    schemas.VALIDATIONS: ["episode_id", "hook", "at"],
    schemas.STATE_TRACES: "at",
    schemas.EVAL_RUNS: ["run_id", "metric", "at"],
    EVAL_SETS: "name",
}
# Tables whose rows make a Pack non-empty (an import into it needs ``merge``).
CONTENT = (schemas.MEMORIES, schemas.EPISODES, schemas.REWARD_EVENTS, schemas.MERGES)
# pack_meta keys an import never takes from a file: the target's own.
OWN_META = ("schema_version", "embedding", "created_at")


class PackNotEmpty(InvalidInput):
    """An import into a Pack that already holds rows, without ``merge``."""


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
    store = pack.store
    names = sorted(store.table_names())
    names = [*[n for n in names if n != schemas.PACK_META], schemas.PACK_META]
    versions = {name: store.version(name) for name in names}
    entries: dict[str, dict[str, Any]] = {
        name: {"rows": store.count(name, version=versions[name]), "version": versions[name],
               "schema": encode_schema(store.schema(name, versions[name]))}
        for name in names
    }  # fmt: skip
    manifest = Manifest(
        pack.name, datetime.now(UTC).isoformat(), schemas.SCHEMA_VERSION,
        pack.embedding.to_dict(), entries,
    )  # fmt: skip

    def rows(name: str) -> pa.Table:
        schema = store.schema(name, versions[name])
        return store.scan(name, schema.names, version=versions[name]).cast(schema)

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
    path: str | os.PathLike[str], name: str, root: str | os.PathLike[str] | None = None, *,
    merge: bool = False, embedder: EmbeddingProvider | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> TransferReport:  # fmt: skip
    """Read the export at ``path`` into Pack ``name`` under ``root`` (the module docstring)."""
    source = Path(path)
    manifest = read_manifest(source)
    if manifest.schema_version > schemas.SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{str(source)!r} was exported with schema version {manifest.schema_version}, "
            f"newer than this Wolfie ({schemas.SCHEMA_VERSION}). Upgrade Wolfie to import it."
        )
    info = EmbeddingInfo.from_dict(manifest.embedding)
    (embedder.info if embedder else OnnxMiniLM.info).check_compatible(info, manifest.pack)
    with Pack.open(name, root, embedder=embedder, storage_options=storage_options) as pack:
        info.check_compatible(pack.embedding, name)  # a Pack that existed: its own space
        merged = any(pack.store.count(t) for t in CONTENT if pack.store.has_table(t))
        if merged and not merge:
            raise PackNotEmpty(
                f"Pack {name!r} under {pack.root!r} already holds rows; import into a new "
                "Pack, or pass merge (--merge) to add the file's new rows to it."
            )
        counts, skipped = _write_tables(pack, source, manifest, keep_settings=merged)
    with Pack.open(name, root, embedder=embedder, storage_options=storage_options) as pack:
        rebuilt = pack.rebuild_utilities(write=True).changed
        settings_version = pack.settings_version
    return TransferReport(
        name, str(source), _format(source), counts, manifest.embedding, merged, rebuilt,
        settings_version, skipped,
    )  # fmt: skip


def _write_tables(
    pack: Pack, source: Path, manifest: Manifest, *, keep_settings: bool
) -> tuple[dict[str, int], list[str]]:
    store = pack.store
    known = {**schemas.all_schemas(pack.embedding.dim), schemas.EVAL_RUNS: schemas.EVAL_RUNS_SCHEMA,
             EVAL_SETS: EVAL_SETS_SCHEMA}  # fmt: skip
    counts: dict[str, int] = {}
    skipped: list[str] = []
    for name, batch in read_tables(source, manifest):
        if name == schemas.PACK_META:
            if keep_settings:
                skipped = [name]
            elif batch.num_rows:
                meta = {r["key"]: r["value_json"] for r in batch.to_pylist()}
                _write_meta(pack, {k: v for k, v in meta.items() if k not in OWN_META})
            counts[name] = counts.get(name, 0) + batch.num_rows
            continue
        schema = known.get(name, manifest.schema(name))
        store.ensure_table(name, schema)
        counts[name] = counts.get(name, 0) + batch.num_rows
        if not batch.num_rows:
            continue
        data = _conformed(batch, store.schema(name), name)
        key = KEYS.get(name)
        if key is None:
            store.append(name, data)
        else:
            store.merge(name, data, key)
    return counts, skipped


def _write_meta(pack: Pack, values: dict[str, str]) -> None:
    """The file's settings (every version) as the Pack's, checked before they are kept."""
    decoded = {key: json.loads(value) for key, value in values.items()}
    for key, value in decoded.items():
        if key == "settings" or key.startswith("settings@"):
            PackSettings.from_dict(value)  # unknown keys or bad values: InvalidSettings
    pack.store.write_meta(decoded)


def _conformed(batch: pa.Table, schema: pa.Schema, name: str) -> pa.Table:
    """``batch`` in the target table's schema: columns by name, a missing nullable
    column as nulls; a column the table does not have, or a missing required one, is
    refused."""
    extra = sorted(set(batch.column_names) - set(schema.names))
    if extra:
        raise InvalidInput(f"The export's {name!r} rows have columns this Pack lacks: {extra}.")
    columns = []
    for target in schema:
        if target.name in batch.column_names:
            columns.append(batch.column(target.name).cast(target.type))
        elif target.nullable:
            columns.append(pa.nulls(batch.num_rows, target.type))
        else:
            raise InvalidInput(f"The export's {name!r} rows lack the column {target.name!r}.")
    return pa.Table.from_arrays(columns, schema=schema)


def _format(path: Path) -> str:
    return "jsonl" if is_jsonl(path) else "parquet"
