"""A memory's history: the versions it went through, as :meth:`Pack.history` lists them.

Nothing is written here. The history is read from three places:

- the ``memories`` row: when it was created and from which source ("remember");
- ``merges``: each near-duplicate it absorbed ("merge", counted by ``merge_count``);
- ``memory_history``: each revision, with every changed field's old and new value
  ("revise", written by :mod:`packs.revisions`).

The values a memory was created with are its current values with every revision undone,
newest first, so a remember costs no history row (remember stays one commit).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from packs.errors import InvalidInput, UnknownMemory
from packs.records import FieldChange, MemoryVersion
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore

# The revisable fields, by the name callers use, and the column each is stored in.
FIELD_COLUMNS = {
    "intent": "intent_text",
    "response": "response_summary",
    "outcome": "outcome",
    "polarity": "signal_polarity",
    "metadata": "metadata_json",
}
ROW_COLUMNS = [
    "id", "kind", *FIELD_COLUMNS.values(), "source", "created_at", "experience_summary",
    "merge_count",
]  # fmt: skip
_REVISION_COLUMNS = [
    "version_id", "at", "event", "source", "changes_json", "utility_before", "utility_reset",
]  # fmt: skip
_MERGE_COLUMNS = [
    "merge_id", "at", "source", "intent_text", "response_summary", "outcome", "similarity",
]  # fmt: skip


def check_memory_id(memory_id: object) -> str:
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInput(f"memory_id must be a non-empty str, got {memory_id!r}.")
    return memory_id


def field_values(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's revisable fields by their callers' names (metadata as a dict)."""
    values = {field: row[column] for field, column in FIELD_COLUMNS.items()}
    values["metadata"] = json.loads(row["metadata_json"]) if row["metadata_json"] else {}
    return values


class MemoryHistory:
    """Reads the versions of one Pack's memories."""

    def __init__(self, store: PackStore) -> None:
        self._store = store

    def read_row(self, memory_id: str) -> dict[str, Any]:
        """The memory's :data:`ROW_COLUMNS`, read at the table's latest commit."""
        memory_id = check_memory_id(memory_id)
        self._store.latest_version(schemas.MEMORIES)
        rows = self._store.get(schemas.MEMORIES, f"id = {sql_literal(memory_id)}", ROW_COLUMNS)
        if not rows:
            raise UnknownMemory(f"Pack {self._store.location.name!r} has no memory {memory_id!r}.")
        return rows[0]

    def __call__(self, memory_id: str) -> list[MemoryVersion]:
        """Every version of ``memory_id``, oldest first."""
        row = self.read_row(memory_id)
        clause = f"memory_id = {sql_literal(memory_id)}"
        revisions = self._rows(schemas.MEMORY_HISTORY, _REVISION_COLUMNS, clause)
        merges = self._rows(schemas.MERGES, _MERGE_COLUMNS, clause)
        return versions_of(row, revisions, merges)

    def _rows(self, table: str, columns: list[str], clause: str) -> list[dict[str, Any]]:
        if not self._store.has_table(table):  # a Pack made before the table
            return []
        return self._store.scan(table, columns, clause).to_pylist()


def versions_of(
    row: Mapping[str, Any],
    revisions: Iterable[Mapping[str, Any]],
    merges: Iterable[Mapping[str, Any]],
) -> list[MemoryVersion]:
    """The versions of one memory from its row, its revisions and its merges. Pure."""
    memory_id = str(row["id"])
    revised = [_revision(memory_id, r) for r in sorted(revisions, key=_at)]
    values = field_values(row)
    for version in reversed(revised):  # undo each revision, newest first
        for field, change in version.changes.items():
            if field in values:
                values[field] = change.old
    created = MemoryVersion(
        memory_id, 1, row["created_at"], "remember", row["source"],
        {f: FieldChange(None, v) for f, v in values.items() if v not in (None, {})},
    )  # fmt: skip
    absorbed = [_merge(memory_id, m, n) for n, m in enumerate(sorted(merges, key=_at))]
    later = sorted([*absorbed, *revised], key=lambda v: v.at)
    return [created] + [replace(v, version=n) for n, v in enumerate(later, start=2)]


def _revision(memory_id: str, row: Mapping[str, Any]) -> MemoryVersion:
    changes = json.loads(row["changes_json"])
    return MemoryVersion(
        memory_id, 0, row["at"], row["event"], row["source"],
        {field: FieldChange(change["old"], change["new"]) for field, change in changes.items()},
        version_id=row["version_id"], utility_reset=bool(row["utility_reset"]),
        utility_before=row["utility_before"],
    )  # fmt: skip


def _merge(memory_id: str, row: Mapping[str, Any], counted: int) -> MemoryVersion:
    absorbed = {
        "intent": row["intent_text"], "response": row["response_summary"],
        "outcome": row["outcome"], "similarity": row["similarity"],
    }  # fmt: skip
    count = {"merge_count": FieldChange(counted, counted + 1)}
    return MemoryVersion(
        memory_id, 0, row["at"], "merge", row["source"], count, version_id=row["merge_id"],
        absorbed=absorbed,
    )  # fmt: skip


def _at(row: Mapping[str, Any]) -> Any:
    return row["at"]
