"""Typed results of the Pack API (frozen dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl


@dataclass(frozen=True)
class KnowledgeChunk:
    """A piece of a document or media transcript, addressed by source and position."""

    text: str
    source: str
    position: int
    title: str | None = None
    start_s: float | None = None
    end_s: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RememberResult:
    """``status``: "created" (new row), "merged" (absorbed by a near-duplicate) or
    "exists" (the same intent and response were stored before: nothing changed)."""

    id: str
    status: str
    similarity: float | None  # to the memory it matched, when it matched one

    @property
    def merged(self) -> bool:
        return self.status == "merged"


@dataclass(frozen=True)
class RecalledItem:
    """One injected item with every part of its score.

    Two utilities, two names: ``utility`` is the memory's global track record (the EMA Q
    over every reward it got, what the prompt block's "Track record" shows);
    :attr:`ranked_utility` is the one Phase B ranked it by for this query, U(m | q) in
    contextual mode (docs/contextual.md).
    """

    id: str
    kind: str
    text: str
    lesson: str | None
    response: str | None
    similarity: float
    utility: float
    confidence: float
    score: float
    exploration_bonus: float
    usage_count: int
    reward_count: int
    polarity: str | None
    warning: bool
    contextual_utility: float | None = None  # U(m | query) that Phase B ranked by
    lexical: float = 0.0  # BM25 score in Phase A's lexical list (0: not in it)
    source: str | None = None
    title: str | None = None
    start_s: float | None = None
    end_s: float | None = None

    @property
    def ranked_utility(self) -> float:
        """The utility that ranked this item: U(m | q), or the global Q without it."""
        return self.utility if self.contextual_utility is None else self.contextual_utility


@dataclass(frozen=True)
class Recall:
    """What ``Pack.recall`` returns: the episode to reward later and the winners."""

    episode_id: str | None
    query: str
    items: tuple[RecalledItem, ...]
    candidate_count: int
    prompt: str

    @property
    def ids(self) -> list[str]:
        return [item.id for item in self.items]


@dataclass(frozen=True)
class FeedbackResult:
    episode_id: str
    applied: int  # memories whose utility moved
    duplicate: bool  # True when the idempotency key was seen before
    # each rewarded memory's new global Q (its track record); the next recall ranks by
    # U(m | q), which this reward moved for queries like the episode's (docs/contextual.md)
    utilities: dict[str, float]


@dataclass(frozen=True)
class VoteResult:
    winner: str | None  # the normalised majority answer; None on a tie (nobody rewarded)
    counts: dict[str, int]
    rewards: dict[str, FeedbackResult]  # per attempt (episode id)


@dataclass(frozen=True)
class ValidationResult:
    passed: bool | None  # None: the hook raised, hung or returned a non-bool
    flagged: bool  # True unless the output passed: don't ship it unchecked
    error: str | None
    reward: FeedbackResult | None


@dataclass(frozen=True)
class ResolveResult:
    episode_id: str
    intrinsic: float | None  # r_int before weighting; None when the store is too cold
    neighbours: int  # successful neighbours that qualified
    success_reward: FeedbackResult | None
    intrinsic_reward: FeedbackResult | None


@dataclass(frozen=True)
class RebuildReport:
    memories: int
    events: int
    changed: int
    max_utility_drift: float
    max_confidence_drift: float
    drift: pl.DataFrame  # id, utility (online), rebuilt_utility, confidence, rebuilt_confidence


@dataclass(frozen=True)
class ForgetReport:
    """What ``Pack.forget`` removed: the rows deleted from each table, the memories and
    knowledge chunks forgotten, and whether the older versions and files that still held
    them were purged too (docs/forgetting.md)."""

    removed: dict[str, int]
    memory_ids: tuple[str, ...]
    purged: bool

    @property
    def total(self) -> int:
        return sum(self.removed.values())

    def to_dict(self) -> dict[str, Any]:
        return {"removed": dict(self.removed), "memory_ids": list(self.memory_ids),
                "purged": self.purged}  # fmt: skip
