"""What the MCP server adds to :mod:`wolfie.agent_tools`: scoped recall with filters,
outcomes, resolution, maturity, and ingestion started in the background.

Plain functions over an open Pack returning frozen dataclasses (the SDK publishes their
fields as each tool's output schema). No MCP, Typer or Prefect imports here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packs.errors import InvalidInput
from packs.extras import require
from packs.maturity import Maturity
from packs.pack import Pack
from packs.records import FeedbackResult, Recall, Record
from packs.store.filters import MEMORY_FILTER_COLUMNS
from packs.store.scopes import SCOPE_KEY
from wolfie import agent_tools

MAX_SOURCES = 100


@dataclass(frozen=True)
class Resolved(Record):
    """``intrinsic_reward`` is None when the store is too cold to score the response."""

    episode_id: str
    intrinsic_reward: float | None
    successes_compared: int
    applied: int


@dataclass(frozen=True)
class IngestStarted(Record):
    """``run_id`` names the ingestion flow run (its Prefect flow-run name); ``log`` is
    where the background run writes its progress."""

    run_id: str
    pack: str
    sources: tuple[str, ...]
    log: str


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


def start_ingest(pack: str, root: str | None, sources: Sequence[str]) -> IngestStarted:
    """Start ``wolfie ingest`` for ``sources`` in a background process; return at once.

    The run is a separate process (not a thread of the server), so a long transcription
    never blocks the agent's other calls and its output never reaches the MCP pipe.
    """
    if isinstance(sources, str) or not sources or len(sources) > MAX_SOURCES:
        raise InvalidInput(f"sources must be a list of 1 to {MAX_SOURCES} URLs or paths.")
    if not all(isinstance(s, str) and s.strip() and "\x00" not in s for s in sources):
        raise InvalidInput("Every source must be a non-empty URL or path string.")
    require("batch", "MCP ingest")  # the run is a Prefect flow
    run_id = f"mcp-ingest-{uuid.uuid4().hex[:12]}"
    log_dir = Path(tempfile.gettempdir()) / "wolfie-mcp-ingest"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{run_id}.log"
    command = [sys.executable, "-m", "wolfie.mcp.ingest_run", run_id, pack, root or "", *sources]
    with open(log_path, "wb") as log:
        subprocess.Popen(  # a fixed command: sources are arguments, never a shell
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "COLUMNS": "120"}, start_new_session=True,
        )  # fmt: skip
    return IngestStarted(run_id, pack, tuple(sources), str(log_path))
