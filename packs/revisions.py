"""Revising a memory in place: :meth:`Pack.revise` (docs/rewards.md, "Revising").

A revision keeps the memory's id and changes only the fields given, re-embedding the
text that changed (intent -> ``intent_embedding``, response -> ``response_embedding``).
Three writes, in this order:

1. the row, by a compare-and-set ``merge_insert`` of the changed columns only: it applies
   only while every field it changes still holds the value read, so two processes
   revising at once never lose an acknowledged revision. Revisions of different fields
   both land; of the same field, the later one sees the earlier one's value, records it
   as its ``old`` value and wins (a failed compare reads the row again, up to
   :data:`ATTEMPTS` times);
2. its ``memory_history`` row: what changed, old and new, without embeddings;
3. for a new response or polarity (what the agent is told to do), one ``revision``
   event in the reward log that moves the utility back to the prior (and the lesson,
   distilled from the old response, is cleared for the lessons flow to rewrite).

2 and 3 go through the handle's write buffer and are flushed before revise returns: a
failed flush raises, and the rows stay buffered for the next flush or ``close()``.

Knowledge chunks are not revised: they follow their source document, and re-ingesting
it (``add_knowledge``) would overwrite a revision. The id stays the one derived at
creation from the first intent and response; after a revision it is an identity, not a
content hash.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from packs.embeddings.pack_embedder import PackEmbedder
from packs.errors import InvalidInput, TransientStorageError
from packs.history import FIELD_COLUMNS, MemoryHistory, field_values
from packs.journal.flush import Flusher
from packs.journal.write_buffer import WriteBuffer
from packs.learning.state import LearningState
from packs.records import RevisionResult
from packs.rewards.ledger import RewardLedger
from packs.settings import ActiveSettings
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore
from packs.store.rows import tags_of
from packs.store.scopes import SCOPE_KEY, scoped_metadata
from packs.validation import check_metadata, check_text

ATTEMPTS = 8  # compare-and-set tries before a revise gives up (hand-set; each re-reads)
# "none" clears a polarity (None means "leave it as it is" in revise's signature).
POLARITIES = {"success": "success", "failure": "failure", "none": None}
# Fields whose change makes the memory a new action: its utility goes back to the prior.
ACTION_FIELDS = ("response", "polarity")


class RevisionService:
    """Revises memories of one Pack (the module docstring)."""

    def __init__(
        self,
        store: PackStore,
        settings: ActiveSettings,
        embedder: PackEmbedder,
        learning: LearningState,
        ledger: RewardLedger,
        buffer: WriteBuffer,
        flusher: Flusher,
        history: MemoryHistory,
        lock: threading.RLock,
    ) -> None:
        self._store = store
        self._settings = settings
        self._embedder = embedder
        self._learning = learning
        self._ledger = ledger
        self._buffer = buffer
        self._flusher = flusher
        self._history = history
        self._lock = lock
        self._schema = schemas.memories_schema(embedder.info.dim)

    def revise(
        self,
        memory_id: str,
        *,
        intent: str | None = None,
        response: str | None = None,
        outcome: str | None = None,
        polarity: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        source: str = "api",
    ) -> RevisionResult:
        """Change the given fields of ``memory_id`` (None leaves a field as it is)."""
        self._store.require_writable("revise a memory")
        wanted = self._check(intent, response, outcome, polarity, metadata)
        source = check_text(source, "source", 2_000)
        texts = {f: wanted[f] for f in ("intent", "response") if f in wanted}
        vectors = dict(zip(texts, self._embedder.embed(list(texts.values())), strict=True))
        with self._lock:
            for attempt in range(ATTEMPTS):
                row = self._history.read_row(memory_id)
                changes = _changes(row, wanted)
                if not changes:
                    return RevisionResult(memory_id, "unchanged", None)
                if self._compare_and_set(row, changes, vectors):
                    break
                time.sleep(random.uniform(0.01, 0.05) * 2**attempt)
            else:
                raise TransientStorageError(
                    f"Memory {memory_id!r} of Pack {self._store.location.name!r} changed "
                    f"under {ATTEMPTS} attempts to revise it; try again."
                )
            version_id = self._record(memory_id, changes, source)
            self._flusher.flush()
        found = [v for v in self._history(memory_id) if v.version_id == version_id]
        return RevisionResult(memory_id, "revised", found[0] if found else None)

    def _check(
        self,
        intent: object,
        response: object,
        outcome: object,
        polarity: object,
        metadata: object,
    ) -> dict[str, Any]:
        limit = self._settings.value.max_text_chars
        wanted: dict[str, Any] = {}
        for name, value in (("intent", intent), ("response", response), ("outcome", outcome)):
            if value is not None:
                wanted[name] = check_text(value, name, limit)
        if polarity is not None:
            if not isinstance(polarity, str) or polarity not in POLARITIES:
                raise InvalidInput(
                    f"polarity must be 'success', 'failure' or 'none' (clears it), not "
                    f"{polarity!r}; leave it out to keep the memory's polarity."
                )
            wanted["polarity"] = POLARITIES[polarity]
        if metadata is not None:
            if not isinstance(metadata, Mapping):
                raise InvalidInput(f"metadata must be a dict, got {type(metadata).__name__}.")
            wanted["metadata"] = check_metadata(dict(metadata))
        if not wanted:
            raise InvalidInput(
                "Nothing to revise: give at least one of intent, response, outcome, "
                "polarity or metadata."
            )
        return wanted

    def _compare_and_set(
        self, row: dict[str, Any], changes: dict[str, tuple[Any, Any]], vectors: dict[str, Any]
    ) -> bool:
        """Write the changed columns if every one still holds what ``row`` read."""
        now = datetime.now(UTC)
        columns: dict[str, Any] = {"id": row["id"]}
        guard = []
        for field, (_old, new) in changes.items():
            if field == "lesson":
                columns.update(experience_summary=None, lesson_at=None)
                continue
            column = FIELD_COLUMNS[field]
            columns[column] = _stored(field, new)
            read = row[column]
            guard.append(
                f"target.{column} = {sql_literal(read)}"
                if read is not None
                else f"target.{column} IS NULL"
            )
            if field == "metadata":
                columns["tags"] = tags_of(new)
        if "intent" in changes:
            columns["intent_embedding"] = vectors["intent"]
        if "response" in changes:
            columns["response_embedding"] = vectors["response"]
        columns["updated_at"] = now
        schema = pa.schema([self._schema.field(name) for name in columns])
        data = pa.Table.from_pylist([columns], schema=schema)
        written = self._store.merge(
            schemas.MEMORIES, data, "id", update=" AND ".join(guard), insert=False
        )
        return written == 1

    def _record(self, memory_id: str, changes: dict[str, tuple[Any, Any]], source: str) -> str:
        """Buffer the revision's history row and, for a new action, its reward event."""
        version_id = "rv_" + uuid.uuid4().hex
        action = [field for field in ACTION_FIELDS if field in changes]
        before = None
        if action:
            state = self._learning.current([memory_id]).get(memory_id)  # None: forgotten
            # no evidence yet, or none since the last reset (Q 0, c 0.5): nothing to undo
            if state and state.reward_count and (state.utility != 0.0 or state.confidence != 0.5):
                before = self._ledger.revision(memory_id, version_id, "+".join(action))
        changed = {field: {"old": old, "new": new} for field, (old, new) in changes.items()}
        row = {
            "version_id": version_id,
            "memory_id": memory_id,
            "at": datetime.now(UTC),
            "event": "revise",
            "source": source,
            "changes_json": json.dumps(changed, sort_keys=True, ensure_ascii=False),
            "utility_before": before,
            "utility_reset": before is not None,
        }
        self._buffer.add_rows(schemas.MEMORY_HISTORY, [row])
        return version_id


def _changes(row: dict[str, Any], wanted: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``field -> (stored, wanted)`` for each wanted field that differs from the row."""
    if row["kind"] != schemas.KIND_MEMORY:
        raise InvalidInput(
            f"{row['id']!r} is a knowledge chunk of {row['source']!r}; chunks follow their "
            "source document: re-ingest it (add_knowledge, same source and position)."
        )
    current = field_values(row)
    scope = current["metadata"].get(SCOPE_KEY)
    changes: dict[str, tuple[Any, Any]] = {}
    for field, value in wanted.items():
        if field == "metadata":
            given = value.get(SCOPE_KEY)
            if given is not None and given != scope:
                raise InvalidInput(
                    f"Memory {row['id']!r} is in scope {scope!r}; a revision can't move it "
                    f"to scope {given!r} (remember it there instead)."
                )
            value = scoped_metadata({k: v for k, v in value.items() if k != SCOPE_KEY}, scope)
        if _stored(field, value) != row[FIELD_COLUMNS[field]]:  # as stored: True is not 1
            changes[field] = (current[field], value)
    if changes and any(f in changes for f in ACTION_FIELDS) and row["experience_summary"]:
        changes["lesson"] = (row["experience_summary"], None)
    return changes


def _stored(field: str, value: Any) -> Any:
    if field == "metadata":
        return json.dumps(value, sort_keys=True, ensure_ascii=False) if value else None
    return value
