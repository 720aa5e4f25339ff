"""Deprecated home of one memory's lesson: ``pack.lessons.evidence(memory_ids, scope)``
and ``pack.lessons.save(evidence, lesson, ...)`` (:mod:`packs.lessons.service`)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from packs.deprecation import moved
from packs.lessons.service import LessonService
from packs.lessons.writers import LessonEvidence


class _Kept(Protocol):  # an open Pack, as the deprecated functions below take it
    @property
    def lessons(self) -> LessonService: ...


def evidence_for(
    pack: _Kept, memory_ids: list[str], scope: str | None = None
) -> list[LessonEvidence]:
    """Deprecated: ``pack.lessons.evidence(memory_ids, scope)``."""
    moved("packs.lessons.one_memory.evidence_for(pack)", "pack.lessons.evidence()")
    return pack.lessons.evidence(memory_ids, scope)


def store_lesson(
    pack: _Kept,
    evidence: LessonEvidence,
    lesson: str,
    *,
    writer: str,
    model: str | None,
    episode_id: str | None,
    scope: str | None = None,
) -> datetime:
    """Deprecated: ``pack.lessons.save(evidence, lesson, ...)``."""
    moved("packs.lessons.one_memory.store_lesson(pack)", "pack.lessons.save()")
    return pack.lessons.save(
        evidence, lesson, writer=writer, model=model, episode_id=episode_id, scope=scope
    )
