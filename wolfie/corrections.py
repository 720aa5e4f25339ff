"""Correcting memories from the front doors: ``revise`` and ``history``, shared by the
``wolfie`` CLI (``wolfie/commands/correct.py``) and the MCP server.

Scopes: a caller in a scope revises only that scope's memories (never a shared one,
which every user sees) and reads the history of the memories it can recall: its scope's
and the shared ones. A caller without a scope is held to the shared memories, except
the CLI's operator, who may name any memory (``any_scope``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from packs.errors import InvalidInput, UnknownMemory
from packs.pack import Pack
from packs.records import MemoryVersion, Record, RevisionResult
from packs.store.scopes import SCOPE_KEY


@dataclass(frozen=True)
class History(Record):
    """A memory's versions, oldest first (the doors' shape of ``Pack.history``)."""

    memory_id: str
    versions: tuple[MemoryVersion, ...]


def revise(
    pack: Pack, memory_id: str, *, intent: str | None = None, response: str | None = None,
    outcome: str | None = None, polarity: str | None = None,
    metadata: Mapping[str, Any] | None = None, source: str = "agent",
    scope: str | None = None, any_scope: bool = False,
) -> RevisionResult:  # fmt: skip
    """Change the given fields of a memory of ``scope`` (None: a shared memory)."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=True)
    meta = dict(metadata) if isinstance(metadata, Mapping) else metadata
    return pack.revise(
        memory_id, intent=intent, response=response, outcome=outcome, polarity=polarity,
        metadata=meta, source=source,
    )  # fmt: skip


def history(
    pack: Pack, memory_id: str, *, scope: str | None = None, any_scope: bool = False
) -> History:
    """A memory's versions, if a caller in ``scope`` can recall it."""
    if not any_scope:
        _require_scope(pack, memory_id, scope, exact=False)
    return History(memory_id, tuple(pack.history(memory_id)))


def _require_scope(pack: Pack, memory_id: str, scope: str | None, *, exact: bool) -> None:
    """The memory must be ``scope``'s (or, unless ``exact``, shared): else it is
    reported as unknown, as recall would not show it either."""
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInput(f"memory_id must be a non-empty str, got {memory_id!r}.")
    row = pack.get(memory_id)
    owner = json.loads(row["metadata_json"]).get(SCOPE_KEY) if row["metadata_json"] else None
    if owner == scope or (owner is None and not exact):
        return
    if owner is None:
        raise InvalidInput(
            f"Memory {memory_id!r} is shared by every scope; a caller in scope {scope!r} "
            "can't revise it."
        )
    raise UnknownMemory(f"Pack {pack.name!r} has no memory {memory_id!r} in this scope.")
