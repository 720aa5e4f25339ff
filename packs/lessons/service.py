"""Lessons of one Pack, reached as ``pack.lessons`` (:class:`LessonService`, built in
``packs/services.py``): the batch refresh, and one memory's lesson.

**Refresh**: find memories with new evidence and have a writer distil them.

"New evidence" means a reward event (with weight > 0) newer than the memory's last lesson.
Every attempt, kept or failed, is appended to ``lesson_log`` with the confidence the
lesson was written at; then every successful lesson is written in one ``merge_insert``
(``experience_summary`` and ``lesson_at``). A run killed between the two is redone by the
next run, so the log may hold an attempt twice but never misses a stored lesson. A writer
failure keeps the old lesson. A second run with no new rewards finds nothing to do.

**One memory's lesson**, written outside the batch refresh: the evidence a writer sees,
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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from packs.errors import UnknownMemory
from packs.journal.flush import Flusher
from packs.lazy import lazy_module
from packs.lessons.writers import (
    PROMPT_VERSION,
    LessonEvidence,
    LessonWriter,
    LessonWriterError,
    redact_url_credentials,
)
from packs.memories import MemoryWriter
from packs.rebuilds import RebuildService
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.gateway import PackStore
from packs.store.lesson_scopes import scope_lessons
from packs.store.scopes import SCOPE_KEY

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

RECENT_REWARDS = 5

# What a lesson writer sees of a memory (also packs/lessons/one_memory.py).
EVIDENCE_COLUMNS = [
    "id",
    "kind",
    "intent_text",
    "response_summary",
    "outcome",
    "signal_polarity",
    "utility",
    "confidence",
    "reward_count",
    "experience_summary",
]
_MEMORY_COLUMNS = [*EVIDENCE_COLUMNS, "lesson_at"]


@dataclass(frozen=True)
class WrittenLesson:
    memory_id: str
    kind: str
    intent: str
    utility: float
    lesson: str


@dataclass(frozen=True)
class LessonReport:
    candidates: int
    written: int
    failures: dict[str, str] = field(default_factory=dict)  # memory id -> why
    lessons: list[WrittenLesson] = field(default_factory=list)  # what was written


class LessonService:
    """Finds the memories with new evidence, has a writer distil them, stores a lesson."""

    def __init__(
        self,
        store: PackStore,
        flusher: Flusher,
        writer: MemoryWriter,
        rebuilds: RebuildService,
    ) -> None:
        self._store = store
        self._flusher = flusher
        self._writer = writer
        self._rebuilds = rebuilds

    def candidates(self, limit: int | None = None) -> list[LessonEvidence]:
        """Memories whose newest reward is newer than their lesson, oldest lesson first."""
        events = self._rebuilds.reward_log().filter(pl.col("weight") > 0)
        if events.height == 0:
            return []
        latest = (
            events.sort(["created_at", "writer", "seq"])
            .group_by("memory_id")
            .agg(last_at=pl.col("created_at").max(), recent=pl.col("value").tail(RECENT_REWARDS))
        )
        memories = pl.from_arrow(self._store.scan(schemas.MEMORIES, _MEMORY_COLUMNS))
        assert isinstance(memories, pl.DataFrame)
        due = (
            memories.join(latest, left_on="id", right_on="memory_id", how="inner")
            .filter(pl.col("lesson_at").is_null() | (pl.col("last_at") > pl.col("lesson_at")))
            .sort("lesson_at", nulls_last=False)
        )
        if limit is not None:
            due = due.head(limit)
        return [
            LessonEvidence(
                memory_id=row["id"],
                kind=row["kind"],
                intent=row["intent_text"],
                response=row["response_summary"],
                outcome=row["outcome"],
                polarity=row["signal_polarity"],
                utility=row["utility"],
                confidence=row["confidence"],
                reward_count=row["reward_count"],
                recent_rewards=tuple(row["recent"]),
                previous_lesson=row["experience_summary"],
            )
            for row in due.iter_rows(named=True)
        ]

    def refresh(self, writer: LessonWriter, limit: int | None = None) -> LessonReport:
        """Write lessons for every memory with new evidence; keep old lessons on failure."""
        self._store.require_writable("refresh lessons")
        candidates = self.candidates(limit)
        now = datetime.now(UTC)
        written: list[dict[str, Any]] = []
        lessons: list[WrittenLesson] = []
        log: list[dict[str, Any]] = []
        failures: dict[str, str] = {}
        for evidence in candidates:
            entry = {
                "at": now,
                "memory_id": evidence.memory_id,
                "writer": writer.name,
                "prompt_version": PROMPT_VERSION,
                "confidence": evidence.confidence,
            }
            try:
                lesson = writer.write(evidence)
            except LessonWriterError as exc:
                why = redact_url_credentials(str(exc))  # the log outlives the secret's rotation
                failures[evidence.memory_id] = why
                log.append({**entry, "status": "failed", "lesson": None, "error": why[:1000]})
                continue
            written.append(
                {"id": evidence.memory_id, "experience_summary": lesson, "lesson_at": now}
            )
            lessons.append(
                WrittenLesson(
                    evidence.memory_id, evidence.kind, evidence.intent, evidence.utility, lesson
                )
            )
            log.append({**entry, "status": "written", "lesson": lesson, "error": None})
        self._writer.store_lessons(written, log)  # under the handle's lock, the log first
        return LessonReport(len(candidates), len(written), failures, lessons)

    def evidence(self, memory_ids: list[str], scope: str | None = None) -> list[LessonEvidence]:
        """What a writer in ``scope`` sees of each of ``memory_ids`` that exists (learned
        values as this handle sees them, the newest rewards last, the lesson its scope
        sees), in the order given."""
        if not memory_ids:
            return []
        self._flusher.flush()  # the rewards this handle buffered are part of the evidence
        rows = self._store.scan(
            schemas.MEMORIES, EVIDENCE_COLUMNS, in_clause("id", memory_ids)
        ).to_pylist()
        events = pl.from_arrow(
            self._store.scan(
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
        mine = scope_lessons(self._store, scope, list(found))
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

    def save(
        self,
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
        owner = self._owner(evidence.memory_id)
        if scope is not None and owner not in (None, scope):
            raise UnknownMemory(
                f"Pack {self._store.location.name!r} has no memory "
                f"{evidence.memory_id!r} in this scope."
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
        self._writer.store_lessons([] if scoped else [written], [log])
        return now

    def _owner(self, memory_id: str) -> str | None:
        """The scope ``memory_id`` belongs to (None: shared)."""
        rows = self._store.get(
            schemas.MEMORIES, f"id = {sql_literal(memory_id)}", ["metadata_json"]
        )
        if not rows:
            raise UnknownMemory(f"Pack {self._store.location.name!r} has no memory {memory_id!r}.")
        meta = json.loads(rows[0]["metadata_json"]) if rows[0]["metadata_json"] else {}
        owner = meta.get(SCOPE_KEY) if isinstance(meta, dict) else None
        return owner if isinstance(owner, str) else None
