"""One memory from the front doors: ``get``, ``revise``, ``supersede`` and ``history``,
shared by the ``wolfie`` CLI (``wolfie/commands/correct.py``, ``upkeep.py``), the MCP
server and the REST API.

Scopes: a caller in a scope revises and supersedes only that scope's memories (never a
shared one, which every user sees) and reads (``get``, ``history``) the memories it can
recall: its scope's and the shared ones. A caller without a scope is held to the shared
memories, except the CLI's operator, who may name any memory (``any_scope``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from packs.errors import InvalidInput, UnknownMemory
from packs.pack import Pack
from packs.records import MemoryVersion, Record, RevisionResult
from packs.store.scopes import SCOPE_KEY


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


def revise(
    pack: Pack,
    memory_id: str,
    *,
    intent: str | None = None,
    response: str | None = None,
    outcome: str | None = None,
    polarity: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    source: str = "agent",
    scope: str | None = None,
    any_scope: bool = False,
) -> RevisionResult:
    """Change the given fields of a memory of ``scope`` (None: a shared memory)."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=True)
    meta = dict(metadata) if isinstance(metadata, Mapping) else metadata
    return pack.revise(
        memory_id,
        intent=intent,
        response=response,
        outcome=outcome,
        polarity=polarity,
        metadata=meta,
        source=source,
    )


def get(
    pack: Pack, memory_id: str, *, scope: str | None = None, any_scope: bool = False
) -> StoredMemory:
    """One memory as stored, if a caller in ``scope`` can recall it."""
    row = pack.get(memory_id) if any_scope else _require_scope(pack, memory_id, scope, exact=False)
    return StoredMemory.from_row(row)


def supersede(
    pack: Pack,
    memory_id: str,
    *,
    by: str | None = None,
    reason: str | None = None,
    scope: str | None = None,
    any_scope: bool = False,
) -> Superseded:
    """Mark a memory of ``scope`` no longer true (``by`` the one replacing it)."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=True)
    pack.supersede(memory_id, by, reason)
    return Superseded(memory_id, by, reason)


def history(
    pack: Pack, memory_id: str, *, scope: str | None = None, any_scope: bool = False
) -> History:
    """A memory's versions, if a caller in ``scope`` can recall it."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=False)
    return History(memory_id, tuple(pack.history(memory_id)))


def require_visible(pack: Pack, memory_id: str, scope: str | None) -> None:
    """A caller in ``scope`` can recall the memory (its scope's or a shared one); else
    it is reported as unknown."""
    _require_scope(pack, memory_id, scope, exact=False)


def _require_scope(pack: Pack, memory_id: str, scope: str | None, *, exact: bool) -> dict[str, Any]:
    """The memory's row, which must be ``scope``'s (or, unless ``exact``, shared): else
    it is reported as unknown, as recall would not show it either."""
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInput(f"memory_id must be a non-empty str, got {memory_id!r}.")
    row = pack.get(memory_id)
    owner = json.loads(row["metadata_json"]).get(SCOPE_KEY) if row["metadata_json"] else None
    if owner == scope or (owner is None and not exact):
        return row
    if owner is None:
        raise InvalidInput(
            f"Memory {memory_id!r} is shared by every scope; a caller in scope {scope!r} "
            "can't revise it."
        )
    raise UnknownMemory(f"Pack {pack.name!r} has no memory {memory_id!r} in this scope.")
