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

An export is ``pack.transfer.export(path)``; an import, :func:`import_pack`. The Pack's
side of both is :class:`packs.transfer.service.PackTransfer`. (Before issue 43
this module was ``packs.transfer.pack_io``, which keeps ``export_pack`` and the records
for one release.)
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from packs.embeddings import EmbeddingInfo, EmbeddingProvider
from packs.embeddings.onnx_minilm import OnnxMiniLM
from packs.errors import InvalidInput, PackNotEmpty, PackNotFound, SchemaVersionError
from packs.pack import Pack
from packs.settings import PackSettings
from packs.store import schemas
from packs.store.scopes import check_scope
from packs.transfer.checks import ImportRules
from packs.transfer.formats import read_manifest
from packs.transfer.rebind import Rebinding
from packs.transfer.service import (
    SETTINGS_TABLES,
    TransferReport,
    format_of,
)
from packs.transfer.service import tables as transfer_tables
from packs.transfer.staging import stage

__all__ = ["PackNotEmpty", "TransferReport", "import_pack"]


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
    tables = transfer_tables(info.dim)
    with tempfile.TemporaryDirectory(prefix="wolfie-import-") as folder:
        staged = stage(source, manifest, ImportRules(tables, scope, keep_scopes), Path(folder))
        settings = target.settings if target else staged.settings() or PackSettings()
        staged.facts.check(settings.max_text_chars)
        binding = Rebinding()
        if target is not None:
            with opened(read_only=True) as pack:
                binding = pack.transfer.rebinding(staged.facts, fresh=not keep_scopes)
        with opened() as pack:
            info.check_compatible(pack.embedding, name)
            pack.transfer.write(staged, binding, keep_settings=merged)
    with opened() as pack:
        rebuilt = pack.rebuild_utilities(write=True).changed
        settings_version = pack.settings_version
    skipped = [*staged.skipped, *(SETTINGS_TABLES if merged else [])]
    return TransferReport(
        name,
        str(source),
        format_of(source),
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
            return _Target(pack.root, pack.settings, pack.transfer.holds_rows())
    except PackNotFound as missing:
        if not missing.pack:  # not "no such Pack" but, say, no bucket: the import stops
            raise
        return None
