"""The one front door: what every door (the ``wolfie`` CLI, the MCP server, the REST API,
the LangChain and LlamaIndex retrievers) calls beyond the Pack API itself.

It keeps only what a door adds to a :class:`~packs.pack.Pack` method: the scope guard (a
server pinned to a scope, a caller held to its scope's rows), one flat ``filters``
object, JSON metadata, the shapes of its results (:mod:`wolfie.results`) and the
listing of Packs. Every reward a door takes (``feedback``, ``signal``, ``outcome``, one
row each of :mod:`wolfie.reward_verbs`) goes through :func:`reward`. Where a door adds
nothing (``maturity``...) it calls the Pack directly. Every input check lives once, in the
engine: bad input raises a :class:`~packs.errors.WolfieError` with the fix in its
message. No Typer, no Rich, no MCP, no FastAPI, no Prefect here.

Scopes: a caller in a scope revises, supersedes and forgets only that scope's memories
(never a shared one, which every user sees) and reads (``get``, ``history``) the
memories it can recall: its scope's and the shared ones. A caller without a scope is
held to the shared memories, except the CLI's operator, who may name any memory
(``any_scope``). What forgetting guarantees and what it can't: docs/forgetting.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from packs.errors import InvalidInput, UnknownEpisode, UnknownMemory
from packs.memory_table import MemoryPage
from packs.pack import Pack
from packs.records import FeedbackResult, ForgetReport, Recall, RememberResult, RevisionResult
from packs.rewards.kinds import Reward
from packs.store.catalog import list_packs
from packs.store.filters import MEMORY_FILTER_COLUMNS, tag
from packs.store.scopes import SCOPE_KEY, check_scope, scoped_metadata
from packs.validation import parse_json
from wolfie.results import (
    HeldList,
    History,
    KnowledgeAdded,
    PackListing,
    Resolved,
    StoredMemory,
    Superseded,
    TuningHistory,
)


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
    supersedes: str | None = None,
) -> RememberResult:
    """Store what was asked and what was done; a near-duplicate intent (in the same
    ``scope``) is merged, or superseded by a correction; with the Pack's admission policy
    on, ``confidence`` and ``episode_id`` may hold it on probation; ``supersedes`` states
    a correction outright (the id it supersedes)."""
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
        supersedes=supersedes,
    )


def held(pack: Pack, *, scope: str | None = None, every: bool = False) -> HeldList:
    """What waits on probation: what ``scope`` sees, or all of it (``every``: the CLI's
    operator)."""
    return HeldList(tuple(pack.probation.held(scope, every=every)))


def tuning(pack: Pack, limit: int = 20) -> TuningHistory:
    """The Pack's tuning runs, newest first (at most ``limit``, 1..1000): what the
    automatic tune, ``wolfie tune`` and the ``tune-pack`` deployment adopted or refused."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidInput(f"limit must be a whole number from 1 to 1000, not {limit!r}.")
    return TuningHistory(tuple(pack.tuning.history(limit)))


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


def recall(
    pack: Pack,
    query: str,
    k: int | None = None,
    *,
    log: bool = True,
    filters: Mapping[str, Any] | None = None,
    where: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    scope: str | None = None,
    explain: bool = False,
) -> Recall:
    """Rank the Pack's items for ``query`` (in ``scope``, filtered by ``where`` columns
    and ``metadata``, or by one flat ``filters`` object that holds both). ``log=True``
    records an episode to reward later (needs a writable Pack); ``log=False`` is a
    read-only search. ``explain`` gives each item why it ranked there."""
    if filters is not None:  # one flat object: its columns and its metadata keys
        columns, meta = split_filters(filters)
        where, metadata = {**columns, **(where or {})}, {**meta, **(metadata or {})}
    rank = pack.recall if log else pack.search
    return rank(query, k, where=where, metadata=metadata, scope=scope, explain=explain)


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


def reward(
    pack: Pack,
    episode_id: str,
    reward: Reward,
    *,
    idempotency_key: str | None = None,
    scope: str | None = None,
) -> FeedbackResult:
    """Reward ``episode_id`` (recalled in ``scope``) with a :class:`~packs.rewards.kinds.Rating`,
    :class:`~packs.rewards.kinds.Signal` or :class:`~packs.rewards.kinds.Outcome`: the one
    call every door makes for a reward (:meth:`Pack.reward`, which checks the values)."""
    return pack.reward(episode_id, reward, idempotency_key=idempotency_key, scope=scope)


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


def forget(
    pack: Pack,
    memory_ids: Sequence[str] | None = None,
    *,
    scope: str | None = None,
    where: Mapping[str, Any] | None = None,
    purge: bool = False,
    pinned: str | None = None,
) -> ForgetReport:
    """Forget ``memory_ids``, every row of ``scope``, or what ``where`` matches (exactly
    one); ``pinned`` bounds all three to that scope."""
    if where is not None and not isinstance(where, Mapping):
        raise InvalidInput(f"where must be an object of key: value, got {type(where).__name__}.")
    if pinned is not None:
        if scope is not None and scope != pinned:
            raise InvalidInput(
                f"This server is pinned to scope {pinned!r}; it can't forget scope {scope!r}."
            )
        if memory_ids is not None:
            _require_in_scope(pack, memory_ids, pinned)
        if where is not None:
            if where.get(SCOPE_KEY, pinned) != pinned:
                raise InvalidInput(
                    f"This server is pinned to scope {pinned!r}; where can't "
                    f"name scope {where[SCOPE_KEY]!r}."
                )
            where = {**where, SCOPE_KEY: pinned}
    ids = list(memory_ids) if memory_ids is not None else None
    return pack.forget(ids, scope=scope, where=where, purge=purge)


def _require_in_scope(pack: Pack, memory_ids: Sequence[str], scope: str) -> None:
    if isinstance(memory_ids, str) or not all(isinstance(m, str) and m for m in memory_ids):
        raise InvalidInput(f"memory_ids must be a list of id strings, got {memory_ids!r}.")
    ids = list(dict.fromkeys(memory_ids))
    rows = pack.query("items", where={"id": ids}, columns=["id", "tags"]).to_dicts()
    tags = {row["id"]: set(row["tags"] or []) for row in rows}
    unknown = [m for m in ids if m not in tags]
    if unknown:
        raise UnknownMemory(
            f"Pack {pack.name!r} has no memory {unknown[:10]}; nothing was forgotten."
        )
    foreign = [m for m in ids if tag(SCOPE_KEY, scope) not in tags[m]]
    if foreign:
        raise InvalidInput(
            f"Memories {foreign[:10]} are not rows of scope {scope!r} (shared or another "
            "scope's); this server forgets only its own scope's rows. Nothing was forgotten."
        )


def revise(
    pack: Pack,
    memory_id: str,
    *,
    intent: str | None = None,
    response: str | None = None,
    outcome: str | None = None,
    polarity: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    source: str = "agent",
    scope: str | None = None,
    any_scope: bool = False,
) -> RevisionResult:
    """Change the given fields of a memory of ``scope`` (None: a shared memory)."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=True)
    meta = dict(metadata) if isinstance(metadata, Mapping) else metadata
    return pack.revise(
        memory_id,
        intent=intent,
        response=response,
        outcome=outcome,
        polarity=polarity,
        metadata=meta,
        source=source,
    )


def get(
    pack: Pack, memory_id: str, *, scope: str | None = None, any_scope: bool = False
) -> StoredMemory:
    """One memory as stored, if a caller in ``scope`` can recall it."""
    row = pack.get(memory_id) if any_scope else _require_scope(pack, memory_id, scope, exact=False)
    return StoredMemory.from_row(row)


def supersede(
    pack: Pack,
    memory_id: str,
    *,
    by: str | None = None,
    reason: str | None = None,
    scope: str | None = None,
    any_scope: bool = False,
) -> Superseded:
    """Mark a memory of ``scope`` no longer true (``by`` the one replacing it)."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=True)
    pack.supersede(memory_id, by, reason)
    return Superseded(memory_id, by, reason)


def history(
    pack: Pack, memory_id: str, *, scope: str | None = None, any_scope: bool = False
) -> History:
    """A memory's versions, if a caller in ``scope`` can recall it."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=False)
    return History(memory_id, tuple(pack.history(memory_id, scope)))


def require_visible(pack: Pack, memory_id: str, scope: str | None) -> None:
    """A caller in ``scope`` can recall the memory (its scope's or a shared one); else
    it is reported as unknown."""
    _require_scope(pack, memory_id, scope, exact=False)


def _require_scope(pack: Pack, memory_id: str, scope: str | None, *, exact: bool) -> dict[str, Any]:
    """The memory's row, which must be ``scope``'s (or, unless ``exact``, shared): else
    it is reported as unknown, as recall would not show it either."""
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInput(f"memory_id must be a non-empty str, got {memory_id!r}.")
    row = pack.get(memory_id)
    owner = json.loads(row["metadata_json"]).get(SCOPE_KEY) if row["metadata_json"] else None
    if owner == scope or (owner is None and not exact):
        return row
    if owner is None:
        raise InvalidInput(
            f"Memory {memory_id!r} is shared by every scope; a caller in scope {scope!r} "
            "can't revise it."
        )
    raise UnknownMemory(f"Pack {pack.name!r} has no memory {memory_id!r} in this scope.")


def memories(
    pack: Pack, *, scope: str | None = None, any_scope: bool = False, **page: Any
) -> MemoryPage:
    """A page of the memories ``scope`` sees (``any_scope``: every one, the operator's),
    filtered by ``kind``, ``status`` and ``text``, sorted by ``sort`` (packs/memory_table.py)."""
    return pack.memory_table.page(scope=scope, every=any_scope and scope is None, **page)


def admit(
    pack: Pack, memory_id: str, *, scope: str | None = None, any_scope: bool = False
) -> list[str]:
    """Confirm a held memory of ``scope`` by hand: it joins recall now."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=True)
    return pack.probation.admit([memory_id])


def rewards(
    pack: Pack, memory_id: str, *, scope: str | None = None, any_scope: bool = False
) -> list[dict[str, Any]]:
    """The reward events that moved a memory ``scope`` can recall, newest first, with the
    question of the episode each came from."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=False)
    columns = ["episode_id", "source", "signal", "value", "weight", "q_before", "q_after"]
    events = pack.query("rewards", {"memory_id": memory_id}, [*columns, "created_at"])
    rows = events.sort("created_at", descending=True).to_dicts()
    episode_ids = sorted({row["episode_id"] for row in rows})
    asked = {}
    if episode_ids:
        found = pack.query("episodes", {"id": episode_ids}, ["id", "query_text"])
        asked = {row["id"]: row["query_text"] for row in found.to_dicts()}
    return [{**row, "question": asked.get(row["episode_id"])} for row in rows]
