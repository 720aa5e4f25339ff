"""What the MCP server adds to :mod:`wolfie.agent_tools`: scoped recall with filters,
outcomes, resolution and maturity (ingestion runs: :mod:`wolfie.mcp.ingest_runs`). The
CLI and the REST API call these too, so every door ranks and rewards through one path.

Plain functions over an open Pack returning frozen dataclasses (the SDK publishes their
fields as each tool's output schema). No MCP, Typer or Prefect imports here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from packs.errors import InvalidInput, UnknownEpisode
from packs.maturity import Maturity
from packs.pack import Pack
from packs.records import FeedbackResult, LessonNote, Recall, Record
from packs.store.filters import MEMORY_FILTER_COLUMNS
from packs.store.scopes import SCOPE_KEY
from wolfie import agent_tools


@dataclass(frozen=True)
class Resolved(Record):
    """``intrinsic_reward`` is None when the store is too cold to score the response;
    ``rewarded`` are the memories whose utility moved, ``lessons`` what became of their
    lessons (wolfie/mcp/lessons.py)."""

    episode_id: str
    intrinsic_reward: float | None
    successes_compared: int
    applied: int
    rewarded: tuple[str, ...] = ()
    lessons: tuple[LessonNote, ...] = ()


@dataclass(frozen=True)
class Rewarded(FeedbackResult):
    """A reward's result and what became of the lessons of the memories it moved."""

    lessons: tuple[LessonNote, ...] = ()


@dataclass(frozen=True)
class Distilled(Record):
    """What ``distill`` did to each memory's lesson."""

    lessons: tuple[LessonNote, ...]


def with_lessons(result: FeedbackResult, lessons: tuple[LessonNote, ...]) -> Rewarded:
    return Rewarded(**{f.name: getattr(result, f.name) for f in fields(result)}, lessons=lessons)


def episode_memories(pack: Pack, episode_id: str) -> list[str]:
    """The ids an episode injected (its recall's items)."""
    rows = pack.query("episodes", where={"id": episode_id}, columns=["injected_ids"])
    if rows.height == 0:
        raise UnknownEpisode(f"Pack {pack.name!r} has no episode {episode_id!r}.")
    return list(rows["injected_ids"].to_list()[0] or [])


def split_filters(
    filters: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One flat ``filters`` object -> (column filters, metadata filters)."""
    where: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in (filters or {}).items():
        if key == SCOPE_KEY:
            raise InvalidInput("Filter on a scope with the scope argument, not filters.")
        if key in MEMORY_FILTER_COLUMNS:
            where[key] = value
        else:
            metadata[key] = value
    return where, metadata


def recall(
    pack: Pack,
    query: str,
    k: int | None,
    filters: Mapping[str, Any] | None,
    scope: str | None,
    *,
    log: bool,
) -> Recall:
    """A scoped ranking with one flat ``filters`` object; ``log=True`` records an
    episode to reward (``recall``)."""
    where, metadata = split_filters(filters)
    return agent_tools.recall(pack, query, k, log=log, metadata=metadata, where=where, scope=scope)


def outcome(
    pack: Pack,
    episode_id: str,
    amount: float,
    *,
    idempotency_key: str | None,
    scope: str | None = None,
) -> FeedbackResult:
    """A measured outcome: the reward is ``tanh(amount / outcome_scale)`` (the result's
    ``value``)."""
    return pack.outcome(episode_id, amount, idempotency_key=idempotency_key, scope=scope)


def resolve(
    pack: Pack,
    episode_id: str,
    response: str,
    success: bool | None,
    *,
    idempotency_key: str | None,
    scope: str | None = None,
) -> Resolved:
    key, caller = idempotency_key, scope
    result = pack.resolve(episode_id, response, success, idempotency_key=key, scope=caller)
    rewards = [r for r in (result.success_reward, result.intrinsic_reward) if r is not None]
    applied = sum(r.applied for r in rewards)
    moved = tuple(dict.fromkeys(m for r in rewards if not r.duplicate for m in r.track_records))
    return Resolved(episode_id, result.intrinsic, result.neighbours, applied, moved)


def maturity(pack: Pack) -> Maturity:
    """The five maturity signals (docs/brief.md) and the stage they put the Pack in."""
    return pack.maturity()
