"""Whose lesson a ``lesson_log`` row is (issue 42).

A lesson is written in the scope of its writer. An unscoped caller (the operator, the
lessons flow) writes a memory's own lesson: the ``experience_summary`` column, shown to
every caller who sees the memory. A scoped caller writes the lesson of a memory of its
own scope the same way (only that scope sees the memory). Its lesson of a *shared*
memory is only a ``lesson_log`` row whose ``scope`` column names it: recall, ``history``
and the next sampling request show it to that scope, and to no other; the memory's own
lesson is unchanged. A Pack of schema 5 or older has no ``scope`` column: every lesson
there is the memory's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.gateway import PackStore

SCOPE_COLUMN = "scope"
LESSON_ROW = ["at", "memory_id", "lesson", "writer", "model"]


def scoped_lessons_stored(store: PackStore) -> bool:
    """Whether this Pack's ``lesson_log`` can hold a scope's lesson (schema 6)."""
    return store.has_table(schemas.LESSON_LOG) and store.has_column(
        schemas.LESSON_LOG, SCOPE_COLUMN
    )


def own_lessons_clause(store: PackStore, scope: str | None = None) -> str:
    """The ``lesson_log`` rows a caller in ``scope`` may read: the memories' own lessons
    and, with a scope, that scope's lessons of shared memories."""
    if not scoped_lessons_stored(store):
        return "TRUE"
    if scope is None:
        return f"{SCOPE_COLUMN} IS NULL"
    return f"({SCOPE_COLUMN} IS NULL OR {SCOPE_COLUMN} = {sql_literal(scope)})"


def scope_lessons(
    store: PackStore, scope: str | None, memory_ids: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """``scope``'s newest written lesson of each of ``memory_ids`` that has one (the
    :data:`LESSON_ROW` columns)."""
    if scope is None or not memory_ids or not scoped_lessons_stored(store):
        return {}
    clause = (
        f"{SCOPE_COLUMN} = {sql_literal(scope)} AND status = 'written' AND "
        f"{in_clause('memory_id', list(memory_ids))}"
    )
    newest: dict[str, dict[str, Any]] = {}
    for row in store.scan(schemas.LESSON_LOG, LESSON_ROW, clause).to_pylist():
        kept = newest.get(row["memory_id"])
        if kept is None or row["at"] >= kept["at"]:
            newest[row["memory_id"]] = row
    return newest
