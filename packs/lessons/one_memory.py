"""One memory's lesson, written outside the batch refresh: the evidence a writer sees,
and the lesson stored with its provenance (who wrote it, which model, which prompt
version, which episode asked for it).

The MCP server uses these when a client's own model writes a lesson over sampling
(``wolfie/mcp/lessons.py``); the lesson text is data: checked by
:func:`packs.lessons.writers.check_lesson` (one bounded string), stored as a column
value, never read as code, a table name or a filter.

A lesson is written in the scope of its writer (issue 42; packs/store/lesson_scopes.py):
a scoped writer's lesson of a shared memory is that scope's lesson, a ``lesson_log`` row
naming the scope, and the memory's own lesson is left as it was; its lesson of a memory
of its own scope, and an unscoped writer's lesson, is the memory's own. The evidence a
writer sees holds the lesson its scope sees, never another scope's.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from packs.errors import UnknownMemory
from packs.lazy import lazy_module
from packs.lessons.refresh import EVIDENCE_COLUMNS, RECENT_REWARDS
from packs.lessons.writers import PROMPT_VERSION, LessonEvidence
from packs.pack import Pack, storage_of
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.lesson_scopes import scope_lessons
from packs.store.scopes import SCOPE_KEY

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start


def evidence_for(
    pack: Pack, memory_ids: list[str], scope: str | None = None
) -> list[LessonEvidence]:
    """What a writer in ``scope`` sees of each of ``memory_ids`` that exists (learned
    values as this handle sees them, the newest rewards last, the lesson its scope
    sees), in the order given."""
    if not memory_ids:
        return []
    pack.flush()  # the rewards this handle buffered are part of the evidence
    rows = (
        storage_of(pack)
        .scan(schemas.MEMORIES, EVIDENCE_COLUMNS, in_clause("id", memory_ids))
        .to_pylist()
    )
    events = pl.from_arrow(
        storage_of(pack).scan(
            schemas.REWARD_EVENTS,
            ["memory_id", "value", "weight", "created_at", "writer", "seq"],
            in_clause("memory_id", memory_ids),
        )
    )
    if not isinstance(events, pl.DataFrame):  # pragma: no cover - a table reads as a frame
        raise TypeError("reward_events did not read as a table")
    recent = {
        row["memory_id"]: tuple(row["value"])
        for row in events.filter(pl.col("weight") > 0)
        .sort(["created_at", "writer", "seq"])
        .group_by("memory_id")
        .agg(pl.col("value").tail(RECENT_REWARDS))
        .iter_rows(named=True)
    }
    found = {row["id"]: row for row in rows}
    mine = scope_lessons(storage_of(pack), scope, list(found))
    return [
        LessonEvidence(
            memory_id=m,
            kind=found[m]["kind"],
            intent=found[m]["intent_text"],
            response=found[m]["response_summary"],
            outcome=found[m]["outcome"],
            polarity=found[m]["signal_polarity"],
            utility=found[m]["utility"],
            confidence=found[m]["confidence"],
            reward_count=found[m]["reward_count"],
            recent_rewards=recent.get(m, ()),
            previous_lesson=mine[m]["lesson"] if m in mine else found[m]["experience_summary"],
        )
        for m in dict.fromkeys(memory_ids)
        if m in found
    ]


def store_lesson(
    pack: Pack,
    evidence: LessonEvidence,
    lesson: str,
    *,
    writer: str,
    model: str | None,
    episode_id: str | None,
    scope: str | None = None,
) -> datetime:
    """Write ``lesson`` (already checked) as the lesson a writer in ``scope`` may write
    (the module docstring), with one ``lesson_log`` row naming the writer, the model,
    the prompt version, the episode and, for a scope's lesson of a shared memory, the
    scope; when."""
    owner = _owner(pack, evidence.memory_id)
    if scope is not None and owner not in (None, scope):
        raise UnknownMemory(
            f"Pack {pack.name!r} has no memory {evidence.memory_id!r} in this scope."
        )
    scoped = scope if scope is not None and owner is None else None
    now = datetime.now(UTC)
    log = {
        "at": now,
        "memory_id": evidence.memory_id,
        "writer": writer,
        "prompt_version": PROMPT_VERSION,
        "confidence": evidence.confidence,
        "status": "written",
        "lesson": lesson,
        "error": None,
        "model": model,
        "episode_id": episode_id,
        "scope": scoped,
    }
    written = {"id": evidence.memory_id, "experience_summary": lesson, "lesson_at": now}
    pack.store_lessons([] if scoped else [written], [log])
    return now


def _owner(pack: Pack, memory_id: str) -> str | None:
    """The scope ``memory_id`` belongs to (None: shared)."""
    rows = storage_of(pack).get(
        schemas.MEMORIES, f"id = {sql_literal(memory_id)}", ["metadata_json"]
    )
    if not rows:
        raise UnknownMemory(f"Pack {pack.name!r} has no memory {memory_id!r}.")
    meta = json.loads(rows[0]["metadata_json"]) if rows[0]["metadata_json"] else {}
    owner = meta.get(SCOPE_KEY) if isinstance(meta, dict) else None
    return owner if isinstance(owner, str) else None
