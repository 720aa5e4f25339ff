"""What the MCP server adds to :mod:`wolfie.agent_tools`: scoped recall with filters,
outcomes, resolution and maturity (ingestion runs: :mod:`wolfie.mcp.ingest_runs`).

Plain functions over an open Pack returning frozen dataclasses (the SDK publishes their
fields as each tool's output schema). No MCP, Typer or Prefect imports here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from packs.errors import InvalidInput
from packs.maturity import Maturity
from packs.pack import Pack
from packs.records import FeedbackResult, Recall, Record
from packs.store.filters import MEMORY_FILTER_COLUMNS
from packs.store.scopes import SCOPE_KEY
from wolfie import agent_tools


@dataclass(frozen=True)
class Resolved(Record):
    """``intrinsic_reward`` is None when the store is too cold to score the response."""

    episode_id: str
    intrinsic_reward: float | None
    successes_compared: int
    applied: int


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
    pack: Pack, query: str, k: int | None, filters: Mapping[str, Any] | None,
    scope: str | None, *, log: bool,
) -> Recall:  # fmt: skip
    """A scoped ranking with one flat ``filters`` object; ``log=True`` records an
    episode to reward (``recall``)."""
    where, metadata = split_filters(filters)
    return agent_tools.recall(pack, query, k, log=log, metadata=metadata, where=where, scope=scope)


def outcome(
    pack: Pack, episode_id: str, amount: float, *, idempotency_key: str | None
) -> FeedbackResult:
    """A measured outcome: the reward is ``tanh(amount / outcome_scale)`` (the result's
    ``value``)."""
    return pack.outcome(episode_id, amount, idempotency_key=idempotency_key)


def resolve(
    pack: Pack, episode_id: str, response: str, success: bool | None, *,
    idempotency_key: str | None,
) -> Resolved:  # fmt: skip
    result = pack.resolve(episode_id, response, success, idempotency_key=idempotency_key)
    rewards = (result.success_reward, result.intrinsic_reward)
    applied = sum(r.applied for r in rewards if r is not None)
    return Resolved(episode_id, result.intrinsic, result.neighbours, applied)


def maturity(pack: Pack) -> Maturity:
    """The five maturity signals (MISSION.md) and the stage they put the Pack in."""
    return pack.maturity()
