"""What the front doors return beyond the engine's own records (:mod:`packs.records`):
Pack listings, added chunks, a memory as stored, its history, a resolution and a reward
with its lessons. Every door serialises them with ``to_dict()``; the MCP SDK publishes
their fields as each tool's output schema, and the REST API's models mirror them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from packs.records import (
    FeedbackResult,
    HeldMemory,
    LessonNote,
    MemoryVersion,
    Record,
    TuningReport,
)
from packs.store.catalog import PackInfo
from packs.store.scopes import SCOPE_KEY


@dataclass(frozen=True)
class PackListing(Record):
    root: str | None
    packs: tuple[PackInfo, ...]


@dataclass(frozen=True)
class KnowledgeAdded(Record):
    """The ids of the chunks given, in order (from source, position and scope: adding a
    chunk again changes nothing)."""

    ids: tuple[str, ...]


@dataclass(frozen=True)
class HeldList(Record):
    """The memories on probation a caller may see, oldest first."""

    memories: tuple[HeldMemory, ...]


@dataclass(frozen=True)
class TuningHistory(Record):
    """The Pack's tuning runs, newest first (``wolfie tune --history``, docs/tuning.md)."""

    runs: tuple[TuningReport, ...]


@dataclass(frozen=True)
class StoredMemory(Record):
    """A memory or knowledge chunk as stored, learned state included and embeddings left
    out: what ``wolfie get`` and ``GET /v1/packs/{pack}/memories/{id}`` return. The names
    are a recalled item's (``text``, ``response``, ``lesson``, ``polarity``,
    ``track_record``: the global Q); ``metadata`` is without the ``scope``, given apart."""

    id: str
    kind: str
    text: str
    response: str | None
    outcome: str | None
    polarity: str | None
    lesson: str | None
    track_record: float
    confidence: float
    usage_count: int
    reward_count: int
    merge_count: int
    scope: str | None
    metadata: dict[str, Any]
    source: str | None
    source_position: int | None
    title: str | None
    start_s: float | None
    end_s: float | None
    created_at: datetime
    updated_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    superseded_by: str | None
    superseded_at: datetime | None
    superseded_reason: str | None
    provenance: tuple[dict[str, Any], ...]

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> StoredMemory:
        meta = json.loads(row["metadata_json"]) if row.get("metadata_json") else {}
        scope = meta.pop(SCOPE_KEY, None)
        return cls(
            id=row["id"],
            kind=row["kind"],
            text=row["intent_text"],
            response=row.get("response_summary"),
            outcome=row.get("outcome"),
            polarity=row.get("signal_polarity"),
            lesson=row.get("experience_summary"),
            track_record=row["utility"],
            confidence=row["confidence"],
            usage_count=row["usage_count"],
            reward_count=row["reward_count"],
            merge_count=row.get("merge_count") or 0,
            scope=scope,
            metadata=meta,
            source=row.get("source"),
            source_position=row.get("source_position"),
            title=row.get("title"),
            start_s=row.get("start_s"),
            end_s=row.get("end_s"),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            last_used_at=row.get("last_used_at"),
            expires_at=row.get("expires_at"),
            superseded_by=row.get("superseded_by"),
            superseded_at=row.get("superseded_at"),
            superseded_reason=row.get("superseded_reason"),
            provenance=tuple(row.get("provenance") or ()),
        )


@dataclass(frozen=True)
class Superseded(Record):
    """A memory marked no longer true: never recalled again, kept as history."""

    memory_id: str
    superseded_by: str | None
    reason: str | None


@dataclass(frozen=True)
class History(Record):
    """A memory's versions, oldest first (the doors' shape of ``Pack.history``)."""

    memory_id: str
    versions: tuple[MemoryVersion, ...]


@dataclass(frozen=True)
class Resolved(Record):
    """``intrinsic_reward`` is None when the store is too cold to score the response;
    ``rewarded`` are the memories whose utility moved, ``lessons`` what became of their
    lessons (wolfie/mcp/lessons.py)."""

    episode_id: str
    intrinsic_reward: float | None
    successes_compared: int
    applied: int
    rewarded: tuple[str, ...] = ()
    lessons: tuple[LessonNote, ...] = ()


@dataclass(frozen=True)
class Rewarded(FeedbackResult):
    """A reward's result and what became of the lessons of the memories it moved."""

    lessons: tuple[LessonNote, ...] = ()


@dataclass(frozen=True)
class Distilled(Record):
    """What ``distill`` did to each memory's lesson."""

    lessons: tuple[LessonNote, ...]


def with_lessons(result: FeedbackResult, lessons: tuple[LessonNote, ...]) -> Rewarded:
    return Rewarded(**{f.name: getattr(result, f.name) for f in fields(result)}, lessons=lessons)
