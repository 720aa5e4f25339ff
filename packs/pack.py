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
import itertools
import logging
import os
import socket
import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from packs import schemas
from packs.buffer import PendingMemory, WriteBuffer
from packs.embeddings import EmbeddingInfo, EmbeddingProvider, default_embedder
from packs.embeddings.onnx_minilm import OnnxMiniLM
from packs.errors import (
    InvalidInput,
    PackNotFound,
    ReadOnlyPack,
    SchemaVersionError,
    UnknownEpisode,
    UnknownMemory,
)
from packs.filters import in_clause, sql_literal, where_clause
from packs.prompt import render_prompt
from packs.ranking import RankWeights, rerank, similarity_from_distance
from packs.records import (
    FeedbackResult,
    KnowledgeChunk,
    Recall,
    RecalledItem,
    RememberResult,
)
from packs.rewards import DEFAULT_CONFIDENCE_RATE, LearnedState, RewardStep, fold
from packs.rows import knowledge_row, memory_row, merged_row, stable_hash
from packs.settings import PackSettings
from packs.storage import PackStore, locate
from packs.validation import check_metadata, check_text, check_unit_interval

log = logging.getLogger(__name__)

_CANDIDATE_COLUMNS = [
    "id", "kind", "intent_text", "response_summary", "experience_summary", "utility",
    "confidence", "usage_count", "reward_count", "signal_polarity", "source", "title",
    "start_s", "end_s", "_distance",
]  # fmt: skip
_LEARNED_COLUMNS = ["id", "utility", "confidence", "usage_count", "reward_count", "signal_polarity"]
_KNOWLEDGE_BATCH = 2048  # rows per commit when adding knowledge
_EPISODE_CACHE = 10_000  # recent episodes kept in memory for feedback lookups
_POLARITIES = (None, "success", "failure")

_open_packs: weakref.WeakSet[Pack] = weakref.WeakSet()


@atexit.register
def _close_open_packs() -> None:
    """A clean interpreter exit loses nothing: flush every Pack still open."""
    for pack in list(_open_packs):
        try:
            pack.close()
        except Exception:  # noqa: BLE001 - exit boundary: report and go on with the rest
            log.exception("Flushing Pack %r at exit failed", pack.name)


class Pack:
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
        self._buffer = WriteBuffer(settings.log_flush_rows, settings.log_flush_seconds)
        self._episodes: OrderedDict[str, list[str]] = OrderedDict()
        self._seen_keys: set[str] = set()
        self._commits: dict[str, int] = {}
        self._lock = threading.RLock()
        self._writer = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._seq = itertools.count()
        self._closed = False
        if not store.read_only:
            _open_packs.add(self)

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
            {"settings": new.to_dict(), "settings_version": version, f"settings@{version}": new.to_dict()}
        )
        self._settings, self._settings_version = new, version
        self._buffer.flush_rows = new.log_flush_rows
        self._buffer.flush_seconds = new.log_flush_seconds
        return new

    # --- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> Pack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Flush everything buffered. A closed Pack loses nothing."""
        if self._closed:
            return
        if not self.read_only:
            self.flush()
        self._closed = True
        _open_packs.discard(self)

    def flush(self) -> None:
        """Write buffered episodes, retrieval logs, reward events and learned state now.

        Order matters for crash safety: the reward log is written before the utilities it
        explains, so a crash between the two leaves utilities that ``rebuild_utilities``
        restores from the log. Whatever a failed write had not stored is kept for the
        next flush.
        """
        with self._lock:
            if self._buffer.empty():
                return
            tables, memories = self._buffer.drain(self._schemas)
            try:
                self._write_logs(tables)
                if memories:
                    self._write_learned(memories)
                    memories = {}
            except BaseException:
                self._buffer.restore(tables, memories)
                raise
            self._compact_due_tables()

    def _write_logs(self, tables: dict[str, pa.Table]) -> None:
        """Write each pending log table; remove it from ``tables`` once stored."""
        keys = {schemas.EPISODES: "id", schemas.REWARD_EVENTS: "event_id"}
        for name in (schemas.EPISODES, schemas.RETRIEVAL_LOG, schemas.REWARD_EVENTS):
            if name not in tables:
                continue
            if name in keys:  # idempotent: a retried flush can't duplicate them
                self._store.merge(name, tables[name], keys[name])
            else:
                self._store.append(name, tables[name])
            del tables[name]
            self._commits[name] = self._commits.get(name, 0) + 1

    def _write_learned(self, memories: dict[str, PendingMemory]) -> None:
        """Apply pending uses and reward steps on top of the stored values, in one commit."""
        stored = self._stored_learned(list(memories))
        now = datetime.now(UTC)
        rows = []
        for memory_id, pending in memories.items():
            if memory_id not in stored:
                log.warning("Memory %s vanished before its learned state was written", memory_id)
                continue
            row = stored[memory_id]
            state = fold(pending.steps, _learned(row), row["signal_polarity"])
            rows.append(
                {
                    "id": memory_id,
                    "utility": state.utility,
                    "confidence": state.confidence,
                    "reward_count": state.reward_count,
                    "usage_count": int(row["usage_count"]) + pending.uses,
                    "updated_at": now,
                    "last_used_at": pending.last_used_at or row.get("last_used_at"),
                }
            )
        if rows:
            schema = pa.schema([self._schemas[schemas.MEMORIES].field(c) for c in rows[0]])
            table = pa.Table.from_pylist(rows, schema=schema)
            self._store.merge(schemas.MEMORIES, table, "id", update=True, insert=False)
            self._commits[schemas.MEMORIES] = self._commits.get(schemas.MEMORIES, 0) + 1

    def _compact_due_tables(self) -> None:
        for name, count in list(self._commits.items()):
            if count < self._settings.compact_every_commits:
                continue
            try:
                self._store.compact(name)
                self._commits[name] = 0
            except (OSError, RuntimeError) as exc:  # a concurrent commit: try next time
                log.warning("Compaction of %s in Pack %r deferred: %s", name, self.name, exc)

    def _maybe_flush(self) -> None:
        if self._buffer.due():
            self.flush()

    # --- embedding -----------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self._embedder is None:
            self._embedder = default_embedder()
        vectors = self._embedder.embed(texts)
        if vectors.shape[1] != self._embedding.dim:
            raise InvalidInput(
                f"Embedder returned {vectors.shape[1]}-d vectors; Pack {self.name!r} stores "
                f"{self._embedding.dim}-d vectors."
            )
        return vectors

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
    ) -> RememberResult:
        """Store an interaction as a memory, or merge it into a near-duplicate.

        A stored memory whose intent has cosine >= ``dedup_threshold`` with this one
        absorbs it: its ``merge_count`` grows and this intent joins its provenance.
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
        source = check_text(source, "source", 2_000)
        intent_vec, response_vec = self._embed([intent, response])
        now = datetime.now(UTC)
        with self._lock:
            nearest = self._nearest_memory(intent_vec)
            if nearest is not None:
                similarity = 1.0 - float(nearest.pop("_distance"))
                if similarity >= self._settings.dedup_threshold:
                    row = merged_row(nearest, intent, outcome, meta, source, now)
                    self._store.merge(schemas.MEMORIES, self._memory_table([row]), "id", update=True)
                    return RememberResult(row["id"], merged=True, similarity=similarity)
            row = memory_row(
                intent, response, intent_vec, response_vec, outcome, polarity, meta, source, now
            )
            self._store.merge(schemas.MEMORIES, self._memory_table([row]), "id")
            return RememberResult(row["id"], merged=False, similarity=None)

    def _nearest_memory(self, vector: np.ndarray) -> dict[str, Any] | None:
        hits = (
            self._store.table(schemas.MEMORIES)
            .search(vector, vector_column_name="intent_embedding")
            .distance_type("cosine")
            .where(f"kind = {sql_literal(schemas.KIND_MEMORY)}", prefilter=True)
            .limit(1)
            .to_arrow()
            .to_pylist()
        )
        return hits[0] if hits else None

    def add_knowledge(self, chunks: Iterable[KnowledgeChunk | Mapping[str, Any]]) -> list[str]:
        """Add knowledge chunks; ids come from (source, position), so it is idempotent.

        Re-adding an unchanged chunk changes nothing (its learned utility is kept). A
        chunk whose text changed at the same position replaces the row, and its learned
        state starts again, since the evidence was about other text.
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
            self._store.merge(
                schemas.MEMORIES,
                self._memory_table(list(rows.values())),
                "id",
                update="target.intent_text != source.intent_text",
            )
            ids.extend(rows)
        return ids

    def _check_chunk(self, chunk: KnowledgeChunk | Mapping[str, Any]) -> KnowledgeChunk:
        if isinstance(chunk, Mapping):
            try:
                chunk = KnowledgeChunk(**chunk)
            except TypeError as exc:
                raise InvalidInput(f"Bad knowledge chunk {dict(chunk)!r}: {exc}") from exc
        if not isinstance(chunk, KnowledgeChunk):
            raise InvalidInput(f"Expected KnowledgeChunk or dict, got {type(chunk).__name__}.")
        text = check_text(chunk.text, "chunk text", self._settings.max_text_chars)
        source = check_text(chunk.source, "chunk source", 2_000)
        if isinstance(chunk.position, bool) or not isinstance(chunk.position, int):
            raise InvalidInput(f"chunk position must be an int, got {chunk.position!r}.")
        return KnowledgeChunk(
            text, source, chunk.position, chunk.title, chunk.start_s, chunk.end_s,
            check_metadata(chunk.metadata),
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
    ) -> Recall:
        """Phase A (cosine top-k1 above δ) then Phase B (z-scored blend, top-k2), logged.

        ``k`` overrides k2. ``where`` filters columns (``source``, ``title``...),
        ``metadata`` filters on metadata keys, ``kind`` picks memories or knowledge.
        The returned ``episode_id`` is what :meth:`feedback` rewards.
        """
        if self.read_only:
            raise ReadOnlyPack(
                f"Pack {self.name!r} is open read-only and recall logs an episode; "
                "use search() to rank without logging."
            )
        return self._retrieve(query, k, where, metadata, kind, log_episode=True)

    def search(
        self,
        query: str,
        k: int | None = None,
        *,
        where: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        kind: str | None = None,
    ) -> Recall:
        """The same ranking as :meth:`recall`, with nothing logged (works read-only)."""
        return self._retrieve(query, k, where, metadata, kind, log_episode=False)

    def _retrieve(
        self,
        query: str,
        k: int | None,
        where: Mapping[str, Any] | None,
        metadata: Mapping[str, Any] | None,
        kind: str | None,
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
        vector = self._embed([text])[0]
        with self._lock:
            candidates = self._phase_a(vector, k1, clause)
            items, rows = self._phase_b(candidates, k2)
            episode_id = None
            if log_episode:
                episode_id = self._log_episode(text, vector, k1, k2, clause, candidates, rows)
                self._maybe_flush()
        return Recall(episode_id, text, tuple(items), len(candidates["id"]), render_prompt(items))

    def _phase_a(self, vector: np.ndarray, k1: int, clause: str | None) -> dict[str, Any]:
        query = (
            self._store.table(schemas.MEMORIES)
            .search(vector, vector_column_name="intent_embedding")
            .distance_type("cosine")
            .select(_CANDIDATE_COLUMNS)
            .limit(k1)
        )
        if clause:
            query = query.where(clause, prefilter=True)
        hits = query.to_arrow()
        similarity = similarity_from_distance(hits["_distance"].to_numpy())
        keep = np.flatnonzero(similarity >= self._settings.delta)
        columns = {name: hits[name].to_pylist() for name in _CANDIDATE_COLUMNS[:-1]}
        candidates = {name: [values[i] for i in keep] for name, values in columns.items()}
        candidates["similarity"] = similarity[keep]
        return candidates

    def _phase_b(
        self, cand: dict[str, Any], k2: int
    ) -> tuple[list[RecalledItem], list[dict[str, Any]]]:
        n = len(cand["id"])
        utility, confidence = np.zeros(n), np.zeros(n)
        uses, rewards = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        for i, memory_id in enumerate(cand["id"]):
            stored = LearnedState(
                cand["utility"][i], cand["confidence"][i], cand["reward_count"][i]
            )
            state, pending_uses = self._buffer.effective(
                memory_id, stored, cand["signal_polarity"][i]
            )
            utility[i], confidence[i] = state.utility, state.confidence
            rewards[i] = state.reward_count
            uses[i] = cand["usage_count"][i] + pending_uses
        eligible = np.array([kd == schemas.KIND_KNOWLEDGE for kd in cand["kind"]], dtype=bool)
        s = self._settings
        ranking = rerank(
            cand["similarity"], utility, confidence, uses, eligible & (rewards == 0),
            RankWeights(s.lam, s.w_confidence, s.explore_bonus, s.z_floor_similarity,
                        s.z_floor_utility, s.z_floor_confidence, s.z_clip),
            k2,
        )  # fmt: skip
        final_rank = {int(i): r for r, i in enumerate(ranking.order)}
        items = []
        for i in ranking.order:
            polarity = cand["signal_polarity"][i]
            items.append(
                RecalledItem(
                    id=cand["id"][i],
                    kind=cand["kind"][i],
                    text=cand["intent_text"][i],
                    lesson=cand["experience_summary"][i],
                    response=cand["response_summary"][i],
                    similarity=float(cand["similarity"][i]),
                    utility=float(utility[i]),
                    confidence=float(confidence[i]),
                    score=float(ranking.score[i]),
                    exploration_bonus=float(ranking.bonus[i]),
                    usage_count=int(uses[i]),
                    reward_count=int(rewards[i]),
                    polarity=polarity,
                    warning=polarity == "failure"
                    or (rewards[i] > 0 and utility[i] <= s.failure_utility),
                    source=cand["source"][i],
                    title=cand["title"][i],
                    start_s=cand["start_s"][i],
                    end_s=cand["end_s"][i],
                )
            )
        rows = [
            {
                "item_id": cand["id"][i],
                "kind": cand["kind"][i],
                "phase_a_rank": i,
                "similarity": float(cand["similarity"][i]),
                "utility": float(utility[i]),
                "confidence": float(confidence[i]),
                "z_similarity": float(ranking.z_similarity[i]),
                "z_utility": float(ranking.z_utility[i]),
                "z_confidence": float(ranking.z_confidence[i]),
                "bonus": float(ranking.bonus[i]),
                "score": float(ranking.score[i]),
                "injected": i in final_rank,
                "final_rank": final_rank.get(i),
            }
            for i in range(n)
        ]
        return items, rows

    def _log_episode(
        self,
        text: str,
        vector: np.ndarray,
        k1: int,
        k2: int,
        clause: str | None,
        candidates: dict[str, Any],
        rows: list[dict[str, Any]],
    ) -> str:
        episode_id = "ep_" + uuid.uuid4().hex
        now = datetime.now(UTC)
        injected = [r["item_id"] for r in sorted(rows, key=lambda r: r["final_rank"] or 0) if r["injected"]]
        self._buffer.add_rows(
            schemas.EPISODES,
            [
                {
                    "id": episode_id,
                    "created_at": now,
                    "query_text": text,
                    "query_embedding": vector,
                    "k1": k1,
                    "k2": k2,
                    "filter_json": clause,
                    "candidate_ids": list(candidates["id"]),
                    "injected_ids": injected,
                    "settings_version": self._settings_version,
                }
            ],
        )
        self._buffer.add_rows(
            schemas.RETRIEVAL_LOG,
            [{**r, "episode_id": episode_id, "created_at": now} for r in rows],
        )
        for memory_id in injected:
            self._buffer.add_use(memory_id, now)
        self._remember_episode(episode_id, injected)
        return episode_id

    def _remember_episode(self, episode_id: str, injected: list[str]) -> None:
        self._episodes[episode_id] = injected
        while len(self._episodes) > _EPISODE_CACHE:
            self._episodes.popitem(last=False)

    # --- rewards -------------------------------------------------------------------------

    def feedback(
        self, episode_id: str, rating: float, *, idempotency_key: str | None = None
    ) -> FeedbackResult:
        """Reward every memory injected in ``episode_id`` with ``rating`` in [-1, 1].

        Each memory's utility moves by EMA, ``Q <- Q + alpha (r - Q)``, and a reward
        event is appended per memory. With the same ``idempotency_key`` a redelivered
        reward is applied once.
        """
        value = check_unit_interval(rating, "rating")
        return self.apply_reward(
            episode_id, value, source="explicit", signal="rating", magnitude=value,
            idempotency_key=idempotency_key,
        )  # fmt: skip

    def apply_reward(
        self,
        episode_id: str,
        value: float,
        *,
        source: str,
        signal: str,
        magnitude: float | None = None,
        weight: float = 1.0,
        idempotency_key: str | None = None,
        memory_ids: list[str] | None = None,
    ) -> FeedbackResult:
        """Append one typed reward event per memory and move their utilities.

        ``value`` must already be in [-1, 1]; ``weight`` in [0, 1] scales the step.
        ``memory_ids`` defaults to every memory injected in the episode.
        """
        self._store.require_writable("record a reward")
        value = check_unit_interval(value, "reward value")
        weight = check_unit_interval(weight, "reward weight", 0.0, 1.0)
        if not isinstance(episode_id, str):
            raise InvalidInput(f"episode_id must be a str, got {type(episode_id).__name__}.")
        key = idempotency_key or uuid.uuid4().hex
        if idempotency_key is not None:
            check_text(idempotency_key, "idempotency_key", 512)
        with self._lock:
            injected = self._injected_ids(episode_id)
            targets = injected if memory_ids is None else list(memory_ids)
            unknown = sorted(set(targets) - set(injected))
            if unknown:
                raise UnknownMemory(
                    f"Memories {unknown} were not injected in episode {episode_id!r}; "
                    "rewards go only to what the episode used."
                )
            if idempotency_key is not None and self._key_seen(key):
                return FeedbackResult(episode_id, 0, True, {})
            states = self._learned_states(targets)
            now = datetime.now(UTC)
            rows, utilities = [], {}
            for memory_id in targets:
                before, polarity = states[memory_id]
                step = RewardStep(value, self._settings.alpha, weight, DEFAULT_CONFIDENCE_RATE)
                after = fold([step], before, polarity)
                self._buffer.add_step(memory_id, step)
                utilities[memory_id] = after.utility
                rows.append(
                    {
                        "event_id": "rw_" + stable_hash(key, memory_id),
                        "idempotency_key": key,
                        "episode_id": episode_id,
                        "memory_id": memory_id,
                        "source": source,
                        "signal": signal,
                        "magnitude": magnitude,
                        "value": value,
                        "weight": weight,
                        "alpha": step.alpha,
                        "confidence_rate": step.confidence_rate,
                        "q_before": before.utility,
                        "q_after": after.utility,
                        "created_at": now,
                        "writer": self._writer,
                        "seq": next(self._seq),
                    }
                )
            self._buffer.add_rows(schemas.REWARD_EVENTS, rows)
            self._seen_keys.add(key)
            self._maybe_flush()
        return FeedbackResult(episode_id, len(rows), False, utilities)

    def _injected_ids(self, episode_id: str) -> list[str]:
        if episode_id in self._episodes:
            return self._episodes[episode_id]
        hits = (
            self._store.table(schemas.EPISODES)
            .search()
            .where(f"id = {sql_literal(episode_id)}")
            .select(["injected_ids"])
            .limit(1)
            .to_list()
        )
        if not hits:
            raise UnknownEpisode(
                f"Pack {self.name!r} has no episode {episode_id!r}; pass the episode_id "
                "that recall() returned."
            )
        injected = list(hits[0]["injected_ids"] or [])
        self._remember_episode(episode_id, injected)
        return injected

    def _key_seen(self, key: str) -> bool:
        if key in self._seen_keys:
            return True
        clause = f"idempotency_key = {sql_literal(key)}"
        return self._store.table(schemas.REWARD_EVENTS).count_rows(clause) > 0

    def _stored_learned(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        rows = (
            self._store.table(schemas.MEMORIES)
            .search()
            .where(in_clause("id", ids))
            .select([*_LEARNED_COLUMNS, "last_used_at"])
            .limit(len(ids))
            .to_list()
        )
        return {row["id"]: row for row in rows}

    def _learned_states(self, ids: list[str]) -> dict[str, tuple[LearnedState, str | None]]:
        """Current learned state of ``ids``: stored values plus pending steps."""
        stored = self._stored_learned(ids)
        out = {}
        for memory_id in ids:
            row = stored.get(memory_id)
            if row is None:
                raise UnknownMemory(f"Pack {self.name!r} has no memory {memory_id!r}.")
            state, _ = self._buffer.effective(memory_id, _learned(row), row["signal_polarity"])
            out[memory_id] = (state, row["signal_polarity"])
        return out

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
        state, uses = self._buffer.effective(memory_id, _learned(row), row["signal_polarity"])
        row.update(
            utility=state.utility,
            confidence=state.confidence,
            reward_count=state.reward_count,
            usage_count=row["usage_count"] + uses,
        )
        return row

    def count(self, table: str = schemas.MEMORIES, kind: str | None = None) -> int:
        """Rows in ``table`` (pending buffered rows included after a flush)."""
        clause = f"kind = {sql_literal(kind)}" if kind else None
        return int(self._store.table(table).count_rows(clause))


def _learned(row: Mapping[str, Any]) -> LearnedState:
    return LearnedState(float(row["utility"]), float(row["confidence"]), int(row["reward_count"]))
