"""An import's first pass: the whole export read, checked (:mod:`packs.transfer.checks`)
and staged in a private folder before the target Pack is opened for writing, so a file
refused at its last line has written nothing (issue 31)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from packs.errors import InvalidInput
from packs.settings import PackSettings
from packs.store import schemas
from packs.store.filters import in_clause
from packs.store.gateway import PackStore
from packs.store.migrate import RECORD_PREFIX
from packs.store.scopes import SCOPE_KEY, episode_scope
from packs.store.tombstones import SALT_KEY
from packs.transfer.checks import NEVER_IMPORTED, FileFacts, ImportRules, checked
from packs.transfer.formats import Manifest, read_tables
from packs.validation import parse_json

# pack_meta keys an import never takes from a file: the target's own (its schema,
# embedding, creation and applied migrations), and the salt of its tombstones' scope digests.
OWN_META = ("schema_version", "embedding", "created_at", SALT_KEY, "last_purge_at")
_ID_CHUNK = 1_000


@dataclass
class Staged:
    """A checked export in Arrow IPC files, one per table, and what it holds."""

    folder: Path
    tables: list[str] = field(default_factory=list)  # every table the file lists
    counts: dict[str, int] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)  # pack_meta, decoded (no OWN_META)
    skipped: list[str] = field(default_factory=list)  # tables never imported
    facts: FileFacts = field(default_factory=FileFacts)

    def batches(self, name: str) -> Iterator[pa.Table]:
        path = self.folder / f"{name}.arrow"
        if not path.exists():
            return
        with pa.memory_map(str(path)) as source:
            reader = pa.ipc.open_file(source)
            for index in range(reader.num_record_batches):
                yield pa.Table.from_batches([reader.get_batch(index)])

    def settings(self) -> PackSettings | None:
        """The file's current settings, if it carries any."""
        value = self.meta.get("settings")
        return None if value is None else PackSettings.from_dict(value)


def stage(source: Path, manifest: Manifest, rules: ImportRules, folder: Path) -> Staged:
    """Read every row of the export at ``source``, check it, and stage it in
    ``folder``; :class:`InvalidInput` names the first row refused."""
    staged = Staged(folder)
    keys: dict[str, set[Any]] = {}
    writers: dict[str, pa.ipc.RecordBatchFileWriter] = {}
    try:
        for rows in read_tables(source, manifest):
            name = rows.table
            if name not in staged.tables:
                staged.tables.append(name)
            if name in NEVER_IMPORTED:
                staged.skipped += [] if name in staged.skipped else [name]
                continue
            data = checked(rows, rules, keys, staged.facts)
            staged.counts[name] = staged.counts.get(name, 0) + data.num_rows
            if name == schemas.PACK_META:
                _meta(rows.where, data, staged.meta)
            elif data.num_rows:
                if name not in writers:
                    writers[name] = pa.ipc.new_file(str(folder / f"{name}.arrow"), data.schema)
                writers[name].write_table(data)
    finally:
        for writer in writers.values():
            writer.close()
    for key, value in staged.meta.items():
        if key == "settings" or key.startswith("settings@"):
            PackSettings.from_dict(value)  # unknown keys or bad values: InvalidSettings
    return staged


def _meta(where: Any, data: pa.Table, meta: dict[str, Any]) -> None:
    for index, row in enumerate(data.to_pylist()):
        if row["key"] not in OWN_META and not row["key"].startswith(RECORD_PREFIX):
            try:
                meta[row["key"]] = parse_json(row["value_json"], f"pack_meta {row['key']!r}")
            except InvalidInput as exc:
                raise InvalidInput(f"{where(index)}: {exc}") from None


def check_collisions(store: PackStore, facts: FileFacts) -> None:
    """A file's memory or episode whose id the target Pack already holds is kept as the
    Pack has it (an import inserts only new rows), so the file's rows that name it would
    reach the Pack's row: refused unless both are of one scope (a re-import)."""
    for table, column in ((schemas.MEMORIES, "metadata_json"), (schemas.EPISODES, "filter_json")):
        ids = [i for (t, i) in facts.scopes if t == table]
        for start in range(0, len(ids), _ID_CHUNK):
            clause = in_clause("id", ids[start : start + _ID_CHUNK])
            for row in store.scan(table, ["id", column], clause).to_pylist():
                theirs = _scope(table, row[column])
                mine = facts.scopes[(table, row["id"])]
                if theirs != mine:
                    raise InvalidInput(
                        f"The file's {table} row {row['id']!r} (scope {mine!r}) is already in "
                        f"the Pack as scope {theirs!r}'s; an import never writes into "
                        "another scope's rows."
                    )


def _scope(table: str, text: str | None) -> str | None:
    if table == schemas.EPISODES:
        return episode_scope(text)
    value = parse_json(text, "metadata_json") if text else {}
    return value.get(SCOPE_KEY) if isinstance(value, dict) else None
