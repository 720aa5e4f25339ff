"""Refresh lessons: find memories with new evidence and have a writer distil them.

"New evidence" means a reward event (with weight > 0) newer than the memory's last lesson.
Every attempt, kept or failed, is appended to ``lesson_log`` with the confidence the
lesson was written at; then every successful lesson is written in one ``merge_insert``
(``experience_summary`` and ``lesson_at``). A run killed between the two is redone by the
next run, so the log may hold an attempt twice but never misses a stored lesson. A writer
failure keeps the old lesson. A second run with no new rewards finds nothing to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from packs.lazy import lazy_module
from packs.lessons.writers import (
    PROMPT_VERSION,
    LessonEvidence,
    LessonWriter,
    LessonWriterError,
    redact_url_credentials,
)
from packs.pack import Pack, storage_of
from packs.store import schemas

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


def lesson_candidates(pack: Pack, limit: int | None = None) -> list[LessonEvidence]:
    """Memories whose newest reward is newer than their lesson, oldest lesson first."""
    events = pack.reward_log().filter(pl.col("weight") > 0)
    if events.height == 0:
        return []
    latest = (
        events.sort(["created_at", "writer", "seq"])
        .group_by("memory_id")
        .agg(last_at=pl.col("created_at").max(), recent=pl.col("value").tail(RECENT_REWARDS))
    )
    memories = pl.from_arrow(storage_of(pack).scan(schemas.MEMORIES, _MEMORY_COLUMNS))
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


def refresh_lessons(pack: Pack, writer: LessonWriter, limit: int | None = None) -> LessonReport:
    """Write lessons for every memory with new evidence; keep old lessons on failure."""
    storage_of(pack).require_writable("refresh lessons")
    candidates = lesson_candidates(pack, limit)
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
        written.append({"id": evidence.memory_id, "experience_summary": lesson, "lesson_at": now})
        lessons.append(
            WrittenLesson(
                evidence.memory_id, evidence.kind, evidence.intent, evidence.utility, lesson
            )
        )
        log.append({**entry, "status": "written", "lesson": lesson, "error": None})
    pack.store_lessons(written, log)  # under the handle's lock, the log first
    return LessonReport(len(candidates), len(written), failures, lessons)
