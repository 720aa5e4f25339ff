"""A memory's history: the versions it went through, as :meth:`Pack.history` lists them.

Nothing is written here. The history is read from three places:

- the ``memories`` row: when it was created and from which source ("remember");
- ``merges``: each near-duplicate it absorbed ("merge", counted by ``merge_count``);
- ``memory_history``: each revision, with every changed field's old and new value
  ("revise", written by :mod:`packs.revisions`);
- the lifecycle columns: when it was superseded and by what ("superseded"), and the
  memories it superseded ("supersedes"; a correction, issue 30);
- ``lesson_log``: each lesson written for it ("lesson"), by which writer and model, from
  which prompt version and episode: the memory's own lessons, and with a ``scope`` that
  scope's lessons of a shared memory (never another scope's: packs/store/lesson_scopes.py).

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
from packs.store.lesson_scopes import own_lessons_clause
from packs.store.lifecycle import marks_of, superseded_by_clause

# The revisable fields, by the name callers use, and the column each is stored in.
FIELD_COLUMNS = {
    "intent": "intent_text",
    "response": "response_summary",
    "outcome": "outcome",
    "polarity": "signal_polarity",
    "metadata": "metadata_json",
}
ROW_COLUMNS = [
    "id",
    "kind",
    *FIELD_COLUMNS.values(),
    "source",
    "created_at",
    "experience_summary",
    "merge_count",
]
_REVISION_COLUMNS = [
    "version_id",
    "at",
    "event",
    "source",
    "changes_json",
    "utility_before",
    "utility_reset",
]
_MARK_COLUMNS = ["id", "superseded_by", "superseded_at", "superseded_reason"]
_LESSON_COLUMNS = ["at", "writer", "lesson", "prompt_version", "model", "episode_id"]
_MERGE_COLUMNS = [
    "merge_id",
    "at",
    "source",
    "intent_text",
    "response_summary",
    "outcome",
    "similarity",
]


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

    def read_row(self, memory_id: str, marks: bool = False) -> dict[str, Any]:
        """The memory's :data:`ROW_COLUMNS` (and supersede ``marks``), read at the table's
        latest commit."""
        memory_id = check_memory_id(memory_id)
        self._store.latest_version(schemas.MEMORIES)
        columns = ROW_COLUMNS + (marks_of(self._store, _MARK_COLUMNS[1:]) if marks else [])
        rows = self._store.get(schemas.MEMORIES, f"id = {sql_literal(memory_id)}", columns)
        if not rows:
            raise UnknownMemory(f"Pack {self._store.location.name!r} has no memory {memory_id!r}.")
        return rows[0]

    def __call__(self, memory_id: str, scope: str | None = None) -> list[MemoryVersion]:
        """Every version of ``memory_id``, oldest first, as a caller in ``scope`` sees it."""
        row = self.read_row(memory_id, marks=True)
        clause = f"memory_id = {sql_literal(memory_id)}"
        revisions = self._rows(schemas.MEMORY_HISTORY, _REVISION_COLUMNS, clause)
        merges = self._rows(schemas.MERGES, _MERGE_COLUMNS, clause)
        by_me = superseded_by_clause(self._store, memory_id)
        marked = ["id", *marks_of(self._store, _MARK_COLUMNS[1:])]
        replaced = self._store.scan(schemas.MEMORIES, marked, by_me).to_pylist()
        written = f"{clause} AND status = 'written' AND {own_lessons_clause(self._store, scope)}"
        lessons = self._rows(schemas.LESSON_LOG, _LESSON_COLUMNS, written)
        return versions_of(row, revisions, merges, replaced, lessons)

    def _rows(self, table: str, columns: list[str], clause: str) -> list[dict[str, Any]]:
        if not self._store.has_table(table):  # a Pack made before the table
            return []
        present = [c for c in columns if self._store.has_column(table, c)]  # older schemas
        return self._store.scan(table, present, clause).to_pylist()


def versions_of(
    row: Mapping[str, Any],
    revisions: Iterable[Mapping[str, Any]],
    merges: Iterable[Mapping[str, Any]],
    replaced: Iterable[Mapping[str, Any]] = (),
    lessons: Iterable[Mapping[str, Any]] = (),
) -> list[MemoryVersion]:
    """The versions of one memory from its row, its revisions, its merges, the memories
    it superseded (``replaced``; its own mark is on ``row``) and the lessons written for
    it. Pure."""
    memory_id = str(row["id"])
    revised = [_revision(memory_id, r) for r in sorted(revisions, key=_at)]
    values = field_values(row)
    for version in reversed(revised):  # undo each revision, newest first
        for field, change in version.changes.items():
            if field in values:
                values[field] = change.old
    created = MemoryVersion(
        memory_id,
        1,
        row["created_at"],
        "remember",
        row["source"],
        {f: FieldChange(None, v) for f, v in values.items() if v not in (None, {})},
    )
    absorbed = [_merge(memory_id, m, n) for n, m in enumerate(sorted(merges, key=_at))]
    marks = [_supersedes(memory_id, r) for r in replaced]
    if row.get("superseded_at") is not None:
        marks.append(_superseded(memory_id, row))
    later = sorted([*absorbed, *revised, *marks, *_lessons(memory_id, lessons)], key=lambda v: v.at)
    return [created] + [replace(v, version=n) for n, v in enumerate(later, start=2)]


def _revision(memory_id: str, row: Mapping[str, Any]) -> MemoryVersion:
    changes = json.loads(row["changes_json"])
    return MemoryVersion(
        memory_id,
        0,
        row["at"],
        row["event"],
        row["source"],
        {field: FieldChange(change["old"], change["new"]) for field, change in changes.items()},
        version_id=row["version_id"],
        utility_reset=bool(row["utility_reset"]),
        utility_before=row["utility_before"],
    )


def _merge(memory_id: str, row: Mapping[str, Any], counted: int) -> MemoryVersion:
    absorbed = {
        "intent": row["intent_text"],
        "response": row["response_summary"],
        "outcome": row["outcome"],
        "similarity": row["similarity"],
    }
    count = {"merge_count": FieldChange(counted, counted + 1)}
    return MemoryVersion(
        memory_id,
        0,
        row["at"],
        "merge",
        row["source"],
        count,
        version_id=row["merge_id"],
        absorbed=absorbed,
    )


def _lessons(memory_id: str, rows: Iterable[Mapping[str, Any]]) -> list[MemoryVersion]:
    """The lessons written for a memory, oldest first, each with the one before it."""
    out, previous = [], None
    for row in sorted(rows, key=_at):
        provenance = {k: row.get(k) for k in ("model", "prompt_version", "episode_id")}
        change = {"lesson": FieldChange(previous, row["lesson"])}
        out.append(
            MemoryVersion(
                memory_id, 0, row["at"], "lesson", row["writer"], change, provenance=provenance
            )
        )
        previous = row["lesson"]
    return out


def _superseded(memory_id: str, row: Mapping[str, Any]) -> MemoryVersion:
    change = {"superseded_by": FieldChange(None, row["superseded_by"])}
    return MemoryVersion(
        memory_id,
        0,
        row["superseded_at"],
        "superseded",
        None,
        change,
        reason=row["superseded_reason"],
    )


def _supersedes(memory_id: str, old: Mapping[str, Any]) -> MemoryVersion:
    change = {"supersedes": FieldChange(None, old["id"])}
    return MemoryVersion(
        memory_id,
        0,
        old["superseded_at"],
        "supersedes",
        None,
        change,
        reason=old["superseded_reason"],
    )


def _at(row: Mapping[str, Any]) -> Any:
    return row["at"]
