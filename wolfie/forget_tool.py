"""Forgetting through the front doors: ``wolfie forget`` and the MCP ``forget`` tool share
this one code path (as the other tools share :mod:`wolfie.agent_tools`).

A server pinned to a scope forgets only rows of that scope: it can't name another scope,
every id it names must be a row of its scope (a shared row is not), and its ``where`` is
bounded to its scope. What forgetting guarantees and what it can't: docs/forgetting.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from packs.errors import InvalidInput, UnknownMemory
from packs.pack import Pack
from packs.records import ForgetReport
from packs.store.filters import tag
from packs.store.scopes import SCOPE_KEY


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
