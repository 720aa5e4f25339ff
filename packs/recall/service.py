"""Recall and search for one open Pack: Phase A, Phase B, the episode log and the
prompt block (docs/recall.md)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from packs.embeddings.pack_embedder import PackEmbedder
from packs.errors import InvalidInput, ReadOnlyPack
from packs.events import EngineEvents
from packs.journal.episodes import EpisodeLog
from packs.journal.flush import Flusher
from packs.journal.forgotten import ForgetWatch
from packs.learning.state import LearningState
from packs.recall.cache_sync import CatchUp
from packs.recall.candidates import RecallQuery
from packs.recall.evidence import past_questions
from packs.recall.explain import Evidence, explained
from packs.recall.phases import phase_a, phase_b
from packs.recall.prompt import render_prompt
from packs.recall.scope_cache import ScopeCaches
from packs.recall.vector_cache import VectorCache
from packs.records import Recall, RecalledItem
from packs.settings import ActiveSettings
from packs.store import schemas
from packs.store.filters import where_clause
from packs.store.gateway import PackStore
from packs.store.lesson_scopes import scope_lessons
from packs.store.lifecycle import advice_clause, expiry_clock
from packs.store.scopes import check_scope, visible_clause
from packs.validation import check_k, check_text

_KINDS = (None, schemas.KIND_MEMORY, schemas.KIND_KNOWLEDGE)


class RecallService:
    """Ranks a Pack's rows for a query and, for a recall, logs the episode."""

    def __init__(
        self,
        store: PackStore,
        settings: ActiveSettings,
        embedder: PackEmbedder,
        learning: LearningState,
        episodes: EpisodeLog,
        flusher: Flusher,
        lock: threading.RLock,
        forgets: ForgetWatch,
        events: EngineEvents,
    ) -> None:
        self._store = store
        self._forgets = forgets
        self._settings = settings
        self._embedder = embedder
        self._learning = learning
        self._episodes = episodes
        self._flusher = flusher
        self._lock = lock
        self.vectors = VectorCache(embedder.info.dim)  # Phase A's exact scan (docs/recall.md)
        self.scopes = ScopeCaches(embedder.info.dim)  # a scope's rows when that is too large
        self._rng: np.random.Generator | None = None
        self._rng_seed: int | None = None
        self._landed: tuple[CatchUp | None] | None = None  # set by the flush thread
        # This handle's flushes (packs/events.py): the cache holds while one writes and
        # catches up after it, off the query path (packs/recall/cache_sync.py).
        events.flush_writing.connect(self.hold)
        events.flush_landed.connect(self.landed)
        events.flush_failed.connect(self.failed)

    def retrieve(
        self,
        query: str,
        k: int | None,
        *,
        log_episode: bool,
        where: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        kind: str | None = None,
        scope: str | None = None,
        explore: bool = True,
        explain: bool = False,
    ) -> Recall:
        """Phase A then Phase B; with ``log_episode`` the episode is buffered. ``explore``
        False opts a recall out of exploration (a search never explores); with
        ``explain`` each item says why it ranked there (packs/recall/explain.py)."""
        if log_episode and self._store.read_only:
            raise ReadOnlyPack(
                f"Pack {self._store.location.name!r} is open read-only and recall logs an "
                "episode; use search() to rank without logging."
            )
        s = self._settings.value
        text = check_text(query, "query", s.max_text_chars)
        r = s.ranking
        k2 = check_k(k) or r.k2
        k1 = max(r.k1, k2)
        if not isinstance(explain, bool):
            raise InvalidInput(f"explain must be true or false, not {explain!r}.")
        if kind not in _KINDS:
            raise InvalidInput(f"kind must be 'memory', 'knowledge' or None, not {kind!r}.")
        clause = where_clause({**(where or {}), **({"kind": kind} if kind else {})}, metadata)
        visible = visible_clause(check_scope(scope))
        now = expiry_clock(self._store)  # None: a Pack without expiry (packs/store/lifecycle.py)
        clause = visible if clause is None else f"{visible} AND ({clause})"
        # a superseded memory is history, one on probation waits for its confirmation
        clause = f"{clause} AND {advice_clause(self._store)}"
        vector = self._embedder.embed_query(text)
        with self._lock:
            self._bring_in()  # what this handle's flush wrote, read off the query path
            self._forgets.poll()  # other handles' forgets leave this handle's memory
            if self._learning.loads_next():  # the index loads from the log: flush ours first
                self._flusher.flush()
            learned = self._learning.view(vector)
            # a table pinned to a past version (an eval) is searched as checked out
            cache = None if self._store.pinned(schemas.MEMORIES) else self.vectors
            question = RecallQuery(
                vector,
                k1,
                r.delta,
                clause,
                k2,
                text,
                lexical=r.lexical != "off",
                links=learned.links() or {},
                hops=r.spread_hops if r.spread > 0 else 0,
                now=now,
                visible=visible,
            )
            candidates = phase_a(self._store, question, cache, self.scopes)
            rng = self._explore(r.explore_seed) if log_episode else None  # search never
            cold = self._learning.context.slates.questions < r.explore_cold_questions
            share = r.explore_share if rng is not None and cold and explore else 0.0
            ranked = phase_b(candidates, learned, r, k2, rng, share)
            if explain:
                why = self._why(vector)
                ranked = explained(ranked, candidates, learned, r, rng is not None, why)
            episode_id = None
            if log_episode:
                episode_id = self._episodes.log(
                    text,
                    vector,
                    k1,
                    k2,
                    clause,
                    candidates.ids,
                    ranked.injected,
                    ranked.log_rows,
                    self._settings.version,
                )
                self._flusher.maybe_flush()
        items = with_scope_lessons(self._store, scope, ranked.items)
        prompt = render_prompt(items)
        return Recall(episode_id, text, items, len(candidates), prompt, ranked.explored)

    def _why(self, vector: np.ndarray) -> Callable[[list[str]], Evidence]:
        """The past questions behind memories' ``U(m|q)`` (packs/recall/evidence.py)."""
        context = self._learning.context
        log = self._episodes
        return lambda ids: past_questions(log.logged, log.asked, ids, vector, context)

    # --- the cache and this handle's flush (packs/journal/flush.py, packs/events.py) ---

    def hold(self) -> None:
        """A flush of this handle starts writing: searches use the cache as it is."""
        self.vectors.hold = True

    def prepare(self) -> CatchUp | None:
        """The flush wrote: read what it changed, without the handle's lock."""
        if self._store.pinned(schemas.MEMORIES):
            return None
        return self.vectors.prepare(self._store, schemas.MEMORIES)

    def landed(self) -> None:
        """This handle's flush landed (``flush_landed``, on the flushing thread)."""
        self.ready(self.prepare())

    def failed(self) -> None:
        """This handle's flush failed (``flush_failed``): searches catch up as before."""
        self.ready(None)

    def ready(self, prepared: object) -> None:
        """The flush landed (or failed): the next recall brings in what :meth:`prepare`
        read, under its lock, and lets searches sync again. No lock here: the flush
        thread must never wait for the handle's lock (packs/journal/flush.py)."""
        self._landed = (prepared if isinstance(prepared, CatchUp) else None,)

    def _bring_in(self) -> None:
        """Under the lock, before a search: what this handle's last flush wrote."""
        landed, self._landed = self._landed, None
        if landed is not None:
            if landed[0] is not None:
                self.vectors.apply(landed[0], self._store)
            self.vectors.hold = False

    def _explore(self, seed: int) -> np.random.Generator:
        """This handle's generator for recall's Thompson draws, seeded by the setting."""
        if self._rng is None or self._rng_seed != seed:
            self._rng, self._rng_seed = np.random.default_rng(seed), seed
        return self._rng


def with_scope_lessons(
    store: PackStore, scope: str | None, items: Sequence[RecalledItem]
) -> tuple[RecalledItem, ...]:
    """``items``, each shared memory with ``scope``'s own lesson of it where that scope
    wrote one (packs/store/lesson_scopes.py): a scope's lesson is shown to it alone."""
    mine = scope_lessons(store, scope, [i.id for i in items if i.kind == schemas.KIND_MEMORY])
    return tuple(
        dataclasses.replace(i, lesson=mine[i.id]["lesson"], lesson_by="scope")
        if i.id in mine
        else i
        for i in items
    )
