"""What an agent does with a Pack: recall, remember, reward, list Packs.

One code path for every front door: the ``wolfie`` CLI commands (``wolfie/commands/
memory.py``) and the MCP server call these functions. They return the engine's own
records (:mod:`packs.records`), which both doors serialise with ``to_dict()``, and every
input check lives once, in the engine: bad input raises a
:class:`~packs.errors.WolfieError` with the fix in its message. What is added here is
only what a door needs beyond the Pack API: one ``recall`` for logged and unlogged
rankings, JSON metadata, and the listing of Packs. No Typer, no Rich, no Prefect here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packs.errors import InvalidInput
from packs.held import held as held_memories
from packs.pack import Pack
from packs.records import FeedbackResult, HeldMemory, Recall, Record, RememberResult
from packs.store.catalog import PackInfo, list_packs
from packs.store.scopes import check_scope, scoped_metadata
from packs.validation import parse_json


@dataclass(frozen=True)
class PackListing(Record):
    root: str | None
    packs: tuple[PackInfo, ...]


@dataclass(frozen=True)
class KnowledgeAdded(Record):
    """The ids of the chunks given, in order (from source, position and scope: adding a
    chunk again changes nothing)."""

    ids: tuple[str, ...]


class ScopeGuard:
    """The scope a call runs in: the server's pinned scope (``wolfie mcp --scope``,
    ``wolfie api --scope``), or the one the call names. Shared by every server door."""

    def __init__(self, pinned: str | None) -> None:
        self.pinned = pinned

    def __call__(self, requested: str | None) -> str | None:
        if self.pinned is None:
            return requested
        if requested is not None and requested != self.pinned:
            raise InvalidInput(
                f"This server is pinned to scope {self.pinned!r}; a call can't use "
                f"scope {requested!r}."
            )
        return self.pinned


def remember(
    pack: Pack,
    intent: str,
    response: str,
    *,
    outcome: str | None = None,
    polarity: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    source: str = "agent",
    scope: str | None = None,
    confidence: float | None = None,
    episode_id: str | None = None,
) -> RememberResult:
    """Store what was asked and what was done; a near-duplicate intent (in the same
    ``scope``) is merged, or superseded by a correction; with the Pack's admission policy
    on, ``confidence`` and ``episode_id`` may hold it on probation."""
    meta = dict(metadata) if isinstance(metadata, Mapping) else metadata
    return pack.remember(
        intent,
        response,
        outcome,
        meta,
        polarity=polarity,
        source=source,
        scope=scope,
        confidence=confidence,
        episode_id=episode_id,
    )


@dataclass(frozen=True)
class HeldList(Record):
    """The memories on probation a caller may see, oldest first."""

    memories: tuple[HeldMemory, ...]


def held(pack: Pack, *, scope: str | None = None, every: bool = False) -> HeldList:
    """What waits on probation: what ``scope`` sees, or all of it (``every``: the CLI's
    operator)."""
    return HeldList(tuple(held_memories(pack, scope, every=every)))


def add_knowledge(
    pack: Pack, chunks: Sequence[Mapping[str, Any]], *, scope: str | None = None
) -> KnowledgeAdded:
    """Add knowledge chunks (``text``, ``source``, ``position``, optional ``title``,
    ``start_s``, ``end_s``, ``metadata``); with a ``scope`` they are that scope's only."""
    scope = check_scope(scope)
    if isinstance(chunks, str | bytes) or not isinstance(chunks, Sequence):
        raise InvalidInput(f"chunks must be a list of objects, got {type(chunks).__name__}.")
    items = []
    for chunk in chunks:
        if not isinstance(chunk, Mapping):
            raise InvalidInput(f"Each chunk must be an object, got {type(chunk).__name__}.")
        meta = chunk.get("metadata") or {}
        if not isinstance(meta, Mapping):
            raise InvalidInput(f"A chunk's metadata must be an object, got {meta!r}.")
        items.append({**chunk, "metadata": scoped_metadata(meta, scope)})
    return KnowledgeAdded(tuple(pack.add_knowledge(items)))


def feedback(
    pack: Pack,
    episode_id: str,
    rating: float,
    *,
    idempotency_key: str | None = None,
    scope: str | None = None,
) -> FeedbackResult:
    """Rate a recalled episode: ``rating`` in [-1, 1] moves every memory it injected. A
    caller in ``scope`` rates only episodes recalled in it."""
    return pack.feedback(episode_id, rating, idempotency_key=idempotency_key, scope=scope)


def signal(
    pack: Pack,
    episode_id: str,
    name: str,
    memory_ids: list[str] | None = None,
    *,
    idempotency_key: str | None = None,
    scope: str | None = None,
) -> FeedbackResult:
    """An implicit signal (``accepted``, ``edited``, ``ignored``, ``acted_on`` or the Pack's
    own vocabulary) for the whole episode or only for ``memory_ids``."""
    return pack.signal(episode_id, name, memory_ids, idempotency_key=idempotency_key, scope=scope)


def recall(
    pack: Pack,
    query: str,
    k: int | None = None,
    *,
    log: bool = True,
    metadata: Mapping[str, Any] | None = None,
    where: Mapping[str, Any] | None = None,
    scope: str | None = None,
) -> Recall:
    """Rank the Pack's items for ``query`` (in ``scope``, filtered by ``where`` columns
    and ``metadata``). ``log=True`` records an episode to reward later (needs a writable
    Pack); ``log=False`` is a read-only search."""
    rank = pack.recall if log else pack.search
    return rank(query, k, where=where, metadata=metadata, scope=scope)


def packs(root: str | None = None) -> PackListing:
    """The Packs under ``root`` (default ``WOLFIE_ROOT`` or ``./.wolfie``) with row counts."""
    return PackListing(root, tuple(list_packs(root)))


def parse_metadata(text: str | None, field: str = "metadata") -> dict[str, Any] | None:
    """``'{"symbol": "NVDA"}'`` -> a dict; the CLI's JSON options (``--metadata``,
    ``--where``). What Python can't take (a 5,000-digit integer, 1,000-deep nesting, a
    lone surrogate) is :class:`InvalidInput` too (:func:`packs.validation.parse_json`)."""
    if text is None:
        return None
    value = parse_json(text, field)
    if not isinstance(value, dict):
        raise InvalidInput(
            f'{field} must be a JSON object like \'{{"symbol": "NVDA"}}\', got '
            f"{type(value).__name__}."
        )
    return value
