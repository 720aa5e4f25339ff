"""Replaying logged episodes under other settings: what would the ranking have injected?

Each logged episode keeps its candidate pool (``retrieval_log``: similarity and BM25 of
every candidate). A replay ranks that pool again with :func:`packs.recall.scoring.score_pool`
(the arithmetic a recall uses) under candidate settings, with learned state rebuilt from
the rewards the evaluation allows, and scores the slate with the question's own evidence
(:class:`packs.learning.credit.QuestionCredit`). Two views:

- **New questions** (:func:`new_questions`): questions are split into folds; a held-out
  question's first rewarded episode is ranked with the rewards of the *other* questions
  only, as if it had never been asked. This measures what a reward does to questions it
  was not given for: the siblings and rewordings of the questions that earned it.
- **Played questions** (:func:`played_questions`): a question's last rewarded episode is
  ranked with every reward logged before it, its own earlier ones included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from packs.lazy import lazy_module
from packs.learning.context import ContextIndex, history_entry
from packs.learning.credit import QuestionCredit, Slate, prior_relevance
from packs.learning.ema import REVISION_SOURCE, LearnedState, RewardStep, fold
from packs.recall.candidates import Candidates
from packs.recall.phases import competing_links
from packs.recall.scoring import score_pool
from packs.settings import PackSettings
from packs.store import schemas
from packs.tuning.logs import TuningLog

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start

Successes = dict[int, float]  # question -> replayed success probability


@dataclass(frozen=True)
class Evidence:
    """Learned state from a subset of the log: the contextual index and each memory's
    global EMA state (its track record)."""

    index: ContextIndex
    states: dict[str, LearnedState]


class _Lookup:
    """The :class:`packs.recall.scoring.LearnedLookup` of a replay."""

    def __init__(self, evidence: Evidence, query: NDArray[np.floating], contextual: bool) -> None:
        self._evidence, self._query, self.contextual = evidence, query, contextual

    def learned(self, memory_id: str, stored: LearnedState) -> tuple[LearnedState, int]:
        return self._evidence.states.get(memory_id, stored), 0

    def assess(self, memory_id: str, global_q: float) -> tuple[float, float]:
        return self._evidence.index.assess(memory_id, self._query, global_q)


def credits(
    log: TuningLog, eps: float, since: Mapping[int, int] | None = None
) -> dict[int, QuestionCredit]:
    """Each rewarded question's credit posterior, from all its rewarded episodes (those
    from episode ``since[question]`` on, when given: the labels of a replay must not be
    the rewards its evidence was made of)."""
    events = log.rewards.filter(pl.col("source") != REVISION_SOURCE)
    if events.height == 0:
        return {}
    slates: dict[int, list[Slate]] = {}
    first: dict[int, bool] = {}
    for (episode,), group in events.group_by("episode", maintain_order=True):
        e = int(episode)
        rewards = dict(zip(group["memory_id"].to_list(), group["value"].to_list(), strict=True))
        memories = tuple(m for m in log.pools[e].injected if m in rewards) or tuple(rewards)
        slate = Slate(memories, tuple(float(rewards.get(m, 0.0)) for m in memories))
        q = int(log.question[e])
        first.setdefault(q, any(r > 0 for r in slate.rewards))
        if since is None or (q in since and e >= since[q]):
            slates.setdefault(q, []).append(slate)
    k2 = int(np.median([len(p.injected) for p in log.pools if p.injected] or [1]))
    p0 = prior_relevance(float(np.mean(list(first.values()))), k2)
    return {q: QuestionCredit(s, p0, eps) for q, s in slates.items()}


class EvidenceBuilder:
    """Learned state built from reward events, episode by episode (log order)."""

    def __init__(self, log: TuningLog, settings: PackSettings, dim: int) -> None:
        self._log = log
        self.index = ContextIndex(dim, settings.context)
        self.index.loaded = True
        self._states: dict[str, LearnedState] = {}

    def add(self, episode: int) -> None:
        """Add the reward events of ``episode``."""
        query = self._log.query[episode]
        for e in self._log.events.get(episode, ()):
            step = RewardStep(e.value, e.alpha, e.weight, e.confidence_rate)
            self._states[e.memory_id] = fold([step], self._states.get(e.memory_id))
            if e.source == REVISION_SOURCE:
                self.index.drop(e.memory_id)
            elif e.weight > 0:
                reward, weight = history_entry(e.value, e.weight, e.source, e.magnitude)
                intrinsic = e.source == "intrinsic"
                self.index.add(
                    e.memory_id, query, reward, weight, intrinsic=intrinsic, episode=str(episode)
                )

    @property
    def evidence(self) -> Evidence:
        return Evidence(self.index, self._states)


def evidence(log: TuningLog, settings: PackSettings, dim: int, keep: NDArray[np.bool_]) -> Evidence:
    """Learned state from the reward events of the episodes ``keep`` marks, in log order
    (:class:`EvidenceBuilder`, episode by episode: slate credit reads each question's
    slates in the order they were rewarded, as a handle fed from the log does)."""
    builder = EvidenceBuilder(log, settings, dim)
    for e in np.flatnonzero(keep & log.rewarded).tolist():
        builder.add(e)
    return builder.evidence


def slate_of(log: TuningLog, episode: int, settings: PackSettings, found: Evidence) -> list[str]:
    """The slate ``settings`` would have injected for ``episode`` (search: no exploration)."""
    pool = log.pools[episode]
    query = log.query[episode]
    k2 = max(1, len(pool.injected))
    r = settings.ranking
    contextual = settings.context.mode == "contextual"
    ids, kinds = list(pool.ids), list(pool.kinds)
    similarity, lexical = pool.similarity, pool.lexical
    links = competing_links(
        found.index.linked(query) if contextual else None, similarity, r.delta, k2
    )
    vectors = log.vectors([m for m in links if m not in set(ids)])
    extra = [m for m in links if m in vectors]
    if extra:
        ids += extra
        kinds += [schemas.KIND_KNOWLEDGE] * len(extra)
        similarity = np.concatenate([similarity, [float(vectors[m] @ query) for m in extra]])
        lexical = np.concatenate([lexical, np.zeros(len(extra))])
    if not ids:
        return []
    keys = np.array([links.get(m, -np.inf) for m in ids])
    ranked = np.maximum(similarity, keys) if links else None
    order = np.argsort(-lexical, kind="stable")
    rank = np.full(len(ids), -1, dtype=np.int64)
    positive = order[lexical[order] > 0]
    rank[positive] = np.arange(len(positive))
    n = len(ids)
    columns: dict[str, list[Any]] = {
        "id": ids,
        "kind": kinds,
        "utility": [0.0] * n,
        "confidence": [0.0] * n,
        "reward_count": [0] * n,
        "usage_count": [0] * n,
        "source": [None] * n,
        "source_position": [None] * n,
    }
    cand = Candidates(columns, similarity, ranked, rank, lexical)
    scored = score_pool(cand, _Lookup(found, query, contextual), r, k2)
    return [ids[i] for i in scored.ranking.order]


def first_episodes(log: TuningLog) -> dict[int, int]:
    """Each rewarded question's first rewarded episode."""
    out: dict[int, int] = {}
    for e in np.flatnonzero(log.rewarded):
        out.setdefault(int(log.question[e]), int(e))
    return out


def _by_rule(candidates: Sequence[PackSettings], *, assess: bool = True) -> dict[Any, list[int]]:
    """Candidates grouped by what an evidence build depends on: one build serves a group.
    A history never depends on the blend; with ``assess`` False the group spans settings
    that differ only in how the history is read (kernel, kappa, links), and each
    candidate reads the shared build under its own rule (``ContextIndex.tune``)."""
    groups: dict[Any, list[int]] = {}
    for i, settings in enumerate(candidates):
        c = settings.context
        key = c if assess else (c.mode, c.history, c.distinct_cos, c.hub_distinct_queries)
        groups.setdefault(key, []).append(i)
    return groups


def new_questions(
    log: TuningLog,
    candidates: Sequence[PackSettings],
    dim: int,
    credit: Mapping[int, QuestionCredit],
    folds: int = 5,
    seed: int = 0,
    questions: set[int] | None = None,
) -> list[Successes]:
    """Per candidate settings: each question's replayed success as a new question (of
    ``questions`` only, when given; folds are drawn over every rewarded question)."""
    first = first_episodes(log)
    every = np.array(sorted(q for q in first if q in credit), dtype=np.int64)
    fold_of = np.random.default_rng(seed).integers(0, folds, len(every))
    out: list[Successes] = [{} for _ in candidates]
    for f in range(folds):
        held = every[fold_of == f]
        keep = ~np.isin(log.question, held)
        if questions is not None:
            held = held[np.isin(held, list(questions))]
        if not len(held):
            continue
        for group in _by_rule(candidates, assess=False).values():
            found = evidence(log, candidates[group[0]], dim, keep)
            for i in group:
                found.index.use_rule(candidates[i].context)
                for q in held.tolist():
                    slate = slate_of(log, first[q], candidates[i], found)
                    out[i][q] = credit[q].success(slate)
    return out


def prediction_errors(
    log: TuningLog,
    candidates: Sequence[PackSettings],
    dim: int,
    questions: set[int] | None = None,
) -> list[Successes]:
    """Per candidate settings: for each question asked again, the mean squared error of
    ``U(m | q)``, learned from every reward logged before each of its later episodes, as
    a prediction of the rewards that episode's memories then got (a proper score of the
    estimate, Brier 1950; lower is better). It judges how much one reward should count:
    what the estimate predicts, not what a ranking would have shown, so no counterfactual
    slate is needed."""
    seen: set[int] = set()
    points: list[int] = []
    for e in np.flatnonzero(log.rewarded).tolist():
        q = int(log.question[e])
        if q in seen and (questions is None or q in questions):
            points.append(e)
        seen.add(q)
    out: list[Successes] = [{} for _ in candidates]
    for group in _by_rule(candidates).values():
        builder = EvidenceBuilder(log, candidates[group[0]], dim)
        errors: dict[int, list[float]] = {}
        added = 0
        for e in points:
            for earlier in range(added, e):
                builder.add(earlier)
            added = e
            found, query = builder.evidence, log.query[e]
            for event in log.events.get(e, ()):
                if event.source == REVISION_SOURCE or event.weight <= 0:
                    continue
                state = found.states.get(event.memory_id, LearnedState(0.0, 0.0, 0))
                u, _ = found.index.assess(event.memory_id, query, state.utility)
                errors.setdefault(int(log.question[e]), []).append((u - event.value) ** 2)
        for i in group:
            out[i] = {q: float(np.mean(v)) for q, v in errors.items()}
    return out
