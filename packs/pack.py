"""The Pack: a scoped, self-contained memory whose rows learn a utility from rewards.

Public API (all documented in README.md):

- ``Pack.open(name, root=None, read_only=False)``
- ``remember``, ``add_knowledge`` (write path)
- ``recall`` (Phase A + B, logged), ``search`` (same ranking, nothing logged)
- ``feedback`` (EMA update of every injected memory)
- ``flush``, ``close`` (or use the Pack as a context manager)
"""

from __future__ import annotations

import atexit
import logging
import os
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from packs import schemas
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, default_embedder
from packs.embeddings.base import check_vectors
from packs.embeddings.cache import QueryEmbeddingCache
from packs.embeddings.onnx_minilm import OnnxMiniLM
from packs.errors import (
    InvalidInput,
    PackNotFound,
    ReadOnlyPack,
    SchemaVersionError,
    TransientError,
    UnknownMemory,
)
from packs.filters import sql_literal, where_clause
from packs.journal import Journal, learned_of
from packs.learning import LearningMixin
from packs.prompt import render_prompt
from packs.query import query_table, versions
from packs.records import (
    KnowledgeChunk,
    Recall,
    RememberResult,
)
from packs.retrieval import phase_a, phase_b, vector_query
from packs.rows import knowledge_row, memory_row, merge_row
from packs.scopes import (
    SCOPE_KEY,
    check_scope,
    same_scope_clause,
    scoped_metadata,
    visible_clause,
)
from packs.settings import PackSettings
from packs.storage import PackStore, locate
from packs.validation import check_metadata, check_seconds, check_text
from packs.vector_cache import VectorCache

log = logging.getLogger(__name__)

_LEARNED_COLUMNS = ["id", "utility", "confidence", "usage_count", "reward_count"]
_KNOWLEDGE_BATCH = 2048
_CLOSE_RETRIES = 4
# What a re-ingested chunk may change; learned columns are left alone.
_CONTENT_COLUMNS = (
    "id", "intent_text", "intent_embedding", "title", "start_s", "end_s", "metadata_json",
    "tags", "updated_at",
)  # fmt: skip  # rows per commit when adding knowledge
_EPISODE_CACHE = 10_000  # recent episodes kept in memory for feedback lookups
_POLARITIES = (None, "success", "failure")

_open_packs: weakref.WeakSet[Pack] = weakref.WeakSet()


@atexit.register
def _close_open_packs() -> None:
    """A clean interpreter exit loses nothing: flush every Pack still open."""
    for pack in list(_open_packs):
        try:
            pack.close()
        except Exception:
            log.exception("Flushing Pack %r at exit failed", pack.name)


class Pack(LearningMixin):
    """One Pack. Create or open it with :meth:`Pack.open`."""

    def __init__(
        self,
        store: PackStore,
        settings: PackSettings,
        settings_version: int,
        embedding: EmbeddingInfo,
        embedder: EmbeddingProvider | None,
    ) -> None:
        self._store = store
        self._settings = settings
        self._settings_version = settings_version
        self._embedding = embedding
        self._embedder = embedder
        self._schemas = schemas.all_schemas(embedding.dim)
        self._journal = Journal(
            store, embedding.dim, settings.log_flush_rows, settings.log_flush_seconds
        )
        self._tune_journal(settings)
        self._vectors = VectorCache(embedding.dim)  # Phase A's exact scan (docs/recall.md)
        self._queries = QueryEmbeddingCache()
        self._closed = False
        if not store.read_only:
            _open_packs.add(self)
            self._journal.background.start()  # learning reaches others while idle

    # --- opening -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        name: str,
        root: str | os.PathLike[str] | None = None,
        read_only: bool = False,
        *,
        create: bool = True,
        embedder: EmbeddingProvider | None = None,
        settings: PackSettings | Mapping[str, Any] | None = None,
        storage_options: Mapping[str, str] | None = None,
    ) -> Pack:
        """Open Pack ``name`` under ``root`` (default ``WOLFIE_ROOT`` or ``./.wolfie``).

        A missing Pack is created unless ``read_only`` or ``create=False``, which raise
        :class:`PackNotFound`. ``settings`` apply at creation, or are stored as a new
        settings version of an existing Pack. ``embedder`` defaults to offline
        all-MiniLM-L6-v2; one from another vector space is refused.
        """
        location = locate(name, root, storage_options)
        store = PackStore(location, read_only=read_only)
        if isinstance(settings, Mapping):
            settings = PackSettings.from_dict(dict(settings))
        # pack_meta is created last and written after it, so a Pack whose creation
        # crashed half-way has no schema_version yet and is simply created again.
        meta = store.read_meta() if store.exists() else {}
        if "schema_version" not in meta:
            if read_only or not create:
                raise PackNotFound(
                    f"No Pack {name!r} under {location.root!r}. Check the name and root "
                    "(WOLFIE_ROOT), or open it writable with create=True to make it."
                )
            return cls._create(store, embedder, settings or PackSettings())
        version = int(meta.get("schema_version", 0))
        if version > schemas.SCHEMA_VERSION:
            raise SchemaVersionError(
                f"Pack {name!r} has schema version {version}, newer than this Wolfie "
                f"({schemas.SCHEMA_VERSION}). Upgrade Wolfie to open it."
            )
        stored = EmbeddingInfo.from_dict(meta["embedding"])
        (embedder.info if embedder else OnnxMiniLM.info).check_compatible(stored, name)
        if embedder is None and stored.provider != OnnxMiniLM.info.provider:
            log.info("Pack %r was built with %s; using the compatible default", name, stored)
        pack = cls(
            store,
            PackSettings.from_dict(meta.get("settings", {})),
            int(meta.get("settings_version", 1)),
            stored,
            embedder,
        )
        if settings is not None and settings != pack.settings:
            pack.configure(**settings.to_dict())
        return pack

    @classmethod
    def _create(
        cls, store: PackStore, embedder: EmbeddingProvider | None, settings: PackSettings
    ) -> Pack:
        info = embedder.info if embedder else OnnxMiniLM.info
        store.create(info.dim)
        store.write_meta(
            {
                "schema_version": schemas.SCHEMA_VERSION,
                "embedding": info.to_dict(),
                "settings": settings.to_dict(),
                "settings_version": 1,
                "settings@1": settings.to_dict(),
                "created_at": datetime.now(UTC).isoformat(),
            }
        )
        return cls(store, settings, 1, info, embedder)

    # --- properties ----------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._store.location.name

    @property
    def root(self) -> str:
        return self._store.location.root

    @property
    def read_only(self) -> bool:
        return self._store.read_only

    @property
    def settings(self) -> PackSettings:
        return self._settings

    @property
    def settings_version(self) -> int:
        return self._settings_version

    @property
    def embedding(self) -> EmbeddingInfo:
        return self._embedding

    @property
    def store(self) -> PackStore:
        """The storage layer, for flows and tools that read tables directly."""
        return self._store

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"Pack(name={self.name!r}, root={self.root!r}, {mode})"

    def configure(self, **changes: Any) -> PackSettings:
        """Store a new settings version with ``changes`` applied; unknown keys are refused."""
        self._store.require_writable("change settings")
        new = self._settings.replace(**changes)
        version = self._settings_version + 1
        self._store.write_meta(
            {
                "settings": new.to_dict(),
                "settings_version": version,
                f"settings@{version}": new.to_dict(),
            }
        )
        self._settings, self._settings_version = new, version
        self._tune_journal(new)
        return new

    def _tune_journal(self, s: PackSettings) -> None:
        """Hand the journal the settings it works by (at open and on every change)."""
        self._journal.buffer.flush_rows = s.log_flush_rows
        self._journal.buffer.flush_seconds = s.log_flush_seconds
        self._journal.compact_every = s.compact_every_commits
        self._journal.retention = timedelta(hours=s.version_retention_hours)
        self._journal.context.history = s.context_history

    # --- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> Pack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Flush everything buffered. A closed Pack loses nothing: a transient storage
        fault is retried with backoff (1, 2, 4, 8 s) before it is raised."""
        if self._closed:
            return
        self._journal.background.stop()
        if not self.read_only:
            for attempt in range(_CLOSE_RETRIES + 1):
                try:
                    self.flush()
                    break
                except TransientError:
                    if attempt == _CLOSE_RETRIES:
                        raise
                    time.sleep(2.0**attempt)
        self._closed = True
        _open_packs.discard(self)

    def flush(self) -> None:
        """Write buffered episodes, logs, reward events and learned state now."""
        self._journal.flush()

    def _context(self, vector: np.ndarray) -> Callable[[str, float], float] | None:
        """The query-conditioned utility lookup for this query, in contextual mode."""
        s = self._settings
        if s.utility_mode != "contextual":
            return None
        self._journal.load_context()
        index = self._journal.context
        return lambda memory_id, q: index.utility(
            memory_id, vector, q, s.context_theta, s.context_kappa, s.context_prior,
            s.context_kernel,
        )

    def _linked(self, vector: np.ndarray) -> list[str]:
        """Memories linked to this query by past rewards (``context_links`` at most)."""
        s = self._settings
        return self._journal.context.linked(
            vector, s.context_theta, s.context_kappa, s.context_links, s.context_kernel
        )

    # --- embedding -----------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self._embedder is None:
            self._embedder = default_embedder()
        # Every vector passes here, whatever the provider: a non-finite one is refused
        # before anything is buffered or written.
        return check_vectors(
            self._embedder.embed(texts), len(texts), self._embedding.dim, self._embedder
        )

    # --- write path ----------------------------------------------------------------------

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
    ) -> RememberResult:
        """Store an interaction as a memory, or merge it into a near-duplicate.

        A stored memory whose intent has cosine >= ``dedup_threshold`` with this one
        absorbs it: its ``merge_count`` grows and this intent joins its provenance.
        ``scope`` (a user or session) is stored as metadata; only recalls in that scope
        see the memory, and duplicates are looked for within the scope only.
        """
        self._store.require_writable("remember")
        limit = self._settings.max_text_chars
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
        intent_vec, response_vec = self._embed([intent, response])
        now = datetime.now(UTC)
        row = memory_row(
            intent, response, intent_vec, response_vec, outcome, polarity, meta, source, now
        )
        with self._journal.lock:
            if self._store.table(schemas.MEMORIES).count_rows(f"id = {sql_literal(row['id'])}"):
                return RememberResult(row["id"], "exists", 1.0)  # a retried call: no change
            nearest = self._nearest_memory(intent_vec, scope)
            if nearest is not None:
                similarity = 1.0 - float(nearest.pop("_distance"))
                if similarity >= self._settings.dedup_threshold:
                    merge = merge_row(nearest["id"], intent, response, outcome, meta, source,
                                      similarity, now)  # fmt: skip
                    self._absorb(merge, nearest["merge_count"] or 0)
                    return RememberResult(nearest["id"], "merged", similarity)
            self._store.merge(schemas.MEMORIES, self._memory_table([row]), "id")
            return RememberResult(row["id"], "created", None)

    def _absorb(self, row: dict[str, Any], counted: int) -> None:
        """Log a near-duplicate (a ``merges`` row) and count it, without rewriting the
        memory.

        The memory keeps its text and learned state; the merge's provenance is an
        append-only row (concurrent merges can't overwrite each other). ``merge_count``
        is then set to the number of logged merges, and only raised, never lowered: a
        writer that counted before another's merge can't undo it, and a re-run after a
        crash between the two writes repairs the count. ``counted`` is the count read
        with the nearest memory: counts only grow, so at or above the log it is current.
        """
        memory_id, now = row["memory_id"], row["at"]
        table = pa.Table.from_pylist([row], schema=schemas.MERGES_SCHEMA)
        self._store.ensure_table(schemas.MERGES, schemas.MERGES_SCHEMA)
        self._store.merge(schemas.MERGES, table, "merge_id")
        clause = f"memory_id = {sql_literal(memory_id)}"
        logged = int(self._store.table(schemas.MERGES).count_rows(clause))
        if counted < logged:
            full = schemas.memories_schema(self._embedding.dim)
            columns = {"id": [memory_id], "merge_count": [logged], "updated_at": [now]}
            count = pa.table(columns, schema=pa.schema([full.field(c) for c in columns]))
            self._store.merge(
                schemas.MEMORIES, count, "id",
                update="target.merge_count < source.merge_count", insert=False,
            )  # fmt: skip

    def _nearest_memory(self, vector: np.ndarray, scope: str | None) -> dict[str, Any] | None:
        clause = f"kind = {sql_literal(schemas.KIND_MEMORY)} AND {same_scope_clause(scope)}"
        hits = (
            vector_query(self._store.table(schemas.MEMORIES), vector)
            .where(clause, prefilter=True)
            .limit(1)
            .to_arrow()
            .to_pylist()
        )
        return hits[0] if hits else None

    def add_knowledge(self, chunks: Iterable[KnowledgeChunk | Mapping[str, Any]]) -> list[str]:
        """Add knowledge chunks; ids come from (source, position), so it is idempotent.

        Re-adding an unchanged chunk changes nothing. A chunk whose text changed at the
        same position gets the new text and embedding but keeps its learned state, so
        the stored utilities always equal the replay of the reward log.
        """
        self._store.require_writable("add knowledge")
        items = [self._check_chunk(c) for c in chunks]
        ids: list[str] = []
        for start in range(0, len(items), _KNOWLEDGE_BATCH):
            batch = items[start : start + _KNOWLEDGE_BATCH]
            vectors = self._embed([c.text for c in batch])
            now = datetime.now(UTC)
            rows = {}
            for chunk, vec in zip(batch, vectors, strict=True):
                row = knowledge_row(chunk, vec, now)
                rows[row["id"]] = row  # a repeated (source, position) keeps the last text
            table = self._memory_table(list(rows.values()))
            self._store.merge(schemas.MEMORIES, table, "id")  # new chunks only
            self._store.merge(
                schemas.MEMORIES,
                table.select(list(_CONTENT_COLUMNS)),
                "id",
                update="target.intent_text != source.intent_text",
                insert=False,
            )
            ids.extend(rows)
        return ids

    def _check_chunk(self, chunk: KnowledgeChunk | Mapping[str, Any]) -> KnowledgeChunk:
        if isinstance(chunk, Mapping):
            fields = dict(chunk)
            try:
                chunk = KnowledgeChunk(**fields)
            except TypeError as exc:
                raise InvalidInput(f"Bad knowledge chunk {fields!r}: {exc}") from exc
        if not isinstance(chunk, KnowledgeChunk):
            raise InvalidInput(f"Expected KnowledgeChunk or dict, got {type(chunk).__name__}.")
        text = check_text(chunk.text, "chunk text", self._settings.max_text_chars)
        source = check_text(chunk.source, "chunk source", 2_000)
        if isinstance(chunk.position, bool) or not isinstance(chunk.position, int):
            raise InvalidInput(f"chunk position must be an int, got {chunk.position!r}.")
        return KnowledgeChunk(
            text, source, chunk.position, chunk.title, check_seconds(chunk.start_s, "start_s"),
            check_seconds(chunk.end_s, "end_s"), check_metadata(chunk.metadata),
        )  # fmt: skip

    def _memory_table(self, rows: list[dict[str, Any]]) -> pa.Table:
        return pa.Table.from_pylist(rows, schema=self._schemas[schemas.MEMORIES])

    # --- read path -----------------------------------------------------------------------

    def recall(
        self,
        query: str,
        k: int | None = None,
        *,
        where: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        kind: str | None = None,
        scope: str | None = None,
    ) -> Recall:
        """Phase A (cosine top-k1 above δ) then Phase B (z-scored blend, top-k2), logged.

        ``k`` overrides k2. ``where`` filters columns (``source``, ``title``...),
        ``metadata`` filters on metadata keys, ``kind`` picks memories or knowledge.
        ``scope`` sees that scope's rows and the shared ones; without a scope only the
        shared rows are seen (``packs/scopes.py``).
        The returned ``episode_id`` is what :meth:`feedback` rewards.
        """
        if self.read_only:
            raise ReadOnlyPack(
                f"Pack {self.name!r} is open read-only and recall logs an episode; "
                "use search() to rank without logging."
            )
        return self._retrieve(query, k, where, metadata, kind, scope, log_episode=True)

    def search(
        self,
        query: str,
        k: int | None = None,
        *,
        where: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        kind: str | None = None,
        scope: str | None = None,
    ) -> Recall:
        """The same ranking as :meth:`recall`, with nothing logged (works read-only)."""
        return self._retrieve(query, k, where, metadata, kind, scope, log_episode=False)

    def _retrieve(
        self,
        query: str,
        k: int | None,
        where: Mapping[str, Any] | None,
        metadata: Mapping[str, Any] | None,
        kind: str | None,
        scope: str | None,
        *,
        log_episode: bool,
    ) -> Recall:
        text = check_text(query, "query", self._settings.max_text_chars)
        k2 = self._settings.k2 if k is None else k
        if isinstance(k2, bool) or not isinstance(k2, int) or k2 < 1:
            raise InvalidInput(f"k must be a positive int, got {k!r}.")
        k1 = max(self._settings.k1, k2)
        if kind not in (None, schemas.KIND_MEMORY, schemas.KIND_KNOWLEDGE):
            raise InvalidInput(f"kind must be 'memory', 'knowledge' or None, not {kind!r}.")
        clause = where_clause({**(where or {}), **({"kind": kind} if kind else {})}, metadata)
        visible = visible_clause(check_scope(scope))
        clause = visible if clause is None else f"{visible} AND ({clause})"
        vector = self._queries.embed(text, self._embed)
        with self._journal.lock:
            table = self._store.table(schemas.MEMORIES)
            context = self._context(vector)
            linked = self._linked(vector) if context is not None else []
            # a table pinned to a past version (an eval) is searched as checked out
            cache = None if self._store.pinned(schemas.MEMORIES) else self._vectors
            candidates = phase_a(table, vector, k1, clause, self._settings.delta, cache, linked)
            ranked = phase_b(candidates, self._journal.effective, self._settings, k2, context)
            episode_id = None
            if log_episode:
                episode_id = self._journal.log_episode(
                    text, vector, k1, k2, clause, candidates, ranked, self._settings_version
                )
                self._journal.maybe_flush()
        items = tuple(ranked.items)
        return Recall(episode_id, text, items, len(candidates), render_prompt(items))

    # --- reading rows --------------------------------------------------------------------

    def get(self, memory_id: str) -> dict[str, Any]:
        """One memory or knowledge row (learned columns include pending updates)."""
        if not isinstance(memory_id, str):
            raise InvalidInput(f"memory_id must be a str, got {type(memory_id).__name__}.")
        rows = (
            self._store.table(schemas.MEMORIES)
            .search()
            .where(f"id = {sql_literal(memory_id)}")
            .limit(1)
            .to_list()
        )
        if not rows:
            raise UnknownMemory(f"Pack {self.name!r} has no memory {memory_id!r}.")
        row = rows[0]
        if self._store.has_table(schemas.MERGES):
            merges = self._store.read_columns(
                schemas.MERGES, ["at", "source", "intent_text", "metadata_json"],
                f"memory_id = {sql_literal(memory_id)}",
            ).to_pylist()  # fmt: skip
            row["provenance"] = list(row["provenance"] or []) + sorted(
                merges, key=lambda m: m["at"]
            )
        state, uses = self._journal.buffer.effective(memory_id, learned_of(row))
        row.update(
            utility=state.utility,
            confidence=state.confidence,
            reward_count=state.reward_count,
            usage_count=row["usage_count"] + uses,
        )
        return row

    def query(
        self,
        table: str,
        where: Mapping[str, object] | None = None,
        columns: list[str] | None = None,
        limit: int | None = None,
        version: int | None = None,
    ) -> pl.DataFrame:
        """Filter a table (``memories``, ``knowledge``, ``episodes``, ``rewards``,
        ``traces``, ``evals``, ...) into a polars DataFrame; ``version`` reads the past.

        ``where`` maps columns to a value, a list (any of), or ``(op, value)`` with op in
        ``= != < <= > >=``. Values are escaped literals, columns must exist.
        """
        if not self.read_only:
            self.flush()
        return query_table(self._store, table, where, columns, limit, version)

    def versions(self, table: str) -> list[dict[str, Any]]:
        """Versions of a table, oldest first, for time travel with ``query(version=)``."""
        return versions(self._store, table)

    def count(self, table: str = schemas.MEMORIES, kind: str | None = None) -> int:
        """Rows in ``table`` (pending buffered rows included after a flush)."""
        clause = f"kind = {sql_literal(kind)}" if kind else None
        return int(self._store.table(table).count_rows(clause))
