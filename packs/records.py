"""Typed results of the Pack API (frozen dataclasses), the one vocabulary of every door.

The engine returns these; the CLI's ``--json`` and the MCP server serialise them with
``to_dict()`` (JSON-safe: no NaN, datetimes as ISO strings), so a field has one name and one
meaning wherever a user meets it.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from packs.lazy import lazy_module

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")  # loaded on first use: issue 45's cold start


OMIT_NONE = "omit_none"  # a field's metadata: left out of the JSON while it is None


def json_safe(value: Any) -> Any:
    """A record's value as JSON: nested records and containers, datetimes as ISO 8601,
    non-finite floats as None; a field marked :data:`OMIT_NONE` is left out while None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: json_safe(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not (f.metadata.get(OMIT_NONE) and getattr(value, f.name) is None)
        }
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _renamed(old: str, new: str) -> None:
    """Warn that ``old`` is a deprecated name of ``new`` (kept for one release)."""
    warnings.warn(
        f"{old} is deprecated; use {new} (the same value, docs/architecture.md's glossary)",
        DeprecationWarning,
        stacklevel=3,
    )


class Record:
    """Mixin of the result records: ``to_dict()`` for the CLI's JSON and MCP."""

    def to_dict(self) -> dict[str, Any]:
        out = json_safe(self)
        if not isinstance(out, dict):  # pragma: no cover - records are dataclasses
            raise TypeError(f"{type(self).__name__} is not a dataclass record")
        return out


@dataclass(frozen=True)
class KnowledgeChunk(Record):
    """A piece of a document or media transcript, addressed by source and position."""

    text: str
    source: str
    position: int
    title: str | None = None
    start_s: float | None = None
    end_s: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RememberResult(Record):
    """What ``remember`` did. ``status``:

    - "created": a new memory;
    - "merged": absorbed by a near-duplicate that says the same (``id`` is that memory);
    - "superseded": a new memory that corrects the stored memory of the same situation,
      ``superseded`` (now history: never recalled, shown by ``get`` and ``history``);
    - "exists": the same intent and response were stored before: nothing changed;
    - "held" (admission control on): stored on probation, not recalled until a repeat or
      a positive reward of its episode confirms it;
    - "refused" (admission control on): nothing stored (``id`` is None), empty,
      boilerplate or redundant.

    ``reason`` says why, in words, whenever the status is not plain.
    """

    id: str | None
    status: str
    similarity: float | None  # to the memory it matched, when it matched one
    superseded: str | None = None  # the memory this one replaced
    reason: str | None = None

    @property
    def merged(self) -> bool:
        return self.status == "merged"


@dataclass(frozen=True)
class RecalledItem(Record):
    """One injected item with every part of its score.

    Two utilities, two names (docs/architecture.md's glossary):

    - :attr:`ranked_utility` is the utility Phase B ranked it by *for this query*:
      ``U(m | q)`` in contextual mode (docs/contextual.md), the global Q in global mode;
    - :attr:`track_record` is the memory's global EMA Q over every reward it got: the
      ``memories`` table's ``utility`` column, and what the prompt block's "Track record"
      shows. (:attr:`utility`, the same value under the column's name, is deprecated.)
    """

    id: str
    kind: str
    text: str
    lesson: str | None
    response: str | None
    similarity: float
    ranked_utility: float
    track_record: float
    confidence: float
    score: float
    exploration_bonus: float
    usage_count: int
    reward_count: int
    polarity: str | None
    warning: bool
    lexical: float = 0.0  # BM25 score in Phase A's lexical list (0: not in it)
    # whose lesson :attr:`lesson` is: "shared" (the memory's own) or "scope" (the
    # caller's scope's lesson of a shared memory; packs/store/lesson_scopes.py)
    lesson_by: str | None = None
    source: str | None = None
    title: str | None = None
    start_s: float | None = None
    end_s: float | None = None
    # why it is in the slate beyond its score: "reserved" (the unrewarded ranking's top-1
    # keeps a slot, docs/contextual.md) or "explored" (an exploration swap); None otherwise
    placed_by: str | None = None
    # Why it ranked here, with ``explain=True`` (packs/recall/explain.py); left out of
    # the JSON otherwise, so an unexplained result reads as before.
    explain: dict[str, Any] | None = field(default=None, metadata={OMIT_NONE: True})

    @property
    def utility(self) -> float:
        """Deprecated (issue 43): :attr:`track_record`, the same value."""
        _renamed("RecalledItem.utility", "RecalledItem.track_record")
        return self.track_record


@dataclass(frozen=True)
class Recall(Record):
    """What ``Pack.recall`` returns: the episode to reward later and the winners.
    ``episode_id`` is None for a search (nothing logged)."""

    episode_id: str | None
    query: str
    items: tuple[RecalledItem, ...]
    candidate_count: int
    prompt: str
    explored: bool = False  # one slate member was swapped to learn which one answers

    @property
    def ids(self) -> list[str]:
        return [item.id for item in self.items]


@dataclass(frozen=True)
class FeedbackResult(Record):
    """A reward applied to an episode's memories.

    ``track_records``: each rewarded memory's new global Q. ``ranked_utilities``: what the
    next recall of the episode's question will rank it by, ``U(m | q)`` at that question
    after this reward (the global Q in global mode; docs/contextual.md). Both include
    rewards buffered on this handle.
    """

    episode_id: str
    source: str  # explicit, outcome, implicit, vote, validation, intrinsic
    value: float  # the reward in [-1, 1], before the source's weight
    applied: int  # memories whose utility moved
    duplicate: bool  # True when the idempotency key was seen before: nothing changed
    track_records: dict[str, float]
    ranked_utilities: dict[str, float]

    @property
    def utilities(self) -> dict[str, float]:
        """Deprecated (issue 43): :attr:`track_records`, the same values."""
        _renamed("FeedbackResult.utilities", "FeedbackResult.track_records")
        return self.track_records


@dataclass(frozen=True)
class VoteResult(Record):
    winner: str | None  # the normalised majority answer; None on a tie (nobody rewarded)
    counts: dict[str, int]
    rewards: dict[str, FeedbackResult]  # per attempt (episode id)


@dataclass(frozen=True)
class ValidationResult(Record):
    passed: bool | None  # None: the hook raised, hung or returned a non-bool
    flagged: bool  # True unless the output passed: don't ship it unchecked
    error: str | None
    reward: FeedbackResult | None


@dataclass(frozen=True)
class ResolveResult(Record):
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
class ForgetReport(Record):
    """What ``Pack.forget`` removed: the rows deleted from each table, the memories and
    knowledge chunks forgotten, and whether the older versions and files that still held
    them were purged too; ``purge_at``: a purge asked for within a minute of the Pack's
    last one runs then (docs/forgetting.md)."""

    removed: dict[str, int]
    memory_ids: tuple[str, ...]
    purged: bool
    purge_at: datetime | None = None

    @property
    def total(self) -> int:
        return sum(self.removed.values())


@dataclass(frozen=True)
class FieldChange(Record):
    """What one field was before a version and after it."""

    old: Any
    new: Any


@dataclass(frozen=True)
class MemoryVersion(Record):
    """One version of a memory (``Pack.history``; mem0's ``history()`` is the model).

    ``event``: "remember" (created; ``changes`` hold its first values), "merge" (it
    absorbed a near-duplicate, in ``absorbed``), "revise", "superseded" (no longer true:
    ``changes["superseded_by"]`` names what replaced it, ``reason`` why), "supersedes"
    (it replaced ``changes["supersedes"]``) or "lesson" (a lesson was written: ``source``
    is the writer, ``provenance`` the model, prompt version and episode). ``changes``
    maps each field that changed (intent, response, outcome, polarity, metadata, lesson,
    merge_count) to its old and new value; embeddings are never shown.
    ``utility_reset``: the revision moved the utility from ``utility_before`` back to the
    prior (docs/rewards.md).
    """

    memory_id: str
    version: int  # 1 = created, then in time order
    at: datetime
    event: str
    source: str | None  # the call's provenance: api, cli, mcp, an ingest source
    changes: dict[str, FieldChange]
    version_id: str | None = None  # the memory_history or merges row; None when created
    absorbed: dict[str, Any] | None = None  # a merge: the near-duplicate's text
    utility_reset: bool = False
    utility_before: float | None = None
    reason: str | None = None  # superseded / supersedes: why
    provenance: dict[str, Any] | None = None  # lesson: model, prompt_version, episode_id


@dataclass(frozen=True)
class RevisionResult(Record):
    """``status``: "revised", or "unchanged" (every value given was stored already: no
    version was written, so a retried revise changes nothing twice)."""

    memory_id: str
    status: str
    version: MemoryVersion | None


@dataclass(frozen=True)
class LessonNote(Record):
    """What became of one memory's lesson. ``status``: "written" (by the client's model,
    named in ``model``), "template" (``distill`` without sampling: the template writer)
    or "kept" (the lesson stays as it was; ``reason`` says why)."""

    memory_id: str
    status: str
    writer: str | None = None
    model: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class HeldMemory(Record):
    """A memory on probation (admission control): stored, not recalled until a repeat or
    a positive reward of ``episode_id`` confirms it."""

    id: str
    intent: str
    response: str | None
    outcome: str | None
    polarity: str | None
    scope: str | None
    held_at: datetime
    reason: str | None
    episode_id: str | None


@dataclass(frozen=True)
class TuningReport(Record):
    """One tuning run (``Pack.tune``, docs/tuning.md): what the Pack's episodes support,
    the held-out comparison with the settings in force, and whether it was adopted."""

    id: str
    at: datetime
    trigger: str  # "command", "schedule" or "auto"
    dry_run: bool
    adopted: bool
    reason: str
    changes: dict[str, Any]  # dotted setting -> fitted value ({}: nothing to propose)
    in_force: dict[str, Any]  # the same settings as they were in force
    evidence: dict[str, Any]  # episodes, questions, repeated rewards, flip rate, ...
    comparison: dict[str, Any] | None  # per question of the fit: held-out in force, fitted, bound
    proposals: dict[str, dict[str, float]]  # per question: each proposal's fit-half score
    settings_before: int
    settings_after: int
