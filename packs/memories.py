"""The write path of a Pack: memories (remembered, or merged into a near-duplicate)
and knowledge chunks (idempotent by source and position)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from packs.corrections import Corrections
from packs.embeddings.pack_embedder import PackEmbedder
from packs.errors import InvalidInput, UnknownMemory
from packs.records import KnowledgeChunk, RememberResult
from packs.remember_flow import Admit, RememberFlow
from packs.settings import ActiveSettings
from packs.store import schemas
from packs.store.filters import in_clause, sql_literal
from packs.store.gateway import PackStore
from packs.store.lifecycle import expiry
from packs.store.rows import knowledge_id, knowledge_row, memory_row
from packs.store.scopes import (
    SCOPE_KEY,
    SCOPED_TAG,
    check_scope,
    scoped_metadata,
)
from packs.validation import (
    check_episode_id,
    check_metadata,
    check_position,
    check_seconds,
    check_text,
    check_title,
)

KNOWLEDGE_BATCH = 2048  # rows per commit when adding knowledge
# What a re-ingested chunk may change; learned columns are left alone.
_CONTENT_COLUMNS = (
    "id",
    "intent_text",
    "intent_embedding",
    "title",
    "start_s",
    "end_s",
    "metadata_json",
    "tags",
    "updated_at",
)
_POLARITIES = (None, "success", "failure")


class MemoryWriter:
    """Remembers interactions and adds knowledge to one Pack."""

    def __init__(
        self,
        store: PackStore,
        settings: ActiveSettings,
        embedder: PackEmbedder,
        lock: threading.RLock,
    ) -> None:
        self._store = store
        self._settings = settings
        self._embedder = embedder
        self._lock = lock
        self._memories_schema = schemas.memories_schema(embedder.info.dim)
        self._corrections = Corrections(store, embedder)
        self._flow = RememberFlow(store, settings, self._corrections, self._memories_schema)

    def remember(
        self,
        intent: str,
        response: str,
        outcome: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        *,
        polarity: str | None = None,
        source: str = "api",
        scope: str | None = None,
        expires_at: datetime | None = None,
        confidence: float | None = None,
        episode_id: str | None = None,
        supersedes: str | None = None,
    ) -> RememberResult:
        """Store an interaction as a memory, or merge it into a near-duplicate.

        A stored memory whose intent has cosine >= ``dedup_threshold`` with this one
        absorbs it when it says the same (its ``merge_count`` grows and this intent joins
        its provenance); when it says something else, this one supersedes it
        (packs/corrections.py). ``scope`` (a user or session) is stored as metadata; only
        recalls in that scope see the memory, and duplicates are looked for within the
        scope only, among the memories still current (not expired, not superseded).
        ``expires_at`` (or the Pack's ``default_ttl_hours``) applies to a new memory; one
        merged keeps its own. With the Pack's admission policy on, ``confidence`` (0-1,
        the caller's) and ``episode_id`` (the episode it comes from) feed admission
        control (packs/admission/policy.py). ``supersedes`` states a correction outright:
        the id of a current memory of the caller's own scope (a shared one for an
        unscoped caller), which this one, stored as a new memory, supersedes.
        """
        self._store.require_writable("remember")
        limit = self._settings.value.max_text_chars
        intent = check_text(intent, "intent", limit)
        response = check_text(response, "response", limit)
        if outcome is not None:
            outcome = check_text(outcome, "outcome", limit)
        if polarity not in _POLARITIES:
            raise InvalidInput(f"polarity must be 'success', 'failure' or None, not {polarity!r}.")
        meta = check_metadata(dict(metadata) if metadata is not None else None)
        scope = check_scope(scope)
        meta = scoped_metadata(meta, scope)
        scope = meta.get(SCOPE_KEY)
        source = check_text(source, "source", 2_000)
        episode = None if episode_id is None else check_episode_id(episode_id)
        admit = Admit(_confidence(confidence), episode)
        now = datetime.now(UTC)
        expires = expiry(expires_at, self._settings.value.default_ttl_hours, now)
        refused = self._flow.screen(intent, response)  # before embedding: chatter costs nothing
        if refused is not None:
            return refused
        intent_vec, response_vec = self._embedder.embed([intent, response])
        row = memory_row(
            intent, response, intent_vec, response_vec, outcome, polarity, meta, source, now
        )
        row["expires_at"] = expires
        with self._lock:
            stated = None if supersedes is None else self._stated(supersedes, scope, row)
            return self._flow.write(row, response_vec, scope, now, admit, stated)

    def _stated(self, memory_id: object, scope: str | None, row: dict[str, Any]) -> str:
        """The memory a stated correction supersedes: a current memory of exactly the
        caller's scope (a scoped caller can't change a shared memory), not the same
        words as the correction."""
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise InvalidInput(f"supersedes must be a memory id, got {memory_id!r}.")
        columns = ["id", "kind", "metadata_json", "superseded_at"]
        rows = self._store.get(schemas.MEMORIES, f"id = {sql_literal(memory_id)}", columns)
        owner = json.loads(rows[0]["metadata_json"] or "{}").get(SCOPE_KEY) if rows else None
        if not rows or rows[0]["kind"] != schemas.KIND_MEMORY or owner not in (None, scope):
            raise UnknownMemory(
                f"Pack {self._store.location.name!r} has no memory {memory_id!r} to supersede "
                "in this scope."
            )
        if owner != scope:
            raise InvalidInput(
                f"Memory {memory_id!r} is shared by every scope; a caller in scope {scope!r} "
                "can't supersede it."
            )
        if rows[0]["superseded_at"] is not None:
            raise InvalidInput(f"Memory {memory_id!r} is already superseded.")
        if memory_id == row["id"]:
            raise InvalidInput("The correction says what the memory it supersedes says.")
        return memory_id

    def supersede(self, memory_id: str, by: str | None = None, reason: str | None = None) -> None:
        """Mark ``memory_id`` as no longer true: superseded ``by`` the memory that replaces
        it (one the old one's scope can see), or by nothing. It is never recalled or
        searched again; ``get`` still shows it, with ``superseded_by``, ``_at`` and
        ``_reason``. Marking it again replaces the mark."""
        self._store.require_writable("supersede a memory")
        ids = [memory_id] if by is None else [memory_id, by]
        if not all(isinstance(m, str) and m for m in ids) or by == memory_id:
            raise InvalidInput(
                f"supersede needs a memory id and another memory's id (or None), got "
                f"{memory_id!r} and {by!r}."
            )
        if reason is not None:
            reason = check_text(reason, "reason", 2_000)
        rows = self._store.get(schemas.MEMORIES, in_clause("id", ids), ["id", "tags"], 2)
        tags = {r["id"]: set(r["tags"] or []) for r in rows}
        missing = [m for m in ids if m not in tags]
        if missing:
            raise UnknownMemory(f"Pack {self._store.location.name!r} has no memory {missing}.")
        if by is not None and not _visible_from(tags[by], tags[memory_id]):
            raise InvalidInput(
                f"Memory {by!r} is in another scope than {memory_id!r}; a memory can only be "
                "superseded by one its own scope sees (its scope's or a shared one)."
            )
        self._corrections.mark(memory_id, by, reason, datetime.now(UTC))

    def add_knowledge(self, chunks: Iterable[KnowledgeChunk | Mapping[str, Any]]) -> list[str]:
        """Add knowledge chunks; ids come from (source, position, scope): idempotent.

        Re-adding an unchanged chunk changes nothing (and embeds nothing). A chunk whose
        text changed at the same position gets the new text and embedding but keeps its
        learned state, so the stored utilities always equal the replay of the reward log.
        """
        self._store.require_writable("add knowledge")
        items = [self._check_chunk(c) for c in chunks]
        ids: list[str] = []
        for start in range(0, len(items), KNOWLEDGE_BATCH):
            # a repeated (source, position, scope) keeps the last text
            batch = {
                knowledge_id(c.source, c.position, c.metadata.get(SCOPE_KEY)): c
                for c in items[start : start + KNOWLEDGE_BATCH]
            }
            self._write_chunks(batch)
            ids.extend(batch)
        return ids

    def _write_chunks(self, batch: dict[str, KnowledgeChunk]) -> None:
        """Write the chunks of ``batch`` (by id) that are new or whose text changed.

        The stored texts are read by id first (a lookup through the id index once
        maintenance built it), so a batch costs what it adds, not a scan of the table:
        LanceDB 0.40 can't run the conditional update (``target.intent_text !=
        source.intent_text``) through the index (docs/recall.md), and without it the
        merge read every row (2-14 s at 300k rows, docs/ingestion.md). New chunks go in
        through an insert-only ``merge_insert``, so a chunk another process inserted
        meanwhile is not duplicated; the rows it found already there are looked at again.
        """
        stored = self._stored_texts(list(batch))
        new = [i for i in batch if i not in stored]
        changed = [i for i in batch if i in stored and stored[i] != batch[i].text]
        if not new and not changed:
            return
        wanted = new + changed
        vectors = self._embedder.embed([batch[i].text for i in wanted])
        now = datetime.now(UTC)
        rows = {
            i: knowledge_row(batch[i], vec, now) for i, vec in zip(wanted, vectors, strict=True)
        }
        if new and self._store.merge(
            schemas.MEMORIES, self._memory_table([rows[i] for i in new]), "id"
        ) < len(new):
            raced = self._stored_texts(new)  # another writer inserted some: compare again
            changed += [i for i in new if raced.get(i, batch[i].text) != batch[i].text]
        if changed:
            table = self._memory_table([rows[i] for i in changed])
            self._store.merge(
                schemas.MEMORIES,
                table.select(list(_CONTENT_COLUMNS)),
                "id",
                update=True,
                insert=False,
            )

    def _stored_texts(self, ids: list[str]) -> dict[str, str]:
        found = self._store.scan(schemas.MEMORIES, ["id", "intent_text"], in_clause("id", ids))
        return dict(zip(found["id"].to_pylist(), found["intent_text"].to_pylist(), strict=True))

    def _check_chunk(self, chunk: KnowledgeChunk | Mapping[str, Any]) -> KnowledgeChunk:
        if isinstance(chunk, Mapping):
            fields = dict(chunk)
            try:
                chunk = KnowledgeChunk(**fields)
            except TypeError as exc:
                raise InvalidInput(f"Bad knowledge chunk {fields!r}: {exc}") from exc
        if not isinstance(chunk, KnowledgeChunk):
            raise InvalidInput(f"Expected KnowledgeChunk or dict, got {type(chunk).__name__}.")
        text = check_text(chunk.text, "chunk text", self._settings.value.max_text_chars)
        source = check_text(chunk.source, "chunk source", 2_000)
        return KnowledgeChunk(
            text,
            source,
            check_position(chunk.position),
            check_title(chunk.title, self._settings.value.max_text_chars),
            check_seconds(chunk.start_s, "start_s"),
            check_seconds(chunk.end_s, "end_s"),
            scoped_metadata(check_metadata(chunk.metadata), None),  # a scope is checked too
        )

    def _memory_table(self, rows: list[dict[str, Any]]) -> pa.Table:
        return pa.Table.from_pylist(rows, schema=self._memories_schema)

    def store_lessons(self, lessons: list[dict[str, Any]], log: list[dict[str, Any]]) -> None:
        """Write distilled lessons (``id``, ``experience_summary``, ``lesson_at``) and their
        ``lesson_log`` rows under this handle's lock. The log goes first: a crash between
        the two writes leaves a logged attempt whose lesson the next run writes again,
        never a lesson with no log entry."""
        self._store.require_writable("store lessons")
        with self._lock:
            if log:
                table = pa.Table.from_pylist(log, schema=schemas.LESSON_LOG_SCHEMA)
                self._store.append(schemas.LESSON_LOG, table)
            if lessons:
                columns = [self._memories_schema.field(name) for name in lessons[0]]
                update = pa.Table.from_pylist(lessons, schema=pa.schema(columns))
                self._store.merge(schemas.MEMORIES, update, "id", update=True, insert=False)


def _confidence(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInput(f"confidence must be a number from 0 to 1 (or None), not {value!r}.")
    return float(value)


def _visible_from(tags: set[str], seer: set[str]) -> bool:
    """A row with ``tags`` is shared, or in the scope of the row with ``seer`` tags."""
    scope = {t for t in tags if t.startswith(f"{SCOPE_KEY}=")}
    return SCOPED_TAG not in tags or scope <= seer
