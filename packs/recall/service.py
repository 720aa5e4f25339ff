"""Recall and search for one open Pack: Phase A, Phase B, the episode log and the
prompt block (docs/recall.md)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from packs.embeddings.pack_embedder import PackEmbedder
from packs.errors import InvalidInput
from packs.journal.episodes import EpisodeLog
from packs.journal.flush import Flusher
from packs.learning.state import ContextRule, LearningState
from packs.recall.phases import phase_a, phase_b
from packs.recall.prompt import render_prompt
from packs.recall.scope_cache import ScopeCaches
from packs.recall.vector_cache import VectorCache
from packs.records import Recall
from packs.settings import ActiveSettings, PackSettings
from packs.store import schemas
from packs.store.filters import where_clause
from packs.store.gateway import PackStore
from packs.store.scopes import check_scope, visible_clause
from packs.validation import check_text

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
    ) -> None:
        self._store = store
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

    def retrieve(
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
        """Phase A then Phase B; with ``log_episode`` the episode is buffered."""
        s = self._settings.value
        text = check_text(query, "query", s.max_text_chars)
        k2 = s.k2 if k is None else k
        if isinstance(k2, bool) or not isinstance(k2, int) or k2 < 1:
            raise InvalidInput(f"k must be a positive int, got {k!r}.")
        k1 = max(s.k1, k2)
        if kind not in _KINDS:
            raise InvalidInput(f"kind must be 'memory', 'knowledge' or None, not {kind!r}.")
        clause = where_clause({**(where or {}), **({"kind": kind} if kind else {})}, metadata)
        visible = visible_clause(check_scope(scope))
        clause = visible if clause is None else f"{visible} AND ({clause})"
        vector = self._embedder.embed_query(text)
        with self._lock:
            learned = self._learning.view(vector, _context_rule(s), self._flusher.flush)
            # a table pinned to a past version (an eval) is searched as checked out
            cache = None if self._store.pinned(schemas.MEMORIES) else self.vectors
            words = text if s.lexical != "off" else None
            candidates = phase_a(
                self._store,
                vector,
                k1,
                clause,
                s.delta,
                cache,
                learned.links(),
                k2,
                words,
                text,
                s.spread_hops if s.spread > 0 else 0,
                visible,
                self.scopes,
            )
            explore = self._explore(s.explore_seed) if log_episode else None  # search never
            ranked = phase_b(candidates, learned, s, k2, explore)
            episode_id = None
            if log_episode:
                episode_id = self._episodes.log(
                    text, vector, k1, k2, clause, candidates.ids, ranked.items,
                    ranked.log_rows, self._settings.version,
                )  # fmt: skip
                self._flusher.maybe_flush()
        items = tuple(ranked.items)
        return Recall(episode_id, text, items, len(candidates), render_prompt(items))

    def _explore(self, seed: int) -> np.random.Generator:
        """This handle's generator for recall's Thompson draws, seeded by the setting."""
        if self._rng is None or self._rng_seed != seed:
            self._rng, self._rng_seed = np.random.default_rng(seed), seed
        return self._rng


@dataclass(frozen=True)
class _Rule:
    theta: float
    kappa: float
    prior: str
    kernel: str
    links: int
    link_margin: float


def _context_rule(s: PackSettings) -> ContextRule | None:
    """The contextual utility's rule, or None in global mode (plain MemRL)."""
    if s.utility_mode != "contextual":
        return None
    return _Rule(s.context_theta, s.context_kappa, s.context_prior, s.context_kernel,
                 s.context_links, s.link_margin)  # fmt: skip
