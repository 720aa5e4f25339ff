"""Deprecated home of the lesson refresh: ``pack.lessons.refresh(writer, limit)`` and
``pack.lessons.candidates(limit)`` (:mod:`packs.lessons.service`). Its records and
constants stay importable from here."""

from __future__ import annotations

from typing import Protocol

from packs.deprecation import moved
from packs.lessons.service import (
    EVIDENCE_COLUMNS,
    RECENT_REWARDS,
    LessonReport,
    LessonService,
    WrittenLesson,
)
from packs.lessons.writers import LessonEvidence, LessonWriter

__all__ = ["EVIDENCE_COLUMNS", "RECENT_REWARDS", "LessonReport", "WrittenLesson"]


class _Kept(Protocol):  # an open Pack, as the deprecated functions below take it
    @property
    def lessons(self) -> LessonService: ...


def lesson_candidates(pack: _Kept, limit: int | None = None) -> list[LessonEvidence]:
    """Deprecated: ``pack.lessons.candidates(limit)``."""
    moved("packs.lessons.refresh.lesson_candidates(pack)", "pack.lessons.candidates()")
    return pack.lessons.candidates(limit)


def refresh_lessons(pack: _Kept, writer: LessonWriter, limit: int | None = None) -> LessonReport:
    """Deprecated: ``pack.lessons.refresh(writer, limit)``."""
    moved("packs.lessons.refresh.refresh_lessons(pack)", "pack.lessons.refresh()")
    return pack.lessons.refresh(writer, limit)
