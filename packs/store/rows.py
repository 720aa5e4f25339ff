"""Deterministic ids and the row dicts written to the ``memories`` table. Pure."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from datetime import datetime
from typing import Any

import numpy as np

from packs.records import KnowledgeChunk
from packs.store import schemas
from packs.store.filters import tag
from packs.store.scopes import SCOPE_KEY, scope_tags


def stable_hash(*parts: str, size: int = 16) -> str:
    digest = hashlib.blake2b(digest_size=size)
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x1f")
    return digest.hexdigest()


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def memory_id(intent: str, response: str, scope: str | None = None) -> str:
    """Same intent and response (after Unicode and case folding) in the same scope give
    the same id; two scopes never share a memory."""
    if scope is None:
        return "m_" + stable_hash(normalise(intent), normalise(response))
    return "m_" + stable_hash(normalise(intent), normalise(response), "scope", scope)


def knowledge_id(source: str, position: int, scope: str | None = None) -> str:
    """A chunk is addressed by its source and position, so a re-ingest hits the same row;
    a scoped chunk's id holds its scope too, so one scope's ingest never rewrites another
    scope's rows or the shared ones of the same source."""
    if scope is None:
        return "k_" + stable_hash(source, str(position))
    return "k_" + stable_hash(source, str(position), "scope", scope)


def tags_of(metadata: dict[str, Any]) -> list[str]:
    return sorted([tag(k, v) for k, v in metadata.items()] + scope_tags(metadata))


def _metadata_json(metadata: dict[str, Any]) -> str | None:
    return json.dumps(metadata, sort_keys=True, ensure_ascii=False) if metadata else None


def provenance_entry(
    source: str, at: datetime, intent: str, metadata: dict[str, Any]
) -> dict[str, Any]:
    return {
        "source": source,
        "at": at,
        "intent_text": intent,
        "metadata_json": _metadata_json(metadata),
    }


def _base_row(now: datetime) -> dict[str, Any]:
    return {
        "utility": 0.0,  # MemRL q_init = 0
        "confidence": 0.0,
        "usage_count": 0,
        "reward_count": 0,
        "merge_count": 0,
        "created_at": now,
        "updated_at": now,
        "last_used_at": None,
        "lesson_at": None,
        "experience_summary": None,
    }


def memory_row(
    intent: str,
    response: str,
    intent_vec: np.ndarray,
    response_vec: np.ndarray,
    outcome: str | None,
    polarity: str | None,
    metadata: dict[str, Any],
    source: str,
    now: datetime,
) -> dict[str, Any]:
    return {
        **_base_row(now),
        "id": memory_id(intent, response, metadata.get(SCOPE_KEY)),
        "kind": schemas.KIND_MEMORY,
        "intent_text": intent,
        "intent_embedding": intent_vec,
        "response_summary": response,
        "response_embedding": response_vec,
        "outcome": outcome,
        "signal_polarity": polarity,
        "source": source,
        "source_position": None,
        "title": None,
        "start_s": None,
        "end_s": None,
        "metadata_json": _metadata_json(metadata),
        "tags": tags_of(metadata),
        "provenance": [provenance_entry(source, now, intent, metadata)],
    }


def knowledge_row(chunk: KnowledgeChunk, vec: np.ndarray, now: datetime) -> dict[str, Any]:
    return {
        **_base_row(now),
        "id": knowledge_id(chunk.source, chunk.position, chunk.metadata.get(SCOPE_KEY)),
        "kind": schemas.KIND_KNOWLEDGE,
        "intent_text": chunk.text,
        "intent_embedding": vec,
        "response_summary": None,
        "response_embedding": None,
        "outcome": None,
        "signal_polarity": None,
        "source": chunk.source,
        "source_position": chunk.position,
        "title": chunk.title,
        "start_s": chunk.start_s,
        "end_s": chunk.end_s,
        "metadata_json": _metadata_json(chunk.metadata),
        "tags": tags_of(chunk.metadata),
        "provenance": [provenance_entry(chunk.source, now, chunk.text, chunk.metadata)],
    }


def merge_row(
    memory_id: str,
    intent: str,
    response: str,
    outcome: str | None,
    metadata: dict[str, Any],
    source: str,
    similarity: float,
    now: datetime,
) -> dict[str, Any]:
    """A ``merges`` row: the near-duplicate ``memory_id`` absorbed, with its provenance.

    The id depends on the absorbing memory and the new intent and response, so a retried
    remember finds its merge already logged and counts nothing twice.
    """
    return {
        "merge_id": "mg_" + stable_hash(memory_id, normalise(intent), normalise(response)),
        "memory_id": memory_id,
        "at": now,
        "source": source,
        "intent_text": intent,
        "response_summary": response,
        "outcome": outcome,
        "metadata_json": _metadata_json(metadata),
        "similarity": similarity,
    }
